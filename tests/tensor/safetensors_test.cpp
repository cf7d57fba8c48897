#include "crew/tensor/safetensors.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "crew/tensor/random.h"
#include "crew/tensor/safetensors_checksum.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/text.h"

namespace crew {
namespace {

namespace fs = std::filesystem;

// A fresh temporary directory, removed with its contents at the end of the test.
class SafetensorsTest : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return dir_.file(name); }

  static std::string read_bytes(const std::string& p) { return testing::read_file(p); }
  static void write_bytes(const std::string& p, const std::string& bytes) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  // A file made of an explicit header (length prefix computed) and raw data bytes.
  std::string craft(const std::string& name, const std::string& header, const std::string& data) {
    std::string bytes(8, '\0');
    uint64_t n = header.size();
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
    bytes += header + data;
    std::string p = path(name);
    write_bytes(p, bytes);
    return p;
  }
  // load(p) throws E whose message contains every needle.
  template <typename E>
  static void expect_error(const std::string& p, std::initializer_list<std::string> needles) {
    try {
      load(p);
      ADD_FAILURE() << "load('" << p << "') did not throw";
    } catch (const E& e) {
      std::string msg = e.what();
      for (const auto& n : needles)
        EXPECT_NE(msg.find(n), std::string::npos) << "missing '" << n << "' in: " << msg;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "wrong exception type: " << e.what();
    }
  }

  testing::TempDir dir_;
};

TEST_F(SafetensorsTest, RoundTripsEveryDtype) {
  StateDict sd;
  sd.insert("f32", Tensor::from_vector<float>({1.5f, -2.25f, 3e-8f, 1e30f, 0.f, -0.f}, {2, 3}));
  sd.insert("f64", Tensor::from_vector<double>({1.0 / 3.0, -1e300}, {2}));
  sd.insert("i32", Tensor::from_vector<int32_t>({INT32_MIN, -1, 0, INT32_MAX}, {2, 2}));
  sd.insert("i64", Tensor::from_vector<int64_t>({INT64_MIN, 42, INT64_MAX}, {3}));
  sd.insert("u8", Tensor::from_vector<uint8_t>({0, 7, 255}, {3, 1}));
  sd.insert("scalar", Tensor::scalar(2.5, DType::FLOAT64));
  sd.insert("empty", Tensor::zeros({0, 4}));
  std::string p = path("all.safetensors");
  save(sd, p, {{"epoch", "3"}, {"note", "quote \" and \\ and \n"}});

  StateDict back = load(p);
  ASSERT_EQ(back.keys(), sd.keys());
  for (const auto& [name, t] : sd) {
    const Tensor& u = back.at(name);
    EXPECT_EQ(u.dtype(), t.dtype()) << name;
    EXPECT_EQ(u.shape(), t.shape()) << name;
    ASSERT_EQ(u.nbytes(), t.nbytes()) << name;
    EXPECT_EQ(std::memcmp(u.raw_data(), t.raw_data(), t.nbytes()), 0) << name;
  }
  auto md = load_metadata(p);
  EXPECT_EQ(md.size(), 3u);
  EXPECT_EQ(md.at("crew.checksum").rfind("crc32c:", 0), 0u);
  EXPECT_EQ(md.at("epoch"), "3");
  EXPECT_EQ(md.at("note"), "quote \" and \\ and \n");
}

TEST_F(SafetensorsTest, WritesTheReferenceLayout) {
  StateDict sd;
  sd.insert("b", Tensor::from_vector<float>({1.0f}, {1}));
  sd.insert("a", Tensor::from_vector<int64_t>({2, 3}, {2}));
  std::string p = path("layout.safetensors");
  save(sd, p);
  std::string bytes = read_bytes(p);
  ASSERT_GE(bytes.size(), 8u);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  EXPECT_EQ((8 + n) % 8, 0u) << "data section must be 8-byte aligned";
  std::string header = bytes.substr(8, n);
  std::string meta = "{\"__metadata__\":{\"crew.checksum\":\"crc32c:";
  ASSERT_EQ(header.substr(0, meta.size()), meta) << header;
  std::string want =
      "\"},\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
      "\"a\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[4,20]}}";
  size_t at = meta.size() + 8;  // 8 hex digits
  EXPECT_EQ(header.substr(at, want.size()), want) << header;
  EXPECT_EQ(header.find_first_not_of(' ', at + want.size()), std::string::npos);
  ASSERT_EQ(bytes.size(), 8 + n + 20);
  float one = 0;
  std::memcpy(&one, bytes.data() + 8 + n, 4);
  EXPECT_EQ(one, 1.0f);
}

TEST_F(SafetensorsTest, ReadsForeignFiles) {
  // Keys out of offset order, whitespace, metadata last, escaped name: as other writers do.
  std::string data(12, '\0');
  int32_t v[3] = {7, -8, 9};
  std::memcpy(data.data(), v, 12);
  std::string p = craft("foreign.safetensors",
                        "{ \"y\" : {\"dtype\":\"I32\", \"shape\":[1], \"data_offsets\":[8,12]},\n"
                        "  \"x\\u00e9\": {\"shape\":[2],\"dtype\":\"I32\",\"data_offsets\":[0,8]},"
                        "  \"__metadata__\": {\"format\": \"pt\"} }   ",
                        data);
  StateDict sd = load(p);
  ASSERT_EQ(sd.keys(), (std::vector<std::string>{"x\xc3\xa9", "y"}));
  EXPECT_EQ(sd.at("x\xc3\xa9").to_vector<int32_t>(), (std::vector<int32_t>{7, -8}));
  EXPECT_EQ(sd.at("y").to_vector<int32_t>(), (std::vector<int32_t>{9}));
  EXPECT_EQ(load_metadata(p).at("format"), "pt");
}

TEST_F(SafetensorsTest, SaveIsAtomicAndLeavesNoTempFiles) {
  std::string p = path("m.safetensors");
  StateDict a;
  a.insert("w", Tensor::ones({4}));
  save(a, p);
  StateDict b;
  b.insert("w", Tensor::zeros({8}));
  save(b, p);  // replaces the file in one rename
  EXPECT_EQ(load(p).at("w").numel(), 8);
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir_.path())) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 1);
  StateDict bad;
  bad.insert("__metadata__", Tensor::ones({1}));
  EXPECT_THROW(save(bad, p), ValueError);
  EXPECT_EQ(load(p).at("w").numel(), 8) << "a failed save must not touch the old file";
  EXPECT_THROW(save(a, path("no/such/dir/x.safetensors")), IOError);
}

TEST_F(SafetensorsTest, MissingFileIsIOError) {
  std::string p = path("absent.safetensors");
  expect_error<IOError>(p, {p});
  EXPECT_THROW(load_metadata(p), IOError);
}

// Opening a FIFO for reading used to wait for a writer before the regular-file check: load
// hung forever. A FIFO, a device or a directory is now a ValueError at once.
TEST_F(SafetensorsTest, FifoDeviceOrDirectoryIsAValueErrorAtOnce) {
  std::string fifo = path("pipe.safetensors");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_error<ValueError>(fifo, {"load: '" + fifo + "' is a FIFO, not a regular file"});
  EXPECT_THROW(load_metadata(fifo), ValueError);
  expect_error<ValueError>(dir_.path(), {"is a directory, not a regular file"});
  expect_error<ValueError>("/dev/null", {"'/dev/null' is a character device, not a regular file"});
}

TEST_F(SafetensorsTest, TruncatedFiles) {
  std::string p = path("t.safetensors");
  write_bytes(p, "");
  expect_error<ValueError>(p, {p, "truncated"});
  write_bytes(p, std::string("\x10\0\0", 3));
  expect_error<ValueError>(p, {p, "truncated"});
  // Header length beyond the file.
  craft("t.safetensors", "{}", "");
  std::string bytes = read_bytes(p);
  bytes[0] = 100;
  write_bytes(p, bytes);
  expect_error<ValueError>(p, {p, "header length 100", "beyond"});
  // Absurd header length.
  std::string huge(8, '\xff');
  write_bytes(p, huge + "{}");
  expect_error<ValueError>(p, {p, "exceeds"});
  // Data cut short.
  StateDict sd;
  sd.insert("w", Tensor::ones({16}));
  save(sd, p);
  bytes = read_bytes(p);
  write_bytes(p, bytes.substr(0, bytes.size() - 5));
  expect_error<ValueError>(p, {p, "'w'", "beyond the data section"});
}

TEST_F(SafetensorsTest, MalformedHeaders) {
  std::string d8(8, '\0');
  expect_error<ValueError>(craft("a", "{\"w\":", d8), {"malformed header"});
  expect_error<ValueError>(craft("b", "[1,2]", ""), {"not a JSON object"});
  expect_error<ValueError>(craft("c", "{\"w\":{\"dtype\":\"F32\"}} x", ""), {"malformed", "trailing"});
  expect_error<ValueError>(craft("d", "{\"a\":1,\"a\":2}", ""), {"duplicate"});
  expect_error<ValueError>(craft("e", std::string(1000, '[') + std::string(1000, ']'), ""), {"nesting"});
  expect_error<ValueError>(craft("f", "{\"w\":\"F32\"}", ""), {"'w'", "not an object"});
  expect_error<ValueError>(craft("g", "{\"__metadata__\":{\"k\":1}}", ""), {"__metadata__", "'k'"});
  expect_error<ValueError>(
      craft("h", "{\"w\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", d8), {"'w'", "-2"});
  expect_error<ValueError>(craft("i", "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}", d8),
                           {"'w'", "data_offsets"});
  expect_error<ValueError>(
      craft("j", "{\"w\":{\"dtype\":\"F32\",\"shape\":[2.5],\"data_offsets\":[0,8]}}", d8), {"'w'", "2.5"});
  expect_error<ValueError>(craft("k", "{\"w\":{\"shape\":[2],\"data_offsets\":[0,8]}}", d8),
                           {"'w'", "dtype"});
  expect_error<ValueError>(craft("l", "{\"s\":\"\\ud800\"}", ""), {"surrogate"});
}

TEST_F(SafetensorsTest, BadDtypesOffsetsAndSizes) {
  std::string d16(16, '\0');
  expect_error<ValueError>(
      craft("dtype", "{\"w\":{\"dtype\":\"F8_E4M3\",\"shape\":[2],\"data_offsets\":[0,2]}}", d16),
      {"'w'", "F8_E4M3"});
  expect_error<ValueError>(
      craft("range", "{\"w\":{\"dtype\":\"F32\",\"shape\":[8],\"data_offsets\":[0,32]}}", d16),
      {"'w'", "[0, 32]", "beyond"});
  expect_error<ValueError>(
      craft("rev", "{\"w\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[8,4]}}", d16),
      {"'w'", "reversed"});
  expect_error<ValueError>(
      craft("size", "{\"w\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,16]}}", d16),
      {"'w'", "[3]", "12 bytes", "span 16"});
  expect_error<ValueError>(
      craft("overflow",
            "{\"w\":{\"dtype\":\"F64\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,0]}}", d16),
      {"'w'", "count overflows"});
  expect_error<ValueError>(
      craft("overflow2",
            "{\"w\":{\"dtype\":\"F64\",\"shape\":[4294967296,1073741824],\"data_offsets\":[0,0]}}", d16),
      {"'w'", "byte size overflows"});
  expect_error<ValueError>(craft("overlap",
                                 "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                                 "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
                                 d16),
                           {"overlaps", "'a'", "'b'"});
}

// Every prefix of a valid file and every single-byte corruption of its header either loads
// or throws a crew::Error; nothing else (no crash, no other exception type).
TEST_F(SafetensorsTest, CorruptionNeverCrashes) {
  StateDict sd;
  sd.insert("conv1.weight", Tensor::ones({2, 1, 3, 3}));
  sd.insert("step", Tensor::scalar(5, DType::INT64));
  std::string good_path = path("good.safetensors");
  save(sd, good_path, {{"k", "v"}});
  std::string good = read_bytes(good_path);
  std::string p = path("bad.safetensors");
  int errors = 0;
  auto attempt = [&](const std::string& bytes) {
    write_bytes(p, bytes);
    try {
      load(p);
    } catch (const Error&) {
      ++errors;
    }
  };
  for (size_t len = 0; len < good.size(); ++len) attempt(good.substr(0, len));
  EXPECT_EQ(errors, static_cast<int>(good.size())) << "every strict prefix must be rejected";
  const char kBytes[] = {'\0', '"', '{', '}', '[', ']', ',', ':', '9', '-', '\\', '\xff'};
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(good[i]);
  for (size_t i = 0; i < 8 + n; ++i) {
    for (char c : kBytes) {
      std::string bad = good;
      bad[i] = c;
      attempt(bad);
    }
  }
  // Every change to the data section is caught by the checksum.
  errors = 0;
  int changed = 0;
  for (size_t i = 8 + n; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ (1 << (i % 8)));
    ++changed;
    attempt(bad);
  }
  EXPECT_EQ(errors, changed);
}

// Headers assembled at random from JSON fragments, with random data sizes: load either
// succeeds or throws a crew::Error (a small, deterministic fuzz run).
TEST_F(SafetensorsTest, RandomHeadersNeverCrash) {
  const char* kTokens[] = {"{",
                           "}",
                           "[",
                           "]",
                           ",",
                           ":",
                           "\"w\"",
                           "\"dtype\"",
                           "\"F32\"",
                           "\"U8\"",
                           "\"shape\"",
                           "\"data_offsets\"",
                           "\"__metadata__\"",
                           "0",
                           "4",
                           "8",
                           "18446744073709551615",
                           "-1",
                           "1e3",
                           "true",
                           "null",
                           " ",
                           "\"\\u0041\""};
  const size_t kCount = sizeof(kTokens) / sizeof(kTokens[0]);
  Generator gen(2024);
  std::string p = path("fuzz.safetensors");
  int loaded = 0;
  for (int iter = 0; iter < 400; ++iter) {
    std::string header = iter % 3 == 0 ? "{\"w\":{\"dtype\":\"U8\",\"shape\":[" : "";
    int n = 1 + static_cast<int>(gen.next_u64() % 24);
    for (int k = 0; k < n; ++k) header += kTokens[gen.next_u64() % kCount];
    craft("fuzz.safetensors", header, std::string(gen.next_u64() % 16, 'x'));
    try {
      load(p);
      ++loaded;
    } catch (const Error&) {
    }
  }
  EXPECT_LT(loaded, 400);  // most random headers are invalid; any non-crew exception fails the test
}

TEST_F(SafetensorsTest, LoadsFromMemoryLikeFromAFile) {
  StateDict sd;
  sd.insert("w", Tensor::from_vector<float>({1.5f, -2.f, 0.f, 4.f, 5.f, 6.f}, {2, 3}));
  sd.insert("n", Tensor::from_vector<int64_t>({7, 8, 9}, {3}));
  save(sd, path("m.safetensors"), {{"epoch", "4"}});
  const std::string bytes = read_bytes(path("m.safetensors"));
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  StateDict back = load_from_memory(data, bytes.size(), "in-memory checkpoint");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back.at("w").shape(), (Shape{2, 3}));
  EXPECT_EQ(back.at("w").data<float>()[1], -2.f);
  EXPECT_EQ(back.at("n").data<int64_t>()[2], 9);
  EXPECT_EQ(load_metadata_from_memory(data, bytes.size(), "mem").at("epoch"), "4");
  // Errors name `what` where load() names the path.
  try {
    load_from_memory(data, bytes.size() - 3, "in-memory checkpoint");
    ADD_FAILURE() << "a truncated buffer loaded";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("in-memory checkpoint"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_from_memory(data, 5, "short"), ValueError);
}

TEST_F(SafetensorsTest, ChecksumCatchesSilentCorruption) {
  detail::Crc32c crc;
  crc.update("123456789");
  EXPECT_EQ(crc.value(), 0xE3069283u);  // the CRC-32C check value
  EXPECT_EQ(detail::format_checksum(0xE3069283u), "crc32c:e3069283");

  StateDict sd;
  sd.insert("weight", Tensor::from_vector<float>({1, 2, 3, 4}));
  std::string p = path("c.safetensors");
  save(sd, p, {{"epoch", "3"}});
  std::string good = read_bytes(p);
  auto rewrite = [&](const std::string& from, const std::string& to) {
    std::string bad = good;
    size_t at = bad.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    bad.replace(at, from.size(), to);
    write_bytes(p, bad);
  };
  rewrite("\"3\"", "\"4\"");  // metadata value, same length: still valid JSON
  expect_error<ValueError>(p, {p, "checksum mismatch"});
  rewrite("\"weight\"", "\"weighs\"");  // tensor name
  expect_error<ValueError>(p, {p, "checksum mismatch"});
  std::string bad = good;
  bad[bad.size() - 1] ^= 0x01;  // last data byte
  write_bytes(p, bad);
  expect_error<ValueError>(p, {"checksum mismatch"});
  write_bytes(p, good);
  EXPECT_EQ(load(p).at("weight").to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_THROW(save(sd, p, {{"crew.checksum", "x"}}), ValueError);
}

}  // namespace
}  // namespace crew

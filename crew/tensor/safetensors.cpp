// Reading safetensors files. Everything taken from the file is bounds-checked before use:
// the header length against the file size, every offset against the data section, every
// shape x dtype size against its byte span (with overflow checks), and spans for overlap.
#include "crew/tensor/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <functional>
#include <limits>

#include "crew/core/check.h"
#include "crew/tensor/safetensors_checksum.h"
#include "crew/tensor/safetensors_file.h"
#include "crew/tensor/safetensors_json.h"

namespace crew {
namespace {

static_assert(std::endian::native == std::endian::little,
              "safetensors stores little-endian data; crew assumes a little-endian host");

namespace json = detail::json;

struct TensorEntry {
  std::string name;
  DType dtype = DType::FLOAT32;
  Shape shape;
  uint64_t begin = 0;  // byte offsets into the data section
  uint64_t end = 0;
};

struct Header {
  std::vector<TensorEntry> tensors;  // sorted by data offset
  std::map<std::string, std::string> metadata;
  uint64_t data_start = 0;  // file offset of the data section
};

// Where the bytes come from: a file (pread) or a buffer in memory (load_from_memory).
struct Source {
  std::string path;  // names the input in errors
  uint64_t size = 0;
  // Reads up to n bytes at offset; returns how many were read (less only at the end).
  std::function<size_t(void* buf, size_t n, uint64_t offset)> read;
};

Source file_source(const std::string& path, int fd, uint64_t file_size) {
  return {path, file_size, [fd, path](void* buf, size_t n, uint64_t offset) {
            return detail::pread_full(fd, buf, n, offset, path);
          }};
}

Source memory_source(const uint8_t* data, size_t size, const std::string& what) {
  return {what, size, [data, size](void* buf, size_t n, uint64_t offset) -> size_t {
            if (offset >= size) return 0;
            const size_t k = std::min<uint64_t>(n, size - offset);
            if (k > 0) std::memcpy(buf, data + offset, k);
            return k;
          }};
}

detail::UniqueFd open_for_read(const std::string& path, uint64_t* file_size) {
  return open_regular_file(path, "load", file_size);
}

std::map<std::string, std::string> parse_metadata(const json::Value& v, const std::string& path) {
  CREW_CHECK(v.is_object(), "load '", path, "': __metadata__ must be an object of strings");
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : v.object) {
    CREW_CHECK(value.is_string(), "load '", path, "': __metadata__ value of '", key, "' is not a string");
    out.emplace(key, value.text);
  }
  return out;
}

TensorEntry parse_entry(const std::string& name, const json::Value& v, uint64_t data_bytes,
                        const std::string& path) {
  auto where = [&] { return str_cat("load '", path, "', tensor '", name, "': "); };
  CREW_CHECK(v.is_object(), where(), "entry is not an object");
  TensorEntry e;
  e.name = name;
  const json::Value* dtype = v.find("dtype");
  CREW_CHECK(dtype && dtype->is_string(), where(), "missing string field 'dtype'");
  try {
    e.dtype = parse_safetensors_dtype(dtype->text);
  } catch (const ValueError& err) {
    CREW_THROW(ValueError, where(), err.what());
  }
  const json::Value* shape = v.find("shape");
  CREW_CHECK(shape && shape->is_array(), where(), "missing array field 'shape'");
  uint64_t numel = 1;
  for (const json::Value& d : shape->array) {
    uint64_t extent = 0;
    CREW_CHECK(json::to_uint64(d, &extent), where(), "shape extent '", d.text,
               "' is not a non-negative integer");
    CREW_CHECK(extent <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()), where(), "shape extent ",
               extent, " too large");
    CREW_CHECK(extent == 0 || numel <= std::numeric_limits<uint64_t>::max() / extent, where(),
               "shape element count overflows");
    numel *= extent;
    e.shape.push_back(static_cast<int64_t>(extent));
  }
  const json::Value* offsets = v.find("data_offsets");
  CREW_CHECK(offsets && offsets->is_array() && offsets->array.size() == 2, where(),
             "missing field 'data_offsets' = [begin, end]");
  CREW_CHECK(json::to_uint64(offsets->array[0], &e.begin) && json::to_uint64(offsets->array[1], &e.end),
             where(), "data_offsets must be non-negative integers");
  CREW_CHECK(e.begin <= e.end, where(), "data_offsets [", e.begin, ", ", e.end, "] are reversed");
  CREW_CHECK(e.end <= data_bytes, where(), "data_offsets [", e.begin, ", ", e.end,
             "] beyond the data section of ", data_bytes, " bytes (truncated file?)");
  uint64_t elem = dtype_size(e.dtype);
  CREW_CHECK(numel <= std::numeric_limits<uint64_t>::max() / elem, where(), "shape ", shape_str(e.shape),
             " x ", dtype->text, " byte size overflows");
  CREW_CHECK(numel * elem == e.end - e.begin, where(), "shape ", shape_str(e.shape), " x ", dtype->text,
             " needs ", numel * elem, " bytes but data_offsets span ", e.end - e.begin);
  return e;
}

Header read_header(const Source& src) {
  const std::string& path = src.path;
  const uint64_t file_size = src.size;
  unsigned char len_bytes[8];
  size_t got = src.read(len_bytes, 8, 0);
  CREW_CHECK(got == 8, "load '", path, "': truncated file of ", file_size,
             " bytes (no 8-byte header length)");
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | len_bytes[i];
  CREW_CHECK(header_len <= kSafetensorsMaxHeaderBytes, "load '", path, "': header length ", header_len,
             " exceeds the limit of ", kSafetensorsMaxHeaderBytes, " bytes");
  CREW_CHECK(header_len <= file_size - 8, "load '", path, "': header length ", header_len,
             " beyond the file size of ", file_size, " bytes (truncated file?)");
  std::string text(header_len, '\0');
  got = src.read(text.data(), header_len, 8);
  CREW_CHECK(got == header_len, "load '", path, "': file shrank while reading the header");

  json::Value root;
  try {
    root = json::parse(text);
  } catch (const ValueError& err) {
    CREW_THROW(ValueError, "load '", path, "': malformed header: ", err.what());
  }
  CREW_CHECK(root.is_object(), "load '", path, "': header is not a JSON object");

  Header h;
  h.data_start = 8 + header_len;
  uint64_t data_bytes = file_size - h.data_start;
  for (const auto& [name, value] : root.object) {
    if (name == "__metadata__") {
      h.metadata = parse_metadata(value, path);
    } else {
      h.tensors.push_back(parse_entry(name, value, data_bytes, path));
    }
  }
  std::stable_sort(h.tensors.begin(), h.tensors.end(),
                   [](const TensorEntry& a, const TensorEntry& b) { return a.begin < b.begin; });
  const TensorEntry* prev = nullptr;
  for (const TensorEntry& e : h.tensors) {
    if (e.begin == e.end) continue;  // empty tensors occupy no bytes
    if (prev != nullptr) {
      CREW_CHECK(e.begin >= prev->end, "load '", path, "': tensor '", e.name, "' data [", e.begin, ", ",
                 e.end, ") overlaps tensor '", prev->name, "' [", prev->begin, ", ", prev->end, ")");
    }
    prev = &e;
  }
  return h;
}

}  // namespace

const char* safetensors_dtype(DType dtype) {
  switch (dtype) {
    case DType::FLOAT32:
      return "F32";
    case DType::FLOAT64:
      return "F64";
    case DType::INT32:
      return "I32";
    case DType::INT64:
      return "I64";
    case DType::UINT8:
      return "U8";
    case DType::BFLOAT16:
      return "BF16";
    case DType::FLOAT16:
      return "F16";
    case DType::BOOL:
      return "BOOL";
  }
  CREW_THROW(ValueError, "safetensors_dtype: unknown dtype ", static_cast<int>(dtype));
}

DType parse_safetensors_dtype(const std::string& code) {
  if (code == "F32") return DType::FLOAT32;
  if (code == "F64") return DType::FLOAT64;
  if (code == "I32") return DType::INT32;
  if (code == "I64") return DType::INT64;
  if (code == "U8") return DType::UINT8;
  if (code == "BF16") return DType::BFLOAT16;
  if (code == "F16") return DType::FLOAT16;
  if (code == "BOOL") return DType::BOOL;
  CREW_THROW(ValueError, "unsupported safetensors dtype '", code,
             "' (crew reads F32, F64, I32, I64, U8, BF16, F16, BOOL)");
}

namespace {

StateDict load_from(const Source& src) {
  const std::string& path = src.path;
  Header h = read_header(src);
  detail::Crc32c crc;
  detail::digest_metadata(crc, h.metadata);
  StateDict out;
  for (const TensorEntry& e : h.tensors) {
    Tensor t = Tensor::empty(e.shape, e.dtype);
    size_t n = static_cast<size_t>(e.end - e.begin);
    size_t got = n == 0 ? 0 : src.read(t.raw_data(), n, h.data_start + e.begin);
    CREW_CHECK(got == n, "load '", path, "', tensor '", e.name, "': file shrank while reading");
    detail::digest_tensor(crc, e.name, safetensors_dtype(e.dtype), e.shape);
    crc.update(t.raw_data(), n);
    out.insert(e.name, t);
  }
  auto stored = h.metadata.find(detail::kChecksumKey);
  if (stored != h.metadata.end()) {
    std::string actual = detail::format_checksum(crc.value());
    CREW_CHECK(stored->second == actual, "load '", path, "': checksum mismatch (the file records ",
               stored->second, ", its content gives ", actual, "): the file is corrupt");
  }
  return out;
}

}  // namespace

StateDict load(const std::string& path) {
  uint64_t file_size = 0;
  detail::UniqueFd fd = open_for_read(path, &file_size);
  return load_from(file_source(path, fd.get(), file_size));
}

StateDict load_from_memory(const uint8_t* data, size_t size, const std::string& what) {
  return load_from(memory_source(data, size, what));
}

std::map<std::string, std::string> load_metadata(const std::string& path) {
  uint64_t file_size = 0;
  detail::UniqueFd fd = open_for_read(path, &file_size);
  return read_header(file_source(path, fd.get(), file_size)).metadata;
}

std::map<std::string, std::string> load_metadata_from_memory(const uint8_t* data, size_t size,
                                                             const std::string& what) {
  return read_header(memory_source(data, size, what)).metadata;
}

}  // namespace crew

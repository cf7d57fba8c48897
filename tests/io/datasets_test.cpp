// MNIST / FashionMNIST / Cifar10 on tiny files in the real formats, good and broken.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>

#include "crew/io/datasets/cifar10.h"
#include "crew/io/datasets/idx.h"
#include "crew/io/datasets/mnist.h"
#include "crew/io/file_bytes.h"
#include "crew/io/transforms/image_transforms.h"
#include "tests/io/io_test_util.h"

namespace crew::io {
namespace {

using testing::Bytes;
using testing::TempDir;

// Expects fn() to throw IOError whose message contains every needle.
template <typename Fn>
void expect_io_error(Fn fn, const std::vector<std::string>& needles) {
  try {
    fn();
    ADD_FAILURE() << "no IOError thrown";
  } catch (const IOError& e) {
    for (const auto& n : needles)
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what() << "\nmissing: " << n;
  }
}

TEST(Mnist, ReadsGzippedAndPlainFiles) {
  TempDir dir;
  testing::write_mnist(dir.path(), "train", 12, /*gz=*/true);
  testing::write_mnist(dir.path(), "t10k", 5, /*gz=*/false);
  FashionMNIST train({.mode = "train", .data_dir = dir.path()});
  ASSERT_EQ(train.size(), 12);
  Sample s = train.get(3);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].shape(), (Shape{28, 28}));
  EXPECT_EQ(s[0].dtype(), DType::UINT8);
  EXPECT_EQ(s[0].data<uint8_t>()[5], (3 * 7 + 5) % 256);
  EXPECT_EQ(s[1].dtype(), DType::INT64);
  EXPECT_EQ(s[1].item(), 3);
  MNIST test({.mode = "test", .data_dir = dir.path(), .transform = std::make_shared<ToTensor>()});
  ASSERT_EQ(test.size(), 5);
  Sample t = test.get(4);
  EXPECT_EQ(t[0].shape(), (Shape{1, 28, 28}));
  EXPECT_FLOAT_EQ(t[0].data<float>()[2], ((4 * 7 + 2) % 256) / 255.0f);
  EXPECT_THROW(test.get(5), IndexError);
}

TEST(Mnist, DataDirFromEnvironment) {
  TempDir dir;
  std::filesystem::create_directory(dir.file("fashion-mnist"));
  testing::write_mnist(dir.file("fashion-mnist"), "t10k", 3, true);
  ::setenv("CREW_DATA_DIR", dir.path().c_str(), 1);
  FashionMNIST ds({.mode = "test"});
  ::unsetenv("CREW_DATA_DIR");
  EXPECT_EQ(ds.size(), 3);
  EXPECT_EQ(ds.dir(), dir.file("fashion-mnist"));
}

TEST(Mnist, MissingDataSetSaysWhereAndHow) {
  TempDir dir;
  expect_io_error([&] { FashionMNIST({.mode = "train", .data_dir = dir.path()}); },
                  {dir.path(), "train-images-idx3-ubyte", "apt-get install dataset-fashion-mnist"});
  EXPECT_THROW(FashionMNIST({.mode = "val", .data_dir = dir.path()}), ValueError);
}

TEST(Mnist, CorruptFilesNameFileAndOffset) {
  TempDir dir;
  const std::string img = dir.file("train-images-idx3-ubyte"), lab = dir.file("train-labels-idx1-ubyte");
  auto load = [&] { FashionMNIST({.mode = "train", .data_dir = dir.path()}); };
  testing::write_mnist(dir.path(), "train", 4, false);
  Bytes good = testing::idx_bytes({4, 28, 28}, testing::mnist_pixels(4, 28, 28));

  Bytes bad_magic = good;
  bad_magic[0] = 0x42;
  testing::write_bytes(img, bad_magic);
  expect_io_error(load, {img, "bad magic at offset 0"});

  Bytes wrong_dims = testing::idx_bytes({4, 28 * 28}, testing::mnist_pixels(4, 28, 28));
  testing::write_bytes(img, wrong_dims);
  expect_io_error(load, {img, "2 dims at offset 3, expected 3"});

  Bytes short_read(good.begin(), good.end() - 100);
  testing::write_bytes(img, short_read);
  expect_io_error(load, {img, "truncated data", "offset 16"});

  testing::write_bytes(img, good);
  testing::write_bytes(lab, testing::idx_bytes({3}, testing::mnist_labels(3)));
  expect_io_error(load, {lab, "3 labels", "4 images"});

  testing::write_bytes(lab, testing::idx_bytes({4}, Bytes{1, 2, 200, 3}));
  expect_io_error(load, {lab, "label 200 at offset 10"});
}

TEST(Mnist, BadAndTruncatedGzip) {
  TempDir dir;
  testing::write_mnist(dir.path(), "train", 4, false);
  std::remove(dir.file("train-images-idx3-ubyte").c_str());
  const std::string gz = dir.file("train-images-idx3-ubyte.gz");
  Bytes packed = testing::gzip_bytes(testing::idx_bytes({4, 28, 28}, testing::mnist_pixels(4, 28, 28)));
  auto load = [&] { FashionMNIST({.mode = "train", .data_dir = dir.path()}); };

  testing::write_bytes(
      gz, Bytes(packed.begin(), packed.begin() + static_cast<std::ptrdiff_t>(packed.size() / 2)));
  expect_io_error(load, {gz, "truncated gzip data", "offset"});

  Bytes garbled = packed;
  for (size_t k = 12; k < 40 && k < garbled.size(); ++k) garbled[k] ^= 0xa5;
  testing::write_bytes(gz, garbled);
  expect_io_error(load, {gz, "offset"});
}

TEST(Cifar10, ReadsBatchFilesAndTarGz) {
  TempDir dir;
  std::string bin = dir.file("cifar-10-batches-bin");
  std::filesystem::create_directory(bin);
  std::vector<std::pair<std::string, Bytes>> members;
  for (int b = 1; b <= 5; ++b) {
    Bytes recs = testing::cifar_records(static_cast<uint32_t>((b - 1) * 3), 3);
    std::string name = "data_batch_" + std::to_string(b) + ".bin";
    testing::write_bytes(bin + "/" + name, recs);
    members.push_back({"cifar-10-batches-bin/" + name, recs});
  }
  testing::write_bytes(bin + "/test_batch.bin", testing::cifar_records(100, 2));
  members.push_back({"cifar-10-batches-bin/test_batch.bin", testing::cifar_records(100, 2)});

  Cifar10 train({.mode = "train", .data_dir = bin});
  ASSERT_EQ(train.size(), 15);
  Sample s = train.get(7);  // record 7: label 7, pixel (y, x, c) = (7 + c * 50 + y * 32 + x) % 256
  EXPECT_EQ(s[0].shape(), (Shape{32, 32, 3}));
  EXPECT_EQ(s[1].item(), 7);
  const uint8_t* px = s[0].data<uint8_t>();
  EXPECT_EQ(px[(2 * 32 + 5) * 3 + 1], (7 + 50 + 2 * 32 + 5) % 256);

  // The parent dir (holding cifar-10-batches-bin) works too.
  EXPECT_EQ(Cifar10({.mode = "test", .data_dir = dir.path()}).size(), 2);

  TempDir arch;
  testing::write_bytes(arch.file("cifar-10-binary.tar.gz"), testing::gzip_bytes(testing::tar_bytes(members)));
  Cifar10 from_tar({.mode = "train", .data_dir = arch.path(), .transform = std::make_shared<ToTensor>()});
  ASSERT_EQ(from_tar.size(), 15);
  Sample t = from_tar.get(7);
  EXPECT_EQ(t[0].shape(), (Shape{3, 32, 32}));
  EXPECT_FLOAT_EQ(t[0].data<float>()[1 * 1024 + 2 * 32 + 5], ((7 + 50 + 2 * 32 + 5) % 256) / 255.0f);
  EXPECT_EQ(Cifar10({.mode = "test", .data_dir = arch.file("cifar-10-binary.tar.gz")}).size(), 2);
}

TEST(Cifar10, FromArraysMatchesTheBinaryRecords) {
  Bytes recs = testing::cifar_records(4, 3);  // labels 4, 5, 6
  std::vector<uint8_t> images;
  std::vector<int64_t> labels;
  for (size_t r = 0; r < 3; ++r) {
    labels.push_back(recs[r * Cifar10::kRecordBytes]);
    images.insert(images.end(), recs.begin() + static_cast<long>(r * Cifar10::kRecordBytes + 1),
                  recs.begin() + static_cast<long>((r + 1) * Cifar10::kRecordBytes));
  }
  Cifar10 ds = Cifar10::from_arrays(images, labels, "arrays", {.mode = "test"});
  ASSERT_EQ(ds.size(), 3);
  Sample s = ds.get(1);
  EXPECT_EQ(s[1].item(), 5);
  EXPECT_EQ(s[0].data<uint8_t>()[(2 * 32 + 5) * 3 + 1], (5 + 50 + 2 * 32 + 5) % 256);
  EXPECT_EQ(ds.source(), "arrays");
  labels[2] = 10;
  EXPECT_THROW(Cifar10::from_arrays(images, labels, "arrays"), ValueError);
  images.pop_back();
  EXPECT_THROW(Cifar10::from_arrays(images, {4, 5, 6}, "arrays"), ValueError);
}

TEST(Cifar10, MissingTruncatedAndCorrupt) {
  TempDir dir;
  expect_io_error([&] { Cifar10({.data_dir = dir.path()}); },
                  {dir.path(), "cifar-10-binary.tar.gz", "https://"});
  for (int b = 1; b <= 5; ++b)
    testing::write_bytes(dir.file("data_batch_" + std::to_string(b) + ".bin"), testing::cifar_records(0, 2));
  Bytes cut = testing::cifar_records(0, 2);
  cut.resize(cut.size() - 10);
  testing::write_bytes(dir.file("data_batch_3.bin"), cut);
  expect_io_error([&] { Cifar10({.data_dir = dir.path()}); }, {"data_batch_3.bin", "offset 3073"});
  Bytes bad_label = testing::cifar_records(0, 2);
  bad_label[3073] = 77;
  testing::write_bytes(dir.file("data_batch_3.bin"), bad_label);
  expect_io_error([&] { Cifar10({.data_dir = dir.path()}); },
                  {"data_batch_3.bin", "label 77 at offset 3073"});

  TempDir arch;
  Bytes tar = testing::tar_bytes({{"cifar-10-batches-bin/test_batch.bin", testing::cifar_records(0, 1)}});
  tar[20] ^= 0x11;  // inside the first header's name: checksum mismatch
  testing::write_bytes(arch.file("cifar-10-binary.tar.gz"), testing::gzip_bytes(tar));
  expect_io_error([&] { Cifar10({.mode = "test", .data_dir = arch.path()}); },
                  {"checksum mismatch at offset 0"});
  Bytes short_tar =
      testing::tar_bytes({{"cifar-10-batches-bin/test_batch.bin", testing::cifar_records(0, 2)}});
  short_tar.resize(2000);
  testing::write_bytes(arch.file("cifar-10-binary.tar.gz"), testing::gzip_bytes(short_tar));
  expect_io_error([&] { Cifar10({.mode = "test", .data_dir = arch.path()}); },
                  {"truncated archive", "offset 0"});
}

// Found by fuzz/fuzz_idx.cpp: 2^28 x 2^28 x 2^8 elements wrap uint64 to 0, so a 16-byte
// header with no data used to pass as a "valid" array whose dims promise 2^64 bytes.
TEST(Idx, ExtentsWhoseProductWrapsAreRejected) {
  Bytes wrap = testing::idx_bytes({1u << 28, 1u << 28, 1u << 8}, {});
  expect_io_error([&] { parse_idx_uint8(wrap, 3, "wrap.idx"); }, {"wrap.idx", "2^64", "offset 12"});
  IdxArray ok = parse_idx_uint8(testing::idx_bytes({2, 3}, Bytes(6, 7)), 2, "ok.idx");
  EXPECT_EQ(ok.dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ok.data.size(), 6u);
}

TEST(Cifar10, FromArchiveBytesInMemory) {
  std::vector<std::pair<std::string, Bytes>> members;
  for (int b = 1; b <= 5; ++b)
    members.push_back({"cifar-10-batches-bin/data_batch_" + std::to_string(b) + ".bin",
                       testing::cifar_records(static_cast<uint32_t>(b - 1), 1)});
  members.push_back({"cifar-10-batches-bin/test_batch.bin", testing::cifar_records(100, 2)});
  Bytes tar = testing::tar_bytes(members);
  Cifar10 train = Cifar10::from_archive_bytes(tar, "mem.tar");
  EXPECT_EQ(train.size(), 5);
  EXPECT_EQ(train.source(), "mem.tar");
  EXPECT_EQ(train.get(3)[1].item(), 3);
  EXPECT_EQ(Cifar10::from_archive_bytes(testing::gzip_bytes(tar), "mem.tar.gz", {.mode = "test"}).size(), 2);
  members.pop_back();
  expect_io_error(
      [&] { Cifar10::from_archive_bytes(testing::tar_bytes(members), "mem.tar", {.mode = "test"}); },
      {"mem.tar", "test_batch.bin"});
}

TEST(FileBytes, GunzipConcatenatedMembers) {
  Bytes a = {1, 2, 3}, b = {4, 5};
  Bytes gz = testing::gzip_bytes(a);
  Bytes gzb = testing::gzip_bytes(b);
  gz.insert(gz.end(), gzb.begin(), gzb.end());
  EXPECT_EQ(gunzip(gz, "test"), (Bytes{1, 2, 3, 4, 5}));
}

TEST(FileBytes, GunzipStopsAtTheLimit) {
  Bytes gz = testing::gzip_bytes(Bytes(1000, 9));
  EXPECT_EQ(gunzip(gz, "t", 1000).size(), 1000u);
  expect_io_error([&] { gunzip(gz, "t.gz", 999, "because"); }, {"t.gz", "more than 999 bytes", "because"});
  EXPECT_EQ(gunzip_prefix(gz, "t", 10), Bytes(10, 9));
  EXPECT_EQ(gunzip_prefix(gz, "t", 5000).size(), 1000u);
}

// A gzip bomb: a header that declares 2 x 3 bytes, then 16 MiB of zeros (16 KiB compressed).
// Inflating stops just past the declared 18 bytes instead of allocating all of it.
TEST(Idx, GzipBombStopsAtTheSizeTheHeaderDeclares) {
  TempDir dir;
  const std::string path = dir.file("bomb-idx2-ubyte.gz");
  testing::write_bytes(path, testing::gzip_bytes(testing::idx_bytes({2, 3}, Bytes(size_t{16} << 20, 0))));
  expect_io_error(
      [&] { read_idx_uint8(path, 2); },
      {path, "more than 18 bytes", "the IDX header declares 6 data bytes after a 12-byte header"});
  testing::write_bytes(path, testing::gzip_bytes(testing::idx_bytes({2, 3}, Bytes(6, 1))));
  EXPECT_EQ(read_idx_uint8(path, 2).data, Bytes(6, 1));
}

// A FIFO (or a device) opened for reading used to block until a writer came; now it is
// refused at once.
TEST(FileBytes, FifoIsAValueErrorNotAHang) {
  TempDir dir;
  const std::string fifo = dir.file("t10k-images-idx3-ubyte");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  try {
    read_file_bytes(fifo);
    ADD_FAILURE() << "no ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("is a FIFO, not a regular file"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_file_bytes(dir.path()), ValueError);
  EXPECT_THROW(read_file_bytes("/dev/zero"), ValueError);
}

}  // namespace
}  // namespace crew::io

namespace crew::io {
namespace {

// The Debian package's files (apt-get install dataset-fashion-mnist), when installed.
TEST(FashionMnistInstalled, SplitsHaveTheOfficialSizesAndBalancedClasses) {
  if (!file_exists(std::string(FashionMNIST::kDefaultDir) + "/t10k-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  }
  FashionMNIST test({.mode = "test", .data_dir = FashionMNIST::kDefaultDir});
  ASSERT_EQ(test.size(), 10000);
  EXPECT_EQ(test.height(), 28);
  std::vector<int> per_class(10, 0);
  for (int64_t i = 0; i < test.size(); ++i) ++per_class[static_cast<size_t>(test.get(i)[1].item())];
  for (int c : per_class) EXPECT_EQ(c, 1000);
}

}  // namespace
}  // namespace crew::io

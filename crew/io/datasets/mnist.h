#pragma once
// MNIST and Fashion-MNIST from their IDX files (gzipped or not), as paddle.vision.datasets.
// The whole split is read into memory (uint8) at construction; get(i) decodes one sample:
// {image, label int64 []}, the image uint8 [28, 28] or, with a transform, what it returns
// (ToTensor: float32 [1, 28, 28] in [0, 1]).
//
//   crew::io::FashionMNIST train({.mode = "train", .transform = std::make_shared<crew::io::ToTensor>()});
#include <cstdint>
#include <string>
#include <vector>

#include "crew/io/dataset.h"
#include "crew/io/transforms/transform.h"

namespace crew::io {

struct MnistOptions {
  std::string mode = "train";  // "train" or "test"
  std::string data_dir;        // "" = $CREW_DATA_DIR/<name>, $CREW_DATA_DIR, else the default dir
  TransformPtr transform;      // applied to the uint8 [28, 28] image; null = none
};

// The MNIST file layout: <dir>/{train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz].
class MNIST : public Dataset {
 public:
  static constexpr const char* kDefaultDir = "/usr/share/datasets/mnist";
  explicit MNIST(MnistOptions options = {});
  int64_t size() const override { return count_; }
  Sample get(int64_t index) const override;
  int64_t height() const { return height_; }
  int64_t width() const { return width_; }
  // The directory the files were read from.
  const std::string& dir() const { return dir_; }

 protected:
  MNIST(MnistOptions options, const char* name, const char* subdir, const char* default_dir, const char* hint);

 private:
  MnistOptions options_;
  std::string dir_;
  int64_t count_ = 0, height_ = 0, width_ = 0;
  std::vector<uint8_t> images_;  // count * height * width
  std::vector<uint8_t> labels_;  // count
};

// Same format; default directory where Debian's dataset-fashion-mnist package installs it.
class FashionMNIST : public MNIST {
 public:
  static constexpr const char* kDefaultDir = "/usr/share/datasets/fashion-mnist";
  explicit FashionMNIST(MnistOptions options = {});
};

}  // namespace crew::io

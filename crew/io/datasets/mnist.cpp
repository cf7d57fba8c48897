#include "crew/io/datasets/mnist.h"

#include <cstring>

#include "crew/core/check.h"
#include "crew/io/datasets/data_dir.h"
#include "crew/io/datasets/idx.h"
#include "crew/io/file_bytes.h"

namespace crew::io {
namespace {

// Path of <dir>/<stem>.gz or <dir>/<stem>, "" if neither exists.
std::string find_file(const std::string& dir, const std::string& stem) {
  for (const std::string& p : {dir + "/" + stem + ".gz", dir + "/" + stem}) {
    if (file_exists(p)) return p;
  }
  return "";
}

}  // namespace

MNIST::MNIST(MnistOptions options)
    : MNIST(std::move(options), "MNIST", "mnist", kDefaultDir,
            "download train/t10k-images-idx3-ubyte.gz and -labels-idx1-ubyte.gz from "
            "http://yann.lecun.com/exdb/mnist/ into that directory") {}

MNIST::MNIST(MnistOptions options, const char* name, const char* subdir, const char* default_dir, const char* hint)
    : options_(std::move(options)) {
  CREW_CHECK(options_.mode == "train" || options_.mode == "test", name, ": mode must be \"train\" or \"test\", got \"",
             options_.mode, "\"");
  const std::string prefix = options_.mode == "train" ? "train" : "t10k";
  const std::string image_stem = prefix + "-images-idx3-ubyte";
  const std::string label_stem = prefix + "-labels-idx1-ubyte";
  const std::vector<std::string> dirs = detail::data_dirs(options_.data_dir, subdir, default_dir);
  std::string image_path, label_path;
  for (const std::string& d : dirs) {
    image_path = find_file(d, image_stem);
    label_path = find_file(d, label_stem);
    if (!image_path.empty() && !label_path.empty()) {
      dir_ = d;
      break;
    }
  }
  if (dir_.empty()) {
    CREW_THROW(IOError, name, " (", options_.mode, "): ", image_stem, "[.gz] and ", label_stem,
               "[.gz] not found; looked in: ", detail::join(dirs), ". To get it: ", hint,
               " (or pass data_dir / set CREW_DATA_DIR)");
  }
  IdxArray images = read_idx_uint8(image_path, 3);
  IdxArray labels = read_idx_uint8(label_path, 1);
  CREW_CHECK_T(IOError, images.dims[0] == labels.dims[0], name, ": ", label_path, " holds ", labels.dims[0],
               " labels (count at offset 4) but ", image_path, " holds ", images.dims[0], " images");
  for (size_t k = 0; k < labels.data.size(); ++k) {
    CREW_CHECK_T(IOError, labels.data[k] < 10, name, ": ", label_path, ": label ", int{labels.data[k]},
                 " at offset ", 8 + k, " is not a class in 0..9");
  }
  count_ = images.dims[0];
  height_ = images.dims[1];
  width_ = images.dims[2];
  images_ = std::move(images.data);
  labels_ = std::move(labels.data);
}

Sample MNIST::get(int64_t index) const {
  check_sample_index("MNIST::get", index, count_);
  const int64_t pixels = height_ * width_;
  Tensor image = Tensor::from_bytes(images_.data() + index * pixels, {height_, width_}, DType::UINT8);
  Tensor label = Tensor::scalar(static_cast<double>(labels_[static_cast<size_t>(index)]), DType::INT64);
  if (options_.transform) image = (*options_.transform)(image);
  return {image, label};
}

FashionMNIST::FashionMNIST(MnistOptions options)
    : MNIST(std::move(options), "FashionMNIST", "fashion-mnist", kDefaultDir,
            "apt-get install dataset-fashion-mnist, or download the four .gz files from "
            "https://github.com/zalandoresearch/fashion-mnist into that directory") {}

}  // namespace crew::io

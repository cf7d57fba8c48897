#pragma once
// CIFAR-10 from the official binary release (https://www.cs.toronto.edu/~kriz/cifar.html):
// records of 1 label byte + 3072 image bytes (R, G, B planes of 32x32), in
// data_batch_1..5.bin (train) and test_batch.bin (test). data_dir may be the directory of
// those files (cifar-10-batches-bin), a directory holding cifar-10-binary.tar.gz, or the
// .tar.gz itself, which is read directly (gunzip + tar in memory).
// get(i) returns {image, label int64 []}: the image uint8 [32, 32, 3] (HWC, as Paddle), or
// what the transform returns (ToTensor: float32 [3, 32, 32]).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "crew/io/dataset.h"
#include "crew/io/transforms/transform.h"

namespace crew::io {

struct Cifar10Options {
  std::string mode = "train";  // "train" or "test"
  std::string data_dir;        // "" = $CREW_DATA_DIR/cifar10, $CREW_DATA_DIR, else kDefaultDir
  TransformPtr transform;
  int64_t num_classes = 10;    // labels in [0, num_classes): 100 for CIFAR-100 (from_arrays)
};

class Cifar10 : public Dataset {
 public:
  static constexpr const char* kDefaultDir = "/usr/share/datasets/cifar10";
  static constexpr int64_t kRecordBytes = 3073;
  explicit Cifar10(Cifar10Options options = {});
  // The records of a cifar-10-binary.tar(.gz) archive already in memory (options.data_dir is
  // ignored); `what` names the archive in errors and source().
  static Cifar10 from_archive_bytes(std::vector<uint8_t> archive, const std::string& what,
                                    Cifar10Options options = {});
  // Decoded records: images size() * 3072 bytes (R, G, B planes of 32x32 per image, as in
  // both archives) and labels in [0, options.num_classes), e.g. from the Python-version
  // archives (cifar-10-python.tar.gz, cifar-100-python.tar.gz), which python/crew unpickles. ValueError on a size mismatch or
  // a label out of range; `what` names the source in errors and source().
  static Cifar10 from_arrays(std::vector<uint8_t> images, const std::vector<int64_t>& labels,
                             const std::string& what, Cifar10Options options = {});
  int64_t size() const override { return static_cast<int64_t>(labels_.size()); }
  Sample get(int64_t index) const override;
  // Where the records came from (a directory or the archive).
  const std::string& source() const { return source_; }

 private:
  struct FromBytes {};
  Cifar10(Cifar10Options options, FromBytes) : options_(std::move(options)) {}
  // Reads the mode's batch files from a tar archive's bytes (gunzipped first if gzip).
  void read_archive(std::vector<uint8_t> raw, const std::string& archive);
  // Appends the records of one batch file's bytes; `what` names it in errors.
  void add_records(const uint8_t* data, size_t size, const std::string& what);
  Cifar10Options options_;
  std::string source_;
  std::vector<uint8_t> images_;  // size() * 3072, HWC (interleaved from the file's planes)
  std::vector<uint8_t> labels_;
};

}  // namespace crew::io

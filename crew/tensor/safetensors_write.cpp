// Writing safetensors files atomically: temp file beside the target, fsync, rename, fsync
// of the directory. The temporary file is removed if anything fails.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "crew/core/check.h"
#include "crew/tensor/safetensors.h"
#include "crew/tensor/safetensors_checksum.h"
#include "crew/tensor/safetensors_file.h"
#include "crew/tensor/safetensors_json.h"

namespace crew {
namespace {

namespace json = detail::json;

std::string build_header(const StateDict& sd, const std::map<std::string, std::string>& metadata,
                         const std::string& path) {
  std::string h = "{";
  bool first = true;
  if (!metadata.empty()) {
    h += "\"__metadata__\":{";
    for (const auto& [key, value] : metadata) {
      if (!first) h += ',';
      first = false;
      h += json::quote(key) + ":" + json::quote(value);
    }
    h += '}';
    first = false;
  }
  uint64_t offset = 0;
  for (const auto& [name, t] : sd) {
    CREW_CHECK(name != "__metadata__", "save '", path, "': '__metadata__' is reserved, not a tensor name");
    if (!first) h += ',';
    first = false;
    h += json::quote(name) + ":{\"dtype\":\"" + safetensors_dtype(t.dtype()) + "\",\"shape\":[";
    for (size_t i = 0; i < t.shape().size(); ++i) {
      if (i > 0) h += ',';
      h += std::to_string(t.shape()[i]);
    }
    uint64_t end = offset + t.nbytes();
    h += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(end) + "]}";
    offset = end;
  }
  h += '}';
  // Pad with spaces so the data section starts 8-byte aligned (as the reference writer does).
  while ((h.size() % 8) != 0) h += ' ';
  return h;
}

uint32_t checksum(const StateDict& sd, const std::map<std::string, std::string>& metadata) {
  detail::Crc32c crc;
  detail::digest_metadata(crc, metadata);
  for (const auto& [name, t] : sd) {
    detail::digest_tensor(crc, name, safetensors_dtype(t.dtype()), t.shape());
    crc.update(t.raw_data(), t.nbytes());
  }
  return crc.value();
}

std::string directory_of(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string temp_path_for(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  return str_cat(path, ".tmp.", ::getpid(), ".", counter.fetch_add(1));
}

// Removes the temporary file unless disarmed.
struct TempFileGuard {
  std::string path;
  bool armed = true;
  ~TempFileGuard() {
    if (armed) ::unlink(path.c_str());
  }
};

// `sd` itself when every tensor is in host memory, else a copy whose device tensors are copied
// to the host (a model trained on a GPU saves as one trained on the CPU).
StateDict on_host(const StateDict& sd) {
  bool all_host = true;
  for (const auto& [name, t] : sd) all_host = all_host && t.place().host_accessible();
  if (all_host) return sd;
  StateDict out;
  for (const auto& [name, t] : sd) out.insert(name, t.place().host_accessible() ? t : t.cpu());
  return out;
}

}  // namespace

void save(const StateDict& device_state_dict, const std::string& path,
          const std::map<std::string, std::string>& metadata) {
  const StateDict state_dict = on_host(device_state_dict);
  CREW_CHECK(!path.empty(), "save: empty path");
  CREW_CHECK(metadata.count(detail::kChecksumKey) == 0, "save '", path, "': metadata key '",
             detail::kChecksumKey, "' is reserved for crew's checksum");
  std::map<std::string, std::string> full_metadata = metadata;
  full_metadata[detail::kChecksumKey] = detail::format_checksum(checksum(state_dict, metadata));
  std::string header = build_header(state_dict, full_metadata, path);
  std::string tmp = temp_path_for(path);

  detail::UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (!fd.valid()) {
    throw IOError(errno_message(str_cat("save '", path, "': cannot create temporary file '", tmp, "'")));
  }
  TempFileGuard guard{tmp};

  unsigned char len_bytes[8];
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) len_bytes[i] = static_cast<unsigned char>((n >> (8 * i)) & 0xFF);
  detail::write_full(fd.get(), len_bytes, 8, tmp);
  detail::write_full(fd.get(), header.data(), header.size(), tmp);
  for (const auto& [name, t] : state_dict) {
    if (t.nbytes() > 0) detail::write_full(fd.get(), t.raw_data(), t.nbytes(), tmp);
  }
  if (::fsync(fd.get()) != 0) throw IOError(errno_message(str_cat("save: fsync '", tmp, "'")));
  fd.close_or_throw("save", tmp);

  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    throw IOError(errno_message(str_cat("save: rename '", tmp, "' to '", path, "'")));
  }
  guard.armed = false;

  std::string dir = directory_of(path);
  detail::UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dfd.valid()) throw IOError(errno_message(str_cat("save '", path, "': open directory '", dir, "'")));
  if (::fsync(dfd.get()) != 0) {
    throw IOError(errno_message(str_cat("save '", path, "': fsync directory '", dir, "'")));
  }
}

}  // namespace crew

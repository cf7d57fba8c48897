#include "crew/tensor/checkpoint_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>

#include "crew/core/check.h"
#include "crew/core/error.h"
#include "crew/core/logging.h"
#include "crew/core/unique_fd.h"
#include "crew/tensor/safetensors.h"

namespace crew {
namespace {

namespace fs = std::filesystem;

constexpr const char* kManifest = "MANIFEST.safetensors";
constexpr const char* kStepKey = "crew_checkpoint_step";
constexpr const char* kPartsKey = "crew_checkpoint_parts";
constexpr const char* kMetaPrefix = "meta.";
constexpr const char* kStepPrefix = "step-";
constexpr const char* kTmpPrefix = ".tmp-";

bool valid_part_name(const std::string& name) {
  if (name.empty() || name == "MANIFEST") return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

// Parses "step-<digits>"; -1 when the name is something else.
int64_t parse_step_name(const std::string& name) {
  const std::string prefix = kStepPrefix;
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return -1;
  int64_t step = 0;
  for (size_t i = prefix.size(); i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9' || step > (INT64_MAX - 9) / 10) return -1;
    step = step * 10 + (name[i] - '0');
  }
  return step;
}

void fsync_dir(const std::string& dir, const std::string& op) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) throw IOError(str_cat(op, ": open directory '", dir, "': ", std::strerror(errno)));
  if (::fsync(fd.get()) != 0)
    throw IOError(str_cat(op, ": fsync directory '", dir, "': ", std::strerror(errno)));
}

void remove_tree(const fs::path& path, const std::string& op) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) throw IOError(str_cat(op, ": remove '", path.string(), "': ", ec.message()));
}

// Removes a temporary directory on scope exit unless disarmed: a write that fails (a full
// disk) leaves nothing behind, so retries on a full disk do not eat more space.
struct TempDirGuard {
  fs::path path;
  bool armed = true;
  ~TempDirGuard() {
    if (!armed) return;
    std::error_code ec;
    fs::remove_all(path, ec);
    if (ec) {
      CREW_LOG(WARNING) << "write_checkpoint: cannot remove '" << path.string() << "': " << ec.message();
    }
  }
};

// Creates dir (and missing parents) when missing; a directory created here is 0700, so the
// checkpoints are not readable by other users. An existing directory keeps its mode.
void create_private_directory(const std::string& dir, const std::string& op) {
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return;
  fs::create_directories(dir, ec);
  if (ec) throw IOError(str_cat(op, ": create directory: ", ec.message()));
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  if (ec) throw IOError(str_cat(op, ": chmod 0700 '", dir, "': ", ec.message()));
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (begin <= s.size() && !s.empty()) {
    size_t end = s.find(',', begin);
    if (end == std::string::npos) end = s.size();
    out.push_back(s.substr(begin, end - begin));
    begin = end + 1;
  }
  return out;
}

bool verifies(const std::string& dir, int64_t step) {
  try {
    load_checkpoint(dir, step);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// Removes the checkpoints superseded by `keep` newer ones that verify (`written`, just
// written, counts without a reread), and leftover temporary directories. A checkpoint that
// does not verify is never removed and never counts: a corrupt or unfinished one is the
// user's to inspect, and a good one is not given up for it.
void prune(const std::string& dir, int64_t written, int keep, const std::string& op) {
  int good_newer = 0;
  for (int64_t step : list_checkpoints(dir)) {
    const bool good = step == written || verifies(dir, step);
    if (good && good_newer >= keep) remove_tree(fs::path(dir) / checkpoint_dir_name(step), op);
    if (good) ++good_newer;
  }
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind(kTmpPrefix, 0) == 0) remove_tree(entry.path(), op);
  }
}

}  // namespace

std::string checkpoint_dir_name(int64_t step) {
  CREW_CHECK(step >= 0, "checkpoint_dir_name: step must be >= 0, got ", step);
  std::string digits = std::to_string(step);
  if (digits.size() < 12) digits.insert(0, 12 - digits.size(), '0');
  return kStepPrefix + digits;
}

std::vector<int64_t> list_checkpoints(const std::string& dir) {
  std::vector<int64_t> steps;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return steps;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const int64_t step = parse_step_name(entry.path().filename().string());
    if (step >= 0 && entry.is_directory()) steps.push_back(step);
  }
  std::sort(steps.begin(), steps.end(), std::greater<>());
  return steps;
}

std::string write_checkpoint(const std::string& dir, int64_t step,
                             const std::map<std::string, StateDict>& parts,
                             const std::map<std::string, std::string>& metadata,
                             CheckpointWriteOptions options) {
  const std::string op = str_cat("write_checkpoint '", dir, "' step ", step);
  CREW_CHECK(step >= 0, op, ": step must be >= 0");
  CREW_CHECK(options.keep >= 1, op, ": keep must be >= 1, got ", options.keep);
  CREW_CHECK(!parts.empty(), op, ": no parts to write");
  std::vector<std::string> names;
  for (const auto& [name, sd] : parts) {
    CREW_CHECK(valid_part_name(name), op, ": part name '", name, "' is not [A-Za-z0-9_-]+ (or is MANIFEST)");
    names.push_back(name);
  }
  std::error_code ec;
  create_private_directory(dir, op);

  const std::string final_name = checkpoint_dir_name(step);
  const fs::path tmp = fs::path(dir) / str_cat(kTmpPrefix, final_name, "-", ::getpid());
  remove_tree(tmp, op);
  if (::mkdir(tmp.c_str(), 0700) != 0)
    throw IOError(errno_message(str_cat(op, ": create '", tmp.string(), "'")));
  TempDirGuard guard{tmp};
  for (const auto& [name, sd] : parts) save(sd, (tmp / (name + ".safetensors")).string());

  std::map<std::string, std::string> manifest{{kStepKey, std::to_string(step)}, {kPartsKey, join(names)}};
  for (const auto& [key, value] : metadata) manifest[kMetaPrefix + key] = value;
  StateDict manifest_sd;
  manifest_sd.insert("step", Tensor::scalar(static_cast<double>(step), DType::INT64));
  save(manifest_sd, (tmp / kManifest).string(), manifest);  // last: its presence means complete
  for (const auto& entry : fs::directory_iterator(tmp)) {
    // save() creates files 0644 (less the umask); a checkpoint is the owner's only.
    if (::chmod(entry.path().c_str(), 0600) != 0) {
      throw IOError(errno_message(str_cat(op, ": chmod 0600 '", entry.path().string(), "'")));
    }
  }
  fsync_dir(tmp.string(), op);

  const fs::path target = fs::path(dir) / final_name;
  if (fs::exists(target, ec)) {
    // Rewriting a step (after a resume): move the old one aside first; a crash here leaves
    // the older checkpoints, never a broken step-<step>.
    const fs::path old = fs::path(dir) / str_cat(kTmpPrefix, "old-", final_name, "-", ::getpid());
    remove_tree(old, op);
    fs::rename(target, old, ec);
    if (ec) throw IOError(str_cat(op, ": rename '", target.string(), "' aside: ", ec.message()));
  }
  fs::rename(tmp, target, ec);
  if (ec)
    throw IOError(str_cat(op, ": rename '", tmp.string(), "' to '", target.string(), "': ", ec.message()));
  guard.armed = false;
  fsync_dir(dir, op);
  prune(dir, step, options.keep, op);
  return target.string();
}

LoadedCheckpoint load_checkpoint(const std::string& dir, int64_t step) {
  LoadedCheckpoint out;
  out.step = step;
  out.path = (fs::path(dir) / checkpoint_dir_name(step)).string();
  const std::string manifest_path = (fs::path(out.path) / kManifest).string();
  std::map<std::string, std::string> manifest = load_metadata(manifest_path);
  load(manifest_path);  // verifies the manifest's own checksum
  auto step_it = manifest.find(kStepKey);
  auto parts_it = manifest.find(kPartsKey);
  if (step_it == manifest.end() || parts_it == manifest.end()) {
    throw ValueError(str_cat("load_checkpoint: '", manifest_path, "' is not a checkpoint manifest (no ",
                             kStepKey, " / ", kPartsKey, ")"));
  }
  if (step_it->second != std::to_string(step)) {
    throw ValueError(str_cat("load_checkpoint: '", manifest_path, "' says step ", step_it->second,
                             ", its directory says ", step));
  }
  for (const std::string& name : split(parts_it->second)) {
    if (!valid_part_name(name)) {
      throw ValueError(str_cat("load_checkpoint: '", manifest_path, "' lists a bad part name '", name, "'"));
    }
    out.parts.emplace(name, load((fs::path(out.path) / (name + ".safetensors")).string()));
  }
  const std::string prefix = kMetaPrefix;
  for (const auto& [key, value] : manifest) {
    if (key.compare(0, prefix.size(), prefix) == 0) out.metadata.emplace(key.substr(prefix.size()), value);
  }
  return out;
}

std::optional<LoadedCheckpoint> load_newest_checkpoint(const std::string& dir,
                                                       std::vector<std::string>* skipped) {
  for (int64_t step : list_checkpoints(dir)) {
    try {
      return load_checkpoint(dir, step);
    } catch (const std::exception& e) {
      const std::string why = str_cat(checkpoint_dir_name(step), ": ", e.what());
      CREW_LOG(WARNING) << "checkpoint skipped (falling back to an older one): " << why;
      if (skipped) skipped->push_back(why);
    }
  }
  return std::nullopt;
}

}  // namespace crew

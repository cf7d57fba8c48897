#pragma once
// ShmSegment: RAII owner of one mapped POSIX shared-memory object (internal to the shm backend).
//
//   auto seg = ShmSegment::create("/crew-shm-job-default-1a2b", bytes, "/dev/shm");
//   ...                      // peers ShmSegment::open the same name
//   seg.unlink();            // once every rank has mapped it; the mapping stays valid
#include <sys/types.h>

#include <cstddef>
#include <string>

namespace crew::dist::detail {

class ShmSegment {
 public:
  ShmSegment() = default;
  // Creates (O_EXCL), reserves (posix_fallocate: no SIGBUS later) and maps `bytes`.
  // Throws BackendUnavailableError (a CommError) when shm_dir has less free space than needed
  // or the space runs out (ENOSPC, ENOMEM), naming both sizes; CommError for other failures.
  // max_bytes > 0 caps the space this process may use (a test hook: CREW_SHM_MAX_BYTES).
  static ShmSegment create(const std::string& name, size_t bytes, const std::string& shm_dir,
                           size_t max_bytes = 0);
  // Maps an existing segment whose name a peer sent; throws CommError when it is missing or
  // smaller than `bytes`, or is not this job's (see check_peer_segment), and
  // BackendUnavailableError when the mapping fails for lack of memory (or exceeds max_bytes).
  static ShmSegment open(const std::string& name, size_t bytes, size_t max_bytes,
                         const std::string& job_prefix);

  ShmSegment(ShmSegment&& other) noexcept;
  ShmSegment& operator=(ShmSegment&& other) noexcept;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;
  // Unmaps; a creator that never unlinked unlinks too.
  ~ShmSegment();

  // Removes the name from /dev/shm (idempotent; a name already gone is fine).
  void unlink();
  void* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& name() const { return name_; }

 private:
  void reset() noexcept;
  std::string name_;
  void* data_ = nullptr;
  size_t size_ = 0;
  bool owner_ = false;
  bool unlinked_ = false;
};

// A segment named by a peer (through the store) is mapped only if it is this job's: its name
// starts with `job_prefix`, this user owns it and no one else may open it (mode 0600). Otherwise
// another local user who wrote a name into the store could make this rank map (and use as its
// collective buffer) a segment that user controls. Throws CommError saying which check failed.
void check_peer_segment(const std::string& name, const std::string& job_prefix);
void check_peer_segment_owner(const std::string& name, uid_t owner, mode_t mode);

// Free bytes available to unprivileged users in the filesystem at `dir` (statvfs).
size_t free_bytes_at(const std::string& dir);

}  // namespace crew::dist::detail

#include "crew/distributed/backends/shm/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "crew/core/check.h"
#include "crew/core/error.h"
#include "crew/distributed/backends/backend_unavailable.h"

namespace crew::dist::detail {
namespace {

// Closes an fd at scope exit; the mapping outlives it.
struct FdGuard {
  int fd;
  ~FdGuard() {
    if (fd >= 0) ::close(fd);
  }
};

void* map_fd(int fd, size_t bytes, const std::string& name) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    if (err == ENOMEM) {
      CREW_THROW(
          dist::BackendUnavailableError,
          errno_message(
              str_cat("shm: cannot map the shared-memory buffers: need ", bytes, " bytes of ", name), err));
    }
    CREW_THROW(CommError, errno_message(str_cat("shm: mmap of ", bytes, " bytes of ", name, " failed"), err));
  }
  return p;
}

// Free space for the segment: statvfs of shm_dir, capped by max_bytes when that is set.
size_t space_for_segment(const std::string& shm_dir, size_t max_bytes) {
  const size_t free_bytes = free_bytes_at(shm_dir);
  return max_bytes > 0 ? std::min(free_bytes, max_bytes) : free_bytes;
}

[[noreturn]] void throw_too_small(const std::string& shm_dir, size_t bytes, size_t available,
                                  const char* why) {
  CREW_THROW(dist::BackendUnavailableError, "shm: ", shm_dir,
             " is too small for the shared-memory buffers: need ", bytes, " bytes, ", available,
             " available (", why,
             "; enlarge it, e.g. docker --shm-size, lower CREW_SHM_BUFFER_BYTES, or use CREW_BACKEND=gloo)");
}

}  // namespace

size_t free_bytes_at(const std::string& dir) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0) {
    CREW_THROW(CommError, errno_message(str_cat("shm: statvfs(", dir, ") failed")));
  }
  return static_cast<size_t>(st.f_bavail) * static_cast<size_t>(st.f_frsize);
}

ShmSegment ShmSegment::create(const std::string& name, size_t bytes, const std::string& shm_dir,
                              size_t max_bytes) {
  const size_t available = space_for_segment(shm_dir, max_bytes);
  if (available < bytes) {
    throw_too_small(shm_dir, bytes, available,
                    max_bytes > 0 && max_bytes < bytes ? "limit CREW_SHM_MAX_BYTES" : "statvfs");
  }
  int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0)
    CREW_THROW(CommError, errno_message(str_cat("shm: shm_open(", name, ", O_CREAT|O_EXCL) failed")));
  FdGuard guard{fd};
  ShmSegment seg;
  seg.name_ = name;
  seg.owner_ = true;  // from here on the destructor unlinks on failure
  int err = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (err != 0) {
    ::shm_unlink(name.c_str());
    seg.unlinked_ = true;
    if (err == ENOSPC || err == ENOMEM) {
      throw_too_small(shm_dir, bytes, free_bytes_at(shm_dir),
                      err == ENOSPC ? "posix_fallocate: ENOSPC" : "posix_fallocate: ENOMEM");
    }
    CREW_THROW(CommError,
               errno_message(str_cat("shm: posix_fallocate(", name, ", ", bytes, ") failed"), err));
  }
  seg.data_ = map_fd(fd, bytes, name);
  seg.size_ = bytes;
  return seg;
}

void check_peer_segment(const std::string& name, const std::string& job_prefix) {
  const bool plain = name.find('/', 1) == std::string::npos && name.find("..") == std::string::npos;
  if (!plain || job_prefix.empty() || name.rfind(job_prefix, 0) != 0) {
    CREW_THROW(CommError, "shm: refusing to map segment '", name,
               "' sent by a peer: not a name of this job (", "expected one starting with '", job_prefix,
               "')");
  }
}

void check_peer_segment_owner(const std::string& name, uid_t owner, mode_t mode) {
  if (owner != ::geteuid()) {
    CREW_THROW(CommError, "shm: refusing to map segment ", name, ": it is owned by uid ", owner,
               ", not by this user (uid ", ::geteuid(), "); another user may have planted it");
  }
  if ((mode & 077) != 0) {
    char text[8];
    std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
    CREW_THROW(CommError, "shm: refusing to map segment ", name, ": mode ", text,
               " lets other users open it (crew creates its segments 0600)");
  }
}

ShmSegment ShmSegment::open(const std::string& name, size_t bytes, size_t max_bytes,
                            const std::string& job_prefix) {
  check_peer_segment(name, job_prefix);
  if (max_bytes > 0 && max_bytes < bytes) {
    CREW_THROW(dist::BackendUnavailableError, "shm: cannot map the shared-memory buffers: need ", bytes,
               " bytes of ", name, ", ", max_bytes, " available (limit CREW_SHM_MAX_BYTES)");
  }
  int fd = ::shm_open(name.c_str(), O_RDWR | O_NOFOLLOW, 0600);
  if (fd < 0) CREW_THROW(CommError, errno_message(str_cat("shm: shm_open(", name, ") failed")));
  FdGuard guard{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) CREW_THROW(CommError, errno_message(str_cat("shm: fstat(", name, ") failed")));
  check_peer_segment_owner(name, st.st_uid, st.st_mode);
  if (static_cast<size_t>(st.st_size) < bytes) {
    CREW_THROW(CommError, "shm: segment ", name, " has ", st.st_size, " bytes, expected ", bytes);
  }
  ShmSegment seg;
  seg.name_ = name;
  seg.data_ = map_fd(fd, bytes, name);
  seg.size_ = bytes;
  return seg;
}

ShmSegment::ShmSegment(ShmSegment&& other) noexcept { *this = std::move(other); }

ShmSegment& ShmSegment::operator=(ShmSegment&& other) noexcept {
  if (this != &other) {
    reset();
    name_ = std::move(other.name_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    owner_ = std::exchange(other.owner_, false);
    unlinked_ = std::exchange(other.unlinked_, false);
  }
  return *this;
}

ShmSegment::~ShmSegment() { reset(); }

void ShmSegment::reset() noexcept {
  if (owner_ && !unlinked_) ::shm_unlink(name_.c_str());
  if (data_ != nullptr) ::munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
  owner_ = false;
  unlinked_ = false;
}

void ShmSegment::unlink() {
  if (unlinked_ || name_.empty()) return;
  unlinked_ = true;
  if (::shm_unlink(name_.c_str()) != 0 && errno != ENOENT) {
    CREW_THROW(CommError, errno_message(str_cat("shm: shm_unlink(", name_, ") failed")));
  }
}

}  // namespace crew::dist::detail

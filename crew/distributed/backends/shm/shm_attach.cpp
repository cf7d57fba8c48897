// Joining the shm backend: create or open the segment, publish this rank, unlink the
// name once every rank has mapped it; and leaving the group.
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <random>
#include <thread>

#include "crew/core/check.h"
#include "crew/core/env.h"
#include "crew/core/error.h"
#include "crew/distributed/backends/backend_unavailable.h"
#include "crew/distributed/backends/shm/shm_comm.h"
#include "crew/distributed/backends/shm/shm_sync.h"

namespace crew::dist::detail {
namespace {

int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

// Keeps [A-Za-z0-9_-] of s, at most max_len characters.
std::string sanitize(const std::string& s, size_t max_len) {
  std::string out;
  for (char c : s) {
    if (out.size() >= max_len) break;
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    out.push_back(ok ? c : '_');
  }
  return out.empty() ? std::string("x") : out;
}

std::string random_token() {
  std::random_device rd;
  uint64_t v = (uint64_t(rd()) << 32) ^ rd();
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// Published instead of a segment name when rank 0 cannot create the segment.
constexpr const char* kCreateFailed = "!failed: ";
// A rank's vote on the segment: mapped it, lacked the space, or failed otherwise.
constexpr const char* kVoteOk = "ok";
constexpr const char* kVoteNoSpace = "nospace: ";
constexpr const char* kVoteError = "error: ";

std::string job_label() {
  for (const char* var : {"CREW_JOB_ID", "PADDLE_JOB_ID", "SLURM_JOB_ID"}) {
    if (auto v = env::get(var)) return sanitize(*v, 32);
  }
  return "job";
}

}  // namespace

ShmComm::ShmComm(Store& store, int rank, int world, const ProcessGroupOptions& options, const ShmOptions& shm)
    : rank_(rank),
      world_(world),
      group_(options.group_name),
      timeout_(options.timeout),
      spin_(shm.spin),
      liveness_interval_(std::max(shm.liveness_interval, std::chrono::milliseconds(1))),
      small_bytes_(shm.small_bytes),
      shm_dir_(shm.shm_dir),
      max_bytes_(shm.max_bytes) {
  CREW_CHECK(world >= 1, "shm: world size must be positive, got ", world);
  CREW_CHECK(rank >= 0 && rank < world, "shm: rank ", rank, " out of range for world size ", world);
  CREW_CHECK(shm.buffer_bytes >= 4096 && shm.buffer_bytes % 64 == 0,
             "shm: buffer_bytes must be a multiple of 64 and at least 4096, got ", shm.buffer_bytes);
  CREW_CHECK(shm.mailbox_bytes >= 64 && shm.mailbox_bytes % 64 == 0,
             "shm: mailbox_bytes must be a multiple of 64 and at least 64, got ", shm.mailbox_bytes);
  oversubscribed_ = world > usable_cpus();
  geometry_ = ShmGeometry{world, shm.buffer_bytes, shm.mailbox_bytes};
  attach(store, shm);
}

void ShmComm::attach(Store& store, const ShmOptions& shm) {
  // A group created twice over one store gets a fresh generation of keys each time.
  const std::string base = "shm/" + group_ + "/";
  const int64_t joins = store.add(base + "joins", 1);
  const std::string prefix = base + std::to_string((joins - 1) / world_) + "/";
  // Every rank votes, so one rank that cannot map the segment (a full /dev/shm, a memory
  // limit) fails all of them alike: none is left waiting in the group, and a caller that
  // picked shm automatically can fall back to Gloo on every rank.
  std::string vote = kVoteOk;
  try {
    map_segment(store, prefix, shm);
  } catch (const BackendUnavailableError& e) {
    vote = std::string(kVoteNoSpace) + e.what();
  } catch (const CommError& e) {
    vote = std::string(kVoteError) + e.what();
  }
  agree_on_segment(store, prefix, vote);
  const pid_t pid = ::getpid();
  control(rank_).start_time.store(process_start_time(pid), std::memory_order_relaxed);
  control(rank_).pid.store(pid, std::memory_order_release);
  // The last rank to map removes the name; nothing is left in /dev/shm after that, whatever
  // happens to the processes.
  if (header_->mapped.fetch_add(1, std::memory_order_acq_rel) + 1 == world_) segment_.unlink();
  Deadline deadline(store.timeout());
  while (header_->mapped.load(std::memory_order_acquire) < world_) {
    if (deadline.expired()) {
      segment_.unlink();
      CREW_THROW(TimeoutError, "shm rendezvous (rank ", rank_, ", group ", group_, "): only ",
                 header_->mapped.load(), " of ", world_, " ranks mapped segment ", segment_name_, " within ",
                 store.timeout().count(), " ms");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  segment_.unlink();
}

std::string ShmComm::segment_prefix() const {
  return str_cat("/", shm_segment_prefix(), job_label(), "-", sanitize(group_, 32), "-");
}

std::string ShmComm::new_segment_name() const {
  return str_cat(segment_prefix(), ::getpid(), "-", random_token());
}

void ShmComm::map_segment(Store& store, const std::string& prefix, const ShmOptions& shm) {
  const size_t bytes = geometry_.total_bytes();
  if (rank_ == 0) {
    segment_name_ = new_segment_name();
    try {
      segment_ = ShmSegment::create(segment_name_, bytes, shm.shm_dir, shm.max_bytes);
    } catch (const CommError& e) {
      // Tell the others instead of leaving them waiting for the segment's name.
      store.set(prefix + "segment", std::string(kCreateFailed) + e.what());
      throw;
    }
    auto* header = new (segment_.data()) SegmentHeader();
    header->version = kShmVersion;
    header->world = world_;
    header->buffer_bytes = geometry_.buffer_bytes;
    header->mailbox_bytes = geometry_.mailbox_bytes;
    header->total_bytes = bytes;
    auto* base_ptr = static_cast<uint8_t*>(segment_.data());
    for (int r = 0; r < world_; ++r)
      new (base_ptr + geometry_.controls_offset() + r * sizeof(RankControl)) RankControl();
    for (int i = 0; i < world_ * world_; ++i) {
      new (base_ptr + geometry_.mailbox_controls_offset() + i * sizeof(MailboxControl)) MailboxControl();
    }
    header->magic.store(kShmMagic, std::memory_order_release);
    store.set(prefix + "segment", segment_name_);
  } else {
    segment_name_ = store.get_string(prefix + "segment");
    if (segment_name_.rfind(kCreateFailed, 0) == 0) {
      // Rank 0's own vote (the lowest rank's decides) carries the reason.
      CREW_THROW(CommError, "shm rendezvous (rank ", rank_, ", group ", group_,
                 "): rank 0 could not create the "
                 "shared-memory segment: ",
                 segment_name_.substr(std::strlen(kCreateFailed)));
    }
    segment_ = ShmSegment::open(segment_name_, bytes, shm.max_bytes, segment_prefix());
  }
  auto* header = reinterpret_cast<SegmentHeader*>(segment_.data());
  if (header->magic.load(std::memory_order_acquire) != kShmMagic || header->version != kShmVersion ||
      header->world != world_ || header->buffer_bytes != geometry_.buffer_bytes ||
      header->mailbox_bytes != geometry_.mailbox_bytes) {
    CREW_THROW(CommError, "shm rendezvous (rank ", rank_, ", group ", group_, "): segment ", segment_name_,
               " does not match this rank's settings (world ", header->world, " vs ", world_,
               ", buffer_bytes ", header->buffer_bytes, " vs ", geometry_.buffer_bytes, ", mailbox_bytes ",
               header->mailbox_bytes, " vs ", geometry_.mailbox_bytes,
               "; every rank must use the same CREW_SHM_* settings)");
  }
}

void ShmComm::agree_on_segment(Store& store, const std::string& prefix, const std::string& vote) {
  store.set(str_cat(prefix, "vote/", rank_), vote);
  std::vector<std::string> keys;
  for (int r = 0; r < world_; ++r) keys.push_back(str_cat(prefix, "vote/", r));
  try {
    store.wait(keys, timeout_);
  } catch (const TimeoutError& e) {
    segment_ = ShmSegment();  // unmaps (and unlinks on rank 0)
    CREW_THROW(TimeoutError, "shm rendezvous (rank ", rank_, ", group ", group_,
               "): not every rank reported "
               "whether it mapped the segment within ",
               timeout_.count(), " ms: ", e.what());
  }
  // The lowest failing rank's vote decides, so every rank throws the same error.
  for (int r = 0; r < world_; ++r) {
    const std::string v = store.get_string(keys[r]);
    if (v == kVoteOk) continue;
    segment_ = ShmSegment();
    const bool no_space = v.rfind(kVoteNoSpace, 0) == 0;
    const std::string why = v.substr(no_space ? std::strlen(kVoteNoSpace) : std::strlen(kVoteError));
    const std::string what =
        str_cat("shm rendezvous (rank ", rank_, ", group ", group_, "): rank ", r,
                r == 0 ? " could not create" : " could not map", " the shared-memory segment: ", why);
    if (no_space) CREW_THROW(dist::BackendUnavailableError, what);
    CREW_THROW(CommError, what);
  }
  base_ = static_cast<uint8_t*>(segment_.data());
  header_ = reinterpret_cast<SegmentHeader*>(base_);
  controls_ = reinterpret_cast<RankControl*>(base_ + geometry_.controls_offset());
  mailbox_controls_ = reinterpret_cast<MailboxControl*>(base_ + geometry_.mailbox_controls_offset());
}

ShmComm::~ShmComm() {
  if (controls_ == nullptr) return;
  // A fork()ed child that inherited the mapping must not speak for this rank.
  if (control(rank_).pid.load(std::memory_order_acquire) != ::getpid()) return;
  // Peers that still wait on this rank learn that it left instead of waiting for the timeout.
  control(rank_).pid.store(-::getpid(), std::memory_order_release);
  wake_everyone();
}

}  // namespace crew::dist::detail

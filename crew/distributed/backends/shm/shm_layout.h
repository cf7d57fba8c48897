#pragma once
// The layout of a shared-memory segment (internal to the shm backend).
//
//   [SegmentHeader][RankControl x world][MailboxControl x world*world]
//   [staging buffers: world ranks x 2 buffers x buffer_bytes]
//   [mailboxes: world*world x mailbox_bytes]          (pair src->dst at src*world+dst)
//
// Every flag is a 32-bit counter (futex-able) that only grows; comparisons are wrap-safe.
// Each counter sits on its own 128-byte block so that ranks do not false-share.
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace crew::dist::detail {

inline constexpr uint64_t kShmMagic = 0x6372657773686d31ULL;  // "crewshm1"
inline constexpr uint32_t kShmVersion = 2;
inline constexpr size_t kShmBlock = 128;
inline constexpr size_t kShmErrorChars = 512;

// A futex word with the count of processes sleeping on it.
struct alignas(kShmBlock) ShmFlag {
  std::atomic<uint32_t> value{0};
  std::atomic<uint32_t> waiters{0};
};

// What a rank is about to run: compared across ranks at the first round of every op.
struct ShmOpDesc {
  uint64_t seq = 0;
  int64_t count = 0;  // elements per rank
  int32_t kind = 0;   // ShmOpKind
  int32_t dtype = 0;
  int32_t root = 0;
  int32_t reduce_op = 0;
  int32_t shared = -1;        // all_reduce in a shared buffer: its id (ShmComm::allocate_shared)
  int64_t shared_offset = 0;  // and the data's byte offset in this rank's region
};

struct alignas(kShmBlock) RankControl {
  ShmFlag step;                         // rounds this rank has finished signalling
  std::atomic<int32_t> pid{0};          // 0 until the rank has mapped the segment
  std::atomic<uint64_t> start_time{0};  // /proc/<pid>/stat start time (pid reuse guard)
  ShmOpDesc desc[2];                    // by seq parity
};

struct alignas(kShmBlock) MailboxControl {
  ShmFlag sent;              // messages (chunks) the sender has written
  ShmFlag acked;             // chunks the receiver has consumed
  uint64_t chunk_bytes = 0;  // bytes in the current chunk
  uint64_t total_bytes = 0;  // bytes of the whole message
  int64_t tag = 0;
};

struct alignas(kShmBlock) SegmentHeader {
  std::atomic<uint64_t> magic{0};  // written last by the creator
  uint32_t version = 0;
  int32_t world = 0;
  uint64_t buffer_bytes = 0;
  uint64_t mailbox_bytes = 0;
  uint64_t total_bytes = 0;
  std::atomic<int32_t> mapped{0};       // ranks that have mapped the segment
  std::atomic<int32_t> abort_claim{0};  // CAS 0 -> 1 by the first rank to abort
  ShmFlag abort;                        // 0, or 1 + the rank that aborted the group
  char abort_message[kShmErrorChars] = {};
};

static_assert(std::atomic<uint32_t>::is_always_lock_free);
static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));

inline size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// Offsets of each region for a given geometry.
struct ShmGeometry {
  int world = 0;
  size_t buffer_bytes = 0;
  size_t mailbox_bytes = 0;

  size_t controls_offset() const { return round_up(sizeof(SegmentHeader), kShmBlock); }
  size_t mailbox_controls_offset() const { return controls_offset() + world * sizeof(RankControl); }
  size_t buffers_offset() const {
    return round_up(mailbox_controls_offset() + size_t(world) * world * sizeof(MailboxControl), 4096);
  }
  size_t mailboxes_offset() const { return buffers_offset() + size_t(world) * 2 * buffer_bytes; }
  size_t total_bytes() const {
    return round_up(mailboxes_offset() + size_t(world) * world * mailbox_bytes, 4096);
  }
};

// Wrap-safe "a has reached b".
inline bool reached(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) >= 0; }

}  // namespace crew::dist::detail

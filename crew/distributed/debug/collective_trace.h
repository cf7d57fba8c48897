#pragma once
// CollectiveTrace: one rank's record of the ops it issued on one group: a ring of the last
// `capacity` OpRecords plus the ops still pending, and when the group last made progress.
// Thread-safe (the issuing thread, waiting threads and the watchdog share it).
//
//   CollectiveTrace trace(16);
//   uint64_t id = trace.begin(record);    // record.seq filled in: the group's next number
//   ...                                   // the op runs
//   trace.complete(id, /*failed=*/false);
//   RankState s = trace.state(rank);      // what a report publishes
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "crew/distributed/debug/op_record.h"

namespace crew::dist::debug {

class CollectiveTrace {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr size_t kDefaultCapacity = 16;

  explicit CollectiveTrace(size_t capacity = kDefaultCapacity);

  // Numbers the op (collectives and p2p ops count apart), records it as pending; returns its id.
  uint64_t begin(OpRecord record);
  // Marks op `id` finished (idempotent). A completion is progress.
  void complete(uint64_t id, bool failed);
  // The sequence number the next collective will get.
  uint64_t next_seq() const;
  // The record of op `id` (from the pending set or the ring), if still held.
  std::optional<OpRecord> find(uint64_t id) const;
  // The last records, oldest first.
  std::vector<OpRecord> history() const;
  // IN_COLLECTIVE when an op is pending (the oldest one), else IDLE; `left` gives LEFT.
  RankState state(int rank, bool left = false) const;
  // The oldest pending op's id and how long the group has gone without progress (since that
  // op was issued or the last completion, whichever is later); nullopt when nothing is pending.
  struct Stall {
    uint64_t id;
    std::chrono::milliseconds for_how_long;
  };
  std::optional<Stall> stall() const;

 private:
  struct Entry {
    uint64_t id;
    OpRecord record;
    Clock::time_point issued;
  };
  const size_t capacity_;
  mutable std::mutex mutex_;
  std::deque<Entry> ring_;             // last `capacity_` ops, oldest first
  std::map<uint64_t, Entry> pending_;  // by id (= issue order)
  uint64_t next_id_ = 0;
  uint64_t next_seq_ = 0;
  uint64_t next_p2p_ = 0;
  Clock::time_point last_progress_ = Clock::now();
};

}  // namespace crew::dist::debug

#include "crew/distributed/debug/collective_trace.h"

#include <algorithm>

namespace crew::dist::debug {

CollectiveTrace::CollectiveTrace(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}

uint64_t CollectiveTrace::begin(OpRecord record) {
  std::lock_guard<std::mutex> lock(mutex_);
  record.seq = record.p2p ? next_p2p_++ : next_seq_++;
  record.completed = false;
  record.failed = false;
  const auto now = Clock::now();
  // Issuing on an idle group starts the clock: a stall is measured from here.
  if (pending_.empty()) last_progress_ = now;
  Entry entry{next_id_++, std::move(record), now};
  pending_.emplace(entry.id, entry);
  ring_.push_back(std::move(entry));
  if (ring_.size() > capacity_) ring_.pop_front();
  return ring_.back().id;
}

void CollectiveTrace::complete(uint64_t id, bool failed) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = pending_.find(id);
  if (it == pending_.end()) return;
  pending_.erase(it);
  for (auto& e : ring_) {
    if (e.id == id) {
      e.record.completed = true;
      e.record.failed = failed;
    }
  }
  if (!failed) last_progress_ = Clock::now();
}

uint64_t CollectiveTrace::next_seq() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return next_seq_;
}

std::optional<OpRecord> CollectiveTrace::find(uint64_t id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = pending_.find(id); it != pending_.end()) return it->second.record;
  for (const auto& e : ring_) {
    if (e.id == id) return e.record;
  }
  return std::nullopt;
}

std::vector<OpRecord> CollectiveTrace::history() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<OpRecord> out;
  for (const auto& e : ring_) out.push_back(e.record);
  return out;
}

RankState CollectiveTrace::state(int rank, bool left) const {
  std::lock_guard<std::mutex> lock(mutex_);
  RankState s;
  s.rank = rank;
  s.collectives_issued = next_seq_;
  if (!ring_.empty()) s.last = ring_.back().record;
  if (left) {
    s.where = RankState::Where::LEFT;
  } else if (!pending_.empty()) {
    const Entry& oldest = pending_.begin()->second;
    s.where = RankState::Where::IN_COLLECTIVE;
    s.current = oldest.record;
    s.waiting = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - oldest.issued);
  }
  return s;
}

std::optional<CollectiveTrace::Stall> CollectiveTrace::stall() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (pending_.empty()) return std::nullopt;
  return Stall{pending_.begin()->first,
               std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - last_progress_)};
}

}  // namespace crew::dist::debug

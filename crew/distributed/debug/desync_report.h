#pragma once
// Desync reports: every rank of a group publishes its RankState through the group's store
// and the rank that needs a report gathers them within a bounded wait, then names the ranks
// that issued a different collective, that are behind, or that sent nothing:
//
//   collectives of group default (gathered by rank 1): rank 0 is in broadcast #57 (4096 floats,
//   root 0) (waiting 2.0 s); rank 1 is in all_reduce #57 (4096 floats, SUM) (waiting 2.0 s)
//     desync: ranks issued different collectives as #57: rank 0 broadcast, rank 1 all_reduce
//
// Store keys (under the group's store): "crew_debug/round" counts requests; rank k answers
// round r under "crew_debug/<r>/<k>"; a rank whose op failed, or that leaves the group, writes
// its final state under "crew_debug/final/<k>", which stands in for an answer it cannot give.
// Each rank publishes its process under "crew_debug/process/<k>" when its group is made, so a
// gatherer on the same host stops waiting for a rank whose process has exited.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "crew/distributed/debug/op_record.h"

namespace crew::dist {
class Store;
}

namespace crew::dist::debug {

// The text a rank that did not answer gets.
inline constexpr const char* kNoReport = "no report (dead or stuck outside a collective)";

struct Report {
  std::string text;         // the report (first line: every rank's state, "; "-separated)
  bool mismatch = false;    // ranks issued different collectives under one sequence number
  bool incomplete = false;  // some rank sent no report, is behind or has left
};

// Builds the report of `states` (index = rank; nullopt = no answer).
Report analyze(const std::string& group, int gathered_by,
               const std::vector<std::optional<RankState>>& states);

// Asks every rank of the group for its state (one new round) and waits up to `wait` for the
// answers (not for a rank whose process is known to have exited: see publish_process); `mine` is this rank's own. `between_polls` runs while it waits (it answers other
// ranks' requests, so two ranks gathering at once do not wait for each other). Never throws:
// a store failure leaves ranks unanswered (and is noted in the text).
Report gather_report(Store& store, const std::string& group, int rank, int size, const RankState& mine,
                     std::chrono::milliseconds wait, const std::function<void()>& between_polls);

// The answering side, run by each rank's watchdog: answers every round requested since the
// last call with `state`. Returns whether any round was answered.
class ReportResponder {
 public:
  // Cheap when nothing was asked (one store add of 0).
  template <typename StateFn>
  bool poll(Store& store, int rank, StateFn&& state_fn) {
    const int64_t round = current_round(store);
    if (round <= answered_) return false;
    answer(store, rank, round, state_fn());
    return true;
  }

 private:
  int64_t current_round(Store& store);
  void answer(Store& store, int rank, int64_t round, const RankState& state);
  int64_t answered_ = 0;
};

// Publishes this process's identity (process_liveness.h) as `rank`'s. Never throws.
void publish_process(Store& store, int rank);

// Publishes `state` as its rank's final state (LEFT, or FAILED after a failure). Never throws.
void publish_final(Store& store, const RankState& state);
// Removes `rank`'s final state (it goes on after a recoverable failure). Never throws.
void withdraw_final(Store& store, int rank);

}  // namespace crew::dist::debug

#include "crew/distributed/debug/desync_report.h"

#include <algorithm>
#include <map>
#include <thread>

#include "crew/core/check.h"
#include "crew/core/timer.h"
#include "crew/distributed/debug/process_liveness.h"
#include "crew/distributed/store/store.h"

namespace crew::dist::debug {

namespace {

constexpr const char* kRoundKey = "crew_debug/round";
constexpr std::chrono::milliseconds kGatherPoll{20};

std::string answer_key(int64_t round, int rank) { return str_cat("crew_debug/", round, "/", rank); }
std::string final_key(int rank) { return str_cat("crew_debug/final/", rank); }
std::string process_key(int rank) { return str_cat("crew_debug/process/", rank); }

// Whether rank k's process is known to have exited (same host only; see process_liveness.h).
// `identities` caches what the store holds ("" = not published or not read yet).
bool rank_gone(Store& store, int k, std::vector<std::string>& identities) {
  if (identities[k].empty() && store.check({process_key(k)}))
    identities[k] = store.get_string(process_key(k));
  return !identities[k].empty() && process_gone(identities[k]);
}

// Rank k's answer to `round`, else its final state (it failed or left), else nothing yet.
std::optional<RankState> read_answer(Store& store, int64_t round, int k) {
  if (store.check({answer_key(round, k)})) return RankState::decode(store.get_string(answer_key(round, k)));
  if (store.check({final_key(k)})) return RankState::decode(store.get_string(final_key(k)));
  return std::nullopt;
}

std::string join_ranks(const std::vector<int>& ranks) {
  std::string out;
  for (int r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return out;
}

using States = std::vector<std::optional<RankState>>;

bool in_op(const RankState& s) {
  return s.where == RankState::Where::IN_COLLECTIVE || s.where == RankState::Where::FAILED;
}

// Whether s waits in (or failed in) a collective, as opposed to a send/recv.
bool waits_in_collective(const RankState& s) { return in_op(s) && s.current && !s.current->p2p; }

// The first line: every rank's state, "; "-separated.
std::string states_line(const States& states) {
  std::string line;
  for (size_t k = 0; k < states.size(); ++k) {
    line += line.empty() ? "" : "; ";
    line += states[k] ? states[k]->describe() : str_cat("rank ", k, ": ", kNoReport);
  }
  return line;
}

// What each rank issued as #seq: the op it waits in and its newest op (a rank that went on,
// or left, after a different collective still shows it as its last).
std::map<uint64_t, std::vector<std::pair<int, const OpRecord*>>> issued_by_seq(const States& states) {
  std::map<uint64_t, std::vector<std::pair<int, const OpRecord*>>> issued;
  for (const auto& s : states) {
    if (!s) continue;
    const bool waiting = waits_in_collective(*s);
    if (waiting) issued[s->current->seq].push_back({s->rank, &*s->current});
    if (s->last && !s->last->p2p && !(waiting && s->last->seq == s->current->seq)) {
      issued[s->last->seq].push_back({s->rank, &*s->last});
    }
  }
  return issued;
}

// A "desync" line for every sequence number under which ranks issued different collectives.
void report_mismatches(const States& states, Report& report) {
  for (const auto& [seq, calls] : issued_by_seq(states)) {
    bool differ = false;
    for (const auto& call : calls) differ = differ || !call.second->same_call(*calls.front().second);
    if (!differ) continue;
    report.mismatch = true;
    std::string who;
    for (const auto& [r, record] : calls) {
      who += str_cat(who.empty() ? "" : ", ", "rank ", r, " ", record->describe());
    }
    report.text += str_cat("\n  desync: ranks issued different collectives as #", seq, ": ", who);
  }
}

// Why s has not reached #target, the newest collective a rank waits in; "" when it has.
std::string behind_reason(const RankState& s, uint64_t target) {
  if (in_op(s) && s.current && !s.current->p2p && s.current->seq < target) {
    return str_cat("still in #", s.current->seq);
  }
  if (s.where == RankState::Where::IN_COLLECTIVE && s.current && s.current->p2p) {
    return str_cat("in point-to-point ", s.current->describe(), ", not in #", target);
  }
  if (!in_op(s) && s.collectives_issued <= target) {
    return str_cat(
        s.where == RankState::Where::LEFT ? "left the group without issuing #" : "has not issued #", target);
  }
  return "";
}

// A "behind" line for every rank that has not reached the newest collective any rank waits in.
void report_behind(const States& states, Report& report) {
  std::optional<uint64_t> target;
  for (const auto& s : states) {
    if (s && waits_in_collective(*s)) target = std::max(target.value_or(0), s->current->seq);
  }
  if (!target) return;
  for (const auto& s : states) {
    if (!s) continue;
    const std::string why = behind_reason(*s, *target);
    if (why.empty()) continue;
    report.incomplete = true;
    report.text += str_cat("\n  behind: rank ", s->rank, " ", why, " (others wait in #", *target, ")");
  }
}

void report_silent(const States& states, Report& report) {
  std::vector<int> silent;
  for (size_t k = 0; k < states.size(); ++k) {
    if (!states[k]) silent.push_back(static_cast<int>(k));
  }
  if (silent.empty()) return;
  report.incomplete = true;
  report.text += str_cat("\n  no report from rank", silent.size() == 1 ? " " : "s ", join_ranks(silent),
                         " (dead or stuck outside a collective)");
}

}  // namespace

Report analyze(const std::string& group, int gathered_by, const States& states) {
  Report report;
  report.text =
      str_cat("collectives of group ", group, " (gathered by rank ", gathered_by, "): ", states_line(states));
  report_mismatches(states, report);
  report_behind(states, report);
  report_silent(states, report);
  return report;
}

Report gather_report(Store& store, const std::string& group, int rank, int size, const RankState& mine,
                     std::chrono::milliseconds wait, const std::function<void()>& between_polls) {
  std::vector<std::optional<RankState>> states(size);
  states[rank] = mine;
  std::string store_error;
  try {
    const int64_t round = store.add(kRoundKey, 1);
    store.set(answer_key(round, rank), mine.encode());
    Deadline deadline(wait);
    std::vector<std::string> identities(size);
    std::vector<bool> gone(size, false);
    for (;;) {
      bool missing = false;
      for (int k = 0; k < size; ++k) {
        if (states[k] || gone[k]) continue;
        states[k] = read_answer(store, round, k);
        // A rank may publish its final state and exit between the reads above and this check:
        // once it is gone its writes are done, so read once more before counting it dead.
        if (!states[k] && rank_gone(store, k, identities)) {
          states[k] = read_answer(store, round, k);
          gone[k] = !states[k];  // a dead rank never answers: do not wait out `wait` for it
        }
        missing = missing || (!states[k] && !gone[k]);
      }
      if (!missing || deadline.expired()) break;
      if (between_polls) between_polls();
      std::this_thread::sleep_for(kGatherPoll);
    }
  } catch (const std::exception& e) {
    store_error = e.what();
  }
  Report report = analyze(group, rank, states);
  if (!store_error.empty())
    report.text += str_cat("\n  (the store failed while gathering: ", store_error, ")");
  return report;
}

int64_t ReportResponder::current_round(Store& store) { return store.add(kRoundKey, 0); }

void ReportResponder::answer(Store& store, int rank, int64_t round, const RankState& state) {
  const std::string text = state.encode();
  // Every round since the last answer: two ranks may have asked between two polls.
  for (int64_t r = answered_ + 1; r <= round; ++r) store.set(answer_key(r, rank), text);
  answered_ = round;
}

void publish_process(Store& store, int rank) {
  try {
    store.set(process_key(rank), process_identity());
  } catch (const std::exception&) {
    // Without it a report waits its full time for this rank if it dies.
  }
}

void withdraw_final(Store& store, int rank) {
  try {
    store.delete_key(final_key(rank));
  } catch (const std::exception&) {
    // A later report may then read the stale final state: only its text suffers.
  }
}

void publish_final(Store& store, const RankState& state) {
  try {
    store.set(final_key(state.rank), state.encode());
  } catch (const std::exception&) {
    // The store may already be gone at exit; a missing key reads as "no report".
  }
}

}  // namespace crew::dist::debug

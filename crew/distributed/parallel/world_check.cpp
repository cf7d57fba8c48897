#include "crew/distributed/parallel/world_check.h"

#include <unistd.h>

#include <algorithm>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "crew/core/check.h"
#include "crew/core/logging.h"
#include "crew/core/timer.h"
#include "crew/distributed/store/store.h"

namespace crew::dist::detail {
namespace {

constexpr const char* kWorldKey = "rdzv/world";
constexpr const char* kErrorKey = "rdzv/error";
constexpr const char* kErrorSeenKey = "rdzv/error_seen";
// How long the failing rank keeps its store up so that the others read the reason (the rank
// hosting the store may be the one that fails).
constexpr std::chrono::milliseconds kErrorLinger{std::chrono::seconds(2)};

std::string rank_key(int rank) { return str_cat("rdzv/rank/", rank); }

std::vector<uint8_t> bytes(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }
std::string text(const std::vector<uint8_t>& v) { return std::string(v.begin(), v.end()); }

int claimed_ranks(Store& store, int world_size) {
  int n = 0;
  for (int r = 0; r < world_size; ++r) n += store.check({rank_key(r)}) ? 1 : 0;
  return n;
}

// Publishes the first failure for the other ranks, waits (bounded) until those that arrived
// have read it, then throws it here.
[[noreturn]] void fail(Store& store, const ParallelEnv& env, const std::string& message) {
  try {
    store.compare_set(kErrorKey, {}, bytes(message));
    // A failing rank holds no claim of its own, so every claimed rank is another one waiting.
    const int others = claimed_ranks(store, env.world_size);
    Deadline linger(kErrorLinger);
    while (store.add(kErrorSeenKey, 0) < others && !linger.expired()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  } catch (const Error& e) {
    CREW_LOG(WARNING) << "init_parallel_env (rank " << env.rank
                      << "): could not tell the other ranks: " << e.what();
  }
  CREW_THROW(ValueError, message);
}

}  // namespace

std::string process_identity() {
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  std::random_device rd;
  static const unsigned nonce = rd();
  return str_cat(host, " pid ", ::getpid(), " #", nonce);
}

void check_world(Store& store, const ParallelEnv& env, std::chrono::milliseconds timeout) {
  const std::string me = process_identity();
  const std::string where = str_cat("init_parallel_env (rank ", env.rank, " of ", env.world_size, ")");
  // World size: the first rank to arrive sets it; a rank that disagrees names both.
  const std::string mine = str_cat(env.world_size, " ", env.rank, " ", me);
  const std::string world = text(store.compare_set(kWorldKey, {}, bytes(mine)));
  if (world != mine) {
    std::istringstream is(world);
    int their_world = 0;
    int their_rank = -1;
    is >> their_world >> their_rank;
    std::string their_process;
    std::getline(is >> std::ws, their_process);
    if (their_world != env.world_size) {
      fail(store, env,
           str_cat(where, ": world size ", env.world_size, " (", env.source, ", process ", me,
                   ") disagrees with world size ", their_world, " of rank ", their_rank, " (process ",
                   their_process, "); start every rank with the same world size"));
    }
  }
  // Rank number: claimed once; a second claimant names the first.
  const std::string owner = text(store.compare_set(rank_key(env.rank), {}, bytes(me)));
  if (owner != me) {
    fail(store, env,
         str_cat(where, ": rank ", env.rank, " is claimed twice: by process ", owner, " and by process ", me,
                 "; give each process its own rank (", env.source, " environment)"));
  }
  // Every rank arrives, or some rank reports a failure, or the timeout names who is missing.
  std::vector<std::string> keys;
  for (int r = 0; r < env.world_size; ++r) keys.push_back(rank_key(r));
  const auto bounded = std::min(timeout, std::chrono::milliseconds(std::chrono::hours(24 * 365)));
  Deadline deadline(bounded);
  auto pause = std::chrono::milliseconds(1);
  while (!store.check(keys)) {
    if (store.check({kErrorKey})) {
      const std::string reason = store.get_string(kErrorKey);
      store.add(kErrorSeenKey, 1);
      CREW_THROW(ValueError, where, ": the rendezvous failed: ", reason);
    }
    if (deadline.expired()) {
      std::string missing;
      int count = 0;
      for (int r = 0; r < env.world_size; ++r) {
        if (store.check({keys[static_cast<size_t>(r)]})) continue;
        if (++count <= 16) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      }
      if (count > 16) missing += str_cat(", ... (", count, " in all)");
      CREW_THROW(TimeoutError, where, ": ranks [", missing, "] did not arrive within ", bounded.count(),
                 " ms (CREW_STORE_TIMEOUT); are they started, with the same master address and world size?");
    }
    std::this_thread::sleep_for(std::min(pause, deadline.remaining()));
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
}

}  // namespace crew::dist::detail

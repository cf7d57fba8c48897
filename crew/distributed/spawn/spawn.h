#pragma once
// crew::dist::spawn: start N processes running fn(args...) with the parallel environment set,
// as Paddle's dist.spawn(train, args=(True,), gpus='4,5').
//
//   void train(bool verbose) { crew::dist::init_parallel_env(); ... }
//   int main() {
//     load_data();                                         // not re-run by the children
//     crew::dist::spawn(train, true, crew::dist::SpawnOptions{.devices = "1,3"});
//   }
//
// Mechanism (docs/launch.md): each child is a fresh exec of /proc/self/exe with the parent's
// argv, so nothing of the parent's threads or heap is inherited (spawn is safe after OpenMP,
// oneDNN or gloo started threads). The child finds fn without running main: spawn passes the
// offsets of fn and of a typed entry function from an anchor inside crew_distributed, and a static
// initialiser in crew_distributed (spawn.cpp) sees CREW_SPAWN_CHILD, runs the entry, reports the result
// or the exception text to the parent over a socket, and _exits before main is reached.
// Rules: fn is a plain function (or a captureless lambda converted with +) defined in the
// executable, not in a shared library; arguments and the result use spawn_codec types; fn must
// not rely on static objects of translation units linked after crew_distributed (the program's own
// files and crew's lower layers are initialised before).
// The parent hosts the job's TCP store (CREW_STORE_HOSTED=1), like the launcher.
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "crew/core/parallel_env.h"
#include "crew/core/worker_env.h"
#include "crew/distributed/spawn/spawn_codec.h"

namespace crew::dist {

struct SpawnOptions {
  static constexpr std::chrono::milliseconds kDefaultGracePeriod{std::chrono::seconds(5)};

  int nprocs = -1;      // -1: one per device id in `devices`, else one per usable CPU core
  std::string devices;  // device ids (CPU slots), e.g. "1,3" (Paddle's gpus=)
  bool join = true;     // wait for the children before returning
  // With join: how long to wait before stopping the children and throwing TimeoutError;
  // nullopt = as long as they run.
  std::optional<std::chrono::milliseconds> timeout;
  std::chrono::milliseconds grace_period = kDefaultGracePeriod;  // SIGTERM -> SIGKILL
  std::string job_id = "spawn";
};

// The running children of one spawn (Paddle's MultiprocessContext).
class SpawnContext {
 public:
  SpawnContext(SpawnContext&&) noexcept;
  SpawnContext& operator=(SpawnContext&&) noexcept;
  // Children still running are stopped (SIGTERM, grace period, SIGKILL) and reaped.
  ~SpawnContext();

  // Waits up to `timeout` (nullopt: no limit). True once every child exited successfully;
  // false when the time ran out first. On the first failure, stops the others and throws
  // SpawnError naming the rank and carrying the child's error message.
  bool join(std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  int nprocs() const;
  std::vector<pid_t> pids() const;
  // The value fn returned in process `rank` (after a successful join).
  template <typename R>
  R result(int rank) const {
    const std::string& bytes = raw_result(rank);
    size_t pos = 0;
    return spawn_codec::decode<R>(bytes, pos);
  }
  const std::string& raw_result(int rank) const;

  struct State;
  explicit SpawnContext(std::unique_ptr<State> state);

 private:
  std::unique_ptr<State> state_;
};

namespace detail {

// Runs the function at `fn` on decoded arguments; encodes its result into *result.
using SpawnEntry = void (*)(void* fn, const std::string& args, std::string* result);

template <typename R, typename... P>
void spawn_entry(void* fn, const std::string& args, std::string* result) {
  auto f = reinterpret_cast<R (*)(P...)>(fn);
  size_t pos = 0;
  auto values = spawn_codec::decode<std::tuple<std::decay_t<P>...>>(args, pos);
  if constexpr (std::is_void_v<R>) {
    std::apply(f, std::move(values));
  } else {
    spawn_codec::encode(*result, static_cast<const std::decay_t<R>&>(std::apply(f, std::move(values))));
  }
}

SpawnContext start_spawn(SpawnEntry entry, void* fn, std::string args, const SpawnOptions& options);

template <typename R, typename... P, typename All, size_t... I>
SpawnContext spawn_split(R (*fn)(P...), All& all, const SpawnOptions& options, std::index_sequence<I...>) {
  static_assert(sizeof...(I) == sizeof...(P), "crew::dist::spawn: the number of arguments does not match fn");
  std::tuple<std::decay_t<P>...> values(std::get<I>(all)...);
  std::string bytes;
  spawn_codec::encode(bytes, values);
  return start_spawn(&spawn_entry<R, P...>, reinterpret_cast<void*>(fn), std::move(bytes), options);
}

}  // namespace detail

// spawn(fn, args..., [SpawnOptions]): starts the processes; with options.join (the default)
// waits for them and throws SpawnError on a failure. Returns the context either way.
template <typename R, typename... P, typename... T>
SpawnContext spawn(R (*fn)(P...), T&&... rest) {
  constexpr size_t n = sizeof...(T);
  auto all = std::forward_as_tuple(std::forward<T>(rest)...);
  if constexpr (n > 0) {
    using Last = std::decay_t<std::tuple_element_t<n - 1, std::tuple<T...>>>;
    if constexpr (std::is_same_v<Last, SpawnOptions>) {
      return detail::spawn_split(fn, all, std::get<n - 1>(all), std::make_index_sequence<n - 1>{});
    } else {
      return detail::spawn_split(fn, all, SpawnOptions{}, std::make_index_sequence<n>{});
    }
  } else {
    return detail::spawn_split(fn, all, SpawnOptions{}, std::make_index_sequence<0>{});
  }
}

// True in a process started by spawn (while fn runs).
bool is_spawned_child();

// The device ids of spawn's children: options.devices parsed (ValueError naming a bad,
// missing or repeated id, or an nprocs that disagrees), else nprocs (-1: one per usable
// core). Also the rule of the Python package's spawn.
std::vector<int> spawn_devices(const SpawnOptions& options);
// The parallel environment of child `rank` of a one-host job whose store listens at
// 127.0.0.1:port and admits `token` (the spawn's own: an enclosing job's secret is not this store's).
ParallelEnv spawn_child_env(int rank, const std::vector<int>& devices, int port, const std::string& job_id,
                            const std::string& token);
// Everything child `rank` is told (crew/core/worker_env.h): spawn_child_env(...), one share of
// the usable cores as its thread count, and who serves the store: the parent (C++ spawn,
// `parent_hosts_store`) or rank 0 (the Python package's spawn, which takes its children's
// variables from here through the binding).
WorkerEnv spawn_worker_env(int rank, const std::vector<int>& devices, int port, const std::string& job_id,
                           const std::string& token, bool parent_hosts_store);

}  // namespace crew::dist

#pragma once
// WaitAtOnceScope: the caller that issues ops inside the scope will wait() on each at once
// (dist::all_reduce(..., sync_op=true) and the other synchronous collectives). A backend with
// a worker thread then does not wake its worker for such an op: the caller's wait() runs it
// inline. Waking a worker that shares the caller's core (the launcher pins each rank to its
// share of the cores) costs two context switches, ten times a small shm all_reduce
// (docs/benchmarks.md, "Pinning"). Ops issued outside a scope (DataParallel's buckets,
// sync_op=false) wake the worker as before, so they progress while the caller computes.
//
//   {
//     WaitAtOnceScope at_once(sync_op);
//     work = pg->all_reduce(t, op);   // the backend reads WaitAtOnceScope::active()
//   }
//   if (sync_op) work->wait();
//
// A wait() that cannot run the op inline (a shorter timeout, or another op running) wakes
// the worker itself, so an op issued in a scope always completes.
namespace crew::dist {

class WaitAtOnceScope {
 public:
  explicit WaitAtOnceScope(bool active = true);
  ~WaitAtOnceScope();
  WaitAtOnceScope(const WaitAtOnceScope&) = delete;
  WaitAtOnceScope& operator=(const WaitAtOnceScope&) = delete;

  // Whether the calling thread is inside an active scope.
  static bool active();

 private:
  bool previous_;
};

}  // namespace crew::dist

#pragma once
// Whether a rank's process still exists, as another process of the job can tell: a rank
// publishes process_identity() once; a peer on the same host (and pid namespace) checks it
// with process_gone(). Reports use it to stop waiting for an answer a dead rank cannot give.
//
//   store.set("crew_debug/process/1", process_identity());   // on rank 1
//   process_gone(store.get_string("crew_debug/process/1"));  // on rank 0: true once 1 exited
#include <string>

namespace crew::dist::debug {

// "<hostname> <pid namespace> <pid>" of this process.
std::string process_identity();

// True when `identity` names a process on this host and pid namespace that no longer runs
// (exited, or a zombie not yet reaped); false when it runs or this process cannot tell (another
// host, a malformed identity).
bool process_gone(const std::string& identity);

}  // namespace crew::dist::debug

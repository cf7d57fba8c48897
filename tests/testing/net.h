#pragma once
// Network helpers of the tests.

namespace crew::testing {

// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then released);
// throws std::runtime_error naming the system error when no socket can be bound.
int free_port();

}  // namespace crew::testing

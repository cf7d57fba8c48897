#pragma once
// Shared by the store tests: client options with short, test-sized timeouts.
#include <chrono>

#include "crew/distributed/store/tcp_store.h"

namespace crew::dist::testing_util {

inline TCPStoreOptions client_options(int port, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  TCPStoreOptions o;
  o.port = port;
  o.timeout = timeout;
  o.connect_timeout = std::chrono::seconds(5);
  return o;
}

}  // namespace crew::dist::testing_util

#pragma once
// Shared by the store tests: client options with short, test-sized timeouts, and a raw
// connection for tests that speak the protocol by hand (or not at all).
#include <chrono>
#include <string>

#include "crew/core/check.h"
#include "crew/distributed/store/socket.h"
#include "crew/distributed/store/tcp_store.h"

namespace crew::dist::testing_util {

inline TCPStoreOptions client_options(int port, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  TCPStoreOptions o;
  o.port = port;
  o.timeout = timeout;
  o.connect_timeout = std::chrono::seconds(5);
  return o;
}

// A TCP connection to 127.0.0.1:port with no handshake; StoreError naming the error if it fails.
inline net::Fd raw_connect(int port) {
  std::string error;
  net::Fd fd = net::try_connect("127.0.0.1", port, std::chrono::seconds(2), &error);
  CREW_CHECK_T(StoreError, fd.valid(), "raw_connect to 127.0.0.1:", port, ": ", error);
  return fd;
}

}  // namespace crew::dist::testing_util

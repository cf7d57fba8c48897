#pragma once
// The job's store as the launcher holds it: node 0 serves it (TCPStoreServer bound at
// construction, so there is no find-then-bind race) and every launcher keeps a client.
#include <chrono>
#include <memory>
#include <string>

#include "crew/distributed/store/store.h"

namespace crew::launch {

class JobStore {
 public:
  // Serves the store on bind_host:port (0 = a port the OS picks) and connects to it. A
  // non-empty token is required of every client (workers get it as CREW_JOB_TOKEN).
  static std::unique_ptr<JobStore> serve(const std::string& bind_host, int port, const std::string& token,
                                         std::chrono::milliseconds timeout);
  // Connects to the store node 0 serves, retrying until `timeout`.
  static std::unique_ptr<JobStore> connect(const std::string& host, int port, const std::string& token,
                                           std::chrono::milliseconds timeout);
  ~JobStore();

  dist::Store& store() { return *client_; }
  int port() const { return port_; }

 private:
  JobStore() = default;
  struct Server;
  std::unique_ptr<Server> server_;
  std::unique_ptr<dist::Store> client_;
  int port_ = 0;
};

}  // namespace crew::launch

#pragma once
// The TCP store a spawning parent serves for its children (bound on 127.0.0.1 at
// construction, on a port the OS picks, so there is no find-then-bind race). It admits only
// clients that present `token`, which the children get as CREW_JOB_TOKEN.
#include <memory>
#include <string>

namespace crew::dist {

class SpawnStoreServer {
 public:
  explicit SpawnStoreServer(const std::string& token);
  ~SpawnStoreServer();
  SpawnStoreServer(const SpawnStoreServer&) = delete;
  SpawnStoreServer& operator=(const SpawnStoreServer&) = delete;
  int port() const { return port_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace crew::dist

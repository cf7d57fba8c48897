#pragma once
// TCPStore: the Store every rank of a job talks to over TCP (client), optionally hosting the
// server in the same process (is_server, as rank 0 does when no launcher hosts the store).
//
//   TCPStore store("127.0.0.1", {.port = 29500, .is_server = (rank == 0)});
//   store.set("addr/1", "...");
//   auto v = store.get("addr/0");   // waits up to timeout(): TimeoutError naming key and address
//
// Connecting retries with backoff (10 ms doubling to 1 s) until connect_timeout, logging
// "Retry to connect to H:P while the server is not yet listening." (Paddle's line, with the
// elapsed time) at most every 5 s, then fails with a StoreError that says what to check.
// Every call has a timeout; a server that goes away makes the call fail with StoreError.
// A TCPStore may be shared by threads (requests are serialised).
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "crew/distributed/store/socket.h"
#include "crew/distributed/store/store.h"
#include "crew/distributed/store/tcp_store_server.h"

namespace crew::dist {

struct TCPStoreOptions {
  int port = 0;
  bool is_server = false;  // also host the server (bound on `host`, at `port`)
  std::chrono::milliseconds timeout = Store::kDefaultTimeout;
  std::chrono::milliseconds connect_timeout = Store::kDefaultTimeout;
  std::string job_token;
  bool insecure = false;  // a hosted server without a token (see TCPStoreServerOptions)
  size_t max_key_bytes = 4096;
  size_t max_value_bytes = 64u << 20;
  // > 0: every client checks in on construction (key kWorkersKey), and the client hosting the
  // server (is_server with wait_for_workers) waits up to `timeout` until num_workers clients,
  // itself included, have checked in (c10d's world_size / wait_for_workers).
  int num_workers = 0;
  bool wait_for_workers = true;
};

class TCPStore : public Store {
 public:
  // The check-in counter and the key set when the last worker checks in (count in num_keys()).
  static constexpr const char* kWorkersKey = "__crew_store/workers";
  static constexpr const char* kWorkersReadyKey = "__crew_store/workers_ready";

  TCPStore(const std::string& host, TCPStoreOptions options);
  ~TCPStore() override;

  using Store::set;
  using Store::wait;
  void set(const std::string& key, const std::vector<uint8_t>& value) override;
  std::vector<uint8_t> get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  std::vector<uint8_t> compare_set(const std::string& key, const std::vector<uint8_t>& expected,
                                   const std::vector<uint8_t>& desired) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;

  const std::string& host() const { return host_; }
  int port() const { return port_; }
  // The hosted server, or null.
  TCPStoreServer* server() const { return server_.get(); }

 private:
  struct Reply {
    uint8_t status;
    std::vector<uint8_t> body;
  };
  void connect();
  void check_in_workers();
  // Sends one request and reads its reply; `wait_extra` extends the client deadline for
  // server-side waits. Throws StoreError / TimeoutError naming op and key.
  Reply request(uint8_t op, const std::vector<uint8_t>& body, const std::string& what,
                std::chrono::milliseconds wait_extra = std::chrono::milliseconds(0));
  void check_key(const std::string& key) const;
  std::string address() const { return host_ + ":" + std::to_string(port_); }

  std::string host_;
  int port_;
  TCPStoreOptions options_;
  std::unique_ptr<TCPStoreServer> server_;
  std::mutex mu_;
  net::Fd fd_;
};

}  // namespace crew::dist

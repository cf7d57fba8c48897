#include "crew/launch/job_store.h"

#include "crew/distributed/store/tcp_store.h"
#include "crew/distributed/store/tcp_store_server.h"

namespace crew::launch {

struct JobStore::Server {
  dist::TCPStoreServer server;
  explicit Server(dist::TCPStoreServerOptions o) : server(std::move(o)) {}
};

std::unique_ptr<JobStore> JobStore::serve(const std::string& bind_host, int port, const std::string& token,
                                          std::chrono::milliseconds timeout) {
  std::unique_ptr<JobStore> js(new JobStore());
  dist::TCPStoreServerOptions so;
  so.host = bind_host;
  so.port = port;
  so.job_token = token;
  js->server_ = std::make_unique<Server>(so);
  js->port_ = js->server_->server.port();
  dist::TCPStoreOptions co;
  co.port = js->port_;
  co.timeout = timeout;
  co.connect_timeout = timeout;
  co.job_token = token;
  js->client_ = std::make_unique<dist::TCPStore>(
      bind_host.empty() || bind_host == "0.0.0.0" ? "127.0.0.1" : bind_host, co);
  return js;
}

std::unique_ptr<JobStore> JobStore::connect(const std::string& host, int port, const std::string& token,
                                            std::chrono::milliseconds timeout) {
  std::unique_ptr<JobStore> js(new JobStore());
  js->port_ = port;
  dist::TCPStoreOptions co;
  co.port = port;
  co.timeout = timeout;
  co.connect_timeout = timeout;
  co.job_token = token;
  js->client_ = std::make_unique<dist::TCPStore>(host, co);
  return js;
}

JobStore::~JobStore() {
  client_.reset();  // the client goes before the server it talks to
  server_.reset();
}

}  // namespace crew::launch

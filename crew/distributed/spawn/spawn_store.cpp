#include "crew/distributed/spawn/spawn_store.h"

#include "crew/distributed/store/tcp_store_server.h"

namespace crew::dist {

struct SpawnStoreServer::Impl {
  TCPStoreServer server;
  explicit Impl(const std::string& token)
      : server(TCPStoreServerOptions{.host = "127.0.0.1", .port = 0, .job_token = token}) {}
};

SpawnStoreServer::SpawnStoreServer(const std::string& token)
    : impl_(std::make_unique<Impl>(token)), port_(impl_->server.port()) {}

SpawnStoreServer::~SpawnStoreServer() = default;

}  // namespace crew::dist

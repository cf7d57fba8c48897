// TEMPORARY until crew/dist/store/tcp_store.h lands: only binds the port.
#include "crew/dist/spawn_store.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "crew/core/check.h"

namespace crew::dist {

struct SpawnStoreServer::Impl {
  int fd = -1;
  ~Impl() { if (fd >= 0) ::close(fd); }
};

SpawnStoreServer::SpawnStoreServer() : impl_(std::make_unique<Impl>()) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  ::listen(fd, 64);
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  port_ = ntohs(a.sin_port);
  impl_->fd = fd;
}

SpawnStoreServer::~SpawnStoreServer() = default;

}  // namespace crew::dist

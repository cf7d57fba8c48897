#include "crew/distributed/backends/gloo/gloo_pair_check.h"

#include <gloo/context.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>

#include <random>

#include "crew/core/check.h"

namespace crew::dist::detail {
namespace {

constexpr size_t kNonceBytes = 16;
// Slot of the nonce exchange: above Gloo's own prefixes and crew's send/recv (0xF0).
constexpr uint8_t kPairCheckSlotPrefix = 0xF1;

std::string nonce_key(int from, int to) { return str_cat("gloo/pair_nonce/", from, "/", to); }

}  // namespace

std::vector<uint8_t> publish_pair_nonces(Store& store, int rank, int size) {
  std::random_device rd;
  std::vector<uint8_t> nonces(kNonceBytes * static_cast<size_t>(size));
  for (auto& b : nonces) b = static_cast<uint8_t>(rd());
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    const uint8_t* n = nonces.data() + kNonceBytes * peer;
    store.set(nonce_key(rank, peer), std::vector<uint8_t>(n, n + kNonceBytes));
  }
  return nonces;
}

void check_gloo_pairs(::gloo::Context& context, Store& store, const std::vector<uint8_t>& nonces,
                      std::chrono::milliseconds timeout, const std::string& where) {
  const int rank = context.rank;
  const int size = context.size;
  if (size == 1) return;
  std::vector<uint8_t> mine = nonces;
  std::vector<uint8_t> received(mine.size());
  auto out = context.createUnboundBuffer(mine.data(), mine.size());
  auto in = context.createUnboundBuffer(received.data(), received.size());
  const uint64_t slot = ::gloo::Slot::build(kPairCheckSlotPrefix, 0);
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    out->send(peer, slot, kNonceBytes * peer, kNonceBytes);
    in->recv(peer, slot, kNonceBytes * peer, kNonceBytes);
  }
  for (int i = 0; i < size - 1; ++i) {
    out->waitSend(timeout);
    in->waitRecv(timeout);
  }
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    const std::vector<uint8_t> expected = store.get(nonce_key(peer, rank));
    const uint8_t* got = received.data() + kNonceBytes * peer;
    if (expected != std::vector<uint8_t>(got, got + kNonceBytes)) {
      CREW_THROW(CommError, where, ": the connection to rank ", peer, " did not send the nonce rank ", peer,
                 " published in the store: another process may have connected to this rank's Gloo "
                 "port first (any local user can); nothing was sent to it but the check");
    }
  }
}

}  // namespace crew::dist::detail

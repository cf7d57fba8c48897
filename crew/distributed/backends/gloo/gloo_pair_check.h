#pragma once
// The check that every Gloo pair is connected to the rank it should be. Gloo 0.5 accepts the
// first connection that reaches a pair's listening port, whoever makes it (the port is visible
// in /proc/net/tcp to every local user), so before any collective each rank proves itself on
// every pair: it sends a fresh 16-byte nonce that it published in the job's store (which
// admits only the job's token), and the receiver compares the two. An intruder on a pair
// cannot know the nonce, so the rank fails with a CommError before sending it any data.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "crew/distributed/store/store.h"

namespace gloo {
class Context;
}

namespace crew::dist::detail {

// This rank's nonces, one per peer (16 bytes each; its own slot unused), published in `store`.
std::vector<uint8_t> publish_pair_nonces(Store& store, int rank, int size);
// Exchanges the nonces over every pair of `context` and checks each received one against what
// its sender published. Throws CommError naming the peer whose connection did not prove itself.
void check_gloo_pairs(::gloo::Context& context, Store& store, const std::vector<uint8_t>& nonces,
                      std::chrono::milliseconds timeout, const std::string& where);

}  // namespace crew::dist::detail

#pragma once
// This node's address as the other nodes of a job reach it.
#include <string>

namespace crew::launch {

// True for 127.0.0.0/8, ::1 and "localhost".
bool is_loopback(const std::string& host);
// The local address the route to `peer_host` leaves from (a UDP connect, nothing is sent);
// 127.0.0.1 when the peer is loopback. Throws ValueError naming the host when it cannot be
// resolved or no route exists.
std::string local_address_towards(const std::string& peer_host);

}  // namespace crew::launch

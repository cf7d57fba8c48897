// The records launchers exchange through the store: NodeFailure ("<node> <exit code>
// <message>") and NodeClaim ("<nproc> <host> pid <pid> #<nonce>") round-trip and reject
// malformed text.
#include <gtest/gtest.h>

#include "crew/launch/node_rendezvous.h"

namespace crew::launch {
namespace {

TEST(NodeFailure, RoundTripsMessagesWithSpaces) {
  for (const NodeFailure& f : {NodeFailure{1, 7, "rank 2 on node 1: exit code 7"}, NodeFailure{0, 1, ""},
                               NodeFailure{12, 137, "  leading and trailing spaces  "},
                               NodeFailure{3, 0, "node 3 stopped responding for 30000 ms"}}) {
    const std::string text = f.encode();
    const auto back = NodeFailure::decode(text);
    ASSERT_TRUE(back.has_value()) << text;
    EXPECT_EQ(*back, f) << text;
  }
  EXPECT_EQ(NodeFailure({1, 7, "rank 2: exit code 7"}).encode(), "1 7 rank 2: exit code 7");
}

TEST(NodeFailure, MalformedTextDecodesToNothing) {
  for (const char* bad : {"", "1", "1 7", "x 7 message", "1 x message", "1  7 message", " 1 7 message",
                          "-1 7 message", "1 -7 message", "1.5 7 message", "1 7message"}) {
    EXPECT_FALSE(NodeFailure::decode(bad).has_value()) << "'" << bad << "'";
  }
}

TEST(NodeClaim, RoundTrips) {
  const NodeClaim c{4, "10.0.0.2", 4242, 4000000000u};
  EXPECT_EQ(c.encode(), "4 10.0.0.2 pid 4242 #4000000000");
  const auto back = NodeClaim::decode(c.encode());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, c);
}

TEST(NodeClaim, MalformedTextDecodesToNothing) {
  for (const char* bad : {"", "4 host", "4 host pid 1", "0 host pid 1 #2", "4  pid 1 #2", "4 host pid x #2",
                          "4 host pod 1 #2", "4 host pid 1 2", "4 host pid 1 #2 extra", "-4 host pid 1 #2"}) {
    EXPECT_FALSE(NodeClaim::decode(bad).has_value()) << "'" << bad << "'";
  }
}

}  // namespace
}  // namespace crew::launch

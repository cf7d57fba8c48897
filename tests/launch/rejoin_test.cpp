// rejoin_generation: where a node's returning launcher joins a running job.
#include "crew/launch/rejoin.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "crew/distributed/store/hash_store.h"
#include "crew/launch/node_rendezvous.h"

namespace crew::launch {
namespace {

using std::chrono::milliseconds;

TEST(Rejoin, ANewJobStartsAtGenerationZero) {
  dist::HashStore store;
  EXPECT_EQ(rejoin_generation(store, "j", 2, 1, milliseconds(300)).generation, 0);
  publish_generation(store, "j", 0);
  const JoinPoint p = rejoin_generation(store, "j", 2, 1, milliseconds(300));
  EXPECT_EQ(p.generation, 0);
  EXPECT_EQ(p.note, "");
}

TEST(Rejoin, AnUnclaimedPublishedGenerationIsJoined) {
  dist::HashStore store;
  publish_generation(store, "j", 2);  // node 0 restarted into 2 and waits there
  store.set("crew.launch/j/2/node/0", "2 10.0.0.1 pid 7 #1");
  const JoinPoint p = rejoin_generation(store, "j", 2, 1, milliseconds(300));
  EXPECT_EQ(p.generation, 2);
  EXPECT_NE(p.note.find("generation 2"), std::string::npos) << p.note;
}

TEST(Rejoin, ADeadPreviousLauncherFailsItsGenerationAndTheNextIsJoined) {
  dist::HashStore store;
  publish_generation(store, "j", 1);
  store.set("crew.launch/j/1/node/1", "2 10.0.0.2 pid 9 #4");
  store.add("crew.launch/j/1/alive/1", 5);  // then silent
  const JoinPoint p = rejoin_generation(store, "j", 2, 1, milliseconds(300));
  EXPECT_EQ(p.generation, 2);
  auto failure = NodeRendezvous(store, "j", 1, 2, 0).failure();
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->node, 1);
  EXPECT_NE(failure->message.find("node 1's launcher was started again"), std::string::npos) << failure->message;
}

TEST(Rejoin, ALiveClaimIsLeftToTheRendezvousToReportTwice) {
  dist::HashStore store;
  publish_generation(store, "j", 0);
  store.set("crew.launch/j/0/node/1", "2 10.0.0.2 pid 9 #4");
  std::atomic<bool> stop{false};
  std::thread beats([&] {
    while (!stop) {
      store.add("crew.launch/j/0/alive/1", 1);
      std::this_thread::sleep_for(milliseconds(20));
    }
  });
  const JoinPoint p = rejoin_generation(store, "j", 2, 1, milliseconds(1000));
  stop = true;
  beats.join();
  EXPECT_EQ(p.generation, 0);
  EXPECT_FALSE(NodeRendezvous(store, "j", 0, 2, 0).failure().has_value());
}

}  // namespace
}  // namespace crew::launch

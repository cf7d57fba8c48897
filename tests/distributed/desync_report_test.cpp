// The pieces of hang and desync detection in one process: op records and rank states (text,
// encoding), the trace (numbering, pending ops, stalls), and the report's verdicts.
#include "crew/distributed/debug/desync_report.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "crew/core/error.h"
#include "crew/distributed/debug/collective_trace.h"
#include "crew/distributed/debug/debug_process_group.h"
#include "crew/distributed/debug/process_liveness.h"
#include "crew/distributed/process_group/process_group.h"
#include "crew/distributed/store/hash_store.h"

namespace crew::dist::debug {
namespace {

OpRecord op(const char* name, uint64_t seq, int64_t numel, DType dtype = DType::FLOAT32, int root = -1,
            int reduce = -1) {
  OpRecord r;
  r.op = name;
  r.seq = seq;
  r.numel = numel;
  r.dtype = dtype;
  r.root = root;
  r.reduce_op = reduce;
  return r;
}

RankState in_op(int rank, OpRecord current) {
  RankState s;
  s.rank = rank;
  s.where = RankState::Where::IN_COLLECTIVE;
  s.collectives_issued = current.seq + 1;
  s.last = current;
  s.current = std::move(current);
  return s;
}

constexpr int kSum = static_cast<int>(ReduceOp::SUM);

TEST(HangReport, RecordsDescribeThemselvesAndSurviveEncoding) {
  EXPECT_EQ(op("all_reduce", 57, 4096, DType::FLOAT32, -1, kSum).describe(),
            "all_reduce #57 (4096 floats, SUM)");
  EXPECT_EQ(op("broadcast", 3, 1, DType::INT64, 2).describe(), "broadcast #3 (1 int64, root 2)");
  EXPECT_EQ(op("barrier", 9, 0).describe(), "barrier #9");
  OpRecord send = op("send", 0, 10, DType::UINT8, 1);
  send.p2p = true;
  EXPECT_EQ(send.describe(), "send #0 (10 bytes, peer 1)");

  OpRecord r = op("reduce_scatter", 12, 77, DType::FLOAT64, -1, static_cast<int>(ReduceOp::MAX));
  r.completed = true;
  const OpRecord back = OpRecord::decode(r.encode());
  EXPECT_TRUE(back.same_call(r));
  EXPECT_EQ(back.seq, 12u);
  EXPECT_TRUE(back.completed);
  int64_t fp[OpRecord::kFingerprintElems];
  r.fingerprint(fp);
  EXPECT_TRUE(OpRecord::from_fingerprint(fp).same_call(r));
  EXPECT_THROW(OpRecord::decode("all_reduce x"), ValueError);

  RankState s = in_op(1, op("all_gather", 4, 8));
  s.waiting = std::chrono::milliseconds(2500);
  const RankState t = RankState::decode(s.encode());
  EXPECT_EQ(t.describe(), "rank 1 is in all_gather #4 (8 floats) (waiting 2.5 s)");
}

TEST(HangReport, TraceNumbersCollectivesAndP2pApartAndTracksStalls) {
  CollectiveTrace trace(2);
  const uint64_t a = trace.begin(op("all_reduce", 0, 4));
  OpRecord p2p = op("send", 0, 4, DType::FLOAT32, 1);
  p2p.p2p = true;
  const uint64_t s = trace.begin(p2p);
  const uint64_t b = trace.begin(op("broadcast", 0, 4, DType::FLOAT32, 0));
  EXPECT_EQ(trace.find(a)->seq, 0u);
  EXPECT_EQ(trace.find(s)->seq, 0u);
  EXPECT_EQ(trace.find(b)->seq, 1u);
  EXPECT_EQ(trace.next_seq(), 2u);
  EXPECT_EQ(trace.history().size(), 2u);  // the ring keeps the last two

  RankState st = trace.state(0);
  EXPECT_EQ(st.where, RankState::Where::IN_COLLECTIVE);
  EXPECT_EQ(st.current->op, "all_reduce");  // the oldest pending op, though it left the ring
  ASSERT_TRUE(trace.stall().has_value());
  EXPECT_EQ(trace.stall()->id, a);

  trace.complete(a, false);
  trace.complete(s, false);
  trace.complete(b, false);
  EXPECT_FALSE(trace.stall().has_value());
  st = trace.state(0);
  EXPECT_EQ(st.where, RankState::Where::IDLE);
  EXPECT_EQ(st.describe(), "rank 0 is not in a collective (its last: broadcast #1 (4 floats, root 0), done)");
  EXPECT_EQ(trace.state(0, /*left=*/true).where, RankState::Where::LEFT);
}

TEST(HangReport, NamesRanksThatIssuedADifferentCollective) {
  std::vector<std::optional<RankState>> states = {
      in_op(0, op("broadcast", 57, 4096, DType::FLOAT32, 0)),
      in_op(1, op("all_reduce", 57, 4096, DType::FLOAT32, -1, kSum)),
      in_op(2, op("all_reduce", 57, 4096, DType::FLOAT32, -1, kSum))};
  const Report r = analyze("default", 1, states);
  EXPECT_TRUE(r.mismatch);
  EXPECT_FALSE(r.incomplete);
  EXPECT_EQ(
      r.text,
      "collectives of group default (gathered by rank 1): rank 0 is in broadcast #57 (4096 floats, root 0); "
      "rank 1 is in all_reduce #57 (4096 floats, SUM); rank 2 is in all_reduce #57 (4096 floats, SUM)\n"
      "  desync: ranks issued different collectives as #57: rank 0 broadcast #57 (4096 floats, root 0), "
      "rank 1 all_reduce #57 (4096 floats, SUM), rank 2 all_reduce #57 (4096 floats, SUM)");
}

TEST(HangReport, NamesRanksBehindLeftAndSilent) {
  RankState idle;
  idle.rank = 1;
  idle.collectives_issued = 99;
  idle.last = op("all_reduce", 98, 4096, DType::FLOAT32, -1, kSum);
  idle.last->completed = true;
  RankState left = idle;
  left.rank = 2;
  left.where = RankState::Where::LEFT;
  std::vector<std::optional<RankState>> states = {
      in_op(0, op("all_reduce", 99, 4096, DType::FLOAT32, -1, kSum)), idle, left, std::nullopt,
      in_op(4, op("all_reduce", 97, 4096, DType::FLOAT32, -1, kSum))};
  const Report r = analyze("group1", 0, states);
  EXPECT_FALSE(r.mismatch);
  EXPECT_TRUE(r.incomplete);
  EXPECT_NE(r.text.find("rank 1 is not in a collective (its last: all_reduce #98 (4096 floats, SUM), done)"),
            std::string::npos)
      << r.text;
  EXPECT_NE(r.text.find("rank 3: no report (dead or stuck outside a collective)"), std::string::npos)
      << r.text;
  EXPECT_NE(r.text.find("\n  behind: rank 1 has not issued #99 (others wait in #99)"), std::string::npos)
      << r.text;
  EXPECT_NE(r.text.find("\n  behind: rank 2 left the group without issuing #99"), std::string::npos)
      << r.text;
  EXPECT_NE(r.text.find("\n  behind: rank 4 still in #97"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("\n  no report from rank 3 (dead or stuck outside a collective)"), std::string::npos)
      << r.text;
}

TEST(HangReport, GatherReadsAnswersAndFinalStatesWithinItsBound) {
  auto store = std::make_shared<HashStore>();
  ReportResponder responder1;
  RankState left;
  left.rank = 2;
  left.where = RankState::Where::LEFT;
  publish_final(*store, left);
  // Rank 1 answers from another thread while rank 0 gathers; rank 3 never answers.
  std::thread answering([&] {
    for (int i = 0; i < 200; ++i) {
      if (responder1.poll(*store, 1, [] {
            RankState s;
            s.rank = 1;
            return s;
          }))
        return;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  const Report r = gather_report(*store, "default", 0, 4, in_op(0, op("barrier", 0, 0)),
                                 std::chrono::milliseconds(500), nullptr);
  answering.join();
  EXPECT_NE(r.text.find("rank 1 is not in a collective (its last: none)"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("rank 2 has left the group (its last: none)"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("rank 3: no report (dead or stuck outside a collective)"), std::string::npos)
      << r.text;
}

// A store in which rank 1 publishes its final state and exits just after the gatherer first
// looked for it: the moment its process identity is read back.
class FinalAfterFirstLookStore : public HashStore {
 public:
  bool check(const std::vector<std::string>& keys) override {
    if (keys.size() == 1 && keys[0] == "crew_debug/process/1" && !published_) {
      published_ = true;
      RankState failed = in_op(1, op("all_reduce", 0, 8, DType::FLOAT32, -1, kSum));
      failed.where = RankState::Where::FAILED;
      publish_final(*this, failed);
    }
    return HashStore::check(keys);
  }

 private:
  bool published_ = false;
};

TEST(HangReport, ARankThatPublishesItsFinalStateAndExitsIsStillRead) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  std::string identity = process_identity();
  identity = identity.substr(0, identity.rfind(' ') + 1) + std::to_string(child);  // an exited pid
  ASSERT_TRUE(process_gone(identity));
  FinalAfterFirstLookStore store;
  store.set("crew_debug/process/1", identity);
  const Report r =
      gather_report(store, "default", 0, 2, in_op(0, op("all_reduce", 0, 4, DType::FLOAT32, -1, kSum)),
                    std::chrono::milliseconds(2000), nullptr);
  EXPECT_NE(r.text.find("rank 1 failed in all_reduce #0 (8 floats, SUM)"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("desync: ranks issued different collectives as #0"), std::string::npos) << r.text;
  EXPECT_EQ(r.text.find("no report"), std::string::npos) << r.text;
}

TEST(HangReport, OptionsFromTheEnvironment) {
  ::setenv("CREW_DIST_DEBUG", "detail", 1);
  ::setenv("CREW_HANG_TIMEOUT", "7", 1);
  DebugOptions o = DebugOptions::from_env();
  EXPECT_TRUE(o.detail);
  EXPECT_EQ(o.hang_timeout, std::chrono::seconds(7));
  ::setenv("CREW_DIST_DEBUG", "LOUD", 1);
  EXPECT_THROW(DebugOptions::from_env(), ValueError);
  ::unsetenv("CREW_DIST_DEBUG");
  ::unsetenv("CREW_HANG_TIMEOUT");
  o = DebugOptions::from_env();
  EXPECT_FALSE(o.detail);
  EXPECT_EQ(o.hang_timeout, DebugOptions::kDefaultHangTimeout);
}

TEST(HangReport, AGroupOfOneIsNotWrapped) {
  auto self = create_self_process_group();
  EXPECT_EQ(wrap_for_debug(self, std::make_shared<HashStore>(), DebugOptions{}), self);
}

}  // namespace
}  // namespace crew::dist::debug

// How the Reducer waits for its buckets when DataParallel gives it a check to run while an
// all_reduce is slow (on_slow_wait): against a group whose all_reduce the test completes.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "crew/autograd/autograd.h"
#include "crew/autograd/ops.h"
#include "crew/core/check.h"
#include "crew/core/error.h"
#include "crew/distributed/data_parallel/reducer.h"
#include "crew/distributed/process_group/work.h"

namespace crew::dist {
namespace {

using namespace std::chrono_literals;

// Two ranks' worth of group whose all_reduce hands out a FutureWork the test completes. The
// tensor stands for the sum over ranks (it is left as it is), so AVG divides it by 2.
class ScriptedGroup final : public ProcessGroup {
 public:
  ScriptedGroup() : ProcessGroup(0, 2, ProcessGroupOptions{}) {}
  std::string backend_name() const override { return "scripted"; }
  std::shared_ptr<Work> all_reduce(Tensor& tensor, const AllReduceOptions& options) override {
    if (options.op == ReduceOp::AVG) {
      float* p = tensor.data<float>();
      for (int64_t i = 0; i < tensor.numel(); ++i) p[i] /= 2.0f;
    }
    last = std::make_shared<FutureWork>(OpInfo{"all_reduce", 0, ++seq, "scripted"}, 30s);
    return last;
  }
  std::shared_ptr<Work> broadcast(Tensor&, const BroadcastOptions&) override { return unused(); }
  std::shared_ptr<Work> reduce(Tensor&, const ReduceOptions&) override { return unused(); }
  std::shared_ptr<Work> all_gather(std::vector<Tensor>&, const Tensor&, const AllGatherOptions&) override {
    return unused();
  }
  std::shared_ptr<Work> gather(std::vector<Tensor>&, const Tensor&, const GatherOptions&) override {
    return unused();
  }
  std::shared_ptr<Work> scatter(Tensor&, const std::vector<Tensor>&, const ScatterOptions&) override {
    return unused();
  }
  std::shared_ptr<Work> reduce_scatter(Tensor&, const std::vector<Tensor>&,
                                       const ReduceScatterOptions&) override {
    return unused();
  }
  std::shared_ptr<Work> alltoall(std::vector<Tensor>&, const std::vector<Tensor>&,
                                 const AllToAllOptions&) override {
    return unused();
  }
  std::shared_ptr<Work> send(const Tensor&, int, const SendOptions&) override { return unused(); }
  std::shared_ptr<Work> recv(Tensor&, int, const RecvOptions&) override { return unused(); }
  std::shared_ptr<Work> barrier(const BarrierOptions&) override { return unused(); }

  std::shared_ptr<FutureWork> last;
  uint64_t seq = 0;

 private:
  static std::shared_ptr<Work> unused() {
    CREW_THROW(StateError, "ScriptedGroup: only all_reduce is scripted");
  }
};

struct Fixture {
  std::shared_ptr<ScriptedGroup> group = std::make_shared<ScriptedGroup>();
  Tensor w = Tensor::full({4}, 1.0f).set_stop_gradient(false);
  std::atomic<int> checks{0};

  std::unique_ptr<Reducer> reducer(std::function<void()> check) {
    ReducerOptions o;
    o.poll_interval = 10ms;
    o.on_slow_wait = std::move(check);
    return std::make_unique<Reducer>(std::vector<Tensor>{w}, std::vector<std::string>{"w"}, group, o);
  }
  // loss = sum(3 * w): the local gradient is 3 everywhere.
  Tensor loss() { return sum(w * Tensor::full({4}, 3.0f)); }
};

// Completes the group's last all_reduce after `delay`, from another thread.
std::thread complete_later(const std::shared_ptr<ScriptedGroup>& group, std::chrono::milliseconds delay,
                           std::exception_ptr error = nullptr) {
  return std::thread([group, delay, error] {
    while (!group->last) std::this_thread::sleep_for(1ms);
    std::this_thread::sleep_for(delay);
    group->last->mark_done(error);
  });
}

TEST(ReducerWait, ChecksWhileSlowThenAveragesTheGradient) {
  Fixture f;
  auto reducer = f.reducer([&] { ++f.checks; });
  Tensor loss = f.loss();
  reducer->prepare_for_backward({loss});
  auto finisher = complete_later(f.group, 100ms);
  loss.backward();  // blocks in the reducer until the all_reduce completes
  finisher.join();
  EXPECT_GE(f.checks.load(), 1);                                           // 100 ms with a 10 ms poll
  for (float g : f.w.grad().to_vector<float>()) EXPECT_FLOAT_EQ(g, 1.5f);  // 3 / world 2
  EXPECT_EQ(reducer->steps(), 1u);
}

TEST(ReducerWait, AFailingCheckEndsTheWaitWithItsError) {
  Fixture f;
  auto reducer = f.reducer([&] {
    if (++f.checks == 2) CREW_THROW(StateError, "rank 1 finished after 2 steps");
  });
  Tensor loss = f.loss();
  reducer->prepare_for_backward({loss});
  try {
    loss.backward();
    FAIL() << "backward returned";
  } catch (const StateError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 finished after 2 steps"), std::string::npos) << e.what();
  }
  EXPECT_EQ(f.checks.load(), 2);
  f.group->last->mark_done();  // so that the reducer's destructor does not wait for it
}

TEST(ReducerWait, TheOpsOwnTimeoutErrorIsRethrownNotRetried) {
  // A TimeoutError from the op itself must not read as "our short wait ran out, wait again".
  Fixture f;
  auto reducer = f.reducer([&] { ++f.checks; });
  Tensor loss = f.loss();
  reducer->prepare_for_backward({loss});
  std::exception_ptr error;
  try {
    CREW_THROW(TimeoutError, "all_reduce (rank 0, seq 1, group scripted): timed out after 30 s");
  } catch (...) {
    error = std::current_exception();
  }
  auto finisher = complete_later(f.group, 30ms, error);
  try {
    loss.backward();
    FAIL() << "backward returned";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("timed out after 30 s"), std::string::npos) << e.what();
  }
  finisher.join();
}

}  // namespace
}  // namespace crew::dist

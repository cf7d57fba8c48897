// any_rank (the GradScaler's found-inf agreement): true on every rank when one rank says
// true; a GradScaler on 2 ranks where only rank 1's gradient holds an inf skips the step on
// both and lowers both scales; alone, the flag is the process's own.
#include "crew/distributed/collective/any_rank.h"

#include <gtest/gtest.h>

#include <limits>

#include "crew/optim/grad_scaler.h"
#include "crew/optim/sgd.h"
#include "tests/distributed/hosted_job.h"
#include "tests/testing/child_expect.h"
#include "tests/testing/multiprocess.h"

namespace crew::dist {
namespace {

// Forks `world` ranks that find a TCP store hosted here (gloo backend, 20 s timeout).
std::vector<testing::RankResult> run_job(int world, const std::function<void(int)>& fn) {
  return testing_job::run_hosted_job(world, fn, {.timeout = "20s"});
}

TEST(AnyRank, BeforeInitIsTheFlagItself) {
  destroy_process_group();
  EXPECT_TRUE(any_rank(true));
  EXPECT_FALSE(any_rank(false));
}

TEST(AnyRank, OneRanksFlagReachesAll) {
  testing::expect_all_ok(run_job(3, [](int rank) {
    init_parallel_env();
    CHILD_EXPECT(any_rank(rank == 2), "rank ", rank, " missed rank 2's flag");
    CHILD_EXPECT(!any_rank(false), "rank ", rank, " saw a flag nobody raised");
  }));
}

TEST(AnyRank, AGradScalerSkipsTheStepOnEveryRank) {
  testing::expect_all_ok(run_job(2, [](int rank) {
    init_parallel_env();
    Tensor w = Tensor::full({4}, 1.0, DType::FLOAT32).set_stop_gradient(false);
    optim::SGD opt({w}, {.learning_rate = 0.1});
    optim::GradScaler scaler({.init_loss_scaling = 8, .decr_every_n_nan_or_inf = 1},
                             [](bool found) { return any_rank(found); });
    for (int step = 0; step < 2; ++step) {
      w.set_grad(Tensor::full({4}, 2.0 * scaler.scale(), DType::FLOAT32));
      if (step == 0 && rank == 1) {
        w.set_grad(Tensor::from_vector<float>({16, 16, std::numeric_limits<float>::infinity(), 16}, {4}));
      }
      const bool stepped = scaler.minimize(opt);
      CHILD_EXPECT(stepped == (step == 1), "rank ", rank, " step ", step, ": stepped ", stepped);
      CHILD_EXPECT(scaler.scale() == 4.0, "rank ", rank, " step ", step, ": scale ", scaler.scale());
    }
    const float want = 1.0F - 0.1F * 2.0F;  // one step taken, with the unscaled gradient 2
    for (float v : w.to_vector<float>()) CHILD_EXPECT(std::abs(v - want) < 1e-6, "rank ", rank, ": w ", v);
  }));
}

}  // namespace
}  // namespace crew::dist

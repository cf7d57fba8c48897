// The nccl process group on a real GPU with real NCCL: a one-rank communicator (the most a
// one-GPU machine can run: NCCL refuses two ranks on one GPU), its collectives against their
// expected values, host tensors staged, and non-blocking init aborted when the second rank of
// a two-rank group never arrives.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "crew/distributed/backends/nccl/nccl_process_group.h"
#include "crew/distributed/store/hash_store.h"
#include "crew/tensor/tensor.h"

namespace crew::dist {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

std::shared_ptr<ProcessGroup> one_rank_group(milliseconds timeout = milliseconds(60000)) {
  register_nccl_backend();
  return create_process_group("nccl", std::make_shared<HashStore>(), 0, 1,
                              ProcessGroupOptions{timeout, "default"});
}

TEST(CudaNccl, DriverIsInstalledAndSeesTheGpu) {
  ASSERT_NE(nccl::driver(), nullptr);
  EXPECT_GE(nccl::driver()->device_count(), 1);
  EXPECT_THAT(nccl::driver()->device_uuid(0), HasSubstr("GPU-"));
}

TEST(CudaNccl, OneRankGroupRunsEveryCollective) {
  auto pg = one_rank_group();
  ASSERT_NE(dynamic_cast<NcclProcessGroup*>(pg.get()), nullptr) << "the staged wrapper was applied";
  const std::vector<float> v{1.5f, -2.f, 3.25f, 4.f};
  Tensor t = Tensor::from_vector(v).to(CUDAPlace(0));
  for (ReduceOp op : {ReduceOp::SUM, ReduceOp::AVG, ReduceOp::MAX, ReduceOp::MIN, ReduceOp::PROD}) {
    pg->all_reduce(t, {.op = op})->wait();
    EXPECT_EQ(t.to_vector<float>(), v) << reduce_op_name(op);
  }
  pg->broadcast(t)->wait();
  pg->reduce(t)->wait();
  EXPECT_EQ(t.to_vector<float>(), v);
  std::vector<Tensor> outs{Tensor::zeros({4}, DType::FLOAT32, CUDAPlace(0))};
  pg->all_gather(outs, t)->wait();
  EXPECT_EQ(outs[0].to_vector<float>(), v);
  Tensor rs = Tensor::zeros({4}, DType::FLOAT32, CUDAPlace(0));
  pg->reduce_scatter(rs, {t})->wait();
  EXPECT_EQ(rs.to_vector<float>(), v);
  Tensor big = Tensor::ones({1 << 22}, DType::FLOAT32, CUDAPlace(0));
  pg->all_reduce(big)->wait();
  EXPECT_EQ(big.to(CPUPlace()).to_vector<float>()[(1 << 22) - 1], 1.f);
  pg->barrier()->wait();
}

TEST(CudaNccl, HostTensorsAreStagedThroughTheGpu) {
  auto pg = one_rank_group();
  Tensor t = Tensor::from_vector(std::vector<int64_t>{7, 8});
  pg->all_reduce(t)->wait();
  EXPECT_EQ(t.to_vector<int64_t>(), (std::vector<int64_t>{7, 8}));
  EXPECT_EQ(t.place(), CPUPlace());
}

TEST(CudaNccl, InitWhoseSecondRankNeverArrivesIsAbortedAfterTheTimeout) {
  register_nccl_backend();
  const auto start = std::chrono::steady_clock::now();
  auto store = std::make_shared<HashStore>();
  store->set("gpu_uuid/1", "=GPU-another");  // rank 1 "is" elsewhere and never connects
  try {
    create_process_group("nccl", store, 0, 2, ProcessGroupOptions{milliseconds(3000), "default"});
    FAIL() << "expected TimeoutError";
  } catch (const TimeoutError& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("nccl init (rank 0, group default, gpu:0): the communicator was not ready"));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

}  // namespace
}  // namespace crew::dist

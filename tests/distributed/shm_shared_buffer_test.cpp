// ProcessGroup::allocate_buffer on the shm backend: buffers mapped into every rank and
// all_reduced in place (no staging copies), against a direct computation; what is left in
// /dev/shm; a mismatch between a shared and an ordinary tensor; no room for a buffer.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "crew/distributed/backends/shm/shm_process_group.h"
#include "tests/distributed/reduction_values.h"
#include "tests/distributed/shm_harness.h"
#include "tests/testing/child_expect.h"

namespace crew::dist {
namespace {

using testing::expect_all_ok;
using testing::expect_throws;
using testing::shm::make_shm_group;
using testing::shm::run_ranks;
using testing::shm::set_unique_job;
using testing::shm::shm_entries;
using namespace testing_values;

// Small enough that 9001 elements are above small_bytes (the in-place path).
ShmOptions small_options() {
  ShmOptions o;
  o.buffer_bytes = 4096;
  o.small_bytes = 512;
  return o;
}

bool in_shared_memory(const Tensor& t) { return !t.impl()->storage->owns_memory(); }

class ShmSharedBuffer : public ::testing::TestWithParam<int> {};

TEST_P(ShmSharedBuffer, AllReduceInPlaceEqualsTheDirectReduction) {
  const int world = GetParam();
  const std::string prefix = set_unique_job("shmbuf");
  auto results = run_ranks(world, [&](int rank, Store& store) {
    auto pg = make_shm_group(store, rank, world, small_options());
    for (DType dtype : {DType::FLOAT32, DType::FLOAT64, DType::INT32}) {
      for (ReduceOp op : {ReduceOp::SUM, ReduceOp::MAX, ReduceOp::MIN, ReduceOp::PROD, ReduceOp::AVG}) {
        // 9001: one piece per rank; 100003 float64: a slice of several 64 KiB pieces.
        for (const int64_t n : {int64_t{9001}, int64_t{100003}})
          dispatch_dtype(dtype, [&](auto tag) {
            using T = decltype(tag);
            Tensor buf = pg->allocate_buffer(n, dtype);
            CHILD_EXPECT(in_shared_memory(buf), "the buffer is not in shared memory");
            CHILD_EXPECT(buf.shape() == Shape{n} && buf.dtype() == dtype);
            for (T v : buf.to_vector<T>()) CHILD_EXPECT(v == T(0), "a new buffer holds ", +v);
            buf.copy_(rank_tensor<T>(rank, n));
            pg->all_reduce(buf, {.op = op})->wait();
            require_equal(buf, expected_reduction<T>(world, n, op),
                          str_cat("shared all_reduce ", dtype_name(dtype), " ", reduce_op_name(op)));
          });
      }
    }
  });
  expect_all_ok(results);
  EXPECT_TRUE(shm_entries(prefix).empty());
}

TEST_P(ShmSharedBuffer, PartsAtOneOffsetAndAsyncOpsOnSeveralBuffers) {
  const int world = GetParam();
  auto results = run_ranks(world, [&](int rank, Store& store) {
    auto pg = make_shm_group(store, rank, world, small_options());
    Tensor a = pg->allocate_buffer(20000, DType::FLOAT32);
    Tensor b = pg->allocate_buffer(5000, DType::FLOAT32);
    for (int step = 0; step < 3; ++step) {  // the same buffers, again and again
      a.copy_(rank_tensor<float>(rank + step, 20000));
      b.copy_(rank_tensor<float>(rank, 5000));
      Tensor part = a.slice(1000, 13001);  // 12001 elements at element offset 1000
      auto w1 = pg->all_reduce(part, {.op = ReduceOp::SUM});
      auto w2 = pg->all_reduce(b, {.op = ReduceOp::AVG});
      w1->wait();
      w2->wait();
      std::vector<float> want = rank_tensor<float>(rank + step, 20000).to_vector<float>();
      std::vector<float> sums(20000, 0.0f);
      for (int r = 0; r < world; ++r) {
        std::vector<float> v = rank_tensor<float>(r + step, 20000).to_vector<float>();
        for (int i = 1000; i < 13001; ++i) sums[i] += v[i];
      }
      for (int i = 1000; i < 13001; ++i) want[i] = sums[i];
      require_equal(a, want, str_cat("part of a, step ", step));
      require_equal(b, expected_reduction<float>(world, 5000, ReduceOp::AVG), "b");
    }
  });
  expect_all_ok(results);
}

INSTANTIATE_TEST_SUITE_P(Worlds, ShmSharedBuffer, ::testing::Values(2, 3),
                         [](const auto& info) { return "world" + std::to_string(info.param); });

TEST(ShmSharedBufferFault, ASharedAndAnOrdinaryTensorAreAMismatchAndTheGroupRecovers) {
  auto results = run_ranks(2, [&](int rank, Store& store) {
    auto pg = make_shm_group(store, rank, 2, small_options());
    Tensor shared = pg->allocate_buffer(4000, DType::FLOAT32);
    Tensor plain = Tensor::ones({4000});
    Tensor& mine = rank == 0 ? shared : plain;
    expect_throws<CommError>(
        [&] { pg->all_reduce(mine, {.op = ReduceOp::SUM})->wait(); },
        {"all_reduce (rank " + std::to_string(rank), "in shared buffer 0 at byte 0", "same order"});
    shared.fill_(rank + 1.0);
    pg->all_reduce(shared, {.op = ReduceOp::SUM})->wait();
    CHILD_EXPECT(shared.to_vector<float>()[3999] == 3.0f, "after recovery got ",
                 shared.to_vector<float>()[3999]);
  });
  expect_all_ok(results);
}

TEST(ShmSharedBufferFault, NoRoomOnOneRankGivesOrdinaryTensorsOnEveryRank) {
  const std::string prefix = set_unique_job("shmbuf");
  auto results = run_ranks(2, [&](int rank, Store& store) {
    ShmOptions shm = small_options();
    // Room for the group's own segment on rank 1, not for a buffer on top of it.
    if (rank == 1) shm.max_bytes = shm_segment_bytes(2, shm) + 4096;
    auto pg = make_shm_group(store, rank, 2, shm);
    Tensor buf = pg->allocate_buffer(9001, DType::FLOAT32);
    CHILD_EXPECT(!in_shared_memory(buf), "rank ", rank, " got shared memory although rank 1 had no room");
    buf.copy_(rank_tensor<float>(rank, 9001));
    pg->all_reduce(buf, {.op = ReduceOp::SUM})->wait();
    require_equal(buf, expected_reduction<float>(2, 9001, ReduceOp::SUM), "fallback all_reduce");
  });
  expect_all_ok(results);
  EXPECT_TRUE(shm_entries(prefix).empty());
}

}  // namespace
}  // namespace crew::dist

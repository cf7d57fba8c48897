// Every collective of the shm backend on 2, 3 and 4 real processes, every dtype and ReduceOp,
// against a direct computation. Small buffers force the chunked paths.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "crew/distributed/backends/shm/shm_process_group.h"
#include "tests/distributed/reduction_values.h"
#include "tests/distributed/shm_harness.h"
#include "tests/testing/child_expect.h"

namespace crew::dist {
namespace {

using testing::expect_all_ok;
using testing::shm::make_shm_group;
using testing::shm::run_ranks;
using namespace testing_values;
using testing::shm::set_unique_job;
using testing::shm::shm_entries;

const std::vector<int64_t> kSizes = {1, 7, 1023, 9001};  // 9001: several chunks, a partial one
const std::vector<DType> kDTypes = {DType::FLOAT32, DType::FLOAT64, DType::INT32, DType::INT64, DType::UINT8};
const std::vector<ReduceOp> kOps = {ReduceOp::SUM, ReduceOp::MAX, ReduceOp::MIN, ReduceOp::PROD,
                                    ReduceOp::AVG};

// Small buffers so that every path (small, chunked, partial chunk, multi-chunk mailbox) runs.
ShmOptions small_buffers() {
  ShmOptions o;
  o.buffer_bytes = 4096;
  o.mailbox_bytes = 256;
  o.small_bytes = 512;
  return o;
}

class ShmCollectives : public ::testing::TestWithParam<int> {};

TEST_P(ShmCollectives, AllReduceEveryDtypeOpAndSize) {
  const int world = GetParam();
  const std::string prefix = set_unique_job("shmtest");
  auto results = run_ranks(world, [&](int rank, Store& store) {
    auto pg = make_shm_group(store, rank, world, small_buffers());
    for (DType dtype : kDTypes) {
      for (ReduceOp op : kOps) {
        for (int64_t n : kSizes) {
          dispatch_dtype(dtype, [&](auto tag) {
            using T = decltype(tag);
            Tensor t = rank_tensor<T>(rank, n);
            pg->all_reduce(t, {.op = op})->wait();
            require_equal(t, expected_reduction<T>(world, n, op),
                          str_cat("all_reduce ", dtype_name(dtype), " ", reduce_op_name(op), " n=", n));
          });
        }
      }
    }
  });
  expect_all_ok(results);
  EXPECT_TRUE(shm_entries(prefix).empty());
}

// bfloat16 and float16 (an O2 model's gradients, DataParallel's comm_dtype): combined in
// float32, each result rounded; AVG divides in float32.
TEST_P(ShmCollectives, AllReduceSixteenBitDtypes) {
  const int world = GetParam();
  const std::string prefix = set_unique_job("shmtest");
  auto results = run_ranks(world, [&](int rank, Store& store) {
    auto pg = make_shm_group(store, rank, world, small_buffers());
    for (DType dtype : {DType::BFLOAT16, DType::FLOAT16}) {
      for (ReduceOp op : kOps) {
        for (int64_t n : kSizes) {
          Tensor t = rank_tensor_half(rank, n, dtype);
          pg->all_reduce(t, {.op = op})->wait();
          CHILD_EXPECT(t.dtype() == dtype);
          require_close_half(t, world, op,
                             str_cat("all_reduce ", dtype_name(dtype), " ", reduce_op_name(op), " n=", n));
        }
      }
    }
  });
  expect_all_ok(results);
  EXPECT_TRUE(shm_entries(prefix).empty());
}

TEST_P(ShmCollectives, RootedAndListCollectives) {
  const int world = GetParam();
  const std::string prefix = set_unique_job("shmtest");
  auto results = run_ranks(world, [&](int rank, Store& store) {
    auto pg = make_shm_group(store, rank, world, small_buffers());
    for (int64_t n : kSizes) {
      const int root = static_cast<int>(n % world);
      // broadcast
      Tensor b = rank_tensor<double>(rank, n);
      pg->broadcast(b, {.root = root})->wait();
      require_equal(b, rank_tensor<double>(root, n).to_vector<double>(), str_cat("broadcast n=", n));
      // reduce: only root's result is specified
      for (ReduceOp op : kOps) {
        Tensor r = rank_tensor<int64_t>(rank, n);
        pg->reduce(r, {.root = root, .op = op})->wait();
        if (rank == root)
          require_equal(r, expected_reduction<int64_t>(world, n, op), str_cat("reduce n=", n));
      }
      // all_gather and gather
      std::vector<Tensor> outs;
      for (int r = 0; r < world; ++r) outs.push_back(Tensor::zeros({n}, DType::INT32));
      pg->all_gather(outs, rank_tensor<int32_t>(rank, n))->wait();
      for (int r = 0; r < world; ++r)
        require_equal(outs[r], rank_tensor<int32_t>(r, n).to_vector<int32_t>(), "all_gather");
      std::vector<Tensor> gathered;
      if (rank == root) {
        for (int r = 0; r < world; ++r) gathered.push_back(Tensor::zeros({n}, DType::UINT8));
      }
      pg->gather(gathered, rank_tensor<uint8_t>(rank, n), {.root = root})->wait();
      for (size_t r = 0; r < gathered.size(); ++r) {
        require_equal(gathered[r], rank_tensor<uint8_t>(int(r), n).to_vector<uint8_t>(), "gather");
      }
      // scatter: rank r gets root's inputs[r] = values of "rank" root + r at offset r * n
      std::vector<Tensor> pieces;
      if (rank == root) {
        for (int r = 0; r < world; ++r) pieces.push_back(rank_tensor<float>(root + r, n, r * n));
      }
      Tensor piece = Tensor::zeros({n});
      pg->scatter(piece, pieces, {.root = root})->wait();
      require_equal(piece, rank_tensor<float>(root + rank, n, rank * n).to_vector<float>(), "scatter");
      // reduce_scatter: inputs[r] of rank k is value_of(k, r * n + i)
      for (ReduceOp op : kOps) {
        std::vector<Tensor> ins;
        for (int r = 0; r < world; ++r) ins.push_back(rank_tensor<float>(rank, n, r * n));
        Tensor out = Tensor::zeros({n});
        pg->reduce_scatter(out, ins, {.op = op})->wait();
        require_equal(out, expected_reduction<float>(world, n, op, rank * n),
                      str_cat("reduce_scatter n=", n));
      }
      // alltoall: outputs[r] receives rank r's inputs[this rank]
      std::vector<Tensor> ins, got;
      for (int r = 0; r < world; ++r) {
        ins.push_back(rank_tensor<int64_t>(rank * 10 + r, n));
        got.push_back(Tensor::zeros({n}, DType::INT64));
      }
      pg->alltoall(got, ins)->wait();
      for (int r = 0; r < world; ++r) {
        require_equal(got[r], rank_tensor<int64_t>(r * 10 + rank, n).to_vector<int64_t>(), "alltoall");
      }
      pg->barrier()->wait();
    }
  });
  expect_all_ok(results);
  EXPECT_TRUE(shm_entries(prefix).empty());
}

TEST_P(ShmCollectives, SendRecvRingLargerThanMailbox) {
  const int world = GetParam();
  auto results = run_ranks(world, [&](int rank, Store& store) {
    auto pg = make_shm_group(store, rank, world, small_buffers());
    const int next = (rank + 1) % world, prev = (rank + world - 1) % world;
    for (int64_t n : kSizes) {
      // Every rank sends before it receives: crossing sends bigger than the mailbox must not
      // deadlock.
      Tensor out = rank_tensor<float>(rank, n);
      Tensor in = Tensor::zeros({n});
      auto sent = pg->send(out, next, {.tag = 7});
      auto received = pg->recv(in, prev, {.tag = 7});
      received->wait();
      sent->wait();
      require_equal(in, rank_tensor<float>(prev, n).to_vector<float>(), str_cat("recv n=", n));
    }
  });
  expect_all_ok(results);
}

TEST_P(ShmCollectives, AsyncOpsCompleteInIssueOrder) {
  const int world = GetParam();
  auto results = run_ranks(world, [&](int rank, Store& store) {
    auto pg = make_shm_group(store, rank, world, small_buffers());
    std::vector<Tensor> ts;
    std::vector<std::shared_ptr<Work>> works;
    for (int i = 0; i < 8; ++i) {
      ts.push_back(rank_tensor<float>(rank, 1000 + i * 333, i));
      works.push_back(pg->all_reduce(ts.back(), {.op = ReduceOp::SUM}));
    }
    Tensor b = rank_tensor<int32_t>(rank, 100);
    works.push_back(pg->broadcast(b, {.root = world - 1}));
    for (int i = static_cast<int>(works.size()) - 1; i >= 0; --i) works[i]->wait();
    for (int i = 0; i < 8; ++i) {
      CHILD_EXPECT(works[i]->is_completed());
      require_equal(ts[i], expected_reduction<float>(world, 1000 + i * 333, ReduceOp::SUM, i),
                    "async all_reduce");
    }
    require_equal(b, rank_tensor<int32_t>(world - 1, 100).to_vector<int32_t>(), "async broadcast");
  });
  expect_all_ok(results);
}

INSTANTIATE_TEST_SUITE_P(Worlds, ShmCollectives, ::testing::Values(2, 3, 4),
                         [](const auto& info) { return "world" + std::to_string(info.param); });

TEST(ShmBackend, DefaultBuffersLargeAllReduce) {
  // 3 MiB + 20 bytes of float32: three full 1 MiB chunks and a partial one.
  const int64_t n = (3 << 18) + 5;
  auto results = run_ranks(2, [&](int rank, Store& store) {
    auto pg = make_shm_group(store, rank, 2, ShmOptions{});
    CHILD_EXPECT(pg->backend_name() == "shm");
    for (ReduceOp op : {ReduceOp::SUM, ReduceOp::MAX, ReduceOp::AVG}) {
      Tensor t = rank_tensor<float>(rank, n);
      pg->all_reduce(t, {.op = op})->wait();
      require_equal(t, expected_reduction<float>(2, n, op), "large all_reduce");
    }
  });
  expect_all_ok(results);
}

TEST(ShmBackend, WorldOfOne) {
  auto results = run_ranks(1, [&](int rank, Store& store) {
    auto pg = make_shm_group(store, 0, 1, small_buffers());
    Tensor t = rank_tensor<float>(0, 5000);
    pg->all_reduce(t, {.op = ReduceOp::AVG})->wait();
    require_equal(t, rank_tensor<float>(0, 5000).to_vector<float>(), "all_reduce of one rank");
    std::vector<Tensor> outs = {Tensor::zeros({7})};
    pg->all_gather(outs, rank_tensor<float>(0, 7))->wait();
    require_equal(outs[0], rank_tensor<float>(0, 7).to_vector<float>(), "all_gather of one rank");
    pg->barrier()->wait();
  });
  expect_all_ok(results);
}

}  // namespace
}  // namespace crew::dist

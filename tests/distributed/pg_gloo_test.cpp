// GlooProcessGroup: every collective on 2-4 ranks (threads of this process, one Gloo context
// each, rendezvous through an in-process store) and every dtype, against a direct computation.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <thread>

#include "crew/distributed/backends/gloo/gloo_process_group.h"
#include "crew/distributed/store/hash_store.h"
#include "tests/distributed/reduction_values.h"

namespace crew::dist {
namespace {

using std::chrono::milliseconds;

constexpr DType kDTypes[] = {DType::FLOAT32, DType::FLOAT64, DType::INT32, DType::INT64, DType::UINT8};
constexpr ReduceOp kOps[] = {ReduceOp::SUM, ReduceOp::MAX, ReduceOp::MIN, ReduceOp::PROD, ReduceOp::AVG};

// Runs fn(rank, pg) on `world` threads, each with its own Gloo group of `world` ranks.
void run_group(int world, const std::function<void(int, ProcessGroup&)>& fn,
               milliseconds timeout = milliseconds(20000), const std::string& name = "test") {
  auto store = std::make_shared<HashStore>();
  std::vector<std::thread> threads;
  std::vector<std::string> errors(world);
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      try {
        GlooProcessGroup pg(store, r, world, ProcessGroupOptions{timeout, name});
        fn(r, pg);
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < world; ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
}

// Rank r's input element i: small positive integers, so PROD and uint8 SUM stay exact.
double value(int rank, int64_t i) { return static_cast<double>((rank * 7 + i * 3) % 3 + 1); }

Tensor make(int rank, int64_t n, DType dtype) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = value(rank, i);
  return Tensor::from_vector<double>(v).to(dtype);
}

double reduce_ref(ReduceOp op, DType dtype, int world, int64_t i) {
  double acc = value(0, i);
  for (int r = 1; r < world; ++r) {
    const double x = value(r, i);
    switch (op) {
      case ReduceOp::SUM:
      case ReduceOp::AVG:
        acc += x;
        break;
      case ReduceOp::PROD:
        acc *= x;
        break;
      case ReduceOp::MAX:
        acc = std::max(acc, x);
        break;
      case ReduceOp::MIN:
        acc = std::min(acc, x);
        break;
    }
  }
  if (op == ReduceOp::AVG) acc = is_floating(dtype) ? acc / world : std::trunc(acc / world);
  return acc;
}

void expect_reduced(const Tensor& t, ReduceOp op, int world, const std::string& what) {
  auto got = t.to_vector<double>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    ASSERT_NEAR(got[i], reduce_ref(op, t.dtype(), world, i), 1e-5)
        << what << " " << reduce_op_name(op) << " " << dtype_name(t.dtype()) << " world " << world << " at "
        << i;
  }
}

TEST(PgGloo, AllReduceEveryOpAndDType) {
  for (int world : {2, 3, 4}) {
    run_group(world, [&](int rank, ProcessGroup& pg) {
      EXPECT_EQ(pg.backend_name(), "gloo");
      EXPECT_EQ(pg.size(), world);
      for (DType dtype : kDTypes) {
        for (ReduceOp op : kOps) {
          Tensor t = make(rank, 37, dtype);
          pg.all_reduce(t, {.op = op})->wait();
          expect_reduced(t, op, world, "all_reduce");
        }
      }
    });
  }
}

// Sizes inside the preamble's budget reduce in 32 KiB chunks: every element of a tensor that
// spans several chunks and a partial last one is reduced, in every dtype and op.
TEST(PgGloo, AllReduceAcrossReductionChunks) {
  for (int world : {2, 3}) {
    run_group(world, [&](int rank, ProcessGroup& pg) {
      for (DType dtype : kDTypes) {
        for (ReduceOp op : kOps) {
          Tensor t = make(rank, 3 * 8192 + 5, dtype);
          pg.all_reduce(t, {.op = op})->wait();
          expect_reduced(t, op, world, "all_reduce");
        }
      }
    });
  }
}

// bfloat16 and float16, through the preamble (37 and 4096 elements) and by Gloo's algorithm
// (700000, past the preamble's 1 MiB budget):
// combined in float32, each result rounded; AVG divides in float32. Broadcast moves them as is.
TEST(PgGloo, AllReduceAndBroadcastSixteenBitDtypes) {
  using namespace testing_values;
  for (int world : {2, 3}) {
    run_group(world, [&](int rank, ProcessGroup& pg) {
      for (DType dtype : {DType::BFLOAT16, DType::FLOAT16}) {
        for (ReduceOp op : kOps) {
          for (int64_t n : {37, 4096, 700000}) {
            Tensor t = rank_tensor_half(rank, n, dtype);
            pg.all_reduce(t, {.op = op})->wait();
            require_close_half(t, world, op, str_cat("gloo all_reduce ", dtype_name(dtype), " n=", n));
          }
        }
        Tensor b = rank_tensor_half(rank, 4096, dtype);
        pg.broadcast(b, {.root = 1})->wait();
        CHILD_EXPECT(
            b.to(DType::FLOAT32).to_vector<float>() == rank_tensor<float>(1, 4096).to_vector<float>(),
            "gloo broadcast ", dtype_name(dtype));
      }
    });
  }
}

TEST(PgGloo, ReduceLandsOnRoot) {
  run_group(3, [](int rank, ProcessGroup& pg) {
    for (DType dtype : kDTypes) {
      for (int root = 0; root < 3; ++root) {
        Tensor t = make(rank, 10, dtype);
        pg.reduce(t, {.root = root, .op = ReduceOp::SUM})->wait();
        if (rank == root) expect_reduced(t, ReduceOp::SUM, 3, "reduce");
      }
    }
  });
}

TEST(PgGloo, BroadcastFromEveryRoot) {
  run_group(4, [](int rank, ProcessGroup& pg) {
    for (DType dtype : kDTypes) {
      for (int root = 0; root < 4; ++root) {
        Tensor t = make(rank, 9, dtype);
        pg.broadcast(t, {.root = root})->wait();
        EXPECT_EQ(t.to_vector<double>(), make(root, 9, dtype).to_vector<double>()) << dtype_name(dtype);
      }
    }
  });
}

TEST(PgGloo, AllGatherAndGather) {
  run_group(3, [](int rank, ProcessGroup& pg) {
    for (DType dtype : kDTypes) {
      std::vector<Tensor> outs;
      for (int r = 0; r < 3; ++r) outs.push_back(Tensor::empty({2, 3}, dtype));
      pg.all_gather(outs, make(rank, 6, dtype).view({2, 3}))->wait();
      for (int r = 0; r < 3; ++r)
        EXPECT_EQ(outs[r].to_vector<double>(), make(r, 6, dtype).to_vector<double>());

      std::vector<Tensor> gathered;
      if (rank == 1) {
        for (int r = 0; r < 3; ++r) gathered.push_back(Tensor::empty({5}, dtype));
      }
      pg.gather(gathered, make(rank, 5, dtype), {.root = 1})->wait();
      for (size_t r = 0; r < gathered.size(); ++r) {
        EXPECT_EQ(gathered[r].to_vector<double>(), make(static_cast<int>(r), 5, dtype).to_vector<double>());
      }
    }
  });
}

TEST(PgGloo, ScatterReduceScatterAlltoall) {
  const int world = 4;
  run_group(world, [&](int rank, ProcessGroup& pg) {
    for (DType dtype : kDTypes) {
      // inputs[j] of rank r holds value(r * world + j, i).
      std::vector<Tensor> inputs;
      for (int j = 0; j < world; ++j) inputs.push_back(make(rank * world + j, 4, dtype));

      Tensor scattered = Tensor::empty({4}, dtype);
      pg.scatter(scattered, inputs, {.root = 2})->wait();
      EXPECT_EQ(scattered.to_vector<double>(), make(2 * world + rank, 4, dtype).to_vector<double>());

      Tensor reduced = Tensor::empty({4}, dtype);
      pg.reduce_scatter(reduced, inputs, {.op = ReduceOp::MAX})->wait();
      for (int64_t i = 0; i < 4; ++i) {
        double expect = 0;
        for (int r = 0; r < world; ++r) expect = std::max(expect, value(r * world + rank, i));
        EXPECT_EQ(reduced.to_vector<double>()[i], expect);
      }

      std::vector<Tensor> outputs;
      for (int j = 0; j < world; ++j) outputs.push_back(Tensor::empty({4}, dtype));
      pg.alltoall(outputs, inputs)->wait();
      for (int r = 0; r < world; ++r) {
        EXPECT_EQ(outputs[r].to_vector<double>(), make(r * world + rank, 4, dtype).to_vector<double>());
      }
    }
  });
}

TEST(PgGloo, SendRecvRingAndBarrier) {
  const int world = 3;
  run_group(world, [&](int rank, ProcessGroup& pg) {
    const int next = (rank + 1) % world;
    const int prev = (rank + world - 1) % world;
    Tensor got = Tensor::empty({1000}, DType::INT64);
    // Even ranks send first, odd ranks receive first: no two neighbours both block in send.
    if (rank % 2 == 0) {
      pg.send(make(rank, 1000, DType::INT64), next, {.tag = 7})->wait();
      pg.recv(got, prev, {.tag = 7})->wait();
    } else {
      pg.recv(got, prev, {.tag = 7})->wait();
      pg.send(make(rank, 1000, DType::INT64), next, {.tag = 7})->wait();
    }
    EXPECT_EQ(got.to_vector<double>(), make(prev, 1000, DType::INT64).to_vector<double>());
    pg.barrier()->wait();
    // Only ranks 0 and 1 exchange; rank 2's later collectives must still line up.
    if (rank == 0) pg.send(Tensor::full({3}, 5.0), 1, {.tag = 0})->wait();
    if (rank == 1) {
      Tensor x = Tensor::empty({3});
      pg.recv(x, 0, {.tag = 0})->wait();
      EXPECT_EQ(x.to_vector<float>(), std::vector<float>(3, 5.0f));
    }
    Tensor t = Tensor::ones({2});
    pg.all_reduce(t, {.op = ReduceOp::SUM})->wait();
    EXPECT_EQ(t.to_vector<float>(), std::vector<float>(2, 3.0f));
  });
}

TEST(PgGloo, AsyncOpsCompleteInIssueOrder) {
  run_group(2, [](int rank, ProcessGroup& pg) {
    // Each op depends on the previous one's result: only issue order gives 2^k.
    Tensor t = Tensor::ones({256 * 1024});
    std::vector<std::shared_ptr<Work>> works;
    for (int k = 0; k < 6; ++k) works.push_back(pg.all_reduce(t, {.op = ReduceOp::SUM}));
    for (auto& w : works) w->wait();
    EXPECT_TRUE(works.back()->is_completed());
    EXPECT_EQ(t.to_vector<float>()[12345], 64.0f);
  });
}

TEST(PgGloo, LargeAndEmptyTensors) {
  run_group(2, [](int rank, ProcessGroup& pg) {
    Tensor big = Tensor::full({3 * 1000 * 1000 + 1}, rank + 1.0, DType::FLOAT32);
    pg.all_reduce(big, {.op = ReduceOp::SUM})->wait();
    auto v = big.to_vector<float>();
    EXPECT_EQ(v.front(), 3.0f);
    EXPECT_EQ(v.back(), 3.0f);
    Tensor empty = Tensor::empty({0});
    pg.all_reduce(empty, {.op = ReduceOp::SUM})->wait();
    pg.broadcast(empty, {.root = 1})->wait();
  });
}

TEST(PgGloo, BadArgumentsThrowAtOnceNamingTheOp) {
  run_group(2, [](int rank, ProcessGroup& pg) {
    std::vector<Tensor> three(3, Tensor::empty({2}));
    try {
      pg.all_gather(three, Tensor::empty({2}));
      ADD_FAILURE() << "expected ValueError";
    } catch (const ValueError& e) {
      EXPECT_EQ(std::string(e.what()), "all_gather (rank " + std::to_string(rank) +
                                           ", group test): expected 2 output tensors, got 3");
    }
    Tensor t = Tensor::empty({2});
    EXPECT_THROW(pg.broadcast(t, {.root = 2}), ValueError);
    EXPECT_THROW(pg.send(t, rank, {.tag = 0}), ValueError);
    std::vector<Tensor> wrong{Tensor::empty({2}), Tensor::empty({3})};
    EXPECT_THROW(pg.all_gather(wrong, t), ValueError);
    // The group is still usable: bad calls never reached the queue.
    pg.barrier()->wait();
  });
}

}  // namespace
}  // namespace crew::dist

// The hierarchical backend on 4 real processes as 2 simulated hosts x 2 ranks (CREW_HOST_ID):
// all_reduce with every dtype, ReduceOp and size (0, 1, odd, chunked, large) checked exactly,
// every other collective through it, the host layout and the automatic choice of backend.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "crew/distributed/backends/gloo/gloo_process_group.h"
#include "crew/distributed/backends/hier/hier_process_group.h"
#include "crew/distributed/backends/shm/shm_process_group.h"
#include "crew/distributed/parallel/host_layout.h"
#include "tests/distributed/reduction_values.h"
#include "tests/distributed/shm_harness.h"
#include "tests/testing/child_expect.h"
#include "tests/testing/store_ptr.h"

namespace crew::dist {
namespace {

using testing::shm::run_ranks;
using namespace testing_values;

const std::vector<DType> kDTypes = {DType::FLOAT32, DType::FLOAT64, DType::INT32, DType::INT64, DType::UINT8};
const std::vector<ReduceOp> kOps = {ReduceOp::SUM, ReduceOp::MAX, ReduceOp::MIN, ReduceOp::PROD,
                                    ReduceOp::AVG};

// Runs fn(rank, pg) in `world` ranks whose hier group spans simulated hosts of `per_host` ranks
// each (rank r on host r / per_host), with `env` set in every rank first; every rank must
// succeed within `deadline`.
void run_on_hosts(int world, int per_host, std::chrono::seconds deadline,
                  const std::function<void(int rank, ProcessGroup& pg)>& fn,
                  std::vector<std::pair<std::string, std::string>> env = {}) {
  auto results =
      run_ranks(world,
                [&](int rank, Store& store) {
                  ::setenv("CREW_HOST_ID", ("simhost" + std::to_string(rank / per_host)).c_str(), 1);
                  auto pg = create_hier_process_group(testing::borrow_store(store), rank, world,
                                                      ProcessGroupOptions{std::chrono::seconds(30), "h"});
                  fn(rank, *pg);
                },
                {.timeout = deadline, .env = std::move(env)});
  testing::expect_all_ok(results);
}

void check_all_reduce(ProcessGroup& pg, DType dtype, ReduceOp op, int64_t n) {
  if (is_low_precision(dtype)) {
    Tensor t = rank_tensor_half(pg.rank(), n, dtype);
    pg.all_reduce(t, {.op = op})->wait();
    require_close_half(t, pg.size(), op,
                       str_cat("all_reduce ", reduce_op_name(op), " ", dtype_name(dtype), " n=", n));
    return;
  }
  dispatch_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    Tensor t = rank_tensor<T>(pg.rank(), n);
    pg.all_reduce(t, {.op = op})->wait();
    require_equal(t, expected_reduction<T>(pg.size(), n, op),
                  str_cat("all_reduce ", reduce_op_name(op), " ", dtype_name(dtype), " n=", n));
  });
}

TEST(HostLayout, GroupsRanksByHostInOrderOfTheirLowestRank) {
  auto layout = HostLayout::from_ids({"b", "a", "b", "a", "c"});
  EXPECT_EQ(layout.num_hosts(), 3);
  EXPECT_EQ(layout.ranks_on(0), (std::vector<int>{0, 2}));
  EXPECT_EQ(layout.ranks_on(1), (std::vector<int>{1, 3}));
  EXPECT_EQ(layout.ranks_on(2), (std::vector<int>{4}));
  EXPECT_EQ(layout.host_of(3), 1);
  EXPECT_EQ(layout.local_rank(3), 1);
  EXPECT_EQ(layout.leader_of(1), 1);
  EXPECT_EQ(layout.min_ranks_per_host(), 1);
}

TEST(HostLayout, AutoBackendIsHierOnlyWhenEveryHostHasSeveralRanks) {
  register_backend("gloo", create_gloo_process_group);
  register_shm_backend();
  register_hier_backend();
  EXPECT_EQ(auto_backend_for(HostLayout::from_ids({"a", "a", "a"})), "shm");
  EXPECT_EQ(auto_backend_for(HostLayout::from_ids({"a", "a", "b", "b"})), "hier");
  EXPECT_EQ(auto_backend_for(HostLayout::from_ids({"a", "b", "a", "b", "b"})), "hier");
  EXPECT_EQ(auto_backend_for(HostLayout::from_ids({"a", "a", "a", "b"})), "gloo");
  EXPECT_EQ(auto_backend_for(HostLayout::from_ids({"a", "b"})), "gloo");
}

TEST(HostLayout, CrewHostIdOverridesTheHostName) {
  ::setenv("CREW_HOST_ID", "simulated-host-7", 1);
  EXPECT_EQ(host_id(), "simulated-host-7");
  ::unsetenv("CREW_HOST_ID");
  EXPECT_NE(host_id(), "simulated-host-7");
  EXPECT_NE(host_id().find('/'), std::string::npos);  // "<hostname>/<boot id>"
}

// Every dtype, op and size through 2 x 2; 4 KiB shm buffers make 1023 and 9001 elements run
// the chunked shm paths (several chunks, a partial one). 70001 and 70002 elements (at least
// 64 KiB in every dtype) take the split schedule, with and without padding to 2 slices.
TEST(HierCollectives, AllReduceEveryDtypeOpAndSizeOnTwoHostsOfTwo) {
  run_on_hosts(4, 2, std::chrono::seconds(150),
               [](int rank, ProcessGroup& pg) {
                 CHILD_EXPECT(pg.backend_name() == "hier" && pg.rank() == rank && pg.size() == 4);
                 for (DType dtype : kDTypes) {
                   for (ReduceOp op : kOps) {
                     for (int64_t n : {0, 1, 7, 1023, 9001, 70001, 70002}) check_all_reduce(pg, dtype, op, n);
                   }
                 }
               },
               {{"CREW_SHM_BUFFER_BYTES", "4096"}, {"CREW_SHM_SMALL_BYTES", "512"}});
}

// bfloat16 and float16 (an O2 model's gradients) through 2 x 2: combined in float32, each
// result rounded, AVG divided in float32 (the shm steps and the leaders' step).
TEST(HierCollectives, AllReduceSixteenBitDtypesOnTwoHostsOfTwo) {
  run_on_hosts(4, 2, std::chrono::seconds(120),
               [](int rank, ProcessGroup& pg) {
                 for (DType dtype : {DType::BFLOAT16, DType::FLOAT16}) {
                   for (ReduceOp op : {ReduceOp::SUM, ReduceOp::AVG, ReduceOp::MAX}) {
                     for (int64_t n : {1, 9001, 70001}) check_all_reduce(pg, dtype, op, n);
                   }
                 }
               },
               {{"CREW_SHM_BUFFER_BYTES", "4096"}, {"CREW_SHM_SMALL_BYTES", "512"}});
}

// 4 MiB of float32 with the default 1 MiB shm buffers (odd and even counts, a 2-D tensor);
// uneven hosts (3 + 1 ranks: leader schedule only, the lone host's shm step is a group of
// one); and 2 hosts x 3 ranks (split into 3 slices, padded or not).
TEST(HierCollectives, LargeAllReduceAndUnevenHosts) {
  run_on_hosts(4, 2, std::chrono::seconds(120), [](int rank, ProcessGroup& pg) {
    for (ReduceOp op : kOps) {
      check_all_reduce(pg, DType::FLOAT32, op, (int64_t{1} << 20) + 5);
      check_all_reduce(pg, DType::FLOAT32, op, int64_t{1} << 20);
    }
    Tensor grid = rank_tensor<float>(rank, 1 << 20).view({1024, 1024});
    pg.all_reduce(grid, {.op = ReduceOp::SUM})->wait();
    require_equal(grid, expected_reduction<float>(4, 1 << 20, ReduceOp::SUM), "2-D all_reduce");
  });
  run_on_hosts(4, 3, std::chrono::seconds(60), [](int, ProcessGroup& pg) {
    for (ReduceOp op : kOps) {
      check_all_reduce(pg, DType::INT64, op, 1001);
      check_all_reduce(pg, DType::INT64, op, 30001);
      check_all_reduce(pg, DType::FLOAT32, op, (int64_t{1} << 20) + 3);  // chunked shm steps
    }
  });
  // CREW_HIER_SPLIT_BYTES is the same on every rank: 5 floats stay on the leader schedule.
  run_on_hosts(6, 3, std::chrono::seconds(90),
               [](int, ProcessGroup& pg) {
                 for (ReduceOp op : kOps) {
                   for (int64_t n : {5, 70001, 90000}) check_all_reduce(pg, DType::FLOAT32, op, n);
                 }
               },
               {{"CREW_HIER_SPLIT_BYTES", "1000"}});
}

// Send/recv in a ring across the hosts, async all_reduces completing in issue order, and a bad
// call throwing at once: the rest of OtherCollectivesThroughTheHierarchicalGroup.
void check_ring_async_and_errors(int rank, int n, ProcessGroup& pg) {
  // A ring across the hosts: even ranks send first.
  Tensor out = Tensor::full({4}, rank * 1.0), in = Tensor::empty({4});
  const int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  if (rank % 2 == 0) {
    pg.send(out, next, {.tag = 7})->wait();
    pg.recv(in, prev, {.tag = 7})->wait();
  } else {
    pg.recv(in, prev, {.tag = 7})->wait();
    pg.send(out, next, {.tag = 7})->wait();
  }
  require_equal(in, std::vector<float>(4, prev * 1.0f), "send/recv");
  pg.barrier()->wait();

  // Async: several all_reduces in flight complete in issue order with their own results.
  std::vector<Tensor> ts;
  std::vector<std::shared_ptr<Work>> works;
  for (int i = 0; i < 4; ++i) {
    ts.push_back(Tensor::full({100}, rank + i * 1.0));
    works.push_back(pg.all_reduce(ts.back(), {.op = ReduceOp::SUM}));
  }
  for (int i = 0; i < 4; ++i) {
    works[i]->wait();
    require_equal(ts[i], std::vector<float>(100, 6.0f + 4 * i), "async all_reduce");
  }
  std::vector<Tensor> wrong = {Tensor::ones({1})};
  bool threw = false;
  try {
    pg.all_gather(wrong, Tensor::ones({1}));
  } catch (const ValueError&) {
    threw = true;
  }
  CHILD_EXPECT(threw, "a bad all_gather must throw ValueError at once");
}

// The collectives hier hands to Gloo over the whole group, interleaved with all_reduce.
TEST(HierCollectives, OtherCollectivesThroughTheHierarchicalGroup) {
  run_on_hosts(4, 2, std::chrono::seconds(90), [](int rank, ProcessGroup& pg) {
    const int n = 4;
    Tensor b = Tensor::full({5}, rank * 10.0);
    pg.broadcast(b, {.root = 2})->wait();
    require_equal(b, std::vector<float>(5, 20.0f), "broadcast");

    Tensor r = Tensor::full({3}, rank + 1.0);
    pg.reduce(r, {.root = 1, .op = ReduceOp::SUM})->wait();
    if (rank == 1) require_equal(r, std::vector<float>(3, 10.0f), "reduce");

    std::vector<Tensor> gathered;
    for (int i = 0; i < n; ++i) gathered.push_back(Tensor::empty({2}, DType::INT32));
    pg.all_gather(gathered, Tensor::full({2}, rank * 3, DType::INT32))->wait();
    for (int i = 0; i < n; ++i) require_equal(gathered[i], std::vector<int32_t>(2, i * 3), "all_gather");

    std::vector<Tensor> at_root;
    if (rank == 3) {
      for (int i = 0; i < n; ++i) at_root.push_back(Tensor::empty({1}));
    }
    pg.gather(at_root, Tensor::full({1}, rank + 0.5), {.root = 3})->wait();
    if (rank == 3) {
      for (int i = 0; i < n; ++i) require_equal(at_root[i], std::vector<float>{i + 0.5f}, "gather");
    }

    std::vector<Tensor> pieces;
    if (rank == 0) {
      for (int i = 0; i < n; ++i) pieces.push_back(Tensor::full({2}, i * 100.0));
    }
    Tensor piece = Tensor::empty({2});
    pg.scatter(piece, pieces, {.root = 0})->wait();
    require_equal(piece, std::vector<float>(2, rank * 100.0f), "scatter");

    std::vector<Tensor> parts;
    for (int i = 0; i < n; ++i) parts.push_back(Tensor::full({3}, rank * 10.0 + i));
    Tensor mine = Tensor::empty({3});
    pg.reduce_scatter(mine, parts, {.op = ReduceOp::MAX})->wait();
    require_equal(mine, std::vector<float>(3, 30.0f + rank), "reduce_scatter");

    check_all_reduce(pg, DType::FLOAT32, ReduceOp::SUM, 33);  // interleaved with the others

    std::vector<Tensor> outs, ins;
    for (int i = 0; i < n; ++i) {
      ins.push_back(Tensor::full({2}, rank * 10.0 + i));
      outs.push_back(Tensor::empty({2}));
    }
    pg.alltoall(outs, ins)->wait();
    for (int i = 0; i < n; ++i) require_equal(outs[i], std::vector<float>(2, i * 10.0f + rank), "alltoall");

    check_ring_async_and_errors(rank, n, pg);
  });
}

}  // namespace
}  // namespace crew::dist

// SequenceSampler, RandomSampler, BatchSampler and DistributedBatchSampler.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <set>

#include "crew/io/batch_sampler.h"
#include "crew/io/distributed_batch_sampler.h"
#include "crew/io/numpy_random.h"
#include "crew/io/sampler.h"

namespace crew::io {
namespace {

using Batches = std::vector<BatchIndices>;

DistributedBatchSampler dbs(int64_t n, int64_t bs, int nranks, int rank, bool shuffle = false, bool drop_last = false,
                            bool pad = true) {
  return DistributedBatchSampler(n, bs, DistributedBatchSamplerOptions{nranks, rank, shuffle, drop_last, pad});
}

std::vector<int64_t> flatten(const Batches& b) {
  std::vector<int64_t> out;
  for (const auto& x : b) out.insert(out.end(), x.begin(), x.end());
  return out;
}

TEST(Sampler, SequenceAndRandom) {
  SequenceSampler seq(5);
  EXPECT_EQ(seq.indices(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  RandomSampler a(100, 7), b(100, 7);
  auto pa = a.indices();
  EXPECT_EQ(pa, b.indices());
  EXPECT_NE(pa, a.indices()) << "a second pass must give a new order";
  std::sort(pa.begin(), pa.end());
  for (int64_t k = 0; k < 100; ++k) ASSERT_EQ(pa[static_cast<size_t>(k)], k);
}

TEST(BatchSampler, BatchesAndLength) {
  auto seq = std::make_shared<SequenceSampler>(7);
  BatchSampler keep(seq, 3, false), drop(seq, 3, true);
  EXPECT_EQ(keep.batches(), (Batches{{0, 1, 2}, {3, 4, 5}, {6}}));
  EXPECT_EQ(keep.size(), 3);
  EXPECT_EQ(drop.batches(), (Batches{{0, 1, 2}, {3, 4, 5}}));
  EXPECT_EQ(drop.size(), 2);
  EXPECT_THROW(BatchSampler(seq, 0), ValueError);
}

TEST(DistributedBatchSampler, PaddleDocExampleN10Ranks4Batch2) {
  // Padded [0..9, 0, 1]; full part r0 [0,1] r1 [2,3] r2 [4,5] r3 [6,7]; tail [8,9,0,1] split contiguously.
  const Batches expected[4] = {{{0, 1}, {8}}, {{2, 3}, {9}}, {{4, 5}, {0}}, {{6, 7}, {1}}};
  for (int r = 0; r < 4; ++r) {
    auto s = dbs(10, 2, 4, r);
    EXPECT_EQ(s.batches(), expected[r]) << "rank " << r;
    EXPECT_EQ(s.size(), 2);
    EXPECT_EQ(s.num_samples(), 3);
    EXPECT_EQ(s.total_size(), 12);
    auto d = dbs(10, 2, 4, r, false, /*drop_last=*/true);
    EXPECT_EQ(d.batches(), Batches{expected[r][0]}) << "drop_last drops only the short local batch";
    EXPECT_EQ(d.size(), 1);
  }
}

TEST(DistributedBatchSampler, PaddingRepeatsWhenDatasetSmallerThanRanks) {
  EXPECT_EQ(flatten(dbs(2, 1, 4, 2).batches()), (std::vector<int64_t>{0}));
  EXPECT_EQ(flatten(dbs(2, 1, 4, 3).batches()), (std::vector<int64_t>{1}));
  // N=3 over 8 ranks: padded [0,1,2,0,1,2,0,1].
  std::vector<int64_t> all;
  for (int r = 0; r < 8; ++r) {
    auto local = flatten(dbs(3, 1, 8, r).batches());
    ASSERT_EQ(local.size(), 1u);
    all.push_back(local[0]);
  }
  EXPECT_EQ(all, (std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0, 1}));
}

TEST(DistributedBatchSampler, ShuffleUsesNumpyRandomStateOfTheEpochAfterPadding) {
  // One replica: the batches are RandomState(epoch).permutation(10), cut in fours.
  auto s = dbs(10, 4, 1, 0, /*shuffle=*/true);
  EXPECT_EQ(s.batches(), (Batches{{2, 8, 4, 9}, {1, 6, 7, 3}, {0, 5}}));  // numpy seed 0
  EXPECT_EQ(s.epoch(), 1);
  EXPECT_NE(s.batches(), (Batches{{2, 8, 4, 9}, {1, 6, 7, 3}, {0, 5}})) << "epoch 1 must differ";
  s.set_epoch(42);
  EXPECT_EQ(flatten(s.batches()), (std::vector<int64_t>{8, 1, 5, 0, 7, 2, 9, 4, 3, 6}));  // numpy seed 42
  // Several replicas: the padded list [0..9, 0, 1] is shuffled, then split as without shuffle.
  std::vector<int64_t> padded = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1};
  NumpyRandomState(5).shuffle(padded);
  for (int r = 0; r < 4; ++r) {
    auto sh = dbs(10, 2, 4, r, true);
    sh.set_epoch(5);
    std::vector<int64_t> expected = {padded[2 * r], padded[2 * r + 1], padded[8 + r]};
    EXPECT_EQ(flatten(sh.batches()), expected) << "rank " << r;
  }
}

TEST(DistributedBatchSampler, RanksPartitionThePaddedListForManyShapes) {
  for (int64_t n : {1, 7, 10, 33, 64}) {
    for (int nranks : {1, 2, 3, 4}) {
      for (int64_t bs : {1, 2, 5}) {
        std::multiset<int64_t> seen;
        for (int r = 0; r < nranks; ++r) {
          auto s = dbs(n, bs, nranks, r, true);
          auto b = s.batches();
          EXPECT_EQ(static_cast<int64_t>(b.size()), s.size());
          for (int64_t i : flatten(b)) seen.insert(i);
        }
        const int64_t total = (n + nranks - 1) / nranks * nranks;
        ASSERT_EQ(static_cast<int64_t>(seen.size()), total) << "n=" << n << " nranks=" << nranks << " bs=" << bs;
        for (int64_t i = 0; i < n; ++i) {
          // Padding appends from the front, repeating the list: position k holds k % n.
          int64_t copies = 0;
          for (int64_t k = 0; k < total; ++k) copies += (k % n == i) ? 1 : 0;
          EXPECT_EQ(static_cast<int64_t>(seen.count(i)), copies) << "n=" << n << " index " << i;
        }
      }
    }
  }
}

TEST(DistributedBatchSampler, NoPadCountsEverySampleOnce) {
  // N=10, 4 ranks, bs 2: the full block as with padding, the tail [8, 9] to ranks 0 and 1.
  EXPECT_EQ(dbs(10, 2, 4, 0, false, false, false).batches(), (Batches{{0, 1}, {8}}));
  EXPECT_EQ(dbs(10, 2, 4, 1, false, false, false).batches(), (Batches{{2, 3}, {9}}));
  EXPECT_EQ(dbs(10, 2, 4, 3, false, false, false).batches(), (Batches{{6, 7}}));
  for (int64_t n : {0, 1, 9, 10, 31}) {
    for (int nranks : {1, 3, 4}) {
      std::vector<int64_t> all;
      for (int r = 0; r < nranks; ++r) {
        auto s = dbs(n, 3, nranks, r, true, false, false);
        auto b = s.batches();
        EXPECT_EQ(static_cast<int64_t>(b.size()), s.size());
        for (int64_t i : flatten(b)) all.push_back(i);
      }
      std::sort(all.begin(), all.end());
      std::vector<int64_t> expected(static_cast<size_t>(n));
      std::iota(expected.begin(), expected.end(), int64_t{0});
      EXPECT_EQ(all, expected) << "n=" << n << " nranks=" << nranks;
    }
  }
}

TEST(DistributedBatchSampler, DefaultsComeFromTheEnvironment) {
  ::setenv("CREW_RANK", "2", 1);
  ::setenv("CREW_WORLD_SIZE", "4", 1);
  auto s = DistributedBatchSampler(10, 2);
  ::unsetenv("CREW_RANK");
  ::unsetenv("CREW_WORLD_SIZE");
  EXPECT_EQ(s.num_replicas(), 4);
  EXPECT_EQ(s.rank(), 2);
  EXPECT_EQ(s.batches(), (Batches{{4, 5}, {0}}));
}

TEST(DistributedBatchSampler, RejectsBadArguments) {
  EXPECT_THROW(dbs(10, 0, 2, 0), ValueError);
  EXPECT_THROW(dbs(10, 2, 2, 2), ValueError);
  EXPECT_THROW(dbs(10, 2, 0, 0), ValueError);
}

}  // namespace
}  // namespace crew::io

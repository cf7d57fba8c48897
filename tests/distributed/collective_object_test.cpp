// Object collectives: round trips on 1-4 processes, uneven sizes, subgroups (scatter stays
// on its group), and the not-initialized error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "crew/distributed/collective/collective.h"
#include "crew/distributed/collective/object_collectives.h"
#include "tests/distributed/hosted_job.h"
#include "tests/testing/multiprocess.h"

namespace crew::dist {
namespace {

// Forks `world` ranks that find a TCP store hosted here (gloo backend, 20 s timeout).
std::vector<testing::RankResult> run_job(int world, const std::function<void(int)>& fn) {
  return testing_job::run_hosted_job(world, fn, {.timeout = "20s"});
}

std::string show(const std::vector<Object>& list) {
  std::ostringstream os;
  os << Object::list(list);
  return os.str();
}

void check(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what);
}

Object seed_object(int rank) {
  return rank == 0 ? Object::dict({{"foo", Object::list({Object(1), Object(2), Object(3)})}})
                   : Object::dict({{"bar", Object::list({Object(4), Object(5), Object(6)})}});
}

TEST(CollectiveObject, BeforeInitThrowsTheExactStateError) {
  destroy_process_group();
  std::vector<Object> out;
  try {
    all_gather_object(out, Object(1));
    FAIL() << "expected StateError";
  } catch (const StateError& e) {
    EXPECT_STREQ(e.what(),
                 "Call crew::dist::init_parallel_env first to initialize the distributed environment.");
  }
}

TEST(CollectiveObject, SeedDemoOnTwoThreeAndFourRanks) {
  for (int world : {2, 3, 4}) {
    auto results = run_job(world, [world](int rank) {
      init_parallel_env();
      std::vector<Object> out{Object("stale entry, cleared first")};
      all_gather_object(out, seed_object(rank));
      std::string expected = "[{'foo': [1, 2, 3]}";
      for (int r = 1; r < world; ++r) expected += ", {'bar': [4, 5, 6]}";
      expected += "]";
      check(show(out) == expected, show(out));
      destroy_process_group();
    });
    testing::expect_all_ok(results);
  }
}

TEST(CollectiveObject, UnevenSizesBroadcastAndScatter) {
  auto results = run_job(3, [](int rank) {
    init_parallel_env();
    // Rank 2's object is far larger than the others: every prefix must decode exactly.
    Object mine = rank == 2 ? Object(std::string(100000, 'x').c_str()) : Object(int64_t{rank});
    std::vector<Object> all;
    all_gather_object(all, mine);
    check(all.size() == 3 && all[0] == Object(int64_t{0}) && all[1] == Object(int64_t{1}), "small ones");
    check(all[2] == Object(std::string(100000, 'x').c_str()), "large one");

    std::vector<Object> list;
    if (rank == 1)
      list = {Object("a"), Object::list({}), Object::dict({{"k", Object(7)}})};
    else if (rank == 2)
      list = {Object("junk")};  // receivers' lists are replaced
    broadcast_object_list(list, 1);
    check(show(list) == "['a', [], {'k': 7}]", show(list));

    std::vector<Object> in;
    if (rank == 0) in = {Object("to 0"), Object(std::string(5000, 'y').c_str()), Object(2)};
    std::vector<Object> out;
    scatter_object_list(out, in, 0);
    const Object expected = rank == 0   ? Object("to 0")
                            : rank == 1 ? Object(std::string(5000, 'y').c_str())
                                        : Object(2);
    check(out.size() == 1 && out[0] == expected, show(out));
    destroy_process_group();
  });
  testing::expect_all_ok(results);
}

TEST(CollectiveObject, SubgroupOpsStayOnTheirGroup) {
  auto results = run_job(3, [](int rank) {
    init_parallel_env();
    auto pair = new_group({0, 2});
    if (pair->is_member()) {
      std::vector<Object> all;
      all_gather_object(all, Object(int64_t{rank * 10}), pair.get());
      check(show(all) == "[0, 20]", show(all));
      // src is the global rank 2; rank 1 takes no part (Paddle would broadcast globally here).
      std::vector<Object> in;
      if (rank == 2) in = {Object("for 0"), Object("for 2")};
      std::vector<Object> out;
      scatter_object_list(out, in, 2, pair.get());
      check(show(out) == (rank == 0 ? "['for 0']" : "['for 2']"), show(out));
      std::vector<Object> list{Object(int64_t{rank})};
      broadcast_object_list(list, 0, pair.get());
      check(show(list) == "[0]", show(list));
    }
    barrier();
    destroy_process_group();
  });
  testing::expect_all_ok(results);
}

}  // namespace
}  // namespace crew::dist

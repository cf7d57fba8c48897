// --log_ranks: "0", "all" or a list of local ranks ("0,3", torchrun's --local-ranks-filter);
// lines are prefixed "[rank N] " when more than one rank can show.
#include <gtest/gtest.h>

#include "crew/core/error.h"
#include "crew/launch/options.h"
#include "tests/launch/launch_test_util.h"

namespace crew::launch::testing {
namespace {

TEST(LaunchLogRanks, ParsesZeroAllAndLists) {
  EXPECT_EQ(parse_console_ranks("0").local_ranks, std::vector<int>{0});
  EXPECT_FALSE(parse_console_ranks("0").prefixed());
  EXPECT_TRUE(parse_console_ranks("all").all);
  EXPECT_TRUE(parse_console_ranks("all").shows(7));
  const ConsoleRanks list = parse_console_ranks("3,0");
  EXPECT_EQ(list.local_ranks, (std::vector<int>{0, 3}));
  EXPECT_TRUE(list.prefixed());
  EXPECT_TRUE(list.shows(3));
  EXPECT_FALSE(list.shows(1));
  EXPECT_EQ(to_string(list), "0,3");
  EXPECT_FALSE(parse_console_ranks("2").prefixed());
  EXPECT_EQ(to_string(parse_console_ranks("all")), "all");
}

TEST(LaunchLogRanks, BadListsNameTheOption) {
  for (const char* bad : {"", "x", "0,", "-1", "0,0", "1;2"}) {
    try {
      parse_console_ranks(bad);
      ADD_FAILURE() << "accepted --log_ranks '" << bad << "'";
    } catch (const ValueError& e) {
      std::string expected = "--log_ranks='";
      expected.append(bad).append("'");
      EXPECT_TRUE(has(e.what(), expected)) << e.what();
    }
  }
}

TEST(LaunchLogRanks, ListShowsOnlyThoseRanksPrefixed) {
  TempDir dir;
  CrewRun r = run_crew(dir, {"launch", "--devices=0,1,2", "--log_ranks", "0,1", "--log_dir", dir.file("log"),
                             "/bin/sh", "-c", "echo hello $CREW_RANK"});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(has(r.stdout_text, "[rank 0] hello 0\n")) << r.stdout_text;
  EXPECT_TRUE(has(r.stdout_text, "[rank 1] hello 1\n")) << r.stdout_text;
  EXPECT_FALSE(has(r.stdout_text, "hello 2")) << r.stdout_text;
  EXPECT_TRUE(has(r.stderr_text, "log_ranks: 0,1")) << r.stderr_text;
  EXPECT_TRUE(has(read_file(dir.file("log") + "/workerlog.2"), "hello 2\n"));
}

TEST(LaunchLogRanks, OneOtherRankIsShownUnprefixed) {
  TempDir dir;
  CrewRun r = run_crew(dir, {"launch", "--devices=0,1", "--log_ranks", "1", "--log_dir", dir.file("log"),
                             "/bin/sh", "-c", "echo hello $CREW_RANK"});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.stdout_text, "hello 1\n");
}

}  // namespace
}  // namespace crew::launch::testing

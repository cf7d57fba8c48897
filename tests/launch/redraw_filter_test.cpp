// RedrawFilter: a terminal stream with in-place redraws becomes plain lines.
#include "crew/launch/redraw_filter.h"

#include <gtest/gtest.h>

#include <string>

namespace crew::launch {
namespace {

std::string feed(RedrawFilter& f, const std::string& s, double now) { return f.feed(s.data(), s.size(), now); }

TEST(RedrawFilter, PlainLinesPassUnchanged) {
  RedrawFilter f;
  EXPECT_EQ(feed(f, "a line  \nsecond", 0), "a line  \n");
  EXPECT_EQ(feed(f, " half\n\n", 0), "second half\n\n");
  EXPECT_EQ(f.flush(), "");
}

TEST(RedrawFilter, RedrawsBecomeOneLinePerIntervalAndTheFinalState) {
  RedrawFilter f({.interval = 4.95});  // not 5: 0.1 * i is inexact
  std::string out;
  // A bar drawn every 0.1 s for 12 s, then closed with a newline.
  for (int i = 0; i <= 120; ++i) out += feed(f, "\repoch 0: " + std::to_string(i) + "/120", i * 0.1);
  out += feed(f, "\n", 12.0);
  // Drawn states are written when the next draw starts: 0 at t=0.1, then every 5 s.
  EXPECT_EQ(out, "epoch 0: 0/120\nepoch 0: 50/120\nepoch 0: 100/120\nepoch 0: 120/120\n");
}

TEST(RedrawFilter, CarriageReturnNewlineAndPaddingEndTheLine) {
  RedrawFilter f;
  EXPECT_EQ(feed(f, "\rstep 1   \rstep 2    \r\n", 0), "step 1\nstep 2\n");
}

TEST(RedrawFilter, ALineWrittenOverABarIsKeptAndTheClearedBarIsNot) {
  RedrawFilter f({.interval = 100.0});
  // ProgressBar::write: clear the bar (spaces), print the line, redraw the bar.
  std::string out = feed(f, "\rbar 1/3", 0);
  out += feed(f, "\r        \repoch: 0, loss is: [2.3]\n\rbar 2/3", 1);
  out += feed(f, "\rbar 3/3\n", 2);
  EXPECT_EQ(out, "bar 1/3\nepoch: 0, loss is: [2.3]\nbar 3/3\n");
}

TEST(RedrawFilter, FlushEndsAPartialLine) {
  RedrawFilter f({.interval = 100.0});
  EXPECT_EQ(feed(f, "\rbar 1/3", 0), "");
  EXPECT_EQ(feed(f, "\rbar 2/3", 1), "bar 1/3\n");
  EXPECT_EQ(f.flush(), "bar 2/3\n");
  EXPECT_EQ(f.flush(), "");
  EXPECT_EQ(feed(f, "no newline", 2), "");
  EXPECT_EQ(f.flush(), "no newline\n");
}

}  // namespace
}  // namespace crew::launch

// ProgressBar with a fake clock and a string stream.
#include "crew/core/progress_bar.h"

#include <gtest/gtest.h>

#include <sstream>

namespace crew {
namespace {

struct FakeClock {
  double t = 100.0;
  std::function<double()> fn() {
    return [this] { return t; };
  }
};

ProgressBarOptions opts(std::ostream& os, FakeClock& clock, bool tty, std::string desc = "train") {
  ProgressBarOptions o;
  o.desc = std::move(desc);
  o.stream = &os;
  o.enabled = true;
  o.tty = tty;
  o.clock = clock.fn();
  return o;
}

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream is(s);
  for (std::string l; std::getline(is, l);) out.push_back(l);
  return out;
}

TEST(ProgressBar, FormatsLikeTqdm) {
  std::ostringstream os;
  FakeClock clock;
  ProgressBar bar(10, opts(os, clock, false));
  EXPECT_EQ(bar.format(), "train:   0%|          | 0/10 [00:00<?, ?it/s]");
  clock.t += 8;
  bar.update(4);
  bar.set_postfix("loss=0.12");
  EXPECT_EQ(bar.format(), "train:  40%|████      | 4/10 [00:08<00:12, 2.00s/it, loss=0.12]");
  clock.t += 0.5;
  bar.update(1);
  // 5 in 8.5 s: 1.70 s/it, 8.5 s left; half a bar.
  EXPECT_EQ(bar.format(), "train:  50%|█████     | 5/10 [00:08<00:08, 1.70s/it, loss=0.12]");
  bar.close();
}

// A resumed epoch (tqdm's initial): the count goes on from the resumed position, the rate and
// the ETA come from this run's steps only, and plain lines still fall on the tenths.
TEST(ProgressBar, InitialCountsFromTheResumedPosition) {
  std::ostringstream os;
  FakeClock clock;
  ProgressBarOptions o = opts(os, clock, false, "epoch 0");
  o.initial = 100;
  ProgressBar bar(938, o);
  EXPECT_EQ(bar.count(), 100);
  EXPECT_EQ(bar.format(), "epoch 0:  10%|█         | 100/938 [00:00<?, ?it/s]");
  clock.t += 4;
  bar.update(84);
  // 84 in 4 s: 21 it/s; 754 left: 35.9 s.
  EXPECT_EQ(bar.format(), "epoch 0:  19%|█▉        | 184/938 [00:04<00:35, 21.00it/s]");
  EXPECT_EQ(os.str(), "");  // still in the second tenth, where it started
  bar.update(4);
  // 88 in 4 s: 22 it/s; 750 left: 34.1 s.
  EXPECT_EQ(lines(os.str()),
            (std::vector<std::string>{"epoch 0:  20%|██        | 188/938 [00:04<00:34, 22.00it/s]"}));
  bar.close();
}

TEST(ProgressBar, RatesAboveOneAndPartialCellsAndUnknownTotal) {
  std::ostringstream os;
  FakeClock clock;
  ProgressBar bar(16, opts(os, clock, false, ""));
  clock.t += 2;
  bar.update(5);  // 5/16 of 10 cells = 3.125 cells: 3 full + one eighth
  EXPECT_EQ(bar.format(), " 31%|███▏      | 5/16 [00:02<00:04, 2.50it/s]");
  ProgressBar open(0, opts(os, clock, false, "eval"));
  clock.t += 4;
  open.update(8);
  EXPECT_EQ(open.format(), "eval: 8it [00:04, 2.00it/s]");
  EXPECT_EQ(format_duration(3725), "1:02:05");
}

TEST(ProgressBar, PlainOutputPrintsEveryTenthWithoutControlCharacters) {
  std::ostringstream os;
  FakeClock clock;
  {
    ProgressBar bar(100, opts(os, clock, false));
    for (int k = 0; k < 100; ++k) {
      clock.t += 0.01;
      bar.update();
    }
  }  // destructor closes; 100% was already printed
  auto out = lines(os.str());
  ASSERT_EQ(out.size(), 10u) << os.str();
  EXPECT_NE(out[0].find("10/100"), std::string::npos);
  EXPECT_NE(out[9].find("100%|██████████| 100/100"), std::string::npos);
  EXPECT_EQ(os.str().find('\r'), std::string::npos);
  EXPECT_EQ(os.str().find('\x1b'), std::string::npos);
}

TEST(ProgressBar, PlainOutputAlsoPrintsAfterTheInterval) {
  std::ostringstream os;
  FakeClock clock;
  ProgressBar bar(1000, opts(os, clock, false));
  clock.t += 6;
  bar.update();  // 0.1 %, but 6 s passed
  clock.t += 1;
  bar.update();  // neither
  EXPECT_EQ(lines(os.str()).size(), 1u);
  bar.close();  // final line at close
  auto out = lines(os.str());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_NE(out[1].find("2/1000"), std::string::npos);
}

TEST(ProgressBar, TerminalRedrawsInPlaceRateLimited) {
  std::ostringstream os;
  FakeClock clock;
  ProgressBar bar(4, opts(os, clock, true));
  bar.update();  // same instant as the initial draw: skipped
  clock.t += 1;
  bar.update();
  clock.t += 1;
  bar.set_postfix("loss=1.5");
  bar.update(2);  // completes: drawn
  bar.close();
  const std::string s = os.str();
  EXPECT_EQ(std::count(s.begin(), s.end(), '\r'), 4);  // initial, 2/4, 4/4, close
  EXPECT_EQ(s.back(), '\n');
  EXPECT_NE(s.find("\rtrain: 100%|██████████| 4/4 [00:02<00:00, 2.00it/s, loss=1.5]"), std::string::npos)
      << s;
}

TEST(ProgressBar, WriteClearsAndRedrawsOnATerminal) {
  std::ostringstream os;
  FakeClock clock;
  ProgressBar bar(4, opts(os, clock, true, "t"));
  bar.write("hello", os);
  const std::string s = os.str();
  const std::string first = "\rt:   0%|          | 0/4 [00:00<?, ?it/s]";
  EXPECT_EQ(s, first + "\r" + std::string(first.size() - 1, ' ') + "\rhello\n" + first) << s;
  std::ostringstream plain, text;
  ProgressBar pb(4, opts(plain, clock, false));
  pb.write("line", text);
  EXPECT_EQ(text.str(), "line\n");
  EXPECT_EQ(plain.str(), "");
}

TEST(ProgressBar, DisabledDrawsNothingButCounts) {
  std::ostringstream os;
  FakeClock clock;
  ProgressBarOptions o = opts(os, clock, true);
  o.enabled = false;
  ProgressBar bar(3, o);
  bar.update(3);
  bar.close();
  EXPECT_TRUE(os.str().empty());
  EXPECT_EQ(bar.count(), 3);
}

}  // namespace
}  // namespace crew

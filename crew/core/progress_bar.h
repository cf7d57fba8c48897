#pragma once
// A tqdm-like progress bar:
//
//   train: 40%|████      | 4/10 [00:08<00:12, 2.00s/it, loss=0.12]
//
// On a terminal it redraws one line in place ('\r'); on a pipe or file (CI logs, per-rank
// log files) it prints a plain line, without control characters, each time another tenth
// is done or plain_interval seconds have passed, and at close(). Only rank 0 draws unless
// `enabled` says otherwise.
//
//   crew::ProgressBar bar(loader.size(), {.desc = "epoch 0"});
//   for (auto& batch : loader) { ...; bar.set_postfix(crew::str_cat("loss=", loss)); bar.update(); }
//   bar.close();
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <mutex>
#include <optional>
#include <string>

namespace crew {

struct ProgressBarOptions {
  std::string desc;                // prefix ("desc: "); empty for none
  int width = 10;                  // bar cells
  double min_interval = 0.1;       // seconds between redraws on a terminal
  double plain_interval = 5.0;     // seconds between plain lines (pipe/file)
  int plain_steps = 10;            // plain lines also at every 1/plain_steps of the total
  std::ostream* stream = nullptr;  // null: std::cerr
  std::optional<bool> enabled;     // unset: ParallelEnv::from_env().rank == 0
  std::optional<bool> tty;         // unset: isatty() of std::cerr/std::cout, false for other streams
  std::string unit = "it";
  int64_t initial = 0;            // the count to start from (tqdm's initial): a resumed epoch
                                  // shows 184/938, its rate and ETA from this run's steps only
  std::function<double()> clock;  // seconds, monotonic; null: steady_clock
};

class ProgressBar {
 public:
  // total <= 0: unknown total (no percentage, bar or ETA).
  explicit ProgressBar(int64_t total, ProgressBarOptions options = {});
  ~ProgressBar();  // close()
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // Advances by n and redraws if due.
  void update(int64_t n = 1);
  // Text after the rate ("loss=0.123"); shown from the next draw on.
  void set_postfix(const std::string& postfix);
  // Prints a line of text to `os` (default std::cout) without garbling the bar: on a
  // terminal the bar is cleared first and redrawn after (tqdm.write).
  void write(const std::string& line);
  void write(const std::string& line, std::ostream& os);
  // Final draw and newline; later updates are ignored. Idempotent.
  void close();

  int64_t count() const;
  bool enabled() const { return enabled_; }
  // The status line as it would be drawn now (no control characters).
  std::string format() const;

 private:
  double now() const;
  std::string format_locked(double t) const;
  void draw_locked(double t, bool final);

  ProgressBarOptions options_;
  int64_t total_;
  bool enabled_;
  bool tty_;
  std::ostream* out_;
  mutable std::mutex mu_;
  int64_t n_ = 0;  // includes options_.initial
  double start_ = 0;
  double last_draw_ = -1e300;
  int64_t last_plain_step_ = 0;
  int64_t last_drawn_n_ = -1;
  size_t last_len_ = 0;
  std::string postfix_;
  bool closed_ = false;
};

// "mm:ss", or "h:mm:ss" from an hour on.
std::string format_duration(double seconds);

}  // namespace crew

#include "crew/core/progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

#include "crew/core/parallel_env.h"

namespace crew {
namespace {

bool detect_tty(std::ostream* out) {
  if (out == &std::cerr || out == &std::clog) return ::isatty(STDERR_FILENO) == 1;
  if (out == &std::cout) return ::isatty(STDOUT_FILENO) == 1;
  return false;
}

std::string fixed2(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// A bar of `width` cells, filled `frac` in eighths of a cell.
std::string make_bar(double frac, int width) {
  static const char* const kPartial[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
  frac = std::clamp(frac, 0.0, 1.0);
  const int eighths = static_cast<int>(frac * width * 8);
  const int full = eighths / 8;
  std::string bar;
  for (int k = 0; k < full; ++k) bar += "█";
  int cells = full;
  if (full < width) {
    bar += kPartial[eighths % 8];
    if (eighths % 8) ++cells;
  }
  bar.append(static_cast<size_t>(width - cells), ' ');
  return bar;
}

}  // namespace

std::string format_duration(double seconds) {
  long s = seconds > 0 ? static_cast<long>(seconds) : 0;
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%02ld:%02ld", s / 60, s % 60);
  }
  return buf;
}

ProgressBar::ProgressBar(int64_t total, ProgressBarOptions options)
    : options_(std::move(options)), total_(total) {
  out_ = options_.stream ? options_.stream : &std::cerr;
  enabled_ = options_.enabled ? *options_.enabled : ParallelEnv::from_env().rank == 0;
  tty_ = options_.tty ? *options_.tty : detect_tty(out_);
  if (options_.width < 1) options_.width = 1;
  if (options_.plain_steps < 1) options_.plain_steps = 1;
  n_ = std::max<int64_t>(0, options_.initial);
  if (total_ > 0)
    last_plain_step_ = std::min<int64_t>(n_ * options_.plain_steps / total_, options_.plain_steps);
  start_ = now();
  if (enabled_ && tty_) {
    std::lock_guard<std::mutex> lock(mu_);
    draw_locked(start_, false);
  }
}

ProgressBar::~ProgressBar() { close(); }

double ProgressBar::now() const {
  if (options_.clock) return options_.clock();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int64_t ProgressBar::count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return n_;
}

std::string ProgressBar::format() const {
  double t = now();
  std::lock_guard<std::mutex> lock(mu_);
  return format_locked(t);
}

std::string ProgressBar::format_locked(double t) const {
  const double elapsed = std::max(0.0, t - start_);
  const int64_t done_here = n_ - std::max<int64_t>(0, options_.initial);  // this bar's own steps
  const double rate = elapsed > 0 && done_here > 0 ? done_here / elapsed : 0.0;
  std::string rate_text;
  if (rate <= 0) {
    rate_text = "?" + options_.unit + "/s";
  } else if (rate >= 1.0) {
    rate_text = fixed2(rate) + options_.unit + "/s";
  } else {
    rate_text = fixed2(1.0 / rate) + "s/" + options_.unit;
  }
  std::string line = options_.desc.empty() ? "" : options_.desc + ": ";
  if (total_ > 0) {
    const double frac = static_cast<double>(n_) / static_cast<double>(total_);
    char pct[16];
    std::snprintf(pct, sizeof pct, "%3.0f%%", std::floor(std::min(frac, 1.0) * 100.0));
    const std::string remaining = rate > 0 ? format_duration(std::max<double>(0, total_ - n_) / rate) : "?";
    line += std::string(pct) + "|" + make_bar(frac, options_.width) + "| " + std::to_string(n_) + "/" +
            std::to_string(total_) + " [" + format_duration(elapsed) + "<" + remaining + ", " + rate_text;
  } else {
    line += std::to_string(n_) + options_.unit + " [" + format_duration(elapsed) + ", " + rate_text;
  }
  if (!postfix_.empty()) line += ", " + postfix_;
  return line + "]";
}

void ProgressBar::draw_locked(double t, bool final) {
  std::string line = format_locked(t);
  if (tty_) {
    std::string padded = line;
    // Blank out the rest of a longer previous line (count bytes; good enough for padding).
    if (padded.size() < last_len_) padded.append(last_len_ - padded.size(), ' ');
    last_len_ = line.size();
    *out_ << '\r' << padded;
    if (final) *out_ << '\n';
  } else {
    *out_ << line << '\n';
  }
  out_->flush();
  last_draw_ = t;
  last_drawn_n_ = n_;
}

void ProgressBar::update(int64_t n) {
  if (!enabled_) {
    std::lock_guard<std::mutex> lock(mu_);
    n_ += n;
    return;
  }
  const double t = now();
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return;
  n_ += n;
  if (tty_) {
    if (t - last_draw_ >= options_.min_interval || (total_ > 0 && n_ >= total_)) draw_locked(t, false);
    return;
  }
  bool due = t - last_draw_ >= options_.plain_interval && t - start_ >= options_.plain_interval;
  if (total_ > 0) {
    const int64_t step = std::min<int64_t>(n_ * options_.plain_steps / total_, options_.plain_steps);
    if (step > last_plain_step_) {
      last_plain_step_ = step;
      due = true;
    }
  }
  if (due) draw_locked(t, false);
}

void ProgressBar::set_postfix(const std::string& postfix) {
  std::lock_guard<std::mutex> lock(mu_);
  postfix_ = postfix;
}

void ProgressBar::write(const std::string& line) { write(line, std::cout); }

void ProgressBar::write(const std::string& line, std::ostream& os) {
  const double t = now();
  std::lock_guard<std::mutex> lock(mu_);
  const bool redraw = enabled_ && tty_ && !closed_;
  if (redraw) {
    *out_ << '\r' << std::string(last_len_, ' ') << '\r';
    out_->flush();
  }
  os << line << '\n';
  os.flush();
  if (redraw) draw_locked(t, false);
}

void ProgressBar::close() {
  const double t = now();
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return;
  closed_ = true;
  if (!enabled_) return;
  if (tty_) {
    draw_locked(t, true);
  } else if (last_drawn_n_ != n_) {
    draw_locked(t, true);
  }
}

}  // namespace crew

#include "crew/launch/redraw_filter.h"

namespace crew::launch {

namespace {

// A redraw often pads with spaces to erase a longer previous one.
std::string trimmed(const std::string& s) {
  size_t end = s.find_last_not_of(' ');
  return end == std::string::npos ? std::string() : s.substr(0, end + 1);
}

}  // namespace

void RedrawFilter::end_redraw(double now, std::string& out) {
  redrawn_ = true;
  std::string text = trimmed(line_);
  line_.clear();
  if (text.empty()) return;  // a bare '\r' before the next draw (clearing the line)
  redraw_ = std::move(text);
  if (now - last_written_ >= options_.interval) {
    out += redraw_;
    out += '\n';
    redraw_.clear();
    last_written_ = now;
  }
}

std::string RedrawFilter::feed(const char* data, size_t size, double now) {
  std::string out;
  for (size_t i = 0; i < size; ++i) {
    const char c = data[i];
    if (c == '\n') {
      // Plain lines pass unchanged; a redrawn line ends with its final state ("\r\n" or a
      // bar's closing newline after the last draw).
      std::string text = (redrawn_ || after_cr_) ? trimmed(line_) : line_;
      line_.clear();
      if (text.empty()) text = redraw_;
      redrawn_ = false;
      out += text;
      out += '\n';
      redraw_.clear();
      after_cr_ = false;
      continue;
    }
    if (after_cr_) end_redraw(now, out);
    after_cr_ = c == '\r';
    if (!after_cr_) line_ += c;
  }
  return out;
}

std::string RedrawFilter::flush() {
  std::string text = trimmed(line_);
  if (text.empty()) text = redraw_;
  line_.clear();
  redraw_.clear();
  after_cr_ = false;
  redrawn_ = false;
  return text.empty() ? std::string() : text + "\n";
}

}  // namespace crew::launch

#pragma once
// RedrawFilter: turns a terminal stream (progress bars redrawn in place with '\r') into plain
// lines for a log file or a console that is not a terminal. Lines ending in '\n' pass
// through; a redraw (text ended by '\r') is kept as the latest state and written as a line
// only when `interval` seconds passed since the last one written, and the state current when
// a '\n' ends it is always written. So a bar that redraws 10 times a second leaves one line
// every `interval` seconds and its final state, as crew's ProgressBar does on a pipe.
//
//   RedrawFilter f({.interval = 5.0});
//   std::string plain = f.feed(bytes, n, now_seconds);   // write `plain` to the log
//   plain += f.flush();                                  // at the end: a last partial line
#include <cstddef>
#include <string>

namespace crew::launch {

struct RedrawFilterOptions {
  double interval = 5.0;  // seconds between two redraws written as lines
};

class RedrawFilter {
 public:
  explicit RedrawFilter(RedrawFilterOptions options = {}) : options_(options) {}

  // The plain text for `size` more bytes of the stream, seen at time `now` (seconds).
  std::string feed(const char* data, size_t size, double now);
  // A partial last line (no '\n' yet), ended with '\n'; "" when there is none.
  std::string flush();

 private:
  void end_redraw(double now, std::string& out);

  RedrawFilterOptions options_;
  std::string line_;          // the text since the last '\r' or '\n'
  std::string redraw_;        // the latest redraw not yet written
  bool after_cr_ = false;     // the last byte was '\r' (a following '\n' makes it "\r\n")
  bool redrawn_ = false;      // the current line was redrawn at least once
  double last_written_ = -1e300;
};

}  // namespace crew::launch

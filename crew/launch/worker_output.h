#pragma once
// WorkerOutput: the pseudo-terminal (or pipe) a worker writes its stdout and stderr to, copied
// by the launcher into log_dir/workerlog.N and, for the ranks the console shows, to the
// launcher's stdout (raw, or each line prefixed with "[rank N] ").
//
// With a pseudo-terminal (options.tty, the launcher's default) every program sees a terminal,
// so C stdio, Python and the rest line-buffer their output and it arrives as it is written;
// progress bars redraw in place. The log, a console that is not a terminal and prefixed
// console lines get plain lines instead (RedrawFilter: a redrawn line every few seconds and
// its final state); a terminal console gets the bytes as written.
//
//   WorkerOutput out("log/workerlog.0", {.echo = true});
//   child_options.stdout_fd = child_options.stderr_fd = out.write_fd();
//   ... start the child ...; out.close_write_end();
//   while (out.pump()) {}       // in the event loop, when read_fd() is readable
#include <string>

#include "crew/launch/redraw_filter.h"

namespace crew::launch {

struct WorkerOutputOptions {
  bool overwrite = false;  // truncate the log instead of appending (Paddle's --log_overwrite)
  bool echo = false;       // copy to the console too
  std::string prefix;      // put before every console line ("" = copy raw)
  std::string header;      // written to the log before this run's output (a restart's separator)
  int console_fd = 1;
  bool tty = false;                 // a pseudo-terminal for the worker (falls back to a pipe)
  double redraw_interval = 5.0;     // seconds between redrawn lines kept in plain output
};

class WorkerOutput {
 public:
  WorkerOutput(std::string log_path, WorkerOutputOptions options);
  ~WorkerOutput();
  WorkerOutput(const WorkerOutput&) = delete;
  WorkerOutput& operator=(const WorkerOutput&) = delete;

  int write_fd() const { return write_fd_; }
  int read_fd() const { return read_fd_; }
  // Closes the launcher's copy of the write end once the child holds it.
  void close_write_end();
  // Copies what the pipe has now; returns false once the pipe is at end of file.
  bool pump();
  // Drains the pipe until EOF or `max_ms` passed, then flushes a partial prefixed line.
  void finish(int max_ms);
  bool at_eof() const { return eof_; }
  // The last `max_lines` lines this run wrote (at most max_bytes), read back from the log.
  std::string tail(int max_lines, size_t max_bytes = 16384) const;
  const std::string& path() const { return path_; }
  // Whether the worker got a pseudo-terminal (false: a pipe).
  bool is_tty() const { return is_tty_; }

 private:
  void open_pipe();
  bool open_pty();
  void echo(const char* data, size_t size, double now);
  void echo_lines(const std::string& plain);

  std::string path_;
  WorkerOutputOptions options_;
  int log_fd_ = -1;
  int read_fd_ = -1;
  int write_fd_ = -1;
  long long start_offset_ = 0;  // the log's size before this run (append mode)
  bool eof_ = false;
  bool is_tty_ = false;
  bool console_raw_ = false;   // copy bytes as written (one unprefixed rank, terminal console)
  RedrawFilter log_filter_;
  RedrawFilter console_filter_;
};

}  // namespace crew::launch

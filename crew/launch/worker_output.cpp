#include "crew/launch/worker_output.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cerrno>
#include <vector>

#include "crew/core/check.h"
#include "crew/core/timer.h"
#include "crew/launch/launch_log.h"

namespace crew::launch {

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

WorkerOutput::WorkerOutput(std::string log_path, WorkerOutputOptions options)
    : path_(std::move(log_path)),
      options_(std::move(options)),
      log_filter_({.interval = options_.redraw_interval}),
      console_filter_({.interval = options_.redraw_interval}) {
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (options_.overwrite ? O_TRUNC : O_APPEND);
  log_fd_ = ::open(path_.c_str(), flags, 0600);  // a worker may print secrets
  if (log_fd_ < 0) CREW_THROW(IOError, errno_message("launch: cannot open worker log '" + path_ + "'"));
  ::fchmod(log_fd_, 0600);  // a log left by an older launcher (or a restart's append) may be 0644
  write_all(log_fd_, options_.header.data(), options_.header.size());
  struct stat st {};
  if (::fstat(log_fd_, &st) == 0) start_offset_ = st.st_size;
  is_tty_ = options_.tty && open_pty();
  if (!is_tty_) open_pipe();
  ::fcntl(read_fd_, F_SETFL, ::fcntl(read_fd_, F_GETFL) | O_NONBLOCK);
  console_raw_ = options_.prefix.empty() && ::isatty(options_.console_fd) == 1;
}

void WorkerOutput::open_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    ::close(log_fd_);
    CREW_THROW(IOError, errno_message("launch: pipe for '" + path_ + "'"));
  }
  read_fd_ = fds[0];
  write_fd_ = fds[1];
}

// A pseudo-terminal pair: the launcher reads the master, the worker writes the slave. Output
// processing is off (no "\n" -> "\r\n"), and the window is the console's (80x24 otherwise),
// as progress bars size themselves from it. False when the system has no pty to give.
bool WorkerOutput::open_pty() {
  int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0) return false;
  char name[256];
  int slave = -1;
  if (::grantpt(master) == 0 && ::unlockpt(master) == 0 && ::ptsname_r(master, name, sizeof name) == 0) {
    slave = ::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  }
  if (slave < 0) {
    ::close(master);
    return false;
  }
  termios t{};
  if (::tcgetattr(slave, &t) == 0) {
    t.c_oflag &= ~static_cast<tcflag_t>(OPOST);
    t.c_lflag &= ~static_cast<tcflag_t>(ECHO | ICANON | ISIG | IEXTEN);
    ::tcsetattr(slave, TCSANOW, &t);
  }
  winsize ws{};
  if (::ioctl(options_.console_fd, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0) {
    ws.ws_row = 24;
    ws.ws_col = 80;
  }
  ::ioctl(slave, TIOCSWINSZ, &ws);
  read_fd_ = master;
  write_fd_ = slave;
  return true;
}

WorkerOutput::~WorkerOutput() {
  close_write_end();
  if (read_fd_ >= 0) ::close(read_fd_);
  if (log_fd_ >= 0) ::close(log_fd_);
}

void WorkerOutput::close_write_end() {
  if (write_fd_ >= 0) ::close(write_fd_);
  write_fd_ = -1;
}

void WorkerOutput::echo(const char* data, size_t size, double now) {
  if (!options_.echo) return;
  if (console_raw_) {
    write_all(options_.console_fd, data, size);
    return;
  }
  echo_lines(console_filter_.feed(data, size, now));
}

// Whole lines (as RedrawFilter gives them) with their prefix, in one write, so ranks do not
// interleave mid-line.
void WorkerOutput::echo_lines(const std::string& plain) {
  if (plain.empty()) return;
  if (options_.prefix.empty()) {
    write_all(options_.console_fd, plain.data(), plain.size());
    return;
  }
  std::string out;
  for (size_t start = 0; start < plain.size();) {
    size_t nl = plain.find('\n', start);
    if (nl == std::string::npos) nl = plain.size() - 1;
    out += options_.prefix;
    out.append(plain, start, nl - start + 1);
    start = nl + 1;
  }
  write_all(options_.console_fd, out.data(), out.size());
}

bool WorkerOutput::pump() {
  if (eof_) return false;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(read_fd_, buf, sizeof(buf));
    if (n > 0) {
      const double now = now_seconds();
      const std::string plain = log_filter_.feed(buf, static_cast<size_t>(n), now);
      write_all(log_fd_, plain.data(), plain.size());
      echo(buf, static_cast<size_t>(n), now);
      continue;
    }
    // A pty's master reads EIO once every slave descriptor is closed: the end of the output.
    if (n == 0 || (n < 0 && errno == EIO && is_tty_)) {
      eof_ = true;
      return false;
    }
    if (errno == EINTR) continue;
    return true;  // EAGAIN: nothing more for now
  }
}

void WorkerOutput::finish(int max_ms) {
  Deadline deadline{std::chrono::milliseconds(max_ms)};
  while (pump() && !deadline.expired()) {
    pollfd p{read_fd_, POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(std::max<long long>(1, deadline.remaining().count())));
  }
  const std::string rest = log_filter_.flush();
  write_all(log_fd_, rest.data(), rest.size());
  if (options_.echo && !console_raw_) echo_lines(console_filter_.flush());
}

std::string WorkerOutput::tail(int max_lines, size_t max_bytes) const {
  int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  struct stat st {};
  ::fstat(fd, &st);
  long long begin = std::max<long long>(start_offset_, st.st_size - static_cast<long long>(max_bytes));
  std::string text(static_cast<size_t>(std::max<long long>(0, st.st_size - begin)), '\0');
  ssize_t n = ::pread(fd, text.data(), text.size(), begin);
  ::close(fd);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  size_t pos = text.size();
  if (pos > 0 && text[pos - 1] == '\n') --pos;
  for (int lines = 0; pos > 0; --pos) {
    if (text[pos - 1] == '\n' && ++lines == max_lines) break;
  }
  return text.substr(pos);
}

}  // namespace crew::launch

#include "crew/launch/worker_output.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "crew/core/check.h"
#include "crew/core/timer.h"
#include "crew/launch/launch_log.h"

namespace crew::launch {

WorkerOutput::WorkerOutput(std::string log_path, WorkerOutputOptions options)
    : path_(std::move(log_path)), options_(std::move(options)) {
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (options_.overwrite ? O_TRUNC : O_APPEND);
  log_fd_ = ::open(path_.c_str(), flags, 0600);  // a worker may print secrets
  if (log_fd_ < 0) CREW_THROW(IOError, errno_message("launch: cannot open worker log '" + path_ + "'"));
  write_all(log_fd_, options_.header.data(), options_.header.size());
  struct stat st {};
  if (::fstat(log_fd_, &st) == 0) start_offset_ = st.st_size;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    ::close(log_fd_);
    CREW_THROW(IOError, errno_message("launch: pipe for '" + path_ + "'"));
  }
  read_fd_ = fds[0];
  write_fd_ = fds[1];
  ::fcntl(read_fd_, F_SETFL, ::fcntl(read_fd_, F_GETFL) | O_NONBLOCK);
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

void WorkerOutput::echo(const char* data, size_t size) {
  if (!options_.echo) return;
  if (options_.prefix.empty()) {
    write_all(options_.console_fd, data, size);
    return;
  }
  // Whole lines with their prefix, in one write each, so ranks do not interleave mid-line;
  // a partial line waits for its end (or for finish()).
  pending_.append(data, size);
  size_t end = pending_.rfind('\n');
  if (end == std::string::npos) return;
  std::string out;
  size_t start = 0;
  while (start <= end) {
    size_t nl = pending_.find('\n', start);
    out += options_.prefix;
    out.append(pending_, start, nl - start + 1);
    start = nl + 1;
  }
  pending_.erase(0, end + 1);
  write_all(options_.console_fd, out.data(), out.size());
}

bool WorkerOutput::pump() {
  if (eof_) return false;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(read_fd_, buf, sizeof(buf));
    if (n > 0) {
      write_all(log_fd_, buf, static_cast<size_t>(n));
      echo(buf, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) {
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
  if (options_.echo && !pending_.empty()) {
    std::string out = options_.prefix + pending_ + "\n";
    pending_.clear();
    write_all(options_.console_fd, out.data(), out.size());
  }
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

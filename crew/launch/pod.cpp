#include "crew/launch/pod.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>

#include "crew/core/check.h"
#include "crew/core/timer.h"
#include "crew/launch/launch_log.h"

namespace crew::launch {

Pod::Pod(PodSpec spec, GroupReaper* reaper) : spec_(std::move(spec)), reaper_(reaper) {}

Pod::~Pod() {
  try {
    stop(std::chrono::milliseconds(0));
  } catch (const Error&) {
    // Children were sent SIGKILL; nothing more a destructor can do.
  }
}

std::string Pod::log_path(int local_rank) const {
  return spec_.log_dir + "/workerlog." + std::to_string(local_rank);
}

void Pod::start() {
  CREW_INTERNAL_ASSERT(children_.empty(), "Pod::start called twice");
  for (const WorkerSpec& w : spec_.workers) {
    WorkerOutputOptions oo;
    oo.overwrite = spec_.log_overwrite;
    oo.header = spec_.log_header;
    oo.echo = spec_.console.shows(w.local_rank);
    oo.tty = spec_.worker_tty;
    if (oo.echo && spec_.console.prefixed()) oo.prefix = "[rank " + std::to_string(w.global_rank) + "] ";
    outputs_.push_back(std::make_unique<WorkerOutput>(log_path(w.local_rank), oo));
    write_envlog(spec_.log_dir + "/envlog." + std::to_string(w.local_rank), w.env);
  }
  try {
    for (size_t i = 0; i < spec_.workers.size(); ++i) {
      dist::ChildOptions co;
      co.argv = spec_.command;
      co.env = spec_.workers[i].env;
      co.stdout_fd = co.stderr_fd = outputs_[i]->write_fd();
      co.cpus = spec_.workers[i].cpus;
      children_.push_back(dist::ChildProcess::start(co));
      if (reaper_) reaper_->watch(children_.back().pid());
      outputs_[i]->close_write_end();
    }
  } catch (...) {
    stop(std::chrono::milliseconds(0));
    throw;
  }
}

std::vector<pid_t> Pod::pids() const {
  std::vector<pid_t> out;
  for (const auto& c : children_) out.push_back(c.pid());
  return out;
}

std::string Pod::log_tail(int local_rank, int max_lines) const {
  return outputs_.at(static_cast<size_t>(local_rank))->tail(max_lines);
}

void Pod::pump_once(int timeout_ms, int extra_fd) {
  std::vector<pollfd> fds;
  for (const auto& o : outputs_) {
    if (!o->at_eof()) fds.push_back({o->read_fd(), POLLIN, 0});
  }
  if (extra_fd >= 0) fds.push_back({extra_fd, POLLIN, 0});
  if (!fds.empty()) {
    ::poll(fds.data(), fds.size(), timeout_ms);
  } else {
    ::usleep(static_cast<useconds_t>(timeout_ms) * 1000);
  }
  for (auto& o : outputs_) o->pump();
  for (auto& c : children_) c.poll();
}

PodOutcome Pod::watch(SignalPipe& signals, const std::function<bool()>& abort) {
  Stopwatch since_abort_check;
  while (true) {
    pump_once(kPollIntervalMs, signals.fd());
    if (int sig = signals.drain()) {
      PodOutcome out;
      out.state = PodState::INTERRUPTED;
      out.signal = sig;
      return out;
    }
    // The first failure in local-rank order among those that have ended (Paddle's rule).
    bool all_done = true;
    for (size_t i = 0; i < children_.size(); ++i) {
      const auto& st = children_[i].status();
      if (!st) {
        all_done = false;
        continue;
      }
      if (!st->success()) {
        PodOutcome out;
        out.state = PodState::FAILED;
        out.local_rank = static_cast<int>(i);
        out.global_rank = spec_.workers[i].global_rank;
        out.pid = children_[i].pid();
        out.status = *st;
        outputs_[i]->finish(200);
        return out;
      }
    }
    if (all_done) {
      for (auto& o : outputs_) o->finish(1000);
      return PodOutcome{};
    }
    if (since_abort_check.elapsed() >= std::chrono::milliseconds(100)) {
      since_abort_check.reset();
      if (abort && abort()) {
        PodOutcome out;
        out.state = PodState::ABORTED;
        return out;
      }
    }
  }
}

void Pod::stop(std::chrono::milliseconds grace, SignalPipe* signals, int first) {
  const int signals_before = signals ? signals->terminating_count() : 0;
  auto any_running = [&] {
    return std::any_of(children_.begin(), children_.end(),
                       [](const dist::ChildProcess& c) { return c.running(); });
  };
  for (auto& c : children_) c.poll();
  if (grace.count() > 0 && any_running()) {
    for (auto& c : children_) c.signal_group(first);
    Deadline deadline(grace);
    while (any_running() && !deadline.expired()) {
      pump_once(
          static_cast<int>(std::min<long long>(10, std::max<long long>(1, deadline.remaining().count()))),
          signals ? signals->fd() : -1);
      if (signals && (signals->drain(), signals->terminating_count() > signals_before)) {
        launch_warning("second signal: killing the workers now");
        break;
      }
    }
  }
  if (any_running()) {
    for (auto& c : children_) c.signal_group(SIGKILL);
    Deadline deadline(std::chrono::seconds(10));
    while (any_running() && !deadline.expired()) pump_once(5, -1);
  }
  for (auto& c : children_) {
    if (c.running()) {
      launch_error(str_cat("worker pid ", c.pid(), " survived SIGKILL for 10 s"));
      c.wait_for(std::chrono::seconds(5));
    }
  }
  for (auto& o : outputs_) o->finish(200);
  if (reaper_) {
    for (auto& c : children_) {
      if (!c.running()) reaper_->forget(c.pid());
    }
  }
}

}  // namespace crew::launch

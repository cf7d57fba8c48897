#include <algorithm>

#include "crew/core/check.h"
#include "crew/core/env.h"
#include "crew/distributed/backends/shm/shm_layout.h"
#include "crew/distributed/backends/shm/shm_process_group.h"

namespace crew::dist {

ShmOptions ShmOptions::from_env() {
  ShmOptions o;
  const long long buffer = env::get_int("CREW_SHM_BUFFER_BYTES", static_cast<long long>(o.buffer_bytes));
  CREW_CHECK(buffer >= 4096, "CREW_SHM_BUFFER_BYTES must be at least 4096, got ", buffer);
  o.buffer_bytes = detail::round_up(static_cast<size_t>(buffer), 64);
  const long long mailbox = env::get_int("CREW_SHM_MAILBOX_BYTES", static_cast<long long>(o.mailbox_bytes));
  CREW_CHECK(mailbox >= 64, "CREW_SHM_MAILBOX_BYTES must be at least 64, got ", mailbox);
  o.mailbox_bytes = detail::round_up(static_cast<size_t>(mailbox), 64);
  const long long small = env::get_int("CREW_SHM_SMALL_BYTES", static_cast<long long>(o.small_bytes));
  CREW_CHECK(small >= 0, "CREW_SHM_SMALL_BYTES must not be negative, got ", small);
  o.small_bytes = static_cast<size_t>(small);
  const long long spin_us = env::get_int("CREW_SHM_SPIN_US", o.spin.count());
  CREW_CHECK(spin_us >= 0, "CREW_SHM_SPIN_US must not be negative, got ", spin_us);
  o.spin = std::chrono::microseconds(spin_us);
  const long long delay_us = env::get_int("CREW_SHM_WORKER_DELAY_US", o.worker_start_delay.count());
  CREW_CHECK(delay_us >= 0, "CREW_SHM_WORKER_DELAY_US must not be negative, got ", delay_us);
  o.worker_start_delay = std::chrono::microseconds(delay_us);
  const long long max_bytes = env::get_int("CREW_SHM_MAX_BYTES", 0);
  CREW_CHECK(max_bytes >= 0, "CREW_SHM_MAX_BYTES must not be negative, got ", max_bytes);
  o.max_bytes = static_cast<size_t>(max_bytes);
  o.shared_buffers = env::get_bool("CREW_SHM_SHARED_BUFFERS", o.shared_buffers);
  return o;
}

size_t shm_segment_bytes(int world, const ShmOptions& options) {
  return detail::ShmGeometry{world, options.buffer_bytes, options.mailbox_bytes}.total_bytes();
}

const char* shm_segment_prefix() { return "crew-shm-"; }

}  // namespace crew::dist

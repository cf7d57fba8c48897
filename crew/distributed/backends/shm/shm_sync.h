#pragma once
// Futex and process-liveness primitives of the shm backend (internal).
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>

#include "crew/distributed/backends/shm/shm_layout.h"

namespace crew::dist::detail {

// Sleeps while *word == expected, at most `timeout` (shared, not FUTEX_PRIVATE: the word
// lives in memory mapped by several processes). Spurious returns are allowed.
void futex_wait(std::atomic<uint32_t>* word, uint32_t expected, std::chrono::microseconds timeout);
// Wakes every process sleeping on word.
void futex_wake_all(std::atomic<uint32_t>* word);

// Publishes a new flag value and wakes sleepers (skips the syscall when nobody sleeps).
inline void publish(ShmFlag& flag, uint32_t value) {
  flag.value.store(value, std::memory_order_seq_cst);
  if (flag.waiters.load(std::memory_order_seq_cst) != 0) futex_wake_all(&flag.value);
}

// Start time of pid in clock ticks since boot (/proc/<pid>/stat field 22); 0 if it has no
// entry. Guards against pid reuse.
uint64_t process_start_time(pid_t pid);

enum class Liveness { ALIVE, DEAD, ZOMBIE, REUSED };
// Whether the process that published (pid, start_time) still runs.
Liveness process_liveness(pid_t pid, uint64_t start_time);
const char* liveness_name(Liveness state);

// One CPU pause (x86 `pause`), to spin politely.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace crew::dist::detail

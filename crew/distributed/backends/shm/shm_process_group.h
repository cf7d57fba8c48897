#pragma once
// ShmProcessGroup: a ProcessGroup over POSIX shared memory for ranks that share one host.
//
//   auto store = std::make_shared<TCPStore>(...);
//   auto pg = create_shm_process_group(store, rank, world, ProcessGroupOptions{});
//   pg->all_reduce(grad, ReduceOp::SUM)->wait();
//
// Rank 0 creates one segment in /dev/shm (name from a random token, the job id and the group
// name, passed to the others through the store); every rank maps it and the segment is
// unlinked as soon as all have mapped it, so nothing is left behind even after SIGKILL.
// Ranks synchronise through sequence-numbered flags in the segment (spin briefly, then futex
// wait). Every wait is bounded by the group timeout and checks that the peers are alive: a rank
// that dies mid-collective makes the others fail with CommError naming it. Collectives run
// in issue order on a worker thread; Work::wait() on an op nobody has started runs it inline.
// send/recv use per-pair mailboxes, each direction on its own thread, FIFO per pair, so
// crossing sends of any size do not deadlock; the tag must match the next message.
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "crew/distributed/process_group/process_group.h"
#include "crew/distributed/store/store.h"

namespace crew::dist {

// Tuning of the shared-memory backend. from_env() reads CREW_SHM_* overrides.
struct ShmOptions {
  static constexpr size_t kDefaultBufferBytes = size_t{1} << 20;     // 1 MiB
  static constexpr size_t kDefaultMailboxBytes = size_t{256} << 10;  // 256 KiB
  static constexpr size_t kDefaultSmallBytes = size_t{16} << 10;     // 16 KiB
  static constexpr std::chrono::microseconds kDefaultSpin{200};
  static constexpr std::chrono::milliseconds kDefaultLivenessInterval{20};
  static constexpr std::chrono::microseconds kDefaultWorkerStartDelay{50};

  // Bytes of each of a rank's two staging buffers (CREW_SHM_BUFFER_BYTES); messages larger
  // than this go through in chunks. The segment holds 2 * world of them.
  size_t buffer_bytes = kDefaultBufferBytes;
  // Bytes of each ordered pair's send/recv mailbox (CREW_SHM_MAILBOX_BYTES).
  size_t mailbox_bytes = kDefaultMailboxBytes;
  // all_reduce of at most this many bytes: every rank reduces the whole message itself (one
  // flag round) instead of reduce-scatter + all-gather (two rounds).
  size_t small_bytes = kDefaultSmallBytes;
  // How long a waiter spins (then yields) before it futex-waits (CREW_SHM_SPIN_US).
  std::chrono::microseconds spin = kDefaultSpin;
  // How often a blocked waiter checks that its peers are alive.
  std::chrono::milliseconds liveness_interval = kDefaultLivenessInterval;
  // How long the worker thread leaves a new op for a caller that waits on it at once (runs it
  // inline) before starting it itself (CREW_SHM_WORKER_DELAY_US).
  std::chrono::microseconds worker_start_delay = kDefaultWorkerStartDelay;
  // Where POSIX shared memory lives (for the free-space check).
  std::string shm_dir = "/dev/shm";
  // The most bytes of shared memory this rank may create or map; 0 = no limit beyond the
  // free space of shm_dir (CREW_SHM_MAX_BYTES). A limit for tests and tight machines: a rank
  // whose segment is larger fails as if /dev/shm were that small.
  size_t max_bytes = 0;
  // ProcessGroup::allocate_buffer maps its buffers into every rank, so that all_reduce works
  // on them in place (CREW_SHM_SHARED_BUFFERS=0: ordinary tensors, reduced through the
  // staging buffers).
  bool shared_buffers = true;

  static ShmOptions from_env();
};

// Total bytes of the segment a group of `world` ranks needs with these options.
size_t shm_segment_bytes(int world, const ShmOptions& options);

// The shared-memory backend ("shm"). The ranks agree through the store on whether every one
// of them created or mapped the segment; if any could not, all throw: BackendUnavailableError
// (a CommError) when a rank lacked the space (/dev/shm too small, ENOSPC, ENOMEM: the message
// names that rank, the bytes needed and available), CommError for other failures. StoreError
// or TimeoutError when the rendezvous through the store fails (a rank never arrived).
std::shared_ptr<ProcessGroup> create_shm_process_group(std::shared_ptr<Store> store, int rank, int size,
                                                       ProcessGroupOptions options);
std::shared_ptr<ProcessGroup> create_shm_process_group(std::shared_ptr<Store> store, int rank, int size,
                                                       ProcessGroupOptions options, ShmOptions shm_options);

// Registers create_shm_process_group as backend "shm" in the ProcessGroup registry.
void register_shm_backend();

// The prefix of every segment name this backend creates in /dev/shm ("crew-shm-").
const char* shm_segment_prefix();

}  // namespace crew::dist

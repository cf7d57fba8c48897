#include "crew/tensor/ops/threading.h"

#include <cblas.h>
#include <dlfcn.h>
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

#include "crew/core/check.h"
#include "crew/core/env.h"

namespace crew {
namespace {

std::atomic<int> g_threads{0};
std::once_flag g_init_once;

// oneDNN is built on GNU OpenMP, which libdnnl already loaded; looking the setter up at run
// time keeps libgomp off our own link line.
void set_openmp_threads(int n) {
  using SetFn = void (*)(int);
  static SetFn fn = reinterpret_cast<SetFn>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  if (fn != nullptr) fn(n);
}

void apply(int n) {
  set_openmp_threads(n);
  openblas_set_num_threads(n);
  g_threads.store(n);
}

// A training step frees and reallocates the same few-MiB activation buffers every time.
// glibc's defaults serve those from fresh mmaps (or trim them back to the OS), so every step
// page-faults and zero-fills them again: a quarter of a step's CPU time on the seed net.
// Keeping freed memory in the heap removes that. CREW_MALLOC_TUNING=0 leaves glibc alone.
void tune_allocator() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (!env::get_bool("CREW_MALLOC_TUNING", true)) return;
    mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's maximum on 64-bit
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
  });
}

void init_default() {
  tune_allocator();
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 1) cores = 1;
  const long long n = env::get_int("CREW_NUM_THREADS", cores);
  CREW_CHECK(n >= 1, "CREW_NUM_THREADS must be >= 1, got ", n);
  apply(static_cast<int>(n));
}

}  // namespace

namespace detail {
// OpenMP's thread count is per calling thread, so each thread entering a kernel re-applies
// the process-wide setting when it changed since that thread last looked.
void ensure_threads_initialized() {
  std::call_once(g_init_once, init_default);
  thread_local int applied = -1;
  const int want = g_threads.load(std::memory_order_relaxed);
  if (applied != want) {
    set_openmp_threads(want);
    applied = want;
  }
}
}  // namespace detail

void set_num_threads(int n) {
  CREW_CHECK(n >= 1, "set_num_threads: thread count must be >= 1, got ", n);
  tune_allocator();
  std::call_once(g_init_once, [] {});  // an explicit setting overrides the env default
  apply(n);
}

int get_num_threads() {
  detail::ensure_threads_initialized();
  return g_threads.load();
}

}  // namespace crew

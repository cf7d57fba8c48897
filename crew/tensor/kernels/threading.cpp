#include "crew/tensor/kernels/threading.h"

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
// page-faults and zero-fills them again, a large share of a step's CPU time (docs/kernels.md,
// "Allocation"). Keeping freed memory in the heap removes that. CREW_MALLOC_TUNING=0 leaves glibc alone.
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

// libgomp's entry points, looked up at run time (see set_openmp_threads). GOMP_parallel is
// what `#pragma omp parallel` compiles to; its ABI has been stable since GCC 4.9.
struct OpenMp {
  void (*parallel)(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags) = nullptr;
  int (*thread_num)() = nullptr;
  int (*num_threads)() = nullptr;
  bool ok() const { return parallel && thread_num && num_threads; }
};

const OpenMp& openmp() {
  static const OpenMp omp = [] {
    OpenMp o;
    o.parallel = reinterpret_cast<decltype(o.parallel)>(dlsym(RTLD_DEFAULT, "GOMP_parallel"));
    o.thread_num = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_get_thread_num"));
    o.num_threads = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_get_num_threads"));
    return o;
  }();
  return omp;
}

struct ParallelJob {
  int64_t n;
  const std::function<void(int64_t, int64_t)>* fn;
};

void run_chunk(void* data) {
  const auto* job = static_cast<const ParallelJob*>(data);
  const OpenMp& omp = openmp();
  const int64_t team = omp.num_threads();
  const int64_t me = omp.thread_num();
  const int64_t begin = job->n * me / team;
  const int64_t end = job->n * (me + 1) / team;
  if (begin < end) (*job->fn)(begin, end);
}

}  // namespace

namespace detail {

void parallel_for(int64_t n, int64_t min_chunk, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  ensure_threads_initialized();
  const int threads = g_threads.load(std::memory_order_relaxed);
  const OpenMp& omp = openmp();
  if (threads <= 1 || n < 2 * min_chunk || !omp.ok()) {
    fn(0, n);
    return;
  }
  const int64_t useful = n / (min_chunk > 0 ? min_chunk : 1);
  const unsigned team = static_cast<unsigned>(useful < threads ? useful : threads);
  ParallelJob job{n, &fn};
  omp.parallel(run_chunk, &job, team, 0);
}

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

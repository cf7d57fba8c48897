#pragma once
// Intra-op threads of the compute kernels: oneDNN's OpenMP team (convolutions, eltwise,
// float32 gemm, crew's parallel_for loops) and OpenBLAS's pool (float64 gemm).
//
//   crew::set_num_threads(1);   // single-threaded kernels from now on
//
// The first use reads CREW_NUM_THREADS; unset means every online core.
#include <cstdint>
#include <functional>

namespace crew {

// Sets the thread count of oneDNN (OpenMP) and OpenBLAS; n >= 1, else ValueError.
void set_num_threads(int n);
// The current thread count (after the CREW_NUM_THREADS default on first use).
int get_num_threads();

namespace detail {
// Applies the CREW_NUM_THREADS default once; every kernel entry point calls it.
void ensure_threads_initialized();

// Runs fn(begin, end) over contiguous chunks of [0, n) on the kernel threads (the OpenMP
// team oneDNN uses, so crew's own loops never oversubscribe the cores), and returns when all
// chunks are done. Serial when one thread is set, n < min_chunk * 2, or OpenMP is absent.
// fn must not throw.
void parallel_for(int64_t n, int64_t min_chunk, const std::function<void(int64_t, int64_t)>& fn);
}  // namespace detail

}  // namespace crew

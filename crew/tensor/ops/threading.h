#pragma once
// Intra-op threads of the compute kernels (oneDNN's OpenMP pool and OpenBLAS).
//
//   crew::set_num_threads(1);   // single-threaded kernels from now on
//
// The first use reads CREW_NUM_THREADS; unset means every online core.
namespace crew {

// Sets the thread count of oneDNN (OpenMP) and OpenBLAS; n >= 1, else ValueError.
void set_num_threads(int n);
// The current thread count (after the CREW_NUM_THREADS default on first use).
int get_num_threads();

namespace detail {
// Applies the CREW_NUM_THREADS default once; every kernel entry point calls it.
void ensure_threads_initialized();
}  // namespace detail

}  // namespace crew

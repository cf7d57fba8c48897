#pragma once
// CREW_HD marks per-element and per-row math written once for host and device: the CPU
// kernels call it in their loops, a CUDA backend's kernels call the same functions on the GPU.
// Empty without nvcc; under nvcc `__host__ __device__` (and inline for both).
//
//   struct GeluErf {
//     CREW_HD static float forward(float x) { ... }
//   };
//
// Functions marked CREW_HD use only what both sides have: arithmetic and <cmath>'s float
// functions (no allocation, no exceptions, no std containers); they take and return values
// or raw row pointers with lengths. Tests check each against a float64 reference.
#if defined(__CUDACC__)
#define CREW_HD __host__ __device__ inline
#else
#define CREW_HD inline
#endif

#pragma once
// NumPy-style broadcasting binary kernels (float32 / float64) and the reduction that folds
// a broadcast gradient back onto an input shape. Each public function validates, checks that
// its operands share a place, and runs that place's entry (crew/tensor/kernels/dispatch.h).
#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

enum class BinaryOp { ADD, SUB, MUL, DIV };

// The broadcast shape of a and b; ValueError naming both shapes (and `op`) otherwise.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
// a (op) b with broadcasting; a and b must have the same floating dtype.
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, const char* name);
// Sums g (of a broadcast shape) down to `shape`, the shape of the input that was broadcast.
Tensor sum_to(const Tensor& g, const Shape& shape);
// a * alpha + beta elementwise (a new tensor).
Tensor affine(const Tensor& a, double alpha, double beta);
// dst += src (same numel and dtype), in place.
void add_inplace(const Tensor& dst, const Tensor& src);

// Throws ValueError unless t is float32 or float64.
void check_floating(const Tensor& t, const char* op);

// The entries, called with validated operands on one place. binary: a and b of one floating
// dtype, out the broadcast shape; sum_to: g floating, shape broadcast to g's; affine: a
// floating; add_inplace: dst floating, src of its numel and dtype.
using BinaryFn = Tensor(BinaryOp op, const Tensor& a, const Tensor& b, const Shape& out);
using SumToFn = Tensor(const Tensor& g, const Shape& shape);
using AffineFn = Tensor(const Tensor& a, double alpha, double beta);
using AddInplaceFn = void(const Tensor& dst, const Tensor& src);
extern KernelSlot<BinaryFn> binary_kernel;
extern KernelSlot<SumToFn> sum_to_kernel;
extern KernelSlot<AffineFn> affine_kernel;
extern KernelSlot<AddInplaceFn> add_inplace_kernel;

}  // namespace crew::kernels

#pragma once
// NumPy-style broadcasting binary kernels (float32 / float64) and the reduction that folds
// a broadcast gradient back onto an input shape.
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

}  // namespace crew::kernels

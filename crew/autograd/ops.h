#pragma once
// Differentiable tensor operations (the general ones; layer ops are in crew/nn/functional.h).
// Binary ops broadcast NumPy-style (e.g. [N, C, H, W] + [C, 1, 1], [N, K] + [K]).
#include <cstdint>
#include <vector>

#include "crew/tensor/tensor.h"

namespace crew {

Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor add(const Tensor& a, double b);
Tensor mul(const Tensor& a, double b);
Tensor neg(const Tensor& a);
Tensor exp(const Tensor& a);
Tensor log(const Tensor& a);
Tensor pow(const Tensor& a, double exponent);
inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator+(const Tensor& a, double b) { return add(a, b); }
inline Tensor operator*(const Tensor& a, double b) { return mul(a, b); }
inline Tensor operator-(const Tensor& a) { return neg(a); }

// a [M, K] x b [K, N] -> [M, N]; batched [B, M, K] x [B, K, N] too.
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a = false, bool transpose_b = false);
Tensor reshape(const Tensor& x, const Shape& shape);  // differentiable view (one -1 allowed)
Tensor unsqueeze(const Tensor& x, int64_t axis);
Tensor squeeze(const Tensor& x, int64_t axis);
Tensor transpose2d(const Tensor& x);  // [M, N] -> [N, M]
Tensor sum(const Tensor& x);          // scalar
Tensor sum(const Tensor& x, int64_t axis, bool keepdim = false);
Tensor mean(const Tensor& x);         // scalar
Tensor mean(const Tensor& x, int64_t axis, bool keepdim = false);
Tensor concat(const std::vector<Tensor>& xs, int64_t axis = 0);
// Not differentiable: int64 indices of the maximum along axis.
Tensor argmax(const Tensor& x, int64_t axis = -1);

}  // namespace crew

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

// a [..., M, K] x b [..., K, N] -> [batch..., M, N] (op = transpose of the last two axes when
// asked); the leading batch axes broadcast NumPy-style: [B, H, T, D] x [B, H, D, T],
// [B, T, K] x [K, N], [B, T, K] x [1, K, N]. Broadcast inputs' gradients sum back.
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a = false, bool transpose_b = false);
Tensor reshape(const Tensor& x, const Shape& shape);  // differentiable view (one -1 allowed)
Tensor unsqueeze(const Tensor& x, int64_t axis);
Tensor squeeze(const Tensor& x, int64_t axis);
Tensor transpose2d(const Tensor& x);  // [M, N] -> [N, M]
// y.shape[i] = x.shape[perm[i]] (a contiguous copy); perm is a permutation of [0, dim).
Tensor permute(const Tensor& x, const std::vector<int64_t>& perm);
// Swaps two axes (negative axes count from the end); a contiguous copy.
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);
// x[..., start:stop, ...] along axis (a copy); negative start/stop count from the end, both
// clamp to [0, extent] and stop <= start gives an empty axis (Paddle's slice).
Tensor slice(const Tensor& x, int64_t axis, int64_t start, int64_t stop);
// `sections` equal pieces along axis (Paddle's split with an int); ValueError unless the
// extent divides evenly.
std::vector<Tensor> split(const Tensor& x, int64_t sections, int64_t axis = 0);
Tensor sum(const Tensor& x);          // scalar
Tensor sum(const Tensor& x, int64_t axis, bool keepdim = false);
Tensor mean(const Tensor& x);         // scalar
Tensor mean(const Tensor& x, int64_t axis, bool keepdim = false);
Tensor concat(const std::vector<Tensor>& xs, int64_t axis = 0);
// Not differentiable: int64 indices of the maximum along axis.
Tensor argmax(const Tensor& x, int64_t axis = -1);

}  // namespace crew

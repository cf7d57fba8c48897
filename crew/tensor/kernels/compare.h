#pragma once
// Kernels that make or read bool masks: comparisons, logical ops, NaN/Inf tests, isclose,
// where (select by a mask), nonzero. Operands of one op have one shape (the autograd layer
// broadcasts them first with expand) and one place; results are new tensors on that place.
#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

enum class CompareOp { EQ, NE, LT, LE, GT, GE, AND, OR, XOR };
enum class TestOp { NOT, ISNAN, ISINF, ISFINITE };

// a (op) b -> BOOL; a and b of one shape and dtype. AND/OR/XOR read nonzero as true.
Tensor compare(CompareOp op, const Tensor& a, const Tensor& b, const char* name);
// op(x) -> BOOL (NOT: x == 0; the tests are false for every element of an integer tensor).
Tensor test(TestOp op, const Tensor& x);
// |a - b| <= atol + rtol * |b| -> BOOL, a and b of one floating dtype; NaNs equal when equal_nan.
Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan);
// cond ? x : y, cond BOOL, x and y of one dtype, all of one shape.
Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y);
// int64 [n]: the row-major (flat) positions of x's nonzero elements, ascending.
Tensor nonzero(const Tensor& x);

using CompareFn = Tensor(CompareOp op, const Tensor& a, const Tensor& b);
using TestFn = Tensor(TestOp op, const Tensor& x);
using IscloseFn = Tensor(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan);
using WhereFn = Tensor(const Tensor& cond, const Tensor& x, const Tensor& y);
using NonzeroFn = Tensor(const Tensor& x);
extern KernelSlot<CompareFn> compare_kernel;
extern KernelSlot<TestFn> test_kernel;
extern KernelSlot<IscloseFn> isclose_kernel;
extern KernelSlot<WhereFn> where_kernel;
extern KernelSlot<NonzeroFn> nonzero_kernel;

}  // namespace crew::kernels

#pragma once
// Copies between a list of tensors and one flat buffer: what DataParallel's gradient buckets
// and its coalesced broadcast of the initial state do (crew/distributed/data_parallel). A
// device backend sets its entries (crew/tensor/kernels/dispatch.h).
//
//   kernels::pack_flat({w.grad(), b.grad()}, bucket, 0);   // bucket[0, n) = w.grad, b.grad
//   kernels::unpack_flat(bucket, 0, {w, b});               // and back
#include <cstdint>
#include <vector>

#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

// Writes `parts` into `flat` back to back from element `offset` of flat: parts[0] to
// [offset, offset + parts[0].numel()), parts[1] right after, ... (checked by the callers
// below: one dtype, one place, flat large enough).
using PackFlatFn = void(const std::vector<Tensor>& parts, const Tensor& flat, int64_t offset);
// The reverse: each of `parts` is overwritten with its range of `flat`.
using UnpackFlatFn = void(const Tensor& flat, int64_t offset, const std::vector<Tensor>& parts);

extern KernelSlot<PackFlatFn> pack_flat_kernel;
extern KernelSlot<UnpackFlatFn> unpack_flat_kernel;

// Checks the operands (same dtype and place as flat, total within flat) and runs the entry of
// flat's device. Neither bumps a version: for buffers autograd does not save (gradients,
// communication buffers) and for parameters written under no_grad before training.
void pack_flat(const std::vector<Tensor>& parts, const Tensor& flat, int64_t offset);
void unpack_flat(const Tensor& flat, int64_t offset, const std::vector<Tensor>& parts);

}  // namespace crew::kernels

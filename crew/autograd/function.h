#pragma once
// How an op records itself in the graph:
//
//   Tensor y = kernels::binary(...);                       // the plain kernel
//   if (autograd::should_record({&a, &b})) {
//     autograd::record(y, "mul", {a, b}, [a, b](const Tensor& g, const std::vector<bool>& needs) {
//       return std::vector<Tensor>{needs[0] ? g * b : Tensor(), needs[1] ? g * a : Tensor()};
//     }, /*saved=*/{a, b});
//   }
#include <initializer_list>
#include <vector>

#include "crew/autograd/autograd_meta.h"

namespace crew::autograd {

// Whether grad mode is on and any input requires a gradient.
bool should_record(std::initializer_list<const Tensor*> inputs);
bool should_record(const std::vector<Tensor>& inputs);
// Whether a backward function may write its result into the gradient it was handed: the
// engine passes each node's output gradient once and drops it after the call, so when
// nothing else holds the tensor or its storage (a root gradient the caller passed, a gradient
// sent to two inputs, a view) its memory is free to reuse.
bool disposable_grad(const Tensor& grad_output);
// Attaches a new node producing `output` (which gets stop_gradient = false) from `inputs`.
// `saved` lists the tensors the user can reach that `backward` reads (inputs, the output):
// their versions are checked before it runs (crew/autograd/saved_version.h). Undefined
// entries are skipped.
void record(const Tensor& output, const char* name, const std::vector<Tensor>& inputs, BackwardFn backward,
            const std::vector<Tensor>& saved = {});

}  // namespace crew::autograd

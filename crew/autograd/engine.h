#pragma once
// The backward engine (internal): Tensor::backward calls run_backward.
#include "crew/tensor/tensor.h"

namespace crew::autograd {

// Backpropagates grad_root (same shape and dtype as root) through root's graph, accumulating
// into leaves' grad() and firing their grad-ready hooks; frees the graph unless retain_graph.
void run_backward(const Tensor& root, const Tensor& grad_root, bool retain_graph);

}  // namespace crew::autograd

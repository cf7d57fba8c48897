#pragma once
// The backward engine (internal): Tensor::backward calls run_backward.
#include <vector>

#include "crew/tensor/tensor.h"

namespace crew::autograd {

// Backpropagates grad_root (same shape and dtype as root) through root's graph, accumulating
// into leaves' grad() and firing their grad-ready hooks; frees the graph unless retain_graph.
void run_backward(const Tensor& root, const Tensor& grad_root, bool retain_graph);

// Paddle's paddle.grad: backpropagates grad_roots[i] from roots[i] (together, one pass) and
// returns the gradient that reaches each of inputs (undefined where none does), leaving every
// leaf's grad() untouched and firing no grad-ready hooks (gradient hooks still run). The
// gradient does not flow on through the tensors of `blocked` (Paddle's no_grad_vars).
std::vector<Tensor> partial_grad(const std::vector<Tensor>& roots, const std::vector<Tensor>& grad_roots,
                                 const std::vector<Tensor>& inputs, const std::vector<Tensor>& blocked,
                                 bool retain_graph);

}  // namespace crew::autograd

#pragma once
// What the optimizer bindings share (optim.cpp, optim_more.cpp): Paddle's optimizer
// arguments converted to crew::optim's, and the second binding file's entry points.
#include <memory>
#include <vector>

#include "bindings.h"
#include "crew/optim/optimizer.h"

namespace crew::python {

// The parameters (an iterable of Tensors); ValueError for None or an empty list.
std::vector<Tensor> params_of(py::handle parameters, const char* op);
// Paddle's learning_rate: a float or an LRScheduler (which the optimizer then reads each step).
optim::LearningRate learning_rate(py::handle lr, const char* op);
// None or a GradientClip.
std::shared_ptr<optim::GradientClip> clip_of(py::handle grad_clip);

// optim_more.cpp: PolynomialDecay ... ReduceOnPlateau into `lr`; RMSProp ... Lamb into `o`.
void bind_more_schedules(py::module_& lr);
void bind_more_optimizers(py::module_& o);

}  // namespace crew::python

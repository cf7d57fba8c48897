#pragma once
// The parts of the extension module crew._C, one function per bound C++ module, each in
// its own file (module.cpp calls them in order: a part may use the Python types that
// earlier parts registered, e.g. every part returns crew.Tensor).
#include <pybind11/pybind11.h>

#include "crew/tensor/state_dict.h"

namespace crew::python {

namespace py = pybind11;

void bind_errors(py::module_& m);       // errors.cpp: crew::Error -> Python exceptions
void bind_device(py::module_& m);       // device.cpp: places, set_device, crew.device
void bind_tensor(py::module_& m);       // tensor.cpp: Tensor, to_tensor, NumPy
// A Place from None (the current device), a Place or a string ("cpu", "gpu:0").
Place place_from_py(const py::handle& place);
void bind_serialize(py::module_& m);    // serialize.cpp: save, load (safetensors)
void bind_autograd(py::module_& m);     // autograd.cpp: backward, no_grad, differentiable ops
void bind_tensor_math(py::module_& m);  // tensor_math.cpp: math, masks, creation, x[key]
void bind_nn(py::module_& m);           // nn.cpp: Layer (subclassable), layers, functional
void bind_nn_layers(py::module_& m);    // nn_layers.cpp: LayerNorm, Embedding, attention, ...
void bind_nn_models(py::module_& m);    // nn_models.cpp: nn.models (ResNet, GPT)
void bind_optim(py::module_& m);        // optim.cpp: optimizers, LR schedules
void bind_io(py::module_& m);           // io.cpp: Dataset (subclassable), samplers, DataLoader
void bind_vision(py::module_& m);       // vision.cpp: datasets, transforms
void bind_distributed(py::module_& m);  // distributed.cpp: init, groups, tensor collectives
void bind_distributed_objects(py::module_& dist);  // distributed_objects.cpp: objects, env
void bind_data_parallel(py::module_& m);  // data_parallel.cpp: the GradSync engine for DataParallel
void bind_amp(py::module_& m);          // amp.cpp: autocast state, GradScaler

// Raises TypeError "func(): argument 'arg' must be <accepted>, got <type>" for `value` ("func
// must be ..." when arg is ""), or
// ValueError when `value` is an int beyond 64 bits (pybind11 says only "Unable to cast").
[[noreturn]] void throw_bad_argument(py::handle value, const char* func, const char* arg, const char* accepted);

// value.cast<T>(), with throw_bad_argument's error when value is not a T. Every conversion of
// a user's argument inside a binding goes through it, so no pybind11 cast text reaches users.
//   int64_t axis = cast_arg<int64_t>(obj, "sum", "axis", "an int, a list of ints or None");
template <typename T>
T cast_arg(py::handle value, const char* func, const char* arg, const char* accepted) {
  try {
    return value.cast<T>();
  } catch (const py::cast_error&) {
    throw_bad_argument(value, func, arg, accepted);
  }
}

// State dicts between Python (dict of name -> Tensor) and C++ (serialize.cpp).
StateDict state_dict_from_py(py::handle obj, const char* op);
py::dict state_dict_to_py(const StateDict& sd);

}  // namespace crew::python

// crew._C: the extension module behind the Python package crew (python/crew).
#include "bindings.h"

namespace crew::python {
void bind_nn_extra(py::module_& m);  // nn_extra.cpp: more of nn.functional (after bind_nn)
void bind_nn_rnn(py::module_& m);  // nn_rnn.cpp: nn.functional.rnn_layer (oneDNN RNN)
}

PYBIND11_MODULE(_C, m) {
  m.doc() = "crew's C++ core: tensors, autograd, layers, optimizers, data loading, collectives";
  m.attr("__version__") = CREW_VERSION;
  crew::python::bind_errors(m);
  crew::python::bind_device(m);
  crew::python::bind_tensor(m);
  crew::python::bind_serialize(m);
  crew::python::bind_autograd(m);
  crew::python::bind_tensor_math(m);
  crew::python::bind_nn(m);
  crew::python::bind_nn_extra(m);
  crew::python::bind_nn_layers(m);
  crew::python::bind_nn_rnn(m);
  crew::python::bind_nn_models(m);
  crew::python::bind_optim(m);
  crew::python::bind_amp(m);
  crew::python::bind_io(m);
  crew::python::bind_vision(m);
  crew::python::bind_distributed(m);
  crew::python::bind_data_parallel(m);
}

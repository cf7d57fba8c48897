// nn.functional.rnn_layer: one recurrent layer on oneDNN (crew/nn/functional_rnn.h), the
// kernel behind python/crew/nn/rnn.py's SimpleRNN, LSTM and GRU.
#include <pybind11/stl.h>

#include "bindings.h"
#include "crew/nn/functional_rnn.h"

namespace crew::python {

namespace {

kernels::RnnCell cell_from(const std::string& mode) {
  if (mode == "RNN_TANH") return kernels::RnnCell::RNN_TANH;
  if (mode == "RNN_RELU") return kernels::RnnCell::RNN_RELU;
  if (mode == "LSTM") return kernels::RnnCell::LSTM;
  if (mode == "GRU") return kernels::RnnCell::GRU;
  throw py::value_error("rnn_layer: mode '" + mode + "' is not one of RNN_TANH, RNN_RELU, LSTM, GRU");
}

Tensor optional(py::handle v, const char* arg) {
  return v.is_none() ? Tensor() : cast_arg<Tensor>(v, "rnn_layer", arg, "a Tensor or None");
}

}  // namespace

void bind_nn_rnn(py::module_& m) {
  py::module_ f = m.attr("nn").attr("functional").cast<py::module_>();
  f.def(
      "rnn_layer",
      [](const std::string& mode, const Tensor& x, py::list weights, py::handle h0, py::handle c0,
         bool bidirectional, bool reverse, bool batch_major) {
        const kernels::RnnCell cell = cell_from(mode);
        std::vector<Tensor> w;
        for (py::handle h : weights) w.push_back(optional(h, "weights"));
        const Tensor h = optional(h0, "h0"), c = optional(c0, "c0");
        nn::functional::RnnLayerOutput o;
        {
          py::gil_scoped_release nogil;
          o = nn::functional::rnn_layer(x, w, h, c, cell, bidirectional, reverse, batch_major);
        }
        return py::make_tuple(o.y, o.h_n, o.c_n.defined() ? py::cast(o.c_n) : py::none());
      },
      py::arg("mode"), py::arg("x"), py::arg("weights"), py::arg("h0") = py::none(),
      py::arg("c0") = py::none(), py::arg("bidirectional") = false, py::arg("reverse") = false,
      py::arg("batch_major") = false,
      "One recurrent layer over x [T, N, I] ([N, T, I] with batch_major): (y [T, N, D*H] (or [N, T, D*H]), "
      "h_n, c_n or None).");
}

}  // namespace crew::python

// crew._C.nn.functional, continued: conv2d_transpose, the parametrised activations
// (crew/nn/functional_extra.h) and the conv/pool/dropout/batch_norm functionals under Paddle's
// names (crew/nn/functional.h). python/crew/nn/functional_extra.py maps Paddle's arguments.
#include <pybind11/stl.h>

#include "bindings.h"
#include "crew/nn/functional_extra.h"

namespace crew::python {

namespace F = nn::functional;
using Release = py::call_guard<py::gil_scoped_release>;

namespace {
// None -> an undefined Tensor (no bias, no scale).
Tensor maybe_tensor(py::handle v, const char* func, const char* arg) {
  return v.is_none() ? Tensor() : cast_arg<Tensor>(v, func, arg, "a Tensor or None");
}
}  // namespace

void bind_nn_extra(py::module_& m) {
  py::module_ f = m.attr("nn").attr("functional").cast<py::module_>();
  f.def(
      "conv2d",
      [](const Tensor& x, const Tensor& weight, py::handle bias, F::Pair stride, F::Pair padding,
         F::Pair dilation, int64_t groups) {
        const Tensor b = maybe_tensor(bias, "conv2d", "bias");
        py::gil_scoped_release nogil;
        return F::conv2d(x, weight, b, stride, padding, dilation, groups);
      },
      py::arg("x"), py::arg("weight"), py::arg("bias"), py::arg("stride"), py::arg("padding"),
      py::arg("dilation"), py::arg("groups"));
  f.def(
      "conv2d_transpose",
      [](const Tensor& x, const Tensor& weight, py::handle bias, F::Pair stride, F::Pair padding,
         F::Pair output_padding, F::Pair dilation, int64_t groups) {
        const Tensor b = maybe_tensor(bias, "conv2d_transpose", "bias");
        py::gil_scoped_release nogil;
        return F::conv2d_transpose(x, weight, b, stride, padding, output_padding, dilation, groups);
      },
      py::arg("x"), py::arg("weight"), py::arg("bias"), py::arg("stride"), py::arg("padding"),
      py::arg("output_padding"), py::arg("dilation"), py::arg("groups"));
  f.def("max_pool2d", &F::max_pool2d, py::arg("x"), py::arg("kernel"), py::arg("stride"), py::arg("padding"),
        Release());
  f.def("avg_pool2d", &F::avg_pool2d, py::arg("x"), py::arg("kernel"), py::arg("stride"), py::arg("padding"),
        Release());
  f.def(
      "dropout", [](const Tensor& x, double p, bool training) { return F::dropout(x, p, training); },
      py::arg("x"), py::arg("p"), py::arg("training"), Release());
  f.def(
      "batch_norm",
      [](const Tensor& x, Tensor running_mean, Tensor running_var, py::handle weight, py::handle bias,
         bool training, double momentum, double epsilon) {
        const Tensor w = maybe_tensor(weight, "batch_norm", "weight"),
                     b = maybe_tensor(bias, "batch_norm", "bias");
        py::gil_scoped_release nogil;
        return F::batch_norm(x, running_mean, running_var, w, b, training, momentum, epsilon);
      },
      py::arg("x"), py::arg("running_mean"), py::arg("running_var"), py::arg("weight"), py::arg("bias"),
      py::arg("training"), py::arg("momentum"), py::arg("epsilon"));
  f.def("resample2d", &F::resample2d, py::arg("x"), py::arg("out"), py::arg("bilinear"), Release());
  f.def("local_response_norm", &F::local_response_norm, py::arg("x"), py::arg("size"), py::arg("alpha"),
        py::arg("beta"), py::arg("k"), Release());
  f.def("elu", &F::elu, py::arg("x"), py::arg("alpha") = 1.0, Release());
  f.def("selu", &F::selu, py::arg("x"), py::arg("scale"), py::arg("alpha"), Release());
  f.def("swish", &F::swish, py::arg("x"), Release());
  f.def("mish", &F::mish, py::arg("x"), Release());
  f.def("hardsigmoid", &F::hardsigmoid, py::arg("x"), py::arg("slope"), py::arg("offset"), Release());
  f.def("hardtanh", &F::hardtanh, py::arg("x"), py::arg("min"), py::arg("max"), Release());
  f.def("softsign", &F::softsign, py::arg("x"), Release());
  f.def("tanhshrink", &F::tanhshrink, py::arg("x"), Release());
}

}  // namespace crew::python

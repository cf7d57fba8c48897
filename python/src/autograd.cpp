// crew._C: autograd members of Tensor (backward, grad, stop_gradient), no_grad, operators
// and the differentiable math and shape functions of crew/autograd/ops.h. Every op runs
// in C++ without the GIL; Python pays one dispatch per op.
#include <pybind11/operators.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <vector>

#include "bindings.h"
#include "crew/autograd/autograd.h"
#include "crew/autograd/engine.h"
#include "crew/autograd/ops.h"
#include "crew/core/error.h"
#include "py_data.h"
#include "tensor_numpy.h"

namespace crew::python {

namespace {

using Release = py::call_guard<py::gil_scoped_release>;

// Paddle's axis arguments may be negative.
int64_t norm_axis(int64_t axis, int64_t dim, const char* op) {
  const int64_t a = axis < 0 ? axis + dim : axis;
  if (a < 0 || a >= dim) {
    throw py::value_error(std::string(op) + ": axis " + std::to_string(axis) + " is out of range for a " +
                          std::to_string(dim) + "-d tensor");
  }
  return a;
}

// axis: None (everything, to shape [1]), an int, or a list/tuple of ints (Paddle's forms).
Tensor reduce(const Tensor& x, py::object axis, bool keepdim, bool mean, const char* op) {
  constexpr const char* kAccepted = "an int, a list or tuple of ints, or None";
  if (axis.is_none()) {  // shape [1], as Paddle 2.4 (the seed's version) reduces to
    py::gil_scoped_release nogil;
    return reshape(mean ? crew::mean(x) : crew::sum(x), {1});
  }
  std::vector<int64_t> axes;
  if (PyList_Check(axis.ptr()) || PyTuple_Check(axis.ptr())) {
    for (int64_t a : cast_arg<std::vector<int64_t>>(axis, op, "axis", kAccepted)) axes.push_back(norm_axis(a, x.dim(), op));
  } else {
    axes.push_back(norm_axis(cast_arg<int64_t>(axis, op, "axis", kAccepted), x.dim(), op));
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) {
    throw py::value_error(std::string(op) + "(): argument 'axis' names an axis twice");
  }
  if (axes.empty()) return reduce(x, py::none(), keepdim, mean, op);
  py::gil_scoped_release nogil;
  Tensor out = x;
  // From the last axis back, so that the earlier axes keep their numbers without keepdim.
  for (auto it = axes.rbegin(); it != axes.rend(); ++it) {
    out = mean ? crew::mean(out, *it, keepdim) : crew::sum(out, *it, keepdim);
  }
  return out;
}

// Paddle's split: an int (equal pieces, crew::split) or a list of section sizes, at most one
// of them -1 (the rest of the axis).
std::vector<Tensor> split_sections(const Tensor& x, py::handle num_or_sections, int64_t axis) {
  const int64_t a = norm_axis(axis, x.dim(), "split");
  if (PyLong_Check(num_or_sections.ptr())) {
    const auto n = cast_arg<int64_t>(num_or_sections, "split", "num_or_sections", "an int or a list of ints");
    py::gil_scoped_release nogil;
    return split(x, n, a);
  }
  auto sizes = cast_arg<std::vector<int64_t>>(num_or_sections, "split", "num_or_sections", "an int or a list of ints");
  const int64_t extent = x.size(a);
  int64_t known = 0, rest = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1 && rest < 0) {
      rest = static_cast<int64_t>(i);
    } else if (sizes[i] < 0) {
      throw py::value_error("split: section sizes must be >= 0 with at most one -1");
    } else {
      known += sizes[i];
    }
  }
  if (rest >= 0) sizes[rest] = extent - known;
  if ((rest >= 0 && known > extent) || (rest < 0 && known != extent)) {
    throw py::value_error("split: sections sum to " + std::to_string(known) + " but axis " + std::to_string(a) +
                          " of shape " + shape_str(x.shape()) + " has " + std::to_string(extent));
  }
  py::gil_scoped_release nogil;
  std::vector<Tensor> out;
  int64_t begin = 0;
  for (int64_t s : sizes) {
    out.push_back(slice(x, a, begin, begin + s));
    begin += s;
  }
  return out;
}

// hook(grad) -> Tensor or None, called with the GIL from backward (Tensor.register_hook).
autograd::HookId register_py_grad_hook(const Tensor& t, py::function hook) {
  auto holder = std::shared_ptr<py::object>(new py::object(std::move(hook)), [](py::object* p) { release_py(p); });
  return autograd::register_grad_hook(t, [holder](const Tensor& grad) -> Tensor {
    py::gil_scoped_acquire gil;
    py::object out = (*holder)(grad);
    if (out.is_none()) return Tensor();
    return cast_arg<Tensor>(out, "register_hook", "the hook's result", "a Tensor or None");
  });
}

void bind_members(py::class_<Tensor>& cls) {
  cls.def_property("stop_gradient", &Tensor::stop_gradient,
                   [](Tensor& t, bool stop) { t.set_stop_gradient(stop); })
      .def_property_readonly("grad", [](const Tensor& t) -> py::object {
        Tensor g = t.grad();
        return g.defined() ? py::cast(g) : py::none();
      })
      .def_property_readonly("is_leaf", &Tensor::is_leaf)
      .def("backward", [](const Tensor& t, py::object grad, bool retain_graph) {
             if (grad.is_none()) {
               py::gil_scoped_release nogil;
               t.backward(retain_graph);
               return;
             }
             Tensor g = cast_arg<Tensor>(grad, "backward", "grad_tensor", "a Tensor or None");
             py::gil_scoped_release nogil;
             t.backward(g, retain_graph);
           }, py::arg("grad_tensor") = py::none(), py::arg("retain_graph") = false)
      .def("clear_grad", [](Tensor& t, bool set_to_zero) { t.clear_grad(set_to_zero); },
           py::arg("set_to_zero") = true)
      .def("clear_gradient", [](Tensor& t, bool set_to_zero) { t.clear_grad(set_to_zero); },
           py::arg("set_to_zero") = true)
      .def("detach", &Tensor::detach)
      .def("_register_grad_hook", &register_py_grad_hook, py::arg("hook"))
      .def("_remove_grad_hook", [](const Tensor& t, autograd::HookId id) { autograd::remove_grad_hook(t, id); },
           py::arg("id"));
}

void bind_operators(py::class_<Tensor>& cls) {
  cls.def("__add__", [](const Tensor& a, const Tensor& b) { return add(a, b); }, py::is_operator(), Release())
      .def("__add__", [](const Tensor& a, double b) { return add(a, b); }, py::is_operator(), Release())
      .def("__radd__", [](const Tensor& a, double b) { return add(a, b); }, py::is_operator(), Release())
      .def("__sub__", [](const Tensor& a, const Tensor& b) { return sub(a, b); }, py::is_operator(), Release())
      .def("__sub__", [](const Tensor& a, double b) { return add(a, -b); }, py::is_operator(), Release())
      .def("__rsub__", [](const Tensor& a, double b) { return add(neg(a), b); }, py::is_operator(), Release())
      .def("__mul__", [](const Tensor& a, const Tensor& b) { return mul(a, b); }, py::is_operator(), Release())
      .def("__mul__", [](const Tensor& a, double b) { return mul(a, b); }, py::is_operator(), Release())
      .def("__rmul__", [](const Tensor& a, double b) { return mul(a, b); }, py::is_operator(), Release())
      .def("__truediv__", [](const Tensor& a, const Tensor& b) { return div(a, b); }, py::is_operator(), Release())
      .def("__truediv__", [](const Tensor& a, double b) { return mul(a, 1.0 / b); }, py::is_operator(), Release())
      .def("__rtruediv__", [](const Tensor& a, double b) { return mul(pow(a, -1.0), b); }, py::is_operator(), Release())
      .def("__pow__", [](const Tensor& a, double e) { return pow(a, e); }, py::is_operator(), Release())
      .def("__neg__", [](const Tensor& a) { return neg(a); }, py::is_operator(), Release())
      .def("__matmul__", [](const Tensor& a, const Tensor& b) { return matmul(a, b); }, py::is_operator(), Release());
}

void bind_functions(py::module_& m) {
  m.def("add", [](const Tensor& a, const Tensor& b) { return add(a, b); }, Release());
  m.def("subtract", [](const Tensor& a, const Tensor& b) { return sub(a, b); }, Release());
  m.def("multiply", [](const Tensor& a, const Tensor& b) { return mul(a, b); }, Release());
  m.def("divide", [](const Tensor& a, const Tensor& b) { return div(a, b); }, Release());
  m.def("exp", [](const Tensor& x) { return crew::exp(x); }, Release());
  m.def("log", [](const Tensor& x) { return crew::log(x); }, Release());
  m.def("pow", [](const Tensor& x, double y) { return crew::pow(x, y); }, Release());
  m.def("matmul", [](const Tensor& x, const Tensor& y, bool tx, bool ty) { return matmul(x, y, tx, ty); },
        py::arg("x"), py::arg("y"), py::arg("transpose_x") = false, py::arg("transpose_y") = false, Release());
  m.def("sum", [](const Tensor& x, py::object axis, bool keepdim) { return reduce(x, axis, keepdim, false, "sum"); },
        py::arg("x"), py::arg("axis") = py::none(), py::arg("keepdim") = false);
  m.def("mean", [](const Tensor& x, py::object axis, bool keepdim) { return reduce(x, axis, keepdim, true, "mean"); },
        py::arg("x"), py::arg("axis") = py::none(), py::arg("keepdim") = false);
  m.def("argmax", [](const Tensor& x, int64_t axis) { return argmax(x, norm_axis(axis, x.dim(), "argmax")); },
        py::arg("x"), py::arg("axis") = -1);
  m.def("reshape", [](const Tensor& x, const Shape& shape) { return reshape(x, shape); }, py::arg("x"),
        py::arg("shape"), Release());
  m.def("unsqueeze", [](const Tensor& x, int64_t axis) { return unsqueeze(x, axis < 0 ? axis + x.dim() + 1 : axis); },
        py::arg("x"), py::arg("axis"));
  m.def("squeeze", [](const Tensor& x, int64_t axis) { return squeeze(x, norm_axis(axis, x.dim(), "squeeze")); },
        py::arg("x"), py::arg("axis"));
  m.def("flatten", [](const Tensor& x, int64_t start_axis) {
          const int64_t s = norm_axis(start_axis, x.dim(), "flatten");
          Shape shape(x.shape().begin(), x.shape().begin() + s);
          shape.push_back(-1);
          return reshape(x, shape);
        }, py::arg("x"), py::arg("start_axis") = 0);
  // Paddle's transpose takes a full permutation (crew::permute; a ValueError names a bad one).
  m.def("transpose", [](const Tensor& x, const std::vector<int64_t>& perm) { return permute(x, perm); },
        py::arg("x"), py::arg("perm"), Release());
  m.def("split", [](const Tensor& x, py::handle num_or_sections, int64_t axis) { return split_sections(x, num_or_sections, axis); },
        py::arg("x"), py::arg("num_or_sections"), py::arg("axis") = 0);
  // Paddle's slice(input, axes, starts, ends): one crew::slice per axis.
  m.def("slice", [](const Tensor& x, const std::vector<int64_t>& axes, const std::vector<int64_t>& starts,
                    const std::vector<int64_t>& ends) {
          if (axes.size() != starts.size() || axes.size() != ends.size()) {
            throw py::value_error("slice: axes, starts and ends have " + std::to_string(axes.size()) + ", " +
                                  std::to_string(starts.size()) + " and " + std::to_string(ends.size()) + " entries");
          }
          py::gil_scoped_release nogil;
          Tensor y = x;
          for (size_t i = 0; i < axes.size(); ++i) y = crew::slice(y, axes[i], starts[i], ends[i]);
          return y;
        }, py::arg("input"), py::arg("axes"), py::arg("starts"), py::arg("ends"));
  m.def("concat", [](const std::vector<Tensor>& xs, int64_t axis) {
          if (xs.empty()) throw py::value_error("concat: the list of tensors is empty");
          return concat(xs, norm_axis(axis, xs[0].dim(), "concat"));
        }, py::arg("x"), py::arg("axis") = 0);
  m.def("stack", [](const std::vector<Tensor>& xs, int64_t axis) {
          if (xs.empty()) throw py::value_error("stack: the list of tensors is empty");
          const int64_t a = axis < 0 ? axis + xs[0].dim() + 1 : axis;
          std::vector<Tensor> parts;
          for (const auto& x : xs) parts.push_back(unsqueeze(x, a));
          return concat(parts, a);
        }, py::arg("x"), py::arg("axis") = 0);
}

}  // namespace

void bind_autograd(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  bind_members(cls);
  bind_operators(cls);
  bind_functions(m);
  m.def("is_grad_enabled", &is_grad_enabled);
  m.def("set_grad_enabled", &set_grad_enabled);
  // crew.grad (python/crew/autograd_grad.py) checks the arguments; None where no gradient arrives.
  m.def(
      "_partial_grad",
      [](const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs,
         const std::vector<Tensor>& inputs, const std::vector<Tensor>& blocked, bool retain_graph) {
        std::vector<Tensor> grads;
        {
          py::gil_scoped_release nogil;
          grads = autograd::partial_grad(outputs, grad_outputs, inputs, blocked, retain_graph);
        }
        py::list out;
        for (const Tensor& g : grads) out.append(g.defined() ? py::cast(g) : py::none());
        return out;
      },
      py::arg("outputs"), py::arg("grad_outputs"), py::arg("inputs"), py::arg("blocked"),
      py::arg("retain_graph"));
}

}  // namespace crew::python

// crew._C: autograd members of Tensor (backward, grad, stop_gradient), no_grad, operators
// and the differentiable math and shape functions of crew/autograd/ops.h. Every op runs
// in C++ without the GIL; Python pays one dispatch per op.
#include <pybind11/operators.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "crew/autograd/autograd.h"
#include "crew/autograd/ops.h"
#include "crew/core/error.h"
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

Tensor reduce(const Tensor& x, py::object axis, bool keepdim, bool mean, const char* op) {
  if (axis.is_none()) {  // shape [1], as Paddle 2.4 (the seed's version) reduces to
    py::gil_scoped_release nogil;
    return reshape(mean ? crew::mean(x) : crew::sum(x), {1});
  }
  const int64_t a = norm_axis(axis.cast<int64_t>(), x.dim(), op);
  py::gil_scoped_release nogil;
  return mean ? crew::mean(x, a, keepdim) : crew::sum(x, a, keepdim);
}

// x[i] and x[a:b] on axis 0: views of the rows (no copy). Recorded in no graph, so a tensor
// that requires grad must go through a differentiable op instead.
Tensor index_first_axis(const Tensor& t, py::handle key) {
  if (t.dim() == 0) throw py::index_error("a 0-d tensor cannot be indexed");
  if (t.requires_grad() && is_grad_enabled()) {
    throw py::type_error("indexing records no gradient: index t.detach() or use crew.no_grad() "
                         "(shape " + shape_str(t.shape()) + ")");
  }
  const int64_t n = t.size(0);
  if (PyIndex_Check(key.ptr())) {
    int64_t i = key.cast<int64_t>();
    if (i < -n || i >= n) {
      throw py::index_error("index " + std::to_string(i) + " is out of range for axis 0 of size " +
                            std::to_string(n));
    }
    return t.select(i < 0 ? i + n : i);
  }
  if (PySlice_Check(key.ptr())) {
    Py_ssize_t start, stop, step, len;
    if (PySlice_GetIndicesEx(key.ptr(), n, &start, &stop, &step, &len) != 0) throw py::error_already_set();
    if (step != 1) throw py::index_error("only slices with step 1 are supported on axis 0");
    return t.slice(start, std::max(start, stop));
  }
  throw py::type_error("crew tensors are indexed on axis 0 by an int or a slice");
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
               t.backward();
               return;
             }
             Tensor g = grad.cast<Tensor>();
             py::gil_scoped_release nogil;
             t.backward(g, retain_graph);
           }, py::arg("grad_tensor") = py::none(), py::arg("retain_graph") = false)
      .def("clear_grad", [](Tensor& t, bool set_to_zero) { t.clear_grad(set_to_zero); },
           py::arg("set_to_zero") = true)
      .def("clear_gradient", [](Tensor& t, bool set_to_zero) { t.clear_grad(set_to_zero); },
           py::arg("set_to_zero") = true)
      .def("detach", &Tensor::detach)
      .def("__getitem__", &index_first_axis);
}

void bind_operators(py::class_<Tensor>& cls) {
  cls.def("__add__", [](const Tensor& a, const Tensor& b) { return add(a, b); }, Release())
      .def("__add__", [](const Tensor& a, double b) { return add(a, b); }, Release())
      .def("__radd__", [](const Tensor& a, double b) { return add(a, b); }, Release())
      .def("__sub__", [](const Tensor& a, const Tensor& b) { return sub(a, b); }, Release())
      .def("__sub__", [](const Tensor& a, double b) { return add(a, -b); }, Release())
      .def("__rsub__", [](const Tensor& a, double b) { return add(neg(a), b); }, Release())
      .def("__mul__", [](const Tensor& a, const Tensor& b) { return mul(a, b); }, Release())
      .def("__mul__", [](const Tensor& a, double b) { return mul(a, b); }, Release())
      .def("__rmul__", [](const Tensor& a, double b) { return mul(a, b); }, Release())
      .def("__truediv__", [](const Tensor& a, const Tensor& b) { return div(a, b); }, Release())
      .def("__truediv__", [](const Tensor& a, double b) { return mul(a, 1.0 / b); }, Release())
      .def("__rtruediv__", [](const Tensor& a, double b) { return mul(pow(a, -1.0), b); }, Release())
      .def("__pow__", [](const Tensor& a, double e) { return pow(a, e); }, Release())
      .def("__neg__", [](const Tensor& a) { return neg(a); }, Release())
      .def("__matmul__", [](const Tensor& a, const Tensor& b) { return matmul(a, b); }, Release());
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
  m.def("transpose", [](const Tensor& x, const std::vector<int64_t>& perm) {
          if (x.dim() != 2 || perm != std::vector<int64_t>{1, 0}) {
            throw py::value_error("transpose: crew transposes 2-d tensors (perm [1, 0]); got shape " +
                                  shape_str(x.shape()) + " with perm of " + std::to_string(perm.size()) + " axes");
          }
          return transpose2d(x);
        }, py::arg("x"), py::arg("perm"));
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
}

}  // namespace crew::python

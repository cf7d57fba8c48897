// crew._C: the tensor math of crew/autograd/ops_math.h and indexing.h (issue 30): pointwise
// functions, selection, ordering, reductions, bool masks, creation helpers, x[key] and
// x[key] = v. python/crew/tensor_math.py maps Paddle's arguments onto these.
#include <pybind11/stl.h>

#include <cmath>

#include "bindings.h"
#include "crew/autograd/autograd.h"
#include "crew/autograd/indexing.h"
#include "crew/autograd/ops.h"
#include "crew/autograd/ops_math.h"
#include "crew/core/error.h"
#include "crew/tensor/random.h"
#include "tensor_numpy.h"

namespace crew::python {

namespace {

using Release = py::call_guard<py::gil_scoped_release>;
using Axes = std::vector<int64_t>;

// A list, an ndarray or a scalar as a tensor (bool lists stay bool, ints int64).
Tensor as_tensor(py::handle v) {
  if (py::isinstance<Tensor>(v)) return v.cast<Tensor>();
  py::array a = py::module_::import("numpy").attr("asarray")(v);
  return tensor_from_numpy(a, std::nullopt);
}

// An int index as int64; one beyond 64 bits is out of range of axis `axis` of t (the axis
// the item lands on, -1 when an Ellipsis before it leaves that open).
int64_t index_value(py::handle k, const Tensor& t, int64_t axis) {
  py::object as_int = py::reinterpret_steal<py::object>(PyNumber_Index(k.ptr()));
  if (!as_int) throw py::error_already_set();
  int overflow = 0;
  const long long i = PyLong_AsLongLongAndOverflow(as_int.ptr(), &overflow);
  if (overflow == 0) return i;
  std::string where = axis >= 0 && axis < t.dim()
                          ? " for axis " + std::to_string(axis) + " of size " + std::to_string(t.size(axis))
                          : "";
  throw py::index_error("index " + std::string(py::str(as_int)) + " is out of range" + where);
}

TensorIndex parse_item(py::handle k, const Tensor& t, int64_t axis) {
  if (k.is_none()) return TensorIndex::none();
  if (k.is(py::ellipsis())) return TensorIndex::ellipsis();
  if (py::isinstance<Tensor>(k)) return TensorIndex::tensor_index(k.cast<Tensor>());
  if (PyBool_Check(k.ptr()))
    throw py::index_error("crew tensors are not indexed by True/False; use a bool tensor");
  if (PyIndex_Check(k.ptr())) return TensorIndex::integer(index_value(k, t, axis));
  if (PySlice_Check(k.ptr())) {
    auto part = [&](const char* name) -> std::optional<int64_t> {
      py::object v = k.attr(name);
      if (v.is_none()) return std::nullopt;
      return cast_arg<int64_t>(v, "__getitem__", name, "an int or None");
    };
    const std::optional<int64_t> step = part("step");
    if (step && *step == 0) throw py::value_error("slice step cannot be zero");
    return TensorIndex::slice(part("start"), part("stop"), step.value_or(1));
  }
  if (PyList_Check(k.ptr()) || py::isinstance<py::array>(k)) return TensorIndex::tensor_index(as_tensor(k));
  throw py::type_error(
      std::string("crew tensors are indexed by ints, slices, None, ..., lists and int or bool "
                  "tensors, got ") +
      py::type::of(k).attr("__name__").cast<std::string>());
}

std::vector<TensorIndex> parse_key(py::handle key, const Tensor& t) {
  std::vector<py::handle> keys;
  if (PyTuple_Check(key.ptr())) {
    for (py::handle k : py::reinterpret_borrow<py::tuple>(key)) keys.push_back(k);
  } else {
    keys.push_back(key);
  }
  std::vector<TensorIndex> items;
  int64_t axis = 0;  // where the next item lands; -1 after an Ellipsis
  for (py::handle k : keys) {
    items.push_back(parse_item(k, t, axis));
    const TensorIndex& item = items.back();
    if (item.kind == TensorIndex::Kind::ELLIPSIS) axis = -1;
    if (axis < 0 || item.kind == TensorIndex::Kind::NONE) continue;
    axis +=
        item.kind == TensorIndex::Kind::TENSOR && item.tensor.dtype() == DType::BOOL ? item.tensor.dim() : 1;
  }
  return items;
}

// x[key]. One int or step-1 slice on a tensor that records no gradient is a view of axis 0
// (no copy, as before); everything else goes through crew::index.
Tensor getitem(const Tensor& t, py::handle key) {
  if (t.dim() == 0) throw py::index_error("a 0-d tensor cannot be indexed");
  std::vector<TensorIndex> items = parse_key(key, t);
  const bool plain = !PyTuple_Check(key.ptr()) && !(t.requires_grad() && is_grad_enabled());
  if (plain && items[0].kind == TensorIndex::Kind::INT) {
    const int64_t n = t.size(0), i = items[0].index;
    if (i < -n || i >= n) {
      throw py::index_error("index " + std::to_string(i) + " is out of range for axis 0 of size " +
                            std::to_string(n));
    }
    return t.select(i < 0 ? i + n : i);
  }
  if (plain && items[0].kind == TensorIndex::Kind::SLICE && items[0].step == 1) {
    Py_ssize_t start, stop, step, len;
    if (PySlice_GetIndicesEx(key.ptr(), t.size(0), &start, &stop, &step, &len) != 0)
      throw py::error_already_set();
    return t.slice(start, std::max<int64_t>(start, stop));
  }
  py::gil_scoped_release nogil;
  return index(t, items);
}

// Paddle refuses in-place writes into a tensor that takes part in a graph.
void check_inplace(const Tensor& t, const char* op) {
  if (t.requires_grad() && is_grad_enabled()) {
    throw py::value_error(
        std::string(op) +
        ": in-place writes into a tensor that requires a gradient "
        "(stop_gradient=False) are not recorded; use the out-of-place op or crew.no_grad()");
  }
}

void setitem(const Tensor& t, py::handle key, py::handle value) {
  check_inplace(t, "__setitem__");
  std::vector<TensorIndex> items = parse_key(key, t);
  Tensor v =
      PyFloat_Check(value.ptr()) ? Tensor::scalar(value.cast<double>(), DType::FLOAT64) : as_tensor(value);
  py::gil_scoped_release nogil;
  index_put_(t, items, v);
}

// x.copy_(y) with y broadcast to x's shape and converted to its dtype (the in-place methods).
Tensor assign(Tensor& x, const Tensor& y, const char* op) {
  check_inplace(x, op);
  py::gil_scoped_release nogil;
  Tensor v = y.dtype() == x.dtype() ? y : y.to(x.dtype());
  if (v.shape() != x.shape())
    v = v.numel() == x.numel() && v.dim() == 0 ? v.view(x.shape()) : crew::expand(v, x.shape());
  x.copy_(v);
  return x;
}

void bind_pointwise(py::module_& m) {
  m.def(
      "abs", [](const Tensor& x) { return crew::abs(x); }, py::arg("x"), Release());
  m.def(
      "sqrt", [](const Tensor& x) { return crew::sqrt(x); }, py::arg("x"), Release());
  m.def(
      "rsqrt", [](const Tensor& x) { return crew::rsqrt(x); }, py::arg("x"), Release());
  m.def(
      "square", [](const Tensor& x) { return crew::square(x); }, py::arg("x"), Release());
  m.def(
      "sin", [](const Tensor& x) { return crew::sin(x); }, py::arg("x"), Release());
  m.def(
      "cos", [](const Tensor& x) { return crew::cos(x); }, py::arg("x"), Release());
  m.def(
      "tanh", [](const Tensor& x) { return crew::tanh(x); }, py::arg("x"), Release());
  m.def(
      "sigmoid", [](const Tensor& x) { return crew::sigmoid(x); }, py::arg("x"), Release());
  m.def(
      "erf", [](const Tensor& x) { return crew::erf(x); }, py::arg("x"), Release());
  m.def(
      "sign", [](const Tensor& x) { return crew::sign(x); }, py::arg("x"), Release());
  m.def(
      "floor", [](const Tensor& x) { return crew::floor(x); }, py::arg("x"), Release());
  m.def(
      "ceil", [](const Tensor& x) { return crew::ceil(x); }, py::arg("x"), Release());
  m.def(
      "round", [](const Tensor& x) { return crew::round(x); }, py::arg("x"), Release());
  m.def(
      "tan", [](const Tensor& x) { return crew::tan(x); }, py::arg("x"), Release());
  m.def(
      "log2", [](const Tensor& x) { return crew::log2(x); }, py::arg("x"), Release());
  m.def(
      "log10", [](const Tensor& x) { return crew::log10(x); }, py::arg("x"), Release());
  m.def(
      "log1p", [](const Tensor& x) { return crew::log1p(x); }, py::arg("x"), Release());
  m.def(
      "expm1", [](const Tensor& x) { return crew::expm1(x); }, py::arg("x"), Release());
  m.def(
      "trunc", [](const Tensor& x) { return crew::trunc(x); }, py::arg("x"), Release());
  m.def(
      "asin", [](const Tensor& x) { return crew::asin(x); }, py::arg("x"), Release());
  m.def(
      "acos", [](const Tensor& x) { return crew::acos(x); }, py::arg("x"), Release());
  m.def(
      "atan", [](const Tensor& x) { return crew::atan(x); }, py::arg("x"), Release());
  m.def(
      "sinh", [](const Tensor& x) { return crew::sinh(x); }, py::arg("x"), Release());
  m.def(
      "cosh", [](const Tensor& x) { return crew::cosh(x); }, py::arg("x"), Release());
  m.def(
      "asinh", [](const Tensor& x) { return crew::asinh(x); }, py::arg("x"), Release());
  m.def(
      "acosh", [](const Tensor& x) { return crew::acosh(x); }, py::arg("x"), Release());
  m.def(
      "atanh", [](const Tensor& x) { return crew::atanh(x); }, py::arg("x"), Release());
  m.def(
      "clip", [](const Tensor& x, double lo, double hi) { return crew::clip(x, lo, hi); }, py::arg("x"),
      py::arg("min"), py::arg("max"), Release());
}

void bind_selection(py::module_& m) {
  m.def(
      "expand", [](const Tensor& x, const Shape& shape) { return crew::expand(x, shape); }, py::arg("x"),
      py::arg("shape"), Release());
  m.def(
      "tile", [](const Tensor& x, const Axes& r) { return crew::tile(x, r); }, py::arg("x"),
      py::arg("repeat_times"), Release());
  m.def(
      "where", [](const Tensor& c, const Tensor& x, const Tensor& y) { return crew::where(c, x, y); },
      py::arg("condition"), py::arg("x"), py::arg("y"), Release());
  m.def(
      "index_select", [](const Tensor& x, const Tensor& i, int64_t a) { return crew::index_select(x, i, a); },
      py::arg("x"), py::arg("index"), py::arg("axis") = 0, Release());
  m.def(
      "take_along_axis",
      [](const Tensor& x, const Tensor& i, int64_t a) { return crew::take_along_axis(x, i, a); },
      py::arg("arr"), py::arg("indices"), py::arg("axis"), Release());
  m.def(
      "gather_nd", [](const Tensor& x, const Tensor& i) { return crew::gather_nd(x, i); }, py::arg("x"),
      py::arg("index"), Release());
  m.def(
      "masked_select", [](const Tensor& x, const Tensor& mask) { return crew::masked_select(x, mask); },
      py::arg("x"), py::arg("mask"), Release());
  m.def(
      "scatter",
      [](const Tensor& x, const Tensor& i, const Tensor& u, bool overwrite) {
        return crew::scatter(x, i, u, overwrite);
      },
      py::arg("x"), py::arg("index"), py::arg("updates"), py::arg("overwrite") = true, Release());
  m.def(
      "flip", [](const Tensor& x, const Axes& axes) { return crew::flip(x, axes); }, py::arg("x"),
      py::arg("axis"), Release());
  m.def(
      "roll",
      [](const Tensor& x, const Axes& shifts, const Axes& axes) { return crew::roll(x, shifts, axes); },
      py::arg("x"), py::arg("shifts"), py::arg("axis"), Release());
  m.def(
      "unbind", [](const Tensor& x, int64_t axis) { return crew::unbind(x, axis); }, py::arg("input"),
      py::arg("axis") = 0, Release());
  m.def(
      "topk",
      [](const Tensor& x, int64_t k, int64_t axis, bool largest) {
        auto r = crew::topk(x, k, axis, largest);
        return std::make_pair(r.values, r.indices);
      },
      py::arg("x"), py::arg("k"), py::arg("axis") = -1, py::arg("largest") = true, Release());
  m.def(
      "sort",
      [](const Tensor& x, int64_t axis, bool descending) {
        auto r = crew::sort(x, axis, descending);
        return std::make_pair(r.values, r.indices);
      },
      py::arg("x"), py::arg("axis") = -1, py::arg("descending") = false, Release());
}

void bind_reductions(py::module_& m) {
  m.def(
      "cumsum", [](const Tensor& x, int64_t axis) { return crew::cumsum(x, axis); }, py::arg("x"),
      py::arg("axis"), Release());
  m.def(
      "cumprod", [](const Tensor& x, int64_t axis) { return crew::cumprod(x, axis); }, py::arg("x"),
      py::arg("dim"), Release());
  m.def(
      "prod", [](const Tensor& x, const Axes& axes, bool keepdim) { return crew::prod(x, axes, keepdim); },
      py::arg("x"), py::arg("axis"), py::arg("keepdim") = false, Release());
  m.def(
      "amax", [](const Tensor& x, const Axes& axes, bool keepdim) { return crew::amax(x, axes, keepdim); },
      py::arg("x"), py::arg("axis"), py::arg("keepdim") = false, Release());
  m.def(
      "amin", [](const Tensor& x, const Axes& axes, bool keepdim) { return crew::amin(x, axes, keepdim); },
      py::arg("x"), py::arg("axis"), py::arg("keepdim") = false, Release());
  m.def(
      "var",
      [](const Tensor& x, const Axes& axes, bool unbiased, bool keepdim) {
        return crew::var(x, axes, unbiased, keepdim);
      },
      py::arg("x"), py::arg("axis"), py::arg("unbiased") = true, py::arg("keepdim") = false, Release());
  m.def(
      "std",
      [](const Tensor& x, const Axes& axes, bool unbiased, bool keepdim) {
        return crew::stddev(x, axes, unbiased, keepdim);
      },
      py::arg("x"), py::arg("axis"), py::arg("unbiased") = true, py::arg("keepdim") = false, Release());
  m.def(
      "norm",
      [](const Tensor& x, double p, const Axes& axes, bool keepdim) {
        return crew::norm(x, p, axes, keepdim);
      },
      py::arg("x"), py::arg("p"), py::arg("axis"), py::arg("keepdim") = false, Release());
}

void bind_masks(py::module_& m) {
  using Binary = Tensor (*)(const Tensor&, const Tensor&);
  const std::pair<const char*, Binary> binary[] = {{"equal", &crew::equal},
                                                   {"not_equal", &crew::not_equal},
                                                   {"less_than", &crew::less_than},
                                                   {"less_equal", &crew::less_equal},
                                                   {"greater_than", &crew::greater_than},
                                                   {"greater_equal", &crew::greater_equal},
                                                   {"logical_and", &crew::logical_and},
                                                   {"logical_or", &crew::logical_or},
                                                   {"logical_xor", &crew::logical_xor}};
  for (const auto& [name, fn] : binary) m.def(name, fn, py::arg("x"), py::arg("y"), Release());
  using Unary = Tensor (*)(const Tensor&);
  const std::pair<const char*, Unary> unary[] = {{"logical_not", &crew::logical_not},
                                                 {"isnan", &crew::isnan},
                                                 {"isinf", &crew::isinf},
                                                 {"isfinite", &crew::isfinite}};
  for (const auto& [name, fn] : unary) m.def(name, fn, py::arg("x"), Release());
  m.def("isclose", &crew::isclose, py::arg("x"), py::arg("y"), py::arg("rtol") = 1e-5, py::arg("atol") = 1e-8,
        py::arg("equal_nan") = false, Release());
  m.def("_allclose", &crew::allclose, py::arg("x"), py::arg("y"), py::arg("rtol") = 1e-5,
        py::arg("atol") = 1e-8, py::arg("equal_nan") = false, Release());
  m.def("_equal_all", &crew::equal_all, py::arg("x"), py::arg("y"), Release());
  m.def("_all", &crew::all, py::arg("x"), Release());
  m.def("_any", &crew::any, py::arg("x"), Release());
}

void bind_creation(py::module_& m) {
  m.def(
      "full",
      [](const Shape& shape, double value, py::object dtype) {
        return Tensor::full(shape, value, dtype_from_py(dtype), place_from_py(py::none()));
      },
      py::arg("shape"), py::arg("fill_value"), py::arg("dtype"));
  m.def(
      "uniform",
      [](const Shape& shape, double low, double high, py::object dtype) {
        const DType d = dtype_from_py(dtype);
        py::gil_scoped_release nogil;
        return crew::uniform(shape, low, high, d).to(place_from_py(py::none()));
      },
      py::arg("shape"), py::arg("min"), py::arg("max"), py::arg("dtype"));
  m.def(
      "normal",
      [](const Shape& shape, double mean, double std, py::object dtype) {
        const DType d = dtype_from_py(dtype);
        py::gil_scoped_release nogil;
        return crew::normal(shape, mean, std, d).to(place_from_py(py::none()));
      },
      py::arg("shape"), py::arg("mean"), py::arg("std"), py::arg("dtype"));
  // start + step * [0, n) computed in float64, converted to dtype (arange, linspace).
  m.def(
      "_ramp",
      [](double start, double step, int64_t n, py::object dtype) {
        const DType d = dtype_from_py(dtype);
        py::gil_scoped_release nogil;
        Tensor t = add(mul(Tensor::arange(n, DType::FLOAT64), step), start);
        return t.to(d).to(place_from_py(py::none()));
      },
      py::arg("start"), py::arg("step"), py::arg("n"), py::arg("dtype"));
}

}  // namespace

void bind_tensor_math(py::module_& m) {
  bind_pointwise(m);
  bind_selection(m);
  bind_reductions(m);
  bind_masks(m);
  bind_creation(m);
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  cls.def("__getitem__", &getitem)
      .def("__setitem__", &setitem)
      .def(
          "_assign_", [](Tensor& x, const Tensor& y, const char* op) { return assign(x, y, op); },
          py::arg("y"), py::arg("op") = "set_value");
}

}  // namespace crew::python

// crew.Tensor and crew.to_tensor: the tensor type every other part returns. Autograd
// members, operators and math functions are bound in autograd.cpp.
#include <pybind11/stl.h>

#include <sstream>

#include "bindings.h"
#include "crew/autograd/ops_cast.h"
#include "crew/core/error.h"
#include "crew/tensor/random.h"
#include "tensor_numpy.h"

namespace crew::python {

namespace {

// Paddle's to_tensor: Python floats become float32 (the default dtype), ints int64, bools
// bool; NumPy arrays keep their dtype; a Tensor is copied.
Tensor to_tensor(py::handle data, py::object dtype, py::object place, bool stop_gradient) {
  const Place target = place_from_py(place);
  std::optional<DType> want;
  if (!dtype.is_none()) want = dtype_from_py(dtype);
  Tensor t;
  if (py::isinstance<Tensor>(data)) {
    const Tensor& src = data.cast<const Tensor&>();
    t = want ? src.to(*want) : src.clone();
  } else if (py::isinstance<py::array>(data)) {
    t = tensor_from_numpy(py::reinterpret_borrow<py::array>(data), want);
  } else {
    py::module_ np = py::module_::import("numpy");
    py::array array = np.attr("asarray")(data);
    if (!want && array.dtype().kind() == 'f') want = DType::FLOAT32;
    t = tensor_from_numpy(array, want);
  }
  if (t.place() != target) t = t.to(target);
  t.set_stop_gradient(stop_gradient);
  return t;
}

}  // namespace

void bind_tensor(py::module_& m) {
  m.def("cast", [](const Tensor& x, py::object dtype) { return cast(x, dtype_from_py(dtype)); },
        py::arg("x"), py::arg("dtype"), "paddle.cast: x converted to dtype, differentiable between float dtypes");
  py::enum_<DType>(m, "dtype")
      .value("float32", DType::FLOAT32)
      .value("float64", DType::FLOAT64)
      .value("int32", DType::INT32)
      .value("int64", DType::INT64)
      .value("uint8", DType::UINT8)
      .value("bfloat16", DType::BFLOAT16)
      .value("float16", DType::FLOAT16)
      .value("bool", DType::BOOL)
      .def("__repr__", [](DType d) { return std::string("crew.") + dtype_name(d); })
      .def("__str__", [](DType d) { return std::string("crew.") + dtype_name(d); });

  // dynamic_attr: Paddle's per-parameter attributes (name, optimize_attr, regularizer,
  // trainable) live on the wrapper that a Layer keeps (python/crew/param_attr.py).
  py::class_<Tensor>(m, "Tensor", py::dynamic_attr())
      .def_property_readonly("shape", [](const Tensor& t) { return std::vector<int64_t>(t.shape()); })
      .def_property_readonly("dtype", &Tensor::dtype)
      .def_property_readonly("place", &Tensor::place)
      .def("cpu", &Tensor::cpu, "A copy in host memory, or this tensor when it is there already")
      .def("cuda", [](const Tensor& t, py::object device_id) {
             return t.to(CUDAPlace(device_id.is_none() ? 0 : device_id.cast<int>()));
           }, py::arg("device_id") = py::none())
      .def_property_readonly("ndim", &Tensor::dim)
      .def_property_readonly("size", &Tensor::numel)
      .def("dim", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def("numpy", &tensor_to_numpy, "A NumPy array sharing this tensor's memory")
      .def("__array__", [](const Tensor& t, py::object dtype) {
             py::array a = tensor_to_numpy(t);
             return dtype.is_none() ? a : a.attr("astype")(dtype).cast<py::array>();
           }, py::arg("dtype") = py::none())
      .def("item", [](const Tensor& t) -> py::object {
             if (t.numel() != 1) {
               throw py::value_error("item(): the tensor has " + std::to_string(t.numel()) +
                                     " elements (shape " + shape_str(t.shape()) + "), not 1");
             }
             if (is_floating(t.dtype())) return py::float_(t.item());
             if (t.dtype() == DType::BOOL) return py::bool_(t.item() != 0);
             return py::int_(static_cast<int64_t>(t.item()));
           })
      .def("__len__", [](const Tensor& t) {
             if (t.dim() == 0) throw py::type_error("len() of a 0-d tensor");
             return t.size(0);
           })
      .def("clone", &Tensor::clone)
      // Differentiable between floating dtypes (crew::cast); the same dtype gives a copy.
      .def("astype", [](const Tensor& t, py::object dtype) {
             const DType d = dtype_from_py(dtype);
             return d == t.dtype() ? t.to(d) : cast(t, d);
           })
      .def("__repr__", [](const Tensor& t) { return t.defined() ? t.to_string() : std::string("Tensor(undefined)"); });

  m.def("to_tensor", &to_tensor, py::arg("data"), py::arg("dtype") = py::none(),
        py::arg("place") = py::none(), py::arg("stop_gradient") = true,
        "A new tensor from a NumPy array, a (nested) list, a scalar or a Tensor (copied).");
  // Paddle's seed: reseeds the default generator (initialisers, dropout, shuffles, sampling).
  m.def("seed", [](uint64_t seed) { default_generator().manual_seed(seed); }, py::arg("seed"));
}

}  // namespace crew::python

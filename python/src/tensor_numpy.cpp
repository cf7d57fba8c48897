#include "tensor_numpy.h"

#include <cstring>
#include <memory>
#include <string>

#include "crew/core/error.h"

namespace crew::python {

namespace {

std::optional<DType> dtype_from_numpy(const py::dtype& dt) {
  switch (dt.kind()) {
    case 'f':
      if (dt.itemsize() == 4) return DType::FLOAT32;
      if (dt.itemsize() == 8) return DType::FLOAT64;
      if (dt.itemsize() == 2) return DType::FLOAT16;
      return std::nullopt;
    case 'i':
      if (dt.itemsize() == 4) return DType::INT32;
      if (dt.itemsize() == 8) return DType::INT64;
      return std::nullopt;
    case 'u':
      if (dt.itemsize() == 1) return DType::UINT8;
      return std::nullopt;
    case 'b':
      return DType::BOOL;
    default:
      return std::nullopt;
  }
}

std::string numpy_dtype_name(const py::dtype& dt) { return dt.attr("name").cast<std::string>(); }

}  // namespace

DType dtype_from_py(py::handle dtype) {
  if (py::isinstance<DType>(dtype)) return dtype.cast<DType>();
  if (py::isinstance<py::str>(dtype)) {
    std::string name = dtype.cast<std::string>();
    if (name.rfind("crew.", 0) == 0) name = name.substr(5);
    if (name.rfind("paddle.", 0) == 0) name = name.substr(7);
    if (name == "float") return DType::FLOAT32;
    if (name == "int") return DType::INT64;
        return parse_dtype(name);
  }
  try {
    py::dtype dt = py::dtype::from_args(py::reinterpret_borrow<py::object>(dtype));
    if (auto d = dtype_from_numpy(dt)) return *d;
    throw py::type_error("crew has no dtype for NumPy's " + numpy_dtype_name(dt) +
                         " (supported: float16, float32, float64, int32, int64, uint8, bool)");
  } catch (const py::error_already_set&) {
    throw py::type_error("dtype must be a crew dtype, a name such as 'float32' or a NumPy dtype, got " +
                         py::repr(dtype).cast<std::string>());
  }
}

py::dtype numpy_dtype(DType dtype) {
  switch (dtype) {
    case DType::FLOAT32: return py::dtype::of<float>();
    case DType::FLOAT64: return py::dtype::of<double>();
    case DType::INT32: return py::dtype::of<int32_t>();
    case DType::INT64: return py::dtype::of<int64_t>();
    case DType::UINT8: return py::dtype::of<uint8_t>();
    case DType::BOOL: return py::dtype::of<bool>();
    case DType::FLOAT16: return py::dtype("float16");
    case DType::BFLOAT16: break;  // NumPy has none: tensor_to_numpy gives float32
  }
  return py::dtype::of<float>();
}

Tensor tensor_from_numpy(const py::array& array, std::optional<DType> dtype) {
  std::optional<DType> source = dtype_from_numpy(array.dtype());
  if (!source) {
    throw py::type_error("to_tensor: crew has no dtype for NumPy's " + numpy_dtype_name(array.dtype()) +
                         " (supported: float16, float32, float64, int32, int64, uint8, bool)");
  }
  Shape shape(array.shape(), array.shape() + array.ndim());
  // A C-contiguous array of the source dtype: one memcpy; NumPy does any strided copy.
  auto contiguous = py::array::ensure(array, py::array::c_style | py::array::forcecast);
  if (!contiguous) throw py::error_already_set();
  Tensor t = Tensor::uninitialized(shape, *source);
  if (t.nbytes() > 0) std::memcpy(t.raw_data(), contiguous.data(), t.nbytes());
  if (dtype && *dtype != *source) return t.to(*dtype);
  return t;
}

py::array tensor_to_numpy(const Tensor& t) {
  if (!t.defined()) throw py::value_error("numpy(): the tensor is undefined");
  if (!t.place().host_accessible()) return tensor_to_numpy(t.cpu());  // a copy, as Paddle's
  // NumPy has no bfloat16: a float32 copy, exact (every bfloat16 is a float32). Paddle gives
  // the raw bits as uint16 instead; .astype('float32') first reads the same in both.
  if (t.dtype() == DType::BFLOAT16) return tensor_to_numpy(t.to(DType::FLOAT32));
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t stride = static_cast<py::ssize_t>(dtype_size(t.dtype()));
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  // The capsule owns a reference to the tensor's storage for as long as NumPy's array lives.
  auto* keep = new std::shared_ptr<Storage>(t.impl()->storage);
  py::capsule base(keep, [](void* p) { delete static_cast<std::shared_ptr<Storage>*>(p); });
  py::array array(numpy_dtype(t.dtype()), shape, strides, t.raw_data(), base);
  // Writes into memory a live graph saved for backward would go unseen by the version check
  // (crew/autograd/saved_version.h) and give a wrong gradient: such arrays are read-only.
  if (t.impl()->storage->saved_for_backward() > 0) array.attr("flags").attr("writeable") = false;
  return array;
}

}  // namespace crew::python

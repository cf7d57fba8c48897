#include "py_data.h"

#include <pybind11/numpy.h>

#include <string>

#include "crew/core/check.h"
#include "crew/core/error.h"
#include "tensor_numpy.h"

namespace crew::python {

namespace {

std::string type_name(py::handle obj) { return py::str(py::type::of(obj).attr("__name__")); }

// A Python error raised by user code, as the crew error a worker reports (with the GIL held,
// so the Python exception object is released here).
[[noreturn]] void rethrow_as_crew(py::error_already_set& e, const std::string& where) {
  const std::string msg = where + ": " + e.what();
  if (e.matches(PyExc_IndexError)) throw IndexError(msg);
  if (e.matches(PyExc_ValueError) || e.matches(PyExc_TypeError)) throw ValueError(msg);
  throw Error(msg);
}

}  // namespace

void release_py(py::object* obj) {
  if (obj == nullptr) return;
  if (!Py_IsInitialized()) {
    obj->release();  // the interpreter is gone: nothing to decrement
    delete obj;
    return;
  }
  py::gil_scoped_acquire gil;
  delete obj;
}

Tensor field_from_py(py::handle obj, const char* what) {
  if (py::isinstance<Tensor>(obj)) return obj.cast<Tensor>();
  if (py::isinstance<py::array>(obj)) return tensor_from_numpy(py::reinterpret_borrow<py::array>(obj));
  if (PyBool_Check(obj.ptr())) return Tensor::scalar(obj.cast<bool>() ? 1.0 : 0.0, DType::BOOL);
  if (PyLong_Check(obj.ptr())) return Tensor::scalar(static_cast<double>(obj.cast<int64_t>()), DType::INT64);
  if (PyFloat_Check(obj.ptr())) return Tensor::scalar(obj.cast<double>(), DType::FLOAT64);
  py::module_ np = py::module_::import("numpy");
  if (py::isinstance(obj, np.attr("generic")) || PyList_Check(obj.ptr())) {
    return tensor_from_numpy(np.attr("asarray")(obj).cast<py::array>());
  }
  throw py::type_error(std::string(what) + ": a sample field must be a crew.Tensor, a NumPy array, a number or a "
                       "list of numbers, got " + type_name(obj));
}

io::Sample sample_from_py(py::handle obj, const char* what, bool* single) {
  io::Sample s;
  if (single) *single = false;
  if (PyTuple_Check(obj.ptr()) || PyList_Check(obj.ptr())) {
    py::sequence seq = py::reinterpret_borrow<py::sequence>(obj);
    // A list of numbers is one field (a vector), not several scalar fields.
    bool numbers = PyList_Check(obj.ptr()) && py::len(seq) > 0;
    for (py::handle f : seq) numbers = numbers && (PyLong_Check(f.ptr()) || PyFloat_Check(f.ptr()));
    if (!numbers) {
      for (py::handle f : seq) s.push_back(field_from_py(f, what));
      return s;
    }
  }
  if (PyDict_Check(obj.ptr())) {
    throw py::type_error(std::string(what) + ": dict samples are not supported; return a tuple of fields");
  }
  s.push_back(field_from_py(obj, what));
  if (single) *single = true;
  return s;
}

PyDataset::PyDataset(py::object dataset)
    : dataset_(new py::object(std::move(dataset))), size_(static_cast<int64_t>(py::len(*dataset_))) {}

PyDataset::~PyDataset() { release_py(dataset_); }

io::Sample PyDataset::get(int64_t index) const {
  io::check_sample_index("Dataset.__getitem__", index, size_);
  py::gil_scoped_acquire gil;
  try {
    py::object sample = (*dataset_)[py::int_(index)];
    bool single = false;
    io::Sample out = sample_from_py(sample, "Dataset.__getitem__", &single);
    single_.store(single ? 1 : 0);
    return out;
  } catch (py::error_already_set& e) {
    rethrow_as_crew(e, type_name(*dataset_) + ".__getitem__(" + std::to_string(index) + ")");
  }
}

std::shared_ptr<const io::Dataset> dataset_from_py(py::handle obj) {
  if (py::isinstance<io::Dataset>(obj)) return obj.cast<std::shared_ptr<io::Dataset>>();
  if (!py::hasattr(obj, "__getitem__") || !py::hasattr(obj, "__len__")) {
    throw py::type_error("DataLoader: dataset must define __getitem__ and __len__ (subclass crew.io.Dataset), got " +
                         type_name(obj));
  }
  return std::make_shared<PyDataset>(py::reinterpret_borrow<py::object>(obj));
}

namespace {

class PyTransform : public io::Transform {
 public:
  explicit PyTransform(py::object fn) : fn_(new py::object(std::move(fn))) {}
  ~PyTransform() override { release_py(fn_); }
  Tensor operator()(const Tensor& image) const override {
    py::gil_scoped_acquire gil;
    try {
      return field_from_py((*fn_)(tensor_to_numpy(image)), "transform");
    } catch (py::error_already_set& e) {
      rethrow_as_crew(e, "transform " + type_name(*fn_));
    }
  }

 private:
  py::object* fn_;
};

}  // namespace

io::TransformPtr transform_from_py(py::handle obj) {
  if (obj.is_none()) return nullptr;
  if (py::isinstance<io::Transform>(obj)) return obj.cast<std::shared_ptr<io::Transform>>();
  if (!PyCallable_Check(obj.ptr())) throw py::type_error("transform must be callable, got " + type_name(obj));
  return std::make_shared<PyTransform>(py::reinterpret_borrow<py::object>(obj));
}

}  // namespace crew::python

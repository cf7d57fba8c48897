#pragma once
// Python objects seen as crew::io parts, for io.cpp and vision.cpp: a Python data set as a
// crew::io::Dataset, a Python callable as a Transform, and the conversion of what they
// return (Tensor, ndarray, number, or a tuple/list of them) into tensors. Each takes the
// GIL only around its Python call, so DataLoader workers run C++ in parallel.
#include <atomic>
#include <memory>

#include <pybind11/pybind11.h>

#include "crew/io/dataset.h"
#include "crew/io/transforms/transform.h"

namespace crew::python {

namespace py = pybind11;

// Deletes a heap-held Python reference, taking the GIL (while the interpreter lives).
void release_py(py::object* obj);

// One field: a crew.Tensor (shared), a NumPy array (copied), a Python int (int64 []), float
// (float64 [], as Paddle's collate), bool (uint8 []), a NumPy scalar or a list of numbers.
// TypeError naming `what` and the type otherwise.
Tensor field_from_py(py::handle obj, const char* what);
// A tuple/list of fields, or one field (a list of numbers is one field, a vector). With
// `single`, sets whether obj was one field.
io::Sample sample_from_py(py::handle obj, const char* what, bool* single = nullptr);

// A Python object with __getitem__ and __len__ (a crew.io.Dataset subclass).
class PyDataset : public io::Dataset {
 public:
  explicit PyDataset(py::object dataset);  // with the GIL held
  ~PyDataset() override;
  int64_t size() const override { return size_; }
  io::Sample get(int64_t index) const override;
  // Whether __getitem__ returned one field rather than a tuple/list of fields (known after
  // a get()).
  bool single_field() const { return single_.load() == 1; }

 private:
  py::object* dataset_;
  int64_t size_;
  mutable std::atomic<int> single_{-1};
};

// A C++ data set (crew._C.io.Dataset) as is; any other object wrapped in a PyDataset.
std::shared_ptr<const io::Dataset> dataset_from_py(py::handle obj);

// A crew transform as is; a Python callable wrapped (it gets a NumPy array sharing the
// image and returns an array or Tensor); None is null.
io::TransformPtr transform_from_py(py::handle obj);

}  // namespace crew::python

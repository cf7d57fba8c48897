#pragma once
// Tensor <-> NumPy, for every part of crew._C: the one place that maps dtypes.
#include <optional>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "crew/tensor/tensor.h"

namespace crew::python {

namespace py = pybind11;

// A crew.dtype, a name ("float32", "int64", ...; "float"/"int" too), a NumPy dtype or a
// NumPy scalar type (np.float32). TypeError for anything else.
DType dtype_from_py(py::handle dtype);
// NumPy's dtype for a crew dtype.
py::dtype numpy_dtype(DType dtype);

// A new tensor holding a copy of `array` (any strides), converted to `dtype` when given.
// bool becomes uint8, float16 stays float16; complex is a TypeError naming the dtype.
// tensor_to_numpy gives float16 as float16 and bfloat16 (which NumPy lacks) as a float32 copy.
Tensor tensor_from_numpy(const py::array& array, std::optional<DType> dtype = std::nullopt);
// A NumPy array sharing the tensor's memory (crew tensors are always contiguous): no copy;
// the array keeps the storage alive.
py::array tensor_to_numpy(const Tensor& t);

}  // namespace crew::python

// crew.CPUPlace / CUDAPlace / CUDAPinnedPlace, set_device / get_device, crew.device: where
// tensors live (crew/core/place.h, crew/tensor/device/device.h).
#include <pybind11/stl.h>

#include "bindings.h"
#include "crew/nn/layer.h"
#include "crew/tensor/device/device.h"

namespace crew::python {

Place place_from_py(const py::handle& place) {
  if (place.is_none()) return current_place();
  if (py::isinstance<Place>(place)) return place.cast<Place>();
  if (py::isinstance<py::str>(place)) return parse_place(place.cast<std::string>(), 0);
  throw py::type_error("place: expected a crew Place (crew.CPUPlace(), crew.CUDAPlace(i)) or a string like "
                       "'cpu' or 'gpu:0', got " + std::string(py::str(py::type::of(place).attr("__name__"))));
}

void bind_device(py::module_& m) {
  py::class_<Place>(m, "Place")
      .def("is_cpu_place", &Place::is_cpu_place)
      .def("is_gpu_place", &Place::is_gpu_place)
      .def("is_cuda_pinned_place", &Place::is_cuda_pinned_place)
      .def("gpu_device_id", [](const Place& p) { return p.device; })
      .def("__eq__", [](const Place& a, const Place& b) { return a == b; })
      .def("__hash__", [](const Place& p) { return std::hash<std::string>()(p.to_string()); })
      .def("__repr__", [](const Place& p) { return "Place(" + p.to_string() + ")"; })
      .def("__str__", [](const Place& p) { return "Place(" + p.to_string() + ")"; });
  m.def("CPUPlace", &CPUPlace);
  m.def("CUDAPlace", &CUDAPlace, py::arg("id"));
  m.def("CUDAPinnedPlace", &CUDAPinnedPlace);
  m.def("set_device", &set_device, py::arg("device"));
  m.def("get_device", &get_device);
  m.def("is_compiled_with_cuda", &is_compiled_with_cuda);
  m.def("cuda_device_count", &cuda_device_count);
  // Layer.to's steps: a tensor that moves or changes dtype loses its gradient.
  m.def("_move_tensor_", [](Tensor& t, py::handle place) {
          const Place target = place_from_py(place);
          if (t.place() == target) return;
          t.clear_grad(false);
          t.move_to_(target);
        }, py::arg("tensor"), py::arg("place"));
  m.def("_convert_tensor_", [](Tensor& t, DType dtype) {
          if (t.dtype() == dtype) return;
          t.clear_grad(false);
          t.convert_(dtype);
        }, py::arg("tensor"), py::arg("dtype"));
  // Layer.set_state_dict's copy: src converted to dst's dtype and place, written into dst's
  // memory (numpy() of a bfloat16 or device tensor is a copy, so NumPy cannot write there).
  m.def("_copy_tensor_", [](Tensor& dst, const Tensor& src) {
          CREW_CHECK(src.numel() == dst.numel(), "set_state_dict: ", src.numel(), " values for a tensor of ",
                     dst.numel());
          Tensor value = src.dtype() == dst.dtype() ? src : src.to(dst.dtype());
          py::gil_scoped_release nogil;
          dst.copy_(value.to(dst.place()));
        }, py::arg("dst"), py::arg("src"));
}

}  // namespace crew::python

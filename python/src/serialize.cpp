// crew._C: save and load of state dicts (name -> Tensor) as safetensors files.
#include <pybind11/stl.h>

#include "bindings.h"
#include "crew/tensor/safetensors.h"

namespace crew::python {

StateDict state_dict_from_py(py::handle obj, const char* op) {
  if (!py::isinstance<py::dict>(obj)) {
    throw py::type_error(std::string(op) + ": expected a state dict (a dict of name -> Tensor), got " +
                         std::string(py::str(py::type::of(obj).attr("__name__"))));
  }
  StateDict sd;
  for (auto [k, v] : py::reinterpret_borrow<py::dict>(obj)) {
    const std::string key = py::str(k);
    if (!py::isinstance<Tensor>(v)) {
      throw py::type_error(std::string(op) + ": value of '" + key + "' is a " +
                           std::string(py::str(py::type::of(v).attr("__name__"))) + ", not a Tensor");
    }
    sd.insert(key, v.cast<Tensor>());
  }
  return sd;
}

py::dict state_dict_to_py(const StateDict& sd) {
  py::dict out;
  for (const auto& [k, v] : sd) out[py::str(k)] = v;
  return out;
}

void bind_serialize(py::module_& m) {
  m.def("save", [](py::handle obj, const std::string& path) {
         StateDict sd = state_dict_from_py(obj, "save");
         py::gil_scoped_release nogil;
         save(sd, path);
       }, py::arg("obj"), py::arg("path"), "Writes a state dict to a safetensors file, atomically");
  m.def("load", [](const std::string& path) {
         StateDict sd;
         {
           py::gil_scoped_release nogil;
           sd = load(path);
         }
         return state_dict_to_py(sd);
       }, py::arg("path"), "Reads a safetensors file into a dict of name -> Tensor");
}

}  // namespace crew::python

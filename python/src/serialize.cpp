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
  m.def("save", [](py::handle obj, const std::string& path, const std::map<std::string, std::string>& metadata) {
         StateDict sd = state_dict_from_py(obj, "save");
         py::gil_scoped_release nogil;
         save(sd, path, metadata);
       }, py::arg("obj"), py::arg("path"), py::arg("metadata") = std::map<std::string, std::string>{},
       "Writes a state dict (and string metadata) to a safetensors file, atomically");
  m.def("load_metadata", [](const std::string& path) {
         py::gil_scoped_release nogil;
         return load_metadata(path);
       }, py::arg("path"), "The string metadata of a safetensors file");
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

// crew._C.DataParallel: crew::DataParallel for a layer whose forward is Python. The Python
// crew.DataParallel (python/crew/parallel.py) runs the wrapped layer itself and then calls
// prepare_for_backward(outputs); the reducer, its buckets and the overlap of all_reduce
// with backward are crew::DataParallel's, as for a C++ layer.
#include <pybind11/stl.h>

#include "bindings.h"
#include "crew/core/check.h"
#include "crew/distributed/data_parallel/data_parallel.h"

namespace crew::python {

namespace {

using dist::Group;
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// A Python layer's tensors as a C++ Layer, for crew::DataParallel: the trainable
// parameters under their Python names (with dots, which C++ layers do not allow, hence
// the override), frozen parameters and buffers as buffers (broadcast from rank 0, not
// reduced). Its forward is never called.
class HeldTensors : public nn::Layer {
 public:
  HeldTensors(const NamedTensors& params, const std::vector<Tensor>& buffers) : nn::Layer("python_layer") {
    for (const auto& [name, p] : params) {
      if (p.stop_gradient()) {
        register_buffer("b" + std::to_string(buffers_held_++), p);
      } else {
        trainable_.push_back({name, p});
      }
    }
    for (const auto& b : buffers) register_buffer("b" + std::to_string(buffers_held_++), b);
  }
  Tensor forward(const Tensor&) override {
    CREW_THROW(StateError, "DataParallel: the wrapped Python layer's forward runs in Python");
  }
  std::vector<Tensor> parameters(bool) const override {
    std::vector<Tensor> out;
    for (const auto& [_, p] : trainable_) out.push_back(p);
    return out;
  }
  NamedTensors named_parameters(const std::string& prefix, bool) const override {
    NamedTensors out;
    for (const auto& [name, p] : trainable_) out.push_back({prefix.empty() ? name : prefix + "." + name, p});
    return out;
  }

 private:
  NamedTensors trainable_;
  int buffers_held_ = 0;
};

std::shared_ptr<DataParallel> make_data_parallel(const NamedTensors& params, const std::vector<Tensor>& buffers,
                                                 double comm_buffer_mb, double last_comm_buffer_mb,
                                                 bool find_unused_parameters, std::shared_ptr<Group> group) {
  CREW_CHECK(comm_buffer_mb > 0 && last_comm_buffer_mb > 0, "DataParallel: comm_buffer_size (", comm_buffer_mb,
             ") and last_comm_buffer_size (", last_comm_buffer_mb, ") must be positive (MB)");
  DataParallelOptions o;
  o.comm_buffer_bytes = static_cast<size_t>(comm_buffer_mb * (1 << 20));
  o.last_comm_buffer_bytes = static_cast<size_t>(last_comm_buffer_mb * (1 << 20));
  o.find_unused_parameters = find_unused_parameters;
  o.group = group.get();
  auto held = std::make_shared<HeldTensors>(params, buffers);
  py::gil_scoped_release nogil;  // the broadcast of the initial state waits for the peers
  return std::make_shared<DataParallel>(held, o);
}

}  // namespace

void bind_data_parallel(py::module_& m) {
  py::class_<DataParallel, std::shared_ptr<DataParallel>>(m, "_DataParallel")
      .def(py::init(&make_data_parallel), py::arg("parameters"), py::arg("buffers"), py::arg("comm_buffer_size") = 25.0,
           py::arg("last_comm_buffer_size") = 1.0, py::arg("find_unused_parameters") = false,
           py::arg("group") = nullptr, py::keep_alive<1, 7>())
      .def("prepare_for_backward", &DataParallel::prepare_for_backward, py::arg("outputs"),
           py::call_guard<py::gil_scoped_release>())
      .def_property("grad_need_sync", &DataParallel::grad_need_sync, &DataParallel::set_grad_need_sync)
      .def_property_readonly("world_size", &DataParallel::world_size)
      .def_property_readonly("has_reducer", [](const DataParallel& dp) { return dp.reducer() != nullptr; });
}

}  // namespace crew::python

// crew._C._GradSync: crew::dist::GradSync, the engine behind DataParallel, for the Python
// crew.DataParallel (python/crew/parallel.py). Python runs the wrapped layer itself and then
// calls prepare_for_backward(outputs); the broadcast, the Reducer (buckets, all_reduce
// overlapping backward), no_sync and the uneven-input check are the engine's, as for a C++
// layer wrapped by crew::DataParallel.
#include <Python.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "crew/core/check.h"
#include "crew/distributed/data_parallel/grad_sync.h"

namespace crew::python {

namespace {

using dist::GradSync;
using dist::Group;
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

std::shared_ptr<GradSync> make_grad_sync(const NamedTensors& params, const std::vector<Tensor>& buffers,
                                         double comm_buffer_mb, double last_comm_buffer_mb,
                                         bool find_unused_parameters, std::shared_ptr<Group> group,
                                         std::optional<DType> comm_dtype) {
  CREW_CHECK(comm_buffer_mb > 0 && last_comm_buffer_mb > 0, "DataParallel: comm_buffer_size (",
             comm_buffer_mb, ") and last_comm_buffer_size (", last_comm_buffer_mb, ") must be positive (MB)");
  dist::GradSyncOptions o;
  o.bucket_bytes_cap = static_cast<size_t>(comm_buffer_mb * (1 << 20));
  o.first_bucket_bytes = static_cast<size_t>(last_comm_buffer_mb * (1 << 20));
  o.find_unused_parameters = find_unused_parameters;
  o.comm_dtype = comm_dtype;
  o.group = group.get();
  py::gil_scoped_release nogil;  // the broadcast of the initial state waits for the peers
  // The destructor may wait (bounded) for the peers' step counts: without the GIL.
  return std::shared_ptr<GradSync>(new GradSync(params, buffers, o), [](GradSync* sync) {
    if (PyGILState_Check()) {
      py::gil_scoped_release release;
      delete sync;
    } else {
      delete sync;
    }
  });
}

}  // namespace

void bind_data_parallel(py::module_& m) {
  py::class_<GradSync, std::shared_ptr<GradSync>>(m, "_GradSync")
      .def(py::init(&make_grad_sync), py::arg("parameters"), py::arg("buffers"),
           py::arg("comm_buffer_size") = 25.0, py::arg("last_comm_buffer_size") = 1.0,
           py::arg("find_unused_parameters") = false, py::arg("group") = nullptr,
           py::arg("comm_dtype") = std::nullopt, py::keep_alive<1, 7>())
      .def("prepare_for_backward", &GradSync::prepare_for_backward, py::arg("outputs"),
           py::call_guard<py::gil_scoped_release>())
      .def_property("grad_need_sync", &GradSync::grad_need_sync, &GradSync::set_grad_need_sync)
      .def_property_readonly("world_size", &GradSync::world_size)
      .def_property_readonly("has_reducer", [](const GradSync& s) { return s.reducer() != nullptr; })
      .def_property_readonly("steps",
                             [](const GradSync& s) { return s.reducer() ? s.reducer()->steps() : 0; });
}

}  // namespace crew::python

// crew._C.dist: the object collectives, the parallel environment (ParallelEnv) and what
// the Python spawn takes from crew::dist::spawn (device ids, each child's variables).
#include <pybind11/stl.h>

#include <map>

#include "bindings.h"
#include "crew/core/parallel_env.h"
#include "crew/core/spawn_process.h"
#include "crew/core/worker_env.h"
#include "crew/distributed/collective/object_collectives.h"
#include "crew/distributed/spawn/spawn.h"
#include "object_convert.h"

namespace crew::python {

namespace {

using dist::Object;
using GroupPtr = std::shared_ptr<dist::Group>;

std::vector<Object> objects_of(py::handle list, const char* op, std::string* refused) {
  std::vector<Object> out;
  for (py::handle item : list) out.push_back(object_from_py(item, op, refused));
  return out;
}

// Replaces list's items by `objects` (converted first, so an error leaves the list as it was).
// `src` is the sender of every object, or -1 when objects[i] came from group rank i.
void refill(py::list& list, const std::vector<Object>& objects, const char* op, int src) {
  std::vector<py::object> values;
  for (size_t i = 0; i < objects.size(); ++i) {
    values.push_back(object_to_py(objects[i], ObjectSource{op, src >= 0 ? src : static_cast<int>(i)}));
  }
  PyList_SetSlice(list.ptr(), 0, PyList_Size(list.ptr()), nullptr);
  for (auto& v : values) list.append(std::move(v));
}

// The sender's error for an object it could not send (raised after the collective, so that
// its peers are not left waiting in it).
void raise_if_refused(const std::string& refused) {
  if (!refused.empty()) throw py::type_error(refused);
}

py::dict env_dict(const ParallelEnv& e) {
  py::dict d;
  d["rank"] = e.rank;
  d["world_size"] = e.world_size;
  d["local_rank"] = e.local_rank;
  d["local_world_size"] = e.local_world_size;
  d["node_rank"] = e.node_rank;
  d["nnodes"] = e.nnodes;
  d["device_id"] = e.device_id;
  d["device_kind"] = e.device_kind;
  d["master"] = e.has_master() ? e.master_endpoint() : std::string();
  d["job_id"] = e.job_id;
  d["restart_count"] = e.restart_count;
  d["source"] = e.source;
  d["trainer_endpoints"] = e.trainer_endpoints;
  return d;
}

}  // namespace

void bind_distributed_objects(py::module_& d) {
  d.def("all_gather_object", [](py::list out, py::handle obj, const GroupPtr& g) {
         std::string refused;
         Object mine = object_from_py(obj, "all_gather_object", &refused);
         std::vector<Object> all;
         { py::gil_scoped_release nogil; dist::all_gather_object(all, mine, g.get()); }
         raise_if_refused(refused);
         if (!g || g->is_member()) refill(out, all, "all_gather_object", -1);
       }, py::arg("object_list"), py::arg("obj"), py::arg("group") = nullptr);
  d.def("broadcast_object_list", [](py::list list, int src, const GroupPtr& g) {
         std::string refused;
         const bool sending = dist::get_rank() == src;
         std::vector<Object> objects = objects_of(list, "broadcast_object_list", sending ? &refused : nullptr);
         { py::gil_scoped_release nogil; dist::broadcast_object_list(objects, src, g.get()); }
         raise_if_refused(refused);
         if (!g || g->is_member()) refill(list, objects, "broadcast_object_list", src);
       }, py::arg("object_list"), py::arg("src") = 0, py::arg("group") = nullptr);
  d.def("scatter_object_list", [](py::list out, py::object in, int src, const GroupPtr& g) {
         std::string refused;
         const bool sending = dist::get_rank() == src;
         std::vector<Object> ins = in.is_none() ? std::vector<Object>{}
                                                : objects_of(in, "scatter_object_list", sending ? &refused : nullptr);
         std::vector<Object> mine;
         { py::gil_scoped_release nogil; dist::scatter_object_list(mine, ins, src, g.get()); }
         raise_if_refused(refused);
         if (!g || g->is_member()) refill(out, mine, "scatter_object_list", src);
       }, py::arg("scatter_object_output_list"), py::arg("scatter_object_input_list") = py::none(),
       py::arg("src") = 0, py::arg("group") = nullptr);
  d.def("set_object_pickle", &set_object_pickle, py::arg("enabled"),
        "Whether the object collectives pickle non-plain values and unpickle peers' (default off; "
        "CREW_OBJECT_PICKLE=1). Unpickling runs code the sender chose: enable only when every "
        "process of the job is trusted.");
  d.def("object_pickle_enabled", &object_pickle_enabled);
  d.def("parallel_env", [] { return env_dict(ParallelEnv::from_env()); },
        "The parallel environment as the launcher's variables describe it");
  d.def("spawn_devices", [](int nprocs, const std::string& devices) {
         dist::SpawnOptions o;
         o.nprocs = nprocs;
         o.devices = devices;
         return dist::spawn_devices(o);
       }, py::arg("nprocs"), py::arg("devices"), "The device ids of spawn's children (crew::dist::spawn's rule)");
  d.def("spawn_worker_env", [](int rank, const std::vector<int>& devices, int port, const std::string& job_id,
                               const std::string& token) {
         std::map<std::string, std::string> out;  // "" = unset in the child
         const WorkerEnv w = dist::spawn_worker_env(rank, devices, port, job_id, token, /*parent_hosts_store=*/false);
         for (const auto& v : w.to_env(dist::current_environment())) out[v.name] = v.value;
         return out;
       }, py::arg("rank"), py::arg("devices"), py::arg("port"), py::arg("job_id"), py::arg("token"),
       "Every variable Python spawn's child `rank` gets (crew/core/worker_env.h); '' = unset");
}

}  // namespace crew::python

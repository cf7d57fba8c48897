// crew._C.dist: init_parallel_env, groups, the tensor collectives. The GIL is released for
// every blocking call, so DataLoader threads and other Python threads go on meanwhile.
#include <pybind11/stl.h>

#include "bindings.h"
#include "crew/core/check.h"
#include "crew/distributed/collective/collective.h"
#include "crew/distributed/parallel/parallel.h"

namespace crew::python {

namespace {

using dist::Group;
using dist::ReduceOp;
using dist::Work;
using GroupPtr = std::shared_ptr<Group>;
using WorkPtr = std::shared_ptr<Work>;
using Release = py::call_guard<py::gil_scoped_release>;

// Paddle returns the task for sync_op=False and None otherwise.
py::object task(WorkPtr work, bool sync_op) {
  if (sync_op || !work) return py::none();
  return py::cast(std::move(work));
}

std::vector<Tensor> tensors_of(const py::object& list) {
  std::vector<Tensor> out;
  if (list.is_none()) return out;
  for (py::handle item : list) out.push_back(cast_arg<Tensor>(item, "collective", "tensor_list", "a list of Tensors"));
  return out;
}

// Fills a Python list the way Paddle does: cleared then appended (so callers keep the object).
void refill(py::list& list, const std::vector<Tensor>& tensors) {
  PyList_SetSlice(list.ptr(), 0, PyList_Size(list.ptr()), nullptr);
  for (const auto& t : tensors) list.append(py::cast(t));
}

void bind_group(py::module_& d) {
  py::class_<Group, GroupPtr>(d, "Group")
      .def_property_readonly("rank", &Group::rank)
      .def_property_readonly("ranks", &Group::ranks)
      .def_property_readonly("nranks", &Group::nranks)
      .def_property_readonly("world_size", &Group::world_size)
      .def_property_readonly("id", &Group::id)
      .def_property_readonly("name", &Group::name)
      .def_property_readonly("backend", &Group::backend)
      .def("is_member", &Group::is_member)
      .def("get_group_rank", &Group::get_group_rank)
      .def("__repr__", [](const Group& g) {
        std::string ranks;
        for (int r : g.ranks()) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
        return str_cat("rank: ", g.rank(), ", nranks: ", g.nranks(), ", id: ", g.id(), ", ranks: ", ranks,
                       "; name: ", g.name());
      });
  py::class_<Work, WorkPtr>(d, "Task")
      .def("wait", [](Work& w) { w.wait(); }, Release())
      .def("wait", [](Work& w, double seconds) {
             w.wait(std::chrono::milliseconds(static_cast<long long>(seconds * 1000)));
           }, py::arg("timeout"), Release())
      .def("is_completed", &Work::is_completed);
}

void bind_init(py::module_& d) {
  d.def("init_parallel_env", [](const std::string& backend, bool warn) {
         dist::InitOptions o;
         o.backend = backend;
         o.warn_not_parallel = warn;
         return dist::init_parallel_env(o);
       }, py::arg("backend") = "auto", py::arg("warn") = true, Release());
  d.def("is_initialized", &dist::is_initialized);
  d.def("get_rank", [](const GroupPtr& g) { return dist::get_rank(g.get()); }, py::arg("group") = nullptr);
  d.def("get_world_size", [](const GroupPtr& g) { return dist::get_world_size(g.get()); },
        py::arg("group") = nullptr);
  d.def("new_group", &dist::new_group, py::arg("ranks") = std::vector<int>{}, py::arg("backend") = "",
        Release());
  d.def("get_group", &dist::get_group, py::arg("id") = 0);
  d.def("destroy_process_group", [](const GroupPtr& g) { dist::destroy_process_group(g.get()); },
        py::arg("group") = nullptr, Release());
}

void bind_reductions(py::module_& d) {
  d.def("all_reduce", [](Tensor& t, ReduceOp op, const GroupPtr& g, bool sync_op) {
         WorkPtr w;
         { py::gil_scoped_release nogil; w = dist::all_reduce(t, op, g.get(), sync_op); }
         return task(std::move(w), sync_op);
       }, py::arg("tensor"), py::arg("op") = ReduceOp::SUM, py::arg("group") = nullptr, py::arg("sync_op") = true);
  d.def("reduce", [](Tensor& t, int dst, ReduceOp op, const GroupPtr& g, bool sync_op) {
         WorkPtr w;
         { py::gil_scoped_release nogil; w = dist::reduce(t, dst, op, g.get(), sync_op); }
         return task(std::move(w), sync_op);
       }, py::arg("tensor"), py::arg("dst"), py::arg("op") = ReduceOp::SUM, py::arg("group") = nullptr,
       py::arg("sync_op") = true);
  d.def("broadcast", [](Tensor& t, int src, const GroupPtr& g, bool sync_op) {
         WorkPtr w;
         { py::gil_scoped_release nogil; w = dist::broadcast(t, src, g.get(), sync_op); }
         return task(std::move(w), sync_op);
       }, py::arg("tensor"), py::arg("src"), py::arg("group") = nullptr, py::arg("sync_op") = true);
  d.def("barrier", [](const GroupPtr& g) { dist::barrier(g.get())->wait(); }, py::arg("group") = nullptr,
        Release());
}

void bind_lists(py::module_& d) {
  d.def("all_gather", [](py::list out, const Tensor& t, const GroupPtr& g, bool sync_op) {
         std::vector<Tensor> tensors;
         WorkPtr w;
         { py::gil_scoped_release nogil; w = dist::all_gather(tensors, t, g.get(), sync_op); }
         refill(out, tensors);
         return task(std::move(w), sync_op);
       }, py::arg("tensor_list"), py::arg("tensor"), py::arg("group") = nullptr, py::arg("sync_op") = true);
  d.def("scatter", [](Tensor& t, py::object in, int src, const GroupPtr& g, bool sync_op) {
         std::vector<Tensor> tensors = tensors_of(in);
         WorkPtr w;
         { py::gil_scoped_release nogil; w = dist::scatter(t, tensors, src, g.get(), sync_op); }
         return task(std::move(w), sync_op);
       }, py::arg("tensor"), py::arg("tensor_list") = py::none(), py::arg("src") = 0, py::arg("group") = nullptr,
       py::arg("sync_op") = true);
  d.def("reduce_scatter", [](Tensor& t, py::object in, ReduceOp op, const GroupPtr& g, bool sync_op) {
         std::vector<Tensor> tensors = tensors_of(in);
         WorkPtr w;
         { py::gil_scoped_release nogil; w = dist::reduce_scatter(t, tensors, op, g.get(), sync_op); }
         return task(std::move(w), sync_op);
       }, py::arg("tensor"), py::arg("tensor_list"), py::arg("op") = ReduceOp::SUM, py::arg("group") = nullptr,
       py::arg("sync_op") = true);
  d.def("gather", [](const Tensor& t, py::object out, int dst, const GroupPtr& g, bool sync_op) {
         std::vector<Tensor> tensors;
         WorkPtr w;
         { py::gil_scoped_release nogil; w = dist::gather(t, tensors, dst, g.get(), sync_op); }
         if (!out.is_none()) {
           py::list list = out.cast<py::list>();
           refill(list, tensors);
         }
         return task(std::move(w), sync_op);
       }, py::arg("tensor"), py::arg("gather_list") = py::none(), py::arg("dst") = 0, py::arg("group") = nullptr,
       py::arg("sync_op") = true);
  d.def("alltoall", [](py::object in, py::list out, const GroupPtr& g, bool sync_op) {
         std::vector<Tensor> ins = tensors_of(in), outs;
         WorkPtr w;
         { py::gil_scoped_release nogil; w = dist::alltoall(ins, outs, g.get(), sync_op); }
         refill(out, outs);
         return task(std::move(w), sync_op);
       }, py::arg("in_tensor_list"), py::arg("out_tensor_list"), py::arg("group") = nullptr,
       py::arg("sync_op") = true);
  d.def("send", [](const Tensor& t, int dst, const GroupPtr& g, bool sync_op) {
         WorkPtr w;
         { py::gil_scoped_release nogil; w = dist::send(t, dst, g.get(), sync_op); }
         return task(std::move(w), sync_op);
       }, py::arg("tensor"), py::arg("dst") = 0, py::arg("group") = nullptr, py::arg("sync_op") = true);
  d.def("recv", [](Tensor& t, int src, const GroupPtr& g, bool sync_op) {
         WorkPtr w;
         { py::gil_scoped_release nogil; w = dist::recv(t, src, g.get(), sync_op); }
         return task(std::move(w), sync_op);
       }, py::arg("tensor"), py::arg("src") = 0, py::arg("group") = nullptr, py::arg("sync_op") = true);
}

}  // namespace

void bind_distributed(py::module_& m) {
  py::module_ d = m.def_submodule("dist", "crew::dist: process groups and collectives");
  py::enum_<ReduceOp>(d, "ReduceOp")
      .value("SUM", ReduceOp::SUM)
      .value("MAX", ReduceOp::MAX)
      .value("MIN", ReduceOp::MIN)
      .value("PROD", ReduceOp::PROD)
      .value("AVG", ReduceOp::AVG);
  bind_group(d);
  bind_init(d);
  bind_reductions(d);
  bind_lists(d);
  bind_distributed_objects(d);
}

}  // namespace crew::python

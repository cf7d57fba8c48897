// crew._C.optimizer: SGD, Momentum, Adam, AdamW over the parameters' tensors (shared with
// the Python layers: the update writes into the same memory).
#include <pybind11/stl.h>

#include "bindings.h"
#include "crew/optim/optim.h"

namespace crew::python {

namespace {

using optim::Optimizer;
using Release = py::call_guard<py::gil_scoped_release>;

std::vector<Tensor> params_of(py::handle parameters, const char* op) {
  if (parameters.is_none()) {
    throw py::value_error(std::string(op) + ": parameters is None; pass model.parameters()");
  }
  std::vector<Tensor> out;
  for (py::handle p : parameters) out.push_back(p.cast<Tensor>());
  if (out.empty()) throw py::value_error(std::string(op) + ": the parameter list is empty");
  return out;
}

}  // namespace

void bind_optim(py::module_& m) {
  py::module_ o = m.def_submodule("optimizer", "crew::optim: optimizers");
  py::class_<Optimizer, std::shared_ptr<Optimizer>>(o, "Optimizer")
      .def("step", &Optimizer::step, Release())
      .def("clear_grad", &Optimizer::clear_grad, py::arg("set_to_zero") = true)
      .def("get_lr", &Optimizer::get_lr)
      .def("set_lr", &Optimizer::set_lr)
      .def("state_dict", [](const Optimizer& o) { return state_dict_to_py(o.state_dict()); })
      .def("set_state_dict", [](Optimizer& o, py::handle sd) {
        o.set_state_dict(state_dict_from_py(sd, "Optimizer.set_state_dict"));
      });
  o.def("SGD", [](double lr, py::object params, double wd) -> std::shared_ptr<Optimizer> {
         return std::make_shared<optim::SGD>(params_of(params, "SGD"), optim::SGDOptions{lr, wd, nullptr});
       }, py::arg("learning_rate") = 0.001, py::arg("parameters") = py::none(), py::arg("weight_decay") = 0.0);
  o.def("Momentum", [](double lr, double momentum, py::object params, bool nesterov, double wd)
            -> std::shared_ptr<Optimizer> {
         return std::make_shared<optim::Momentum>(params_of(params, "Momentum"),
                                                  optim::MomentumOptions{lr, momentum, nesterov, wd, nullptr});
       }, py::arg("learning_rate") = 0.001, py::arg("momentum") = 0.9, py::arg("parameters") = py::none(),
       py::arg("use_nesterov") = false, py::arg("weight_decay") = 0.0);
  o.def("Adam", [](double lr, double b1, double b2, double eps, py::object params, double wd)
            -> std::shared_ptr<Optimizer> {
         return std::make_shared<optim::Adam>(params_of(params, "Adam"), optim::AdamOptions{lr, b1, b2, eps, wd, nullptr});
       }, py::arg("learning_rate") = 0.001, py::arg("beta1") = 0.9, py::arg("beta2") = 0.999,
       py::arg("epsilon") = 1e-8, py::arg("parameters") = py::none(), py::arg("weight_decay") = 0.0);
  o.def("AdamW", [](double lr, double b1, double b2, double eps, py::object params, double wd)
            -> std::shared_ptr<Optimizer> {
         optim::AdamWOptions opt;
         opt.learning_rate = lr;
         opt.beta1 = b1;
         opt.beta2 = b2;
         opt.epsilon = eps;
         opt.weight_decay = wd;
         return std::make_shared<optim::AdamW>(params_of(params, "AdamW"), opt);
       }, py::arg("learning_rate") = 0.001, py::arg("beta1") = 0.9, py::arg("beta2") = 0.999,
       py::arg("epsilon") = 1e-8, py::arg("parameters") = py::none(), py::arg("weight_decay") = 0.01);
}

}  // namespace crew::python

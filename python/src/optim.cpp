// crew._C.optimizer: SGD, Momentum, Adam, AdamW (optim_more.cpp: RMSProp ... Lamb) over the parameters' tensors (shared with
// the Python layers: the update writes into the same memory); the LR schedules
// (crew._C.optimizer.lr, Paddle's paddle.optimizer.lr) and gradient clipping
// (Paddle's paddle.nn.ClipGrad*; python/crew/nn re-exports them).
#include <pybind11/stl.h>

#include "bindings.h"
#include "crew/optim/optim.h"
#include "optim_args.h"

namespace crew::python {

namespace {

using optim::GradientClip;
using optim::LRScheduler;
using optim::Optimizer;
using Release = py::call_guard<py::gil_scoped_release>;
using ClipPtr = std::shared_ptr<GradientClip>;

// One schedule class, derived from LRScheduler: its constructor and Paddle's argument names.
template <typename S, typename... Args>
void bind_schedule(py::module_& lr, const char* name, Args&&... args) {
  py::class_<S, LRScheduler, std::shared_ptr<S>>(lr, name).def(std::forward<Args>(args)...);
}

void bind_schedules(py::module_& o) {
  py::module_ lr = o.def_submodule("lr", "crew::optim learning-rate schedules (paddle.optimizer.lr)");
  py::class_<LRScheduler, std::shared_ptr<LRScheduler>>(lr, "LRScheduler")
      .def("step", [](LRScheduler& s, py::object epoch) {
             if (epoch.is_none()) s.step();
             else s.step(cast_arg<int64_t>(epoch, "LRScheduler.step", "epoch", "an int or None"));
           }, py::arg("epoch") = py::none())
      .def("__call__", &LRScheduler::last_lr)
      .def("get_lr", &LRScheduler::last_lr)
      .def_property_readonly("last_lr", &LRScheduler::last_lr)
      .def_property_readonly("last_epoch", &LRScheduler::last_epoch)
      .def_property_readonly("base_lr", &LRScheduler::base_lr)
      .def("state_dict", [](const LRScheduler& s) { return state_dict_to_py(s.state_dict()); })
      .def("set_state_dict", [](LRScheduler& s, py::handle sd) {
        s.set_state_dict(state_dict_from_py(sd, "LRScheduler.set_state_dict"));
      });
  bind_schedule<optim::StepDecay>(lr, "StepDecay", py::init<double, int64_t, double, int64_t>(),
                                  py::arg("learning_rate"), py::arg("step_size"), py::arg("gamma") = 0.1,
                                  py::arg("last_epoch") = -1);
  bind_schedule<optim::CosineAnnealingDecay>(lr, "CosineAnnealingDecay", py::init<double, int64_t, double, int64_t>(),
                                             py::arg("learning_rate"), py::arg("T_max"), py::arg("eta_min") = 0.0,
                                             py::arg("last_epoch") = -1);
  bind_schedule<optim::ExponentialDecay>(lr, "ExponentialDecay", py::init<double, double, int64_t>(),
                                         py::arg("learning_rate"), py::arg("gamma"), py::arg("last_epoch") = -1);
  bind_schedule<optim::MultiStepDecay>(lr, "MultiStepDecay", py::init<double, std::vector<int64_t>, double, int64_t>(),
                                       py::arg("learning_rate"), py::arg("milestones"), py::arg("gamma") = 0.1,
                                       py::arg("last_epoch") = -1);
  bind_schedule<optim::PiecewiseDecay>(lr, "PiecewiseDecay",
                                       py::init<std::vector<int64_t>, std::vector<double>, int64_t>(),
                                       py::arg("boundaries"), py::arg("values"), py::arg("last_epoch") = -1);
  bind_schedule<optim::LinearWarmup>(lr, "LinearWarmup",
      py::init([](py::handle learning_rate, int64_t warmup_steps, double start_lr, double end_lr, int64_t last_epoch) {
        if (py::isinstance<LRScheduler>(learning_rate)) {
          return std::make_shared<optim::LinearWarmup>(learning_rate.cast<std::shared_ptr<LRScheduler>>(),
                                                       warmup_steps, start_lr, end_lr, last_epoch);
        }
        return std::make_shared<optim::LinearWarmup>(
            cast_arg<double>(learning_rate, "LinearWarmup", "learning_rate", "a float or an LRScheduler"), warmup_steps, start_lr, end_lr,
                                                     last_epoch);
      }), py::arg("learning_rate"), py::arg("warmup_steps"), py::arg("start_lr"), py::arg("end_lr"),
      py::arg("last_epoch") = -1);
}

void bind_clips(py::module_& o) {
  py::class_<GradientClip, ClipPtr>(o, "GradientClip")
      .def("__call__", [](const GradientClip& c, py::handle params) {
        std::vector<Tensor> ps = params_of(params, "GradientClip");
        py::gil_scoped_release nogil;
        c(ps);
      }, py::arg("parameters"));
  py::class_<optim::ClipGradByGlobalNorm, GradientClip, std::shared_ptr<optim::ClipGradByGlobalNorm>>(
      o, "ClipGradByGlobalNorm").def(py::init<double>(), py::arg("clip_norm"));
  py::class_<optim::ClipGradByNorm, GradientClip, std::shared_ptr<optim::ClipGradByNorm>>(o, "ClipGradByNorm")
      .def(py::init<double>(), py::arg("clip_norm"));
  py::class_<optim::ClipGradByValue, GradientClip, std::shared_ptr<optim::ClipGradByValue>>(o, "ClipGradByValue")
      .def(py::init([](double max, py::object min) {
             return min.is_none() ? std::make_shared<optim::ClipGradByValue>(max)
                                  : std::make_shared<optim::ClipGradByValue>(
                                        max, cast_arg<double>(min, "ClipGradByValue", "min", "a float or None"));
           }), py::arg("max"), py::arg("min") = py::none());
}

void bind_optimizers(py::module_& o) {
  py::class_<Optimizer, std::shared_ptr<Optimizer>>(o, "Optimizer")
      .def("step", &Optimizer::step, Release())
      .def("clear_grad", &Optimizer::clear_grad, py::arg("set_to_zero") = true)
      .def("get_lr", &Optimizer::get_lr)
      .def("set_lr", &Optimizer::set_lr)
      // Paddle's attribute: the LRScheduler the optimizer follows, else the constant rate.
      .def_property_readonly("_learning_rate", [](const Optimizer& o) -> py::object {
        if (o.lr_scheduler()) return py::cast(o.lr_scheduler());
        return py::float_(o.get_lr());
      })
      .def("state_dict", [](const Optimizer& o) { return state_dict_to_py(o.state_dict()); })
      .def("set_state_dict", [](Optimizer& o, py::handle sd) {
        o.set_state_dict(state_dict_from_py(sd, "Optimizer.set_state_dict"));
      })
      // Paddle's attributes: the parameters, and multi_precision (crew.amp.decorate sets it).
      .def_property_readonly("_parameter_list", &Optimizer::parameters)
      .def_property_readonly("_multi_precision", &Optimizer::multi_precision)
      .def("_set_multi_precision", &Optimizer::set_multi_precision, py::arg("keep_master_weights"));
  o.def("SGD", [](py::handle lr, py::object params, double wd, py::handle clip) -> std::shared_ptr<Optimizer> {
         return std::make_shared<optim::SGD>(params_of(params, "SGD"), optim::SGDOptions{learning_rate(lr, "SGD"), wd, clip_of(clip)});
       }, py::arg("learning_rate") = 0.001, py::arg("parameters") = py::none(), py::arg("weight_decay") = 0.0,
       py::arg("grad_clip") = py::none());
  o.def("Momentum", [](py::handle lr, double momentum, py::object params, bool nesterov, double wd, py::handle clip)
            -> std::shared_ptr<Optimizer> {
         return std::make_shared<optim::Momentum>(
             params_of(params, "Momentum"), optim::MomentumOptions{learning_rate(lr, "Momentum"), momentum, nesterov, wd, clip_of(clip)});
       }, py::arg("learning_rate") = 0.001, py::arg("momentum") = 0.9, py::arg("parameters") = py::none(),
       py::arg("use_nesterov") = false, py::arg("weight_decay") = 0.0, py::arg("grad_clip") = py::none());
  o.def("Adam", [](py::handle lr, double b1, double b2, double eps, py::object params, double wd, py::handle clip)
            -> std::shared_ptr<Optimizer> {
         return std::make_shared<optim::Adam>(params_of(params, "Adam"),
                                              optim::AdamOptions{learning_rate(lr, "Adam"), b1, b2, eps, wd, clip_of(clip)});
       }, py::arg("learning_rate") = 0.001, py::arg("beta1") = 0.9, py::arg("beta2") = 0.999,
       py::arg("epsilon") = 1e-8, py::arg("parameters") = py::none(), py::arg("weight_decay") = 0.0,
       py::arg("grad_clip") = py::none());
  o.def("AdamW", [](py::handle lr, double b1, double b2, double eps, py::object params, double wd, py::handle clip)
            -> std::shared_ptr<Optimizer> {
         optim::AdamWOptions opt;
         opt.learning_rate = learning_rate(lr, "AdamW");
         opt.beta1 = b1;
         opt.beta2 = b2;
         opt.epsilon = eps;
         opt.weight_decay = wd;
         opt.grad_clip = clip_of(clip);
         return std::make_shared<optim::AdamW>(params_of(params, "AdamW"), opt);
       }, py::arg("learning_rate") = 0.001, py::arg("beta1") = 0.9, py::arg("beta2") = 0.999,
       py::arg("epsilon") = 1e-8, py::arg("parameters") = py::none(), py::arg("weight_decay") = 0.01,
       py::arg("grad_clip") = py::none());
}

}  // namespace

std::vector<Tensor> params_of(py::handle parameters, const char* op) {
  if (parameters.is_none()) {
    throw py::value_error(std::string(op) + ": parameters is None; pass model.parameters()");
  }
  constexpr const char* kAccepted = "an iterable of Tensors (model.parameters())";
  if (!py::isinstance<py::iterable>(parameters)) throw_bad_argument(parameters, op, "parameters", kAccepted);
  std::vector<Tensor> out;
  for (py::handle p : parameters) {
    if (py::isinstance<py::dict>(p)) {
      throw py::type_error(std::string(op) + "(): argument 'parameters' holds a dict: parameter groups (per-group "
                           "learning_rate or weight_decay) are not supported; pass " + kAccepted +
                           " and one optimizer per group");
    }
    out.push_back(cast_arg<Tensor>(p, op, "parameters", kAccepted));
  }
  if (out.empty()) throw py::value_error(std::string(op) + ": the parameter list is empty");
  return out;
}

optim::LearningRate learning_rate(py::handle lr, const char* op) {
  if (py::isinstance<LRScheduler>(lr)) return lr.cast<std::shared_ptr<LRScheduler>>();
  return cast_arg<double>(lr, op, "learning_rate", "a float or an LRScheduler");
}

ClipPtr clip_of(py::handle grad_clip) {
  if (grad_clip.is_none()) return nullptr;
  if (!py::isinstance<GradientClip>(grad_clip)) {
    throw py::type_error("grad_clip must be a ClipGradByGlobalNorm, ClipGradByNorm or ClipGradByValue");
  }
  return grad_clip.cast<ClipPtr>();
}

void bind_optim(py::module_& m) {
  py::module_ o = m.def_submodule("optimizer", "crew::optim: optimizers, LR schedules, gradient clipping");
  bind_schedules(o);
  py::module_ lr = o.attr("lr").cast<py::module_>();
  bind_more_schedules(lr);
  bind_clips(o);
  bind_optimizers(o);
  bind_more_optimizers(o);
}

}  // namespace crew::python

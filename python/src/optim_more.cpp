// crew._C.optimizer, continued: the schedules PolynomialDecay, NoamDecay, LambdaDecay, MultiplicativeDecay,
// NaturalExpDecay, InverseTimeDecay, OneCycleLR, CyclicLR, ReduceOnPlateau and the optimizers
// RMSProp, Adagrad, Adadelta, Adamax, Lamb, with Paddle 2.4's argument names and defaults.
// python/crew/optimizer adds verbose, parameter groups and the per-parameter rules.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "crew/optim/optim.h"
#include "optim_args.h"

namespace crew::python {

namespace {

using optim::LRScheduler;
using optim::Optimizer;

template <typename S, typename... Args>
void bind_schedule(py::module_& lr, const char* name, Args&&... args) {
  py::class_<S, LRScheduler, std::shared_ptr<S>>(lr, name).def(std::forward<Args>(args)...);
}

// One of `names` (Paddle's string choices), as its index; ValueError naming the choices.
size_t choice(const std::string& value, std::initializer_list<const char*> names, const char* op,
              const char* arg) {
  size_t i = 0;
  std::string listed;
  for (const char* n : names) {
    if (value == n) return i;
    listed += (i++ ? ", '" : "'") + std::string(n) + "'";
  }
  throw py::value_error(std::string(op) + "(): " + arg + " must be one of " + listed + ", got '" + value +
                        "'");
}

// A Python callable as a std::function (pybind11's holder takes the GIL to call and to free it).
template <typename Fn>
Fn callable_of(py::handle fn, const char* op, const char* arg) {
  if (!PyCallable_Check(fn.ptr())) throw_bad_argument(fn, op, arg, "a callable");
  return fn.cast<Fn>();
}

void bind_formula_schedules(py::module_& lr) {
  bind_schedule<optim::PolynomialDecay>(
      lr, "PolynomialDecay", py::init<double, int64_t, double, double, bool, int64_t>(),
      py::arg("learning_rate"), py::arg("decay_steps"), py::arg("end_lr") = 0.0001, py::arg("power") = 1.0,
      py::arg("cycle") = false, py::arg("last_epoch") = -1);
  bind_schedule<optim::NoamDecay>(lr, "NoamDecay", py::init<double, int64_t, double, int64_t>(),
                                  py::arg("d_model"), py::arg("warmup_steps"), py::arg("learning_rate") = 1.0,
                                  py::arg("last_epoch") = -1);
  bind_schedule<optim::NaturalExpDecay>(lr, "NaturalExpDecay", py::init<double, double, int64_t>(),
                                        py::arg("learning_rate"), py::arg("gamma"),
                                        py::arg("last_epoch") = -1);
  bind_schedule<optim::InverseTimeDecay>(lr, "InverseTimeDecay", py::init<double, double, int64_t>(),
                                         py::arg("learning_rate"), py::arg("gamma"),
                                         py::arg("last_epoch") = -1);
  bind_schedule<optim::LambdaDecay>(
      lr, "LambdaDecay", py::init([](double learning_rate, py::handle lr_lambda, int64_t last_epoch) {
        auto fn = callable_of<std::function<double(int64_t)>>(lr_lambda, "LambdaDecay", "lr_lambda");
        return std::make_shared<optim::LambdaDecay>(learning_rate, std::move(fn), last_epoch);
      }),
      py::arg("learning_rate"), py::arg("lr_lambda"), py::arg("last_epoch") = -1);
  bind_schedule<optim::MultiplicativeDecay>(
      lr, "MultiplicativeDecay", py::init([](double learning_rate, py::handle lr_lambda, int64_t last_epoch) {
        auto fn = callable_of<std::function<double(int64_t)>>(lr_lambda, "MultiplicativeDecay", "lr_lambda");
        return std::make_shared<optim::MultiplicativeDecay>(learning_rate, std::move(fn), last_epoch);
      }),
      py::arg("learning_rate"), py::arg("lr_lambda"), py::arg("last_epoch") = -1);
}

void bind_cycle_schedules(py::module_& lr) {
  bind_schedule<optim::OneCycleLR>(
      lr, "OneCycleLR",
      py::init([](double max_lr, int64_t total_steps, double divide_factor, double end_lr, double phase_pct,
                  const std::string& anneal, bool three_phase, int64_t last_epoch) {
        optim::OneCycleLROptions o{max_lr,      total_steps, divide_factor,
                                   end_lr,      phase_pct,   optim::AnnealStrategy::COS,
                                   three_phase, last_epoch};
        o.anneal_strategy = static_cast<optim::AnnealStrategy>(
            choice(anneal, {"cos", "linear"}, "OneCycleLR", "anneal_strategy"));
        return std::make_shared<optim::OneCycleLR>(o);
      }),
      py::arg("max_learning_rate"), py::arg("total_steps"), py::arg("divide_factor") = 25.0,
      py::arg("end_learning_rate") = 0.0001, py::arg("phase_pct") = 0.3, py::arg("anneal_strategy") = "cos",
      py::arg("three_phase") = false, py::arg("last_epoch") = -1);
  bind_schedule<optim::CyclicLR>(
      lr, "CyclicLR",
      py::init([](double base_lr, double max_lr, int64_t up, py::handle down, const std::string& mode,
                  double exp_gamma, py::handle scale_fn, const std::string& scale_mode, int64_t last_epoch) {
        optim::CyclicLROptions o;
        o.base_learning_rate = base_lr;
        o.max_learning_rate = max_lr;
        o.step_size_up = up;
        if (!down.is_none()) {
          o.step_size_down = cast_arg<int64_t>(down, "CyclicLR", "step_size_down", "an int or None");
          if (o.step_size_down <= 0) throw py::value_error("CyclicLR(): step_size_down must be positive");
        }
        o.exp_gamma = exp_gamma;
        o.last_epoch = last_epoch;
        if (scale_fn.is_none()) {
          o.mode = static_cast<optim::CyclicMode>(
              choice(mode, {"triangular", "triangular2", "exp_range"}, "CyclicLR", "mode"));
        } else {
          o.scale_fn = callable_of<std::function<double(double)>>(scale_fn, "CyclicLR", "scale_fn");
          o.scale_mode = static_cast<optim::CyclicScaleMode>(
              choice(scale_mode, {"cycle", "iterations"}, "CyclicLR", "scale_mode"));
        }
        return std::make_shared<optim::CyclicLR>(std::move(o));
      }),
      py::arg("base_learning_rate"), py::arg("max_learning_rate"), py::arg("step_size_up"),
      py::arg("step_size_down") = py::none(), py::arg("mode") = "triangular", py::arg("exp_gamma") = 1.0,
      py::arg("scale_fn") = py::none(), py::arg("scale_mode") = "cycle", py::arg("last_epoch") = -1);
}

void bind_plateau(py::module_& lr) {
  py::class_<optim::ReduceOnPlateau, LRScheduler, std::shared_ptr<optim::ReduceOnPlateau>>(lr,
                                                                                           "ReduceOnPlateau")
      .def(py::init([](double learning_rate, const std::string& mode, double factor, int64_t patience,
                       double threshold, const std::string& threshold_mode, int64_t cooldown, double min_lr,
                       double epsilon) {
             optim::ReduceOnPlateauOptions o;
             o.learning_rate = learning_rate;
             o.mode_max = choice(mode, {"min", "max"}, "ReduceOnPlateau", "mode") == 1;
             o.factor = factor;
             o.patience = patience;
             o.threshold = threshold;
             o.threshold_abs =
                 choice(threshold_mode, {"rel", "abs"}, "ReduceOnPlateau", "threshold_mode") == 1;
             o.cooldown = cooldown;
             o.min_lr = min_lr;
             o.epsilon = epsilon;
             return std::make_shared<optim::ReduceOnPlateau>(o);
           }),
           py::arg("learning_rate"), py::arg("mode") = "min", py::arg("factor") = 0.1,
           py::arg("patience") = 10, py::arg("threshold") = 1e-4, py::arg("threshold_mode") = "rel",
           py::arg("cooldown") = 0, py::arg("min_lr") = 0.0, py::arg("epsilon") = 1e-8)
      .def(
          "step",
          [](optim::ReduceOnPlateau& s, double metrics, py::object epoch) {
            if (epoch.is_none())
              s.step(metrics);
            else
              s.step(metrics, cast_arg<int64_t>(epoch, "ReduceOnPlateau.step", "epoch", "an int or None"));
          },
          py::arg("metrics"), py::arg("epoch") = py::none())
      .def_property_readonly("best",
                             [](const optim::ReduceOnPlateau& s) -> py::object {
                               return s.best() ? py::object(py::float_(*s.best())) : py::object(py::none());
                             })
      .def_property_readonly("num_bad_epochs", &optim::ReduceOnPlateau::num_bad_epochs)
      .def_property_readonly("cooldown_counter", &optim::ReduceOnPlateau::cooldown_counter);
}

using OptPtr = std::shared_ptr<Optimizer>;

void bind_rmsprop_adagrad(py::module_& o) {
  o.def(
      "RMSProp",
      [](py::handle lr, double rho, double eps, double momentum, bool centered, py::object params, double wd,
         py::handle clip) -> OptPtr {
        return std::make_shared<optim::RMSProp>(params_of(params, "RMSProp"),
                                                optim::RMSPropOptions{learning_rate(lr, "RMSProp"), rho, eps,
                                                                      momentum, centered, wd, clip_of(clip)});
      },
      py::arg("learning_rate"), py::arg("rho") = 0.95, py::arg("epsilon") = 1e-6, py::arg("momentum") = 0.0,
      py::arg("centered") = false, py::arg("parameters") = py::none(), py::arg("weight_decay") = 0.0,
      py::arg("grad_clip") = py::none());
  o.def(
      "Adagrad",
      [](py::handle lr, double eps, py::object params, double wd, py::handle clip, double initial) -> OptPtr {
        return std::make_shared<optim::Adagrad>(
            params_of(params, "Adagrad"),
            optim::AdagradOptions{learning_rate(lr, "Adagrad"), eps, initial, wd, clip_of(clip)});
      },
      py::arg("learning_rate"), py::arg("epsilon") = 1e-6, py::arg("parameters") = py::none(),
      py::arg("weight_decay") = 0.0, py::arg("grad_clip") = py::none(),
      py::arg("initial_accumulator_value") = 0.0);
  o.def(
      "Adadelta",
      [](py::handle lr, double eps, double rho, py::object params, double wd, py::handle clip) -> OptPtr {
        return std::make_shared<optim::Adadelta>(
            params_of(params, "Adadelta"),
            optim::AdadeltaOptions{learning_rate(lr, "Adadelta"), eps, rho, wd, clip_of(clip)});
      },
      py::arg("learning_rate") = 0.001, py::arg("epsilon") = 1e-6, py::arg("rho") = 0.95,
      py::arg("parameters") = py::none(), py::arg("weight_decay") = 0.0, py::arg("grad_clip") = py::none());
}

void bind_adamax_lamb(py::module_& o) {
  o.def(
      "Adamax",
      [](py::handle lr, double b1, double b2, double eps, py::object params, double wd,
         py::handle clip) -> OptPtr {
        return std::make_shared<optim::Adamax>(
            params_of(params, "Adamax"),
            optim::AdamaxOptions{learning_rate(lr, "Adamax"), b1, b2, eps, wd, clip_of(clip)});
      },
      py::arg("learning_rate") = 0.001, py::arg("beta1") = 0.9, py::arg("beta2") = 0.999,
      py::arg("epsilon") = 1e-8, py::arg("parameters") = py::none(), py::arg("weight_decay") = 0.0,
      py::arg("grad_clip") = py::none());
  // exclude_from_weight_decay: one bool per parameter (python/crew/optimizer asks Paddle's
  // exclude_from_weight_decay_fn about each parameter), or None.
  o.def(
      "Lamb",
      [](py::handle lr, double wd, double b1, double b2, double eps, py::object params, py::handle clip,
         py::handle exclude) -> OptPtr {
        std::vector<Tensor> ps = params_of(params, "Lamb");
        optim::LambOptions opt;
        opt.learning_rate = learning_rate(lr, "Lamb");
        opt.lamb_weight_decay = wd;
        opt.beta1 = b1;
        opt.beta2 = b2;
        opt.epsilon = eps;
        opt.grad_clip = clip_of(clip);
        if (!exclude.is_none()) {
          auto flags = cast_arg<std::vector<bool>>(exclude, "Lamb", "exclude_from_weight_decay",
                                                   "a list of bools, one per parameter");
          if (flags.size() != ps.size()) {
            throw py::value_error("Lamb(): exclude_from_weight_decay has " + std::to_string(flags.size()) +
                                  " entries for " + std::to_string(ps.size()) + " parameters");
          }
          opt.exclude_from_weight_decay = [flags](size_t i, const std::string&) { return flags[i]; };
        }
        return std::make_shared<optim::Lamb>(std::move(ps), std::move(opt));
      },
      py::arg("learning_rate") = 0.001, py::arg("lamb_weight_decay") = 0.01, py::arg("beta1") = 0.9,
      py::arg("beta2") = 0.999, py::arg("epsilon") = 1e-6, py::arg("parameters") = py::none(),
      py::arg("grad_clip") = py::none(), py::arg("exclude_from_weight_decay") = py::none());
}

}  // namespace

void bind_more_schedules(py::module_& lr) {
  bind_formula_schedules(lr);
  bind_cycle_schedules(lr);
  bind_plateau(lr);
}

void bind_more_optimizers(py::module_& o) {
  bind_rmsprop_adagrad(o);
  bind_adamax_lamb(o);
}

}  // namespace crew::python

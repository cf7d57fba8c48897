// crew._C.amp: the autocast state (crew/autograd/autocast.h) as a context object, and
// crew::optim::GradScaler, its found-inf flag agreed by crew::dist::any_rank. python/crew/amp
// holds Paddle's names.
#include <pybind11/stl.h>

#include <optional>

#include "bindings.h"
#include "crew/autograd/autocast.h"
#include "crew/distributed/collective/any_rank.h"
#include "crew/optim/grad_scaler.h"

namespace crew::python {
namespace {

amp::AmpLevel parse_level(const std::string& level) {
  if (level == "O0") return amp::AmpLevel::O0;
  if (level == "O1") return amp::AmpLevel::O1;
  if (level == "O2") return amp::AmpLevel::O2;
  throw py::value_error("auto_cast: level must be 'O0', 'O1' or 'O2', got '" + level + "'");
}

const char* level_name(amp::AmpLevel level) {
  switch (level) {
    case amp::AmpLevel::O0:
      return "O0";
    case amp::AmpLevel::O1:
      return "O1";
    case amp::AmpLevel::O2:
      return "O2";
  }
  return "O1";
}

// One `with auto_cast(...)` block: the options, and the guard while inside. Reentering the
// same object nests a second time only after it was left.
struct AutocastScope {
  amp::AutocastOptions options;
  std::optional<amp::AutocastGuard> guard;
};

// The C++ optimizer behind a Python one (RuledOptimizer keeps it as _core).
optim::Optimizer& core_of(py::handle opt) {
  py::object core =
      py::hasattr(opt, "_core") ? py::object(opt.attr("_core")) : py::reinterpret_borrow<py::object>(opt);
  if (!py::isinstance<optim::Optimizer>(core))
    throw_bad_argument(opt, "GradScaler", "optimizer", "a crew optimizer");
  return core.cast<optim::Optimizer&>();
}

constexpr const char* kIntKeys[] = {"incr_every_n_steps", "decr_every_n_nan_or_inf", "incr_count",
                                    "decr_count", "use_dynamic_loss_scaling"};

// GradScaler's state as Python numbers (python/crew/amp wraps "scale" as Paddle does).
py::dict scaler_state(const optim::GradScaler& s) {
  py::dict d;
  for (const auto& [key, t] : s.state_dict()) {
    const double v = t.item();
    if (key == "use_dynamic_loss_scaling")
      d[key.c_str()] = v != 0.0;
    else if (t.dtype() == DType::INT64)
      d[key.c_str()] = static_cast<int64_t>(v);
    else
      d[key.c_str()] = v;
  }
  return d;
}

void load_scaler_state(optim::GradScaler& s, const py::dict& d) {
  StateDict sd;
  for (auto [k, v] : d) {
    const auto key =
        cast_arg<std::string>(k, "GradScaler.load_state_dict", "state_dict", "a dict of str -> value");
    const py::object value = py::reinterpret_borrow<py::object>(v);
    const py::object flat =
        py::hasattr(value, "reshape") ? value.attr("reshape")(-1).attr("__getitem__")(0) : value;
    const double x = cast_arg<double>(flat, "GradScaler.load_state_dict", key.c_str(), "a number");
    bool is_int = false;
    for (const char* k2 : kIntKeys) is_int = is_int || key == k2;
    sd.insert(key, Tensor::scalar(x, is_int ? DType::INT64 : DType::FLOAT64));
  }
  s.set_state_dict(sd);
}

void bind_grad_scaler(py::module_& a) {
  using optim::GradScaler;
  py::class_<GradScaler>(a, "GradScaler")
      .def(py::init([](bool enable, double init, double incr, double decr, int64_t n_incr, int64_t n_decr,
                       bool dyn) {
             optim::GradScalerOptions o{enable, init, incr, decr, n_incr, n_decr, dyn};
             return std::make_unique<GradScaler>(o, [](bool found) { return dist::any_rank(found); });
           }),
           py::arg("enable") = true, py::arg("init_loss_scaling") = 32768.0, py::arg("incr_ratio") = 2.0,
           py::arg("decr_ratio") = 0.5, py::arg("incr_every_n_steps") = 1000,
           py::arg("decr_every_n_nan_or_inf") = 2, py::arg("use_dynamic_loss_scaling") = true)
      .def("unscale_",
           [](GradScaler& s, py::handle opt) {
             optim::Optimizer& core = core_of(opt);
             py::gil_scoped_release nogil;
             s.unscale_(core);
           })
      // The optimizer's own step() (Python's, with its per-parameter rules) does the update.
      .def("step",
           [](GradScaler& s, py::object opt) {
             optim::Optimizer& core = core_of(opt);
             py::gil_scoped_release nogil;
             return s.step(core, [&opt] {
               py::gil_scoped_acquire gil;
               opt.attr("step")();
             });
           })
      .def("update", &GradScaler::update)
      .def_property_readonly("scale", &GradScaler::scale)
      .def_property_readonly("found_inf", &GradScaler::found_inf)
      .def_property_readonly("enable", &GradScaler::is_enable)
      .def_property_readonly("use_dynamic_loss_scaling",
                             [](const GradScaler& s) { return s.options().use_dynamic_loss_scaling; })
      .def_property(
          "init_loss_scaling", [](const GradScaler& s) { return s.options().init_loss_scaling; },
          &GradScaler::set_init_loss_scaling)
      .def_property(
          "incr_ratio", [](const GradScaler& s) { return s.options().incr_ratio; },
          &GradScaler::set_incr_ratio)
      .def_property(
          "decr_ratio", [](const GradScaler& s) { return s.options().decr_ratio; },
          &GradScaler::set_decr_ratio)
      .def_property(
          "incr_every_n_steps", [](const GradScaler& s) { return s.options().incr_every_n_steps; },
          &GradScaler::set_incr_every_n_steps)
      .def_property(
          "decr_every_n_nan_or_inf", [](const GradScaler& s) { return s.options().decr_every_n_nan_or_inf; },
          &GradScaler::set_decr_every_n_nan_or_inf)
      .def("state_values", &scaler_state)
      .def("load_state_values", &load_scaler_state);
}

}  // namespace

void bind_amp(py::module_& m) {
  py::module_ a = m.def_submodule("amp", "crew::amp: autocast state and the loss scaler's kernel");
  py::class_<AutocastScope>(a, "AutocastScope")
      .def(py::init([](bool enabled, const std::string& dtype, const std::string& level,
                       std::set<std::string> white, std::set<std::string> black) {
             auto s = std::make_unique<AutocastScope>();
             s->options.enabled = enabled;
             s->options.dtype = parse_dtype(dtype);
             s->options.level = parse_level(level);
             s->options.custom_white_list = std::move(white);
             s->options.custom_black_list = std::move(black);
             // Validate now (the guard's checks), so a bad argument fails at auto_cast(...).
             { amp::AutocastGuard probe(s->options); }
             return s;
           }),
           py::arg("enabled"), py::arg("dtype"), py::arg("level"), py::arg("custom_white_list"),
           py::arg("custom_black_list"))
      .def("__enter__",
           [](AutocastScope& s) {
             if (s.guard) throw py::value_error("auto_cast: this context is already active");
             s.guard.emplace(s.options);
           })
      .def("__exit__", [](AutocastScope& s, py::args) { s.guard.reset(); });
  a.def(
      "state",
      [] {
        const amp::AutocastOptions& s = amp::autocast_state();
        py::dict d;
        d["enabled"] = amp::autocast_enabled();
        d["dtype"] = dtype_name(s.dtype);
        d["level"] = level_name(s.level);
        d["custom_white_list"] = s.custom_white_list;
        d["custom_black_list"] = s.custom_black_list;
        return d;
      },
      "The calling thread's autocast state.");
  a.def("default_white_list", &amp::default_white_list);
  a.def("default_black_list", &amp::default_black_list);
  bind_grad_scaler(a);
}

}  // namespace crew::python

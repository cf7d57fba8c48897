// crew._C.amp: the autocast state (crew/autograd/autocast.h) as a context object, and the
// loss scaler's kernel (crew/tensor/kernels/amp.h). python/crew/amp holds Paddle's names.
#include "crew/tensor/kernels/amp.h"

#include <pybind11/stl.h>

#include <optional>

#include "bindings.h"
#include "crew/autograd/autocast.h"

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
  a.def(
      "unscale_and_check_finite_",
      [](const std::vector<Tensor>& grads, double inv_scale) {
        py::gil_scoped_release nogil;
        bool found = false;
        for (const Tensor& g : grads) found = kernels::unscale_and_check_finite_(g, inv_scale) || found;
        return found;
      },
      py::arg("grads"), py::arg("inv_scale"),
      "Divides each gradient by the scale in place; True when any held an inf or a NaN.");
}

}  // namespace crew::python

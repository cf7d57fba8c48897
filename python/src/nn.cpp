// crew._C.nn: the C++ layers (each a crew::nn::Layer) and crew::nn::functional. The
// Python package wraps each layer in a Python crew.nn.Layer (python/crew/nn/layer.py), so
// Python-defined layers hold C++ ones as sublayers, as the seed's MyNet does.
#include <pybind11/stl.h>

#include "bindings.h"
#include "crew/autograd/ops.h"
#include "crew/distributed/sync_batch_norm/sync_batch_norm.h"
#include "crew/nn/models/my_net.h"
#include "crew/nn/nn.h"

namespace crew::python {

namespace {

using nn::Layer;
using LayerPtr = std::shared_ptr<Layer>;
using Release = py::call_guard<py::gil_scoped_release>;
namespace F = nn::functional;

// Paddle's sizes: an int or a pair.
nn::Size2 size2(py::handle v, const char* what) {
  if (PyLong_Check(v.ptr())) return nn::Size2(cast_arg<int64_t>(v, what, "", "an int or 2 ints"));
  auto pair = cast_arg<std::vector<int64_t>>(v, what, "", "an int or 2 ints");
  if (pair.size() != 2) {
    throw py::value_error(std::string(what) + ": expected an int or 2 ints, got " + std::to_string(pair.size()));
  }
  return nn::Size2(pair[0], pair[1]);
}

StateDict state_dict_from(const py::dict& d) {
  StateDict sd;
  for (auto [k, v] : d) {
    sd.insert(cast_arg<std::string>(k, "set_state_dict", "state_dict", "a dict of str -> Tensor"),
              cast_arg<Tensor>(v, "set_state_dict", "state_dict", "a dict of str -> Tensor"));
  }
  return sd;
}

void bind_layer_base(py::module_& n) {
  py::class_<Layer, LayerPtr>(n, "Layer")
      .def("forward", &Layer::forward, Release())
      .def("__call__", &Layer::forward, Release())
      .def("named_parameters", [](const Layer& l) { return l.named_parameters(); })
      .def("named_buffers", [](const Layer& l) { return l.named_buffers(); })
      .def("train", &Layer::train)
      .def("eval", &Layer::eval)
      .def_property_readonly("training", &Layer::training)
      .def_property_readonly("full_name", &Layer::full_name)
      .def("state_dict", [](const Layer& l) {
        py::dict out;
        for (const auto& [k, v] : l.state_dict()) out[py::str(k)] = v;
        return out;
      })
      .def("set_state_dict", [](Layer& l, const py::dict& d, bool strict) { l.set_state_dict(state_dict_from(d), strict); },
           py::arg("state_dict"), py::arg("strict") = true);
}

// MaxPool2D / AvgPool2D(kernel_size, stride=None (= kernel_size), padding=0).
template <typename Pool>
void bind_pool(py::module_& n, const char* name) {
  const std::string what = name;
  py::class_<Pool, Layer, std::shared_ptr<Pool>>(n, name)
      .def(py::init([what](py::object k, py::object s, py::object p) {
             return std::make_shared<Pool>(size2(k, (what + " kernel_size").c_str()),
                                           s.is_none() ? nn::Size2(0) : size2(s, (what + " stride").c_str()),
                                           size2(p, (what + " padding").c_str()));
           }), py::arg("kernel_size"), py::arg("stride") = py::none(), py::arg("padding") = 0);
}

void bind_layers(py::module_& n) {
  py::class_<nn::Conv2D, Layer, std::shared_ptr<nn::Conv2D>>(n, "Conv2D")
      .def(py::init([](int64_t in, int64_t out, py::object k, py::object stride, py::object padding,
                       py::object dilation, int64_t groups, bool bias) {
             nn::Conv2DOptions o{size2(stride, "Conv2D stride"), size2(padding, "Conv2D padding"),
                                 size2(dilation, "Conv2D dilation"), groups, bias};
             return std::make_shared<nn::Conv2D>(in, out, size2(k, "Conv2D kernel_size"), o);
           }), py::arg("in_channels"), py::arg("out_channels"), py::arg("kernel_size"), py::arg("stride") = 1,
           py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("groups") = 1, py::arg("bias") = true);
  py::class_<nn::Linear, Layer, std::shared_ptr<nn::Linear>>(n, "Linear")
      .def(py::init<int64_t, int64_t, bool>(), py::arg("in_features"), py::arg("out_features"),
           py::arg("bias") = true);
  bind_pool<nn::MaxPool2D>(n, "MaxPool2D");
  bind_pool<nn::AvgPool2D>(n, "AvgPool2D");
  py::class_<nn::BatchNorm2D, Layer, std::shared_ptr<nn::BatchNorm2D>>(n, "BatchNorm2D")
      .def(py::init<int64_t, double, double>(), py::arg("num_features"), py::arg("momentum") = 0.9,
           py::arg("epsilon") = 1e-5);
  py::class_<nn::Dropout, Layer, std::shared_ptr<nn::Dropout>>(n, "Dropout")
      .def(py::init([](double p) { return std::make_shared<nn::Dropout>(p); }), py::arg("p") = 0.5);
  py::class_<nn::Flatten, Layer, std::shared_ptr<nn::Flatten>>(n, "Flatten")
      .def(py::init<int64_t, int64_t>(), py::arg("start_axis") = 1, py::arg("stop_axis") = -1);
  py::class_<nn::ReLU, Layer, std::shared_ptr<nn::ReLU>>(n, "ReLU").def(py::init<>());
  py::class_<nn::Sigmoid, Layer, std::shared_ptr<nn::Sigmoid>>(n, "Sigmoid").def(py::init<>());
  py::class_<nn::Tanh, Layer, std::shared_ptr<nn::Tanh>>(n, "Tanh").def(py::init<>());
  py::class_<nn::GELU, Layer, std::shared_ptr<nn::GELU>>(n, "GELU")
      .def(py::init<bool>(), py::arg("approximate") = false);
  py::class_<nn::Softmax, Layer, std::shared_ptr<nn::Softmax>>(n, "Softmax")
      .def(py::init<int64_t>(), py::arg("axis") = -1);
  // The seed's network in C++ (train_cnn's), e.g. to check a Python MyNet against it.
  py::class_<nn::models::MyNet, Layer, std::shared_ptr<nn::models::MyNet>>(n, "MyNet")
      .def(py::init<int64_t, int64_t, int64_t>(), py::arg("num_classes") = 10, py::arg("in_channels") = 1,
           py::arg("image_size") = 28);
}

// SyncBatchNorm (a BatchNorm2D over the default group); convert_sync_batchnorm installs the
// sync on every BatchNorm2D of a C++ layer tree in place (python/crew/nn/sync_batch_norm.py
// also swaps the Python wrappers, as Paddle returns new layers).
void bind_sync_batch_norm(py::module_& n) {
  py::class_<SyncBatchNorm, nn::BatchNorm2D, std::shared_ptr<SyncBatchNorm>>(n, "SyncBatchNorm")
      .def(py::init([](int64_t num_features, double momentum, double epsilon) {
             return std::make_shared<SyncBatchNorm>(num_features, momentum, epsilon);
           }), py::arg("num_features"), py::arg("momentum") = 0.9, py::arg("epsilon") = 1e-5)
      .def_static("convert_sync_batchnorm",
                  [](const LayerPtr& layer) { return SyncBatchNorm::convert_sync_batchnorm(layer); },
                  py::arg("layer"));
  n.def("_is_synced_batch_norm", [](const LayerPtr& layer) {
    auto bn = std::dynamic_pointer_cast<nn::BatchNorm2D>(layer);
    return bn != nullptr && bn->stats_sync() != nullptr;
  });
}

// Paddle 2.4 (the seed's version) gives reduced losses shape [1]: the seed prints
// "loss is: [2.4006782]".
Tensor as_paddle_loss(Tensor loss, F::Reduction r) {
  return r == F::Reduction::NONE ? loss : reshape(loss, {1});
}

F::Reduction reduction(const std::string& r) {
  if (r == "mean") return F::Reduction::MEAN;
  if (r == "sum") return F::Reduction::SUM;
  if (r == "none") return F::Reduction::NONE;
  throw py::value_error("reduction='" + r + "': expected 'mean', 'sum' or 'none'");
}

void bind_functional(py::module_& n) {
  py::module_ f = n.def_submodule("functional", "crew::nn::functional");
  f.def("relu", &F::relu, Release());
  f.def("sigmoid", &F::sigmoid, Release());
  f.def("tanh", &F::tanh, Release());
  f.def("gelu", &F::gelu, py::arg("x"), py::arg("approximate") = false, Release());
  f.def("softmax", &F::softmax, py::arg("x"), py::arg("axis") = -1, Release());
  f.def("log_softmax", &F::log_softmax, py::arg("x"), py::arg("axis") = -1, Release());
  f.def("flatten", &F::flatten, py::arg("x"), py::arg("start_axis") = 1, py::arg("stop_axis") = -1, Release());
  f.def("linear", &F::linear, py::arg("x"), py::arg("weight"), py::arg("bias"), Release());
  f.def("cross_entropy", [](const Tensor& logits, const Tensor& labels, const std::string& r) {
          const F::Reduction red = reduction(r);
          py::gil_scoped_release nogil;
          return as_paddle_loss(F::cross_entropy(logits, labels, red), red);
        }, py::arg("input"), py::arg("label"), py::arg("reduction") = "mean");
  f.def("mse_loss", [](const Tensor& input, const Tensor& target, const std::string& r) {
          const F::Reduction red = reduction(r);
          py::gil_scoped_release nogil;
          return as_paddle_loss(F::mse_loss(input, target, red), red);
        }, py::arg("input"), py::arg("label"), py::arg("reduction") = "mean");
  f.def("accuracy", &F::accuracy, py::arg("input"), py::arg("label"), py::arg("k") = 1, Release());
}

}  // namespace

void bind_nn(py::module_& m) {
  py::module_ n = m.def_submodule("nn", "crew::nn: layers and functional");
  bind_layer_base(n);
  bind_layers(n);
  bind_sync_batch_norm(n);
  bind_functional(n);
}

}  // namespace crew::python

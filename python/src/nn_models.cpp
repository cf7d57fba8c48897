// crew._C.nn.models: the C++ networks (crew/nn/models/), each one crew::nn::Layer whose
// forward runs without the GIL. python/crew/vision/models.py (ResNet, resnet18/34) and
// python/crew/text/ (GPT) wrap them as Python crew.nn.Layers, so parameters(), state_dict()
// (Paddle's keys), train()/eval() and DataParallel see the C++ tensors.
#include <pybind11/stl.h>

#include "bindings.h"
#include "crew/nn/models/gpt.h"
#include "crew/nn/models/resnet.h"

namespace crew::python {

namespace {

using nn::Layer;
namespace models = nn::models;

void bind_resnet(py::module_& mm) {
  // BasicBlock is bound as a type only: ResNet builds its blocks (Paddle's ResNet(block, depth)
  // takes the class).
  py::class_<models::BasicBlock, Layer, std::shared_ptr<models::BasicBlock>>(mm, "BasicBlock");
  py::class_<models::ResNet, Layer, std::shared_ptr<models::ResNet>>(mm, "ResNet")
      .def(py::init([](int depth, int64_t num_classes, bool with_pool) {
             if (depth != 18 && depth != 34) {
               throw py::value_error("ResNet: depth " + std::to_string(depth) +
                                     " is not supported; crew builds BasicBlock ResNets of depth 18 or 34");
             }
             return std::make_shared<models::ResNet>(depth, num_classes, with_pool);
           }), py::arg("depth") = 18, py::arg("num_classes") = 1000, py::arg("with_pool") = true)
      .def_property_readonly("num_classes", &models::ResNet::num_classes);
}

void bind_gpt(py::module_& mm) {
  py::class_<models::GPT, Layer, std::shared_ptr<models::GPT>>(mm, "GPT")
      .def(py::init([](int64_t vocab_size, int64_t block_size, int64_t n_layer, int64_t n_head, int64_t n_embd,
                       double dropout) {
             return std::make_shared<models::GPT>(
                 models::GPTConfig{vocab_size, block_size, n_layer, n_head, n_embd, dropout});
           }), py::arg("vocab_size") = 256, py::arg("block_size") = 128, py::arg("n_layer") = 4,
           py::arg("n_head") = 4, py::arg("n_embd") = 256, py::arg("dropout") = 0.0)
      .def("generate", [](models::GPT& gpt, const std::vector<int64_t>& prompt, int64_t count, double temperature) {
             return gpt.generate(prompt, count, temperature);
           }, py::arg("prompt"), py::arg("count"), py::arg("temperature") = 1.0,
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("config", [](const models::GPT& gpt) {
        const models::GPTConfig& c = gpt.config();
        py::dict d;
        d["vocab_size"] = c.vocab_size;
        d["block_size"] = c.block_size;
        d["n_layer"] = c.n_layer;
        d["n_head"] = c.n_head;
        d["n_embd"] = c.n_embd;
        d["dropout"] = c.dropout;
        return d;
      });
}

}  // namespace

void bind_nn_models(py::module_& m) {
  py::module_ mm = m.attr("nn").cast<py::module_>().def_submodule("models", "crew::nn::models: C++ networks");
  bind_resnet(mm);
  bind_gpt(mm);
}

}  // namespace crew::python

// crew._C.nn, the transformer-era layers: LayerNorm, Embedding, AdaptiveAvgPool2D and the
// functional forms (layer_norm, embedding, adaptive_avg_pool2d,
// scaled_dot_product_attention). Registered after nn.cpp's part (they subclass its Layer
// and join its functional submodule); python/crew/nn/ gives them Paddle's signatures.
#include <pybind11/stl.h>

#include "bindings.h"
#include "crew/nn/embedding.h"
#include "crew/nn/functional.h"
#include "crew/nn/layer_norm.h"
#include "crew/nn/pooling.h"

namespace crew::python {

namespace {

using nn::Layer;
namespace F = nn::functional;

// Paddle's output_size: an int or a pair of ints (None entries, "keep the input size", are
// not supported).
nn::Size2 output_size2(py::handle v) {
  constexpr const char* kAccepted = "an int or 2 ints";
  if (PyLong_Check(v.ptr())) return nn::Size2(cast_arg<int64_t>(v, "adaptive_avg_pool2d", "output_size", kAccepted));
  if (!py::isinstance<py::sequence>(v)) throw_bad_argument(v, "adaptive_avg_pool2d", "output_size", kAccepted);
  py::sequence seq = py::reinterpret_borrow<py::sequence>(v);
  if (seq.size() != 2) {
    throw py::value_error("adaptive_avg_pool2d: output_size must be an int or 2 ints, got " +
                          std::to_string(seq.size()) + " values");
  }
  for (py::handle s : seq) {
    if (s.is_none()) throw py::value_error("adaptive_avg_pool2d: output_size None entries are not supported");
  }
  return nn::Size2(cast_arg<int64_t>(seq[0], "adaptive_avg_pool2d", "output_size", kAccepted),
                   cast_arg<int64_t>(seq[1], "adaptive_avg_pool2d", "output_size", kAccepted));
}

// Paddle's padding_idx: None (crew's -1) or an id in [-V, V), negative counting from V.
int64_t padding_index(py::handle padding_idx, int64_t num_embeddings) {
  if (padding_idx.is_none()) return -1;
  const auto i = cast_arg<int64_t>(padding_idx, "Embedding", "padding_idx", "an int or None");
  if (i < -num_embeddings || i >= num_embeddings) {
    throw py::value_error("embedding: padding_idx " + std::to_string(i) + " is out of range for " +
                          std::to_string(num_embeddings) + " embeddings");
  }
  return i < 0 ? i + num_embeddings : i;
}

// Paddle's normalized_shape: an int or a list of the trailing extents.
Shape normalized(py::handle v) {
  if (PyLong_Check(v.ptr())) return Shape{cast_arg<int64_t>(v, "LayerNorm", "normalized_shape", "an int or a list of ints")};
  return cast_arg<Shape>(v, "LayerNorm", "normalized_shape", "an int or a list of ints");
}

Tensor optional_tensor(py::handle v, const char* func, const char* arg) {
  return v.is_none() ? Tensor() : cast_arg<Tensor>(v, func, arg, "a Tensor or None");
}

void bind_layers(py::module_& n) {
  py::class_<nn::LayerNorm, Layer, std::shared_ptr<nn::LayerNorm>>(n, "LayerNorm")
      .def(py::init([](py::handle normalized_shape, double epsilon) {
             const Shape s = normalized(normalized_shape);
             if (s.size() != 1) {
               throw py::value_error("LayerNorm: crew's layer normalises over the last axis; normalized_shape "
                                     "has " + std::to_string(s.size()) + " axes (use "
                                     "nn.functional.layer_norm for more)");
             }
             return std::make_shared<nn::LayerNorm>(s[0], epsilon);
           }), py::arg("normalized_shape"), py::arg("epsilon") = 1e-5);
  py::class_<nn::Embedding, Layer, std::shared_ptr<nn::Embedding>>(n, "Embedding")
      .def(py::init([](int64_t num_embeddings, int64_t embedding_dim, py::handle padding_idx) {
             return std::make_shared<nn::Embedding>(num_embeddings, embedding_dim,
                                                    padding_index(padding_idx, num_embeddings));
           }), py::arg("num_embeddings"), py::arg("embedding_dim"), py::arg("padding_idx") = py::none());
  py::class_<nn::AdaptiveAvgPool2D, Layer, std::shared_ptr<nn::AdaptiveAvgPool2D>>(n, "AdaptiveAvgPool2D")
      .def(py::init([](py::handle output_size) { return std::make_shared<nn::AdaptiveAvgPool2D>(output_size2(output_size)); }),
           py::arg("output_size"));
}

void bind_functional(py::module_& f) {
  f.def("layer_norm", [](const Tensor& x, py::handle normalized_shape, py::handle weight, py::handle bias,
                         double epsilon) {
          const Shape s = normalized(normalized_shape);
          const Tensor w = optional_tensor(weight, "layer_norm", "weight"), b = optional_tensor(bias, "layer_norm", "bias");
          py::gil_scoped_release nogil;
          return F::layer_norm(x, s, w, b, epsilon);
        }, py::arg("x"), py::arg("normalized_shape"), py::arg("weight") = py::none(), py::arg("bias") = py::none(),
        py::arg("epsilon") = 1e-5);
  f.def("embedding", [](const Tensor& x, const Tensor& weight, py::handle padding_idx) {
          const int64_t p = padding_index(padding_idx, weight.dim() >= 1 ? weight.size(0) : 0);
          py::gil_scoped_release nogil;
          return F::embedding(x, weight, p);
        }, py::arg("x"), py::arg("weight"), py::arg("padding_idx") = py::none());
  f.def("adaptive_avg_pool2d", [](const Tensor& x, py::handle output_size) {
          const nn::Size2 s = output_size2(output_size);
          py::gil_scoped_release nogil;
          return F::adaptive_avg_pool2d(x, s.pair());
        }, py::arg("x"), py::arg("output_size"));
  // Paddle's layout [batch, seq, heads, head_dim]; no mask and no attention dropout in crew.
  f.def("scaled_dot_product_attention", [](const Tensor& q, const Tensor& k, const Tensor& v, py::handle attn_mask,
                                           double dropout_p, bool is_causal, bool training) {
          if (!attn_mask.is_none()) {
            throw py::value_error("scaled_dot_product_attention: attn_mask is not supported (pass None; "
                                  "is_causal=True gives the causal mask)");
          }
          if (dropout_p != 0.0 && training) {
            throw py::value_error("scaled_dot_product_attention: dropout_p=" + std::to_string(dropout_p) +
                                  " is not supported in training (only 0.0)");
          }
          py::gil_scoped_release nogil;
          return F::scaled_dot_product_attention(q, k, v, is_causal);
        }, py::arg("query"), py::arg("key"), py::arg("value"), py::arg("attn_mask") = py::none(),
        py::arg("dropout_p") = 0.0, py::arg("is_causal") = false, py::arg("training") = true);
}

}  // namespace

void bind_nn_layers(py::module_& m) {
  py::module_ n = m.attr("nn").cast<py::module_>();
  bind_layers(n);
  py::module_ f = n.attr("functional").cast<py::module_>();
  bind_functional(f);
}

}  // namespace crew::python

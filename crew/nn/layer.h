#pragma once
// crew::nn::Layer: Paddle's nn.Layer. A layer owns named parameters (trainable tensors),
// buffers (state such as BatchNorm's running statistics) and sublayers; it collects them
// recursively with dotted names, switches train/eval mode, and saves/loads a StateDict.
//
//   class MLP : public crew::nn::Layer {
//    public:
//     MLP() : Layer("mlp") {
//       fc1_ = register_sublayer("fc1", std::make_shared<Linear>(4, 8));
//       fc2_ = register_sublayer("fc2", std::make_shared<Linear>(8, 2));
//     }
//     Tensor forward(const Tensor& x) override { return (*fc2_)(functional::relu((*fc1_)(x))); }
//    private:
//     std::shared_ptr<Linear> fc1_, fc2_;
//   };
//   auto net = std::make_shared<MLP>();
//   net->named_parameters();      // fc1.weight, fc1.bias, fc2.weight, fc2.bias
//   crew::save(net->state_dict(), "mlp.safetensors");
//
// Order: parameters, buffers and state_dict keys follow registration order, pre-order over
// the sublayer tree (a layer's own entries, then each sublayer's in turn), as in Paddle.
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "crew/tensor/state_dict.h"
#include "crew/tensor/tensor.h"

namespace crew::nn {

class Layer {
 public:
  // name_scope gives full_name() = "<name_scope>_<n>", n counting layers of that scope.
  explicit Layer(const std::string& name_scope = "layer");
  virtual ~Layer() = default;
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  virtual Tensor forward(const Tensor& x) = 0;
  Tensor operator()(const Tensor& x) { return forward(x); }

  // Registers a trainable tensor (sets stop_gradient = false) and returns it.
  Tensor register_parameter(const std::string& name, Tensor param);
  // Registers state; persistable buffers are part of state_dict().
  Tensor register_buffer(const std::string& name, Tensor buffer, bool persistable = true);
  // Registers a child layer and returns it (typed, for keeping as a member).
  template <typename L>
  std::shared_ptr<L> register_sublayer(const std::string& name, std::shared_ptr<L> layer) {
    add_sublayer_impl(name, layer);
    return layer;
  }
  template <typename L>
  std::shared_ptr<L> add_sublayer(const std::string& name, std::shared_ptr<L> layer) {
    return register_sublayer(name, std::move(layer));
  }

  // All parameters, each once (a tensor shared by two layers appears at its first place).
  // Virtual (like state_dict, set_state_dict, train, eval) so that wrappers such as
  // DataParallel can present their wrapped layer's.
  virtual std::vector<Tensor> parameters(bool include_sublayers = true) const;
  virtual std::vector<std::pair<std::string, Tensor>> named_parameters(const std::string& prefix = "",
                                                                       bool include_sublayers = true) const;
  std::vector<std::pair<std::string, Tensor>> named_buffers(const std::string& prefix = "",
                                                            bool include_sublayers = true) const;
  std::vector<Tensor> buffers(bool include_sublayers = true) const;
  // Direct children, in registration order.
  std::vector<std::shared_ptr<Layer>> children() const;
  std::vector<std::pair<std::string, std::shared_ptr<Layer>>> named_children() const;
  // All descendants (pre-order), each once.
  std::vector<std::shared_ptr<Layer>> sublayers() const;
  std::vector<std::pair<std::string, std::shared_ptr<Layer>>> named_sublayers(
      const std::string& prefix = "") const;
  // The parameter / sublayer registered here under name; IndexError otherwise.
  Tensor parameter(const std::string& name) const;
  std::shared_ptr<Layer> sublayer(const std::string& name) const;

  // Mode, recursively (Dropout and BatchNorm2D behave differently in eval).
  virtual void train();
  virtual void eval();
  bool training() const { return training_; }

  // Parameters and persistable buffers under dotted names; the tensors are shared, not copied.
  virtual StateDict state_dict() const;
  // Copies values into the existing tensors (so optimizers keep their references). Checks
  // everything before copying anything: a shape mismatch is always a ValueError naming the
  // key and both shapes; with strict, so are missing and unexpected keys. Other dtypes are
  // converted.
  virtual void set_state_dict(const StateDict& state_dict, bool strict = true);
  // Clears the gradient of every parameter (to zeros when set_to_zero, as Paddle's default).
  void clear_gradients(bool set_to_zero = true);
  // Calls fn on every layer of the tree, this one last (Paddle's Layer.apply).
  void apply(const std::function<void(Layer&)>& fn);
  // Moves every parameter and buffer of the tree to `place` (Paddle's Layer.to(device)), in
  // place: optimizers built before keep updating them. Gradients are dropped.
  Layer& to(const Place& place);
  // Converts every floating-point parameter and buffer of the tree to `dtype` (a floating
  // dtype), likewise in place; gradients are dropped.
  Layer& to(DType dtype);

  const std::string& full_name() const { return full_name_; }

 private:
  struct NamedTensor {
    std::string name;
    Tensor tensor;
    bool persistable = true;
  };
  void add_sublayer_impl(const std::string& name, std::shared_ptr<Layer> layer);
  void check_new_name(const std::string& name, const char* what) const;
  void collect_state(const std::string& prefix, StateDict& out) const;
  // named_parameters / named_buffers: the entries of `list` of this layer (and, with
  // include_sublayers, of every sublayer, pre-order), each tensor once.
  std::vector<std::pair<std::string, Tensor>> named_tensors(std::vector<NamedTensor> Layer::*list,
                                                            const std::string& prefix,
                                                            bool include_sublayers) const;

  std::string full_name_;
  bool training_ = true;
  std::vector<NamedTensor> parameters_;
  std::vector<NamedTensor> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Layer>>> sublayers_;
};

}  // namespace crew::nn

#include "examples/trainer/amp.h"

#include "crew/distributed/collective/any_rank.h"
#include "crew/distributed/sync_batch_norm/sync_batch_norm.h"
#include "crew/nn/batch_norm.h"
#include "crew/nn/layer_norm.h"

namespace trainer {

void add_amp_flags(CLI::App& app, AmpFlags& f) {
  app.add_option("--amp", f.amp,
                 "mixed precision: bf16 or fp16 (conv/linear/matmul in 16 bits, crew::amp autocast), or off")
      ->check(CLI::IsMember({"bf16", "fp16", "off"}))
      ->capture_default_str();
  app.add_option("--amp-level", f.level,
                 "O1: white-list ops in 16 bits; O2: the parameters too, float32 master weights")
      ->check(CLI::IsMember({"O1", "O2"}))
      ->capture_default_str();
}

namespace {

// Paddle keeps the norm layers of an O2 model in float32 (their statistics need the range).
bool is_norm_layer(const crew::nn::Layer& layer) {
  return dynamic_cast<const crew::nn::BatchNorm2D*>(&layer) != nullptr ||
         dynamic_cast<const crew::nn::LayerNorm*>(&layer) != nullptr;
}

void convert_own_parameters(crew::nn::Layer& layer, crew::DType dtype) {
  if (is_norm_layer(layer)) return;
  for (crew::Tensor p : layer.parameters(/*include_sublayers=*/false)) {
    if (p.dtype() != crew::DType::FLOAT32) continue;
    p.clear_grad(false);
    p.convert_(dtype);
  }
}

}  // namespace

void decorate_o2(crew::nn::Layer& net, crew::optim::Optimizer& opt, crew::DType dtype) {
  convert_own_parameters(net, dtype);
  for (const auto& layer : net.sublayers()) convert_own_parameters(*layer, dtype);
  opt.set_multi_precision(/*keep_master_weights=*/true);
}

Amp::Amp(const AmpFlags& flags, crew::nn::Layer& net, crew::optim::Optimizer& opt) {
  options_.enabled = flags.amp != "off";
  options_.dtype = flags.amp == "fp16" ? crew::DType::FLOAT16 : crew::DType::BFLOAT16;
  options_.level = flags.level == "O2" ? crew::amp::AmpLevel::O2 : crew::amp::AmpLevel::O1;
  if (!options_.enabled) return;
  if (options_.level == crew::amp::AmpLevel::O2) decorate_o2(net, opt, options_.dtype);
  if (options_.dtype == crew::DType::FLOAT16) {
    scaler_.emplace(crew::optim::GradScalerOptions{}, [](bool found) { return crew::dist::any_rank(found); });
  }
}

std::string Amp::describe() const {
  if (!options_.enabled) return "amp off";
  const bool o2 = options_.level == crew::amp::AmpLevel::O2;
  std::string s = std::string("amp ") + (options_.dtype == crew::DType::FLOAT16 ? "fp16" : "bf16") +
                  (o2 ? " O2 (float32 master weights)" : " O1");
  if (scaler_) s += ", loss scale " + std::to_string(static_cast<long long>(scaler_->scale()));
  return s;
}

crew::amp::AutocastGuard Amp::autocast() const {
  return crew::amp::AutocastGuard(options_.enabled ? options_ : crew::amp::autocast_off());
}

void Amp::backward(const crew::Tensor& loss) const {
  if (scaler_) {
    scaler_->backward(loss);
  } else {
    loss.backward();
  }
}

void Amp::step(crew::optim::Optimizer& opt) {
  if (!scaler_) {
    opt.step();
    return;
  }
  scaler_->step(opt);
  scaler_->update();
}

}  // namespace trainer

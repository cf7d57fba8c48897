#pragma once
// Mixed precision for the example trainers (train_cnn, train_resnet, train_gpt):
//   --amp bf16|fp16|off   the low dtype of crew::amp's autocast (off: float32 training)
//   --amp-level O1|O2     O1: white-list ops (conv, linear, matmul) in the low dtype;
//                         O2: the parameters too (but those of BatchNorm/LayerNorm layers),
//                         updated through float32 master weights (Optimizer::set_multi_precision)
// fp16 steps through a crew::optim::GradScaler (dynamic loss scaling, its found-inf flag
// agreed by all ranks); bf16 has float32's range and needs none.
//
//   trainer::Amp amp(flags.amp, *net, *opt);      // decorates at O2: before DataParallel
//   { auto guard = amp.autocast(); loss = loss_fn(model, batch); }   // forward + loss
//   amp.backward(loss);                                              // scaled for fp16
//   amp.step(*opt);                                                  // unscale, skip on inf
#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "crew/autograd/autocast.h"
#include "crew/nn/layer.h"
#include "crew/optim/grad_scaler.h"
#include "crew/optim/optimizer.h"

namespace trainer {

struct AmpFlags {
  std::string amp = "off";  // bf16, fp16 or off
  std::string level = "O1";
};

// Registers --amp and --amp-level on app.
void add_amp_flags(CLI::App& app, AmpFlags& flags);

// Paddle's decorate(level='O2') in C++: converts the parameters of every layer of `net` but
// its norm layers (BatchNorm2D, SyncBatchNorm, LayerNorm) to `dtype` in place, and makes
// `opt` keep float32 master weights of them.
void decorate_o2(crew::nn::Layer& net, crew::optim::Optimizer& opt, crew::DType dtype);

class Amp {
 public:
  // With flags.level O2, decorates net and opt (call before wrapping net in DataParallel).
  Amp(const AmpFlags& flags, crew::nn::Layer& net, crew::optim::Optimizer& opt);

  bool enabled() const { return options_.enabled; }
  // "amp off", "amp bf16 O1", "amp fp16 O2 (float32 master weights), loss scale 32768".
  std::string describe() const;
  // The autocast state for forward and loss (autocast off when amp is).
  crew::amp::AutocastGuard autocast() const;  // returned by guaranteed elision
  // loss.backward(), of the scaled loss with fp16.
  void backward(const crew::Tensor& loss) const;
  // opt.step(); with fp16 the scaler's unscale, inf/NaN check (all ranks) and update.
  void step(crew::optim::Optimizer& opt);

 private:
  crew::amp::AutocastOptions options_;
  std::optional<crew::optim::GradScaler> scaler_;
};

}  // namespace trainer

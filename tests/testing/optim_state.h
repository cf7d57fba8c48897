#pragma once
// Two small parameters, deterministic per-step gradients and a bitwise comparison: what the
// optimizer checkpoint tests (tests/optim/optimizer_state*_test.cpp) resume and compare.
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "crew/optim/optim.h"

namespace crew::testing {

inline std::vector<Tensor> make_params() {
  std::vector<Tensor> ps = {Tensor::from_vector<float>({0.5f, -1.0f, 2.0f, 0.25f}, {2, 2}),
                            Tensor::from_vector<float>({1.0f, -3.0f, 0.75f})};
  for (auto& p : ps) p.set_stop_gradient(false);
  return ps;
}

inline void set_grads(std::vector<Tensor>& ps, int step) {
  for (size_t k = 0; k < ps.size(); ++k) {
    std::vector<float> g(static_cast<size_t>(ps[k].numel()));
    for (size_t i = 0; i < g.size(); ++i) g[i] = std::cos(0.7f * static_cast<float>(i + 3 * k + 5 * step));
    ps[k].set_grad(Tensor::from_vector<float>(g, ps[k].shape()));
  }
}

inline bool bit_equal(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

using OptimizerFactory = std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)>;

}  // namespace crew::testing

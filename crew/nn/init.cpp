#include "crew/nn/init.h"

#include <cmath>

#include "crew/core/check.h"

namespace crew::nn::init {
namespace {

Generator& pick(Generator* gen) { return gen != nullptr ? *gen : default_generator(); }

void check_float(const Tensor& t, const char* op) {
  CREW_CHECK(t.defined(), "init::", op, ": tensor is undefined");
  CREW_CHECK(is_floating(t.dtype()), "init::", op, ": expected a float tensor, got ", dtype_name(t.dtype()));
}

}  // namespace

std::pair<int64_t, int64_t> compute_fans(const Shape& shape) {
  CREW_CHECK(!shape.empty(), "init::compute_fans: a scalar has no fans");
  if (shape.size() == 1) return {shape[0], shape[0]};
  if (shape.size() == 2) return {shape[0], shape[1]};
  int64_t receptive = 1;
  for (size_t i = 2; i < shape.size(); ++i) receptive *= shape[i];
  return {shape[1] * receptive, shape[0] * receptive};
}

void constant_(Tensor& t, double value) {
  CREW_CHECK(t.defined(), "init::constant_: tensor is undefined");
  t.fill_(value);
}

void uniform_(Tensor& t, double low, double high, Generator* gen) {
  check_float(t, "uniform_");
  CREW_CHECK(low <= high, "init::uniform_: low ", low, " > high ", high);
  pick(gen).fill_uniform(t, low, high);
}

void normal_(Tensor& t, double mean, double stddev, Generator* gen) {
  check_float(t, "normal_");
  CREW_CHECK(stddev >= 0, "init::normal_: negative stddev ", stddev);
  pick(gen).fill_normal(t, mean, stddev);
}

void xavier_uniform_(Tensor& t, double gain, Generator* gen) {
  check_float(t, "xavier_uniform_");
  auto [fan_in, fan_out] = compute_fans(t.shape());
  CREW_CHECK(fan_in + fan_out > 0, "init::xavier_uniform_: empty shape ", shape_str(t.shape()));
  double a = gain * std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
  pick(gen).fill_uniform(t, -a, a);
}

void xavier_normal_(Tensor& t, double gain, Generator* gen) {
  check_float(t, "xavier_normal_");
  auto [fan_in, fan_out] = compute_fans(t.shape());
  CREW_CHECK(fan_in + fan_out > 0, "init::xavier_normal_: empty shape ", shape_str(t.shape()));
  pick(gen).fill_normal(t, 0.0, gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out)));
}

void kaiming_uniform_(Tensor& t, double a, Generator* gen) {
  check_float(t, "kaiming_uniform_");
  int64_t fan_in = compute_fans(t.shape()).first;
  CREW_CHECK(fan_in > 0, "init::kaiming_uniform_: zero fan_in for shape ", shape_str(t.shape()));
  double bound = std::sqrt(6.0 / ((1.0 + a * a) * static_cast<double>(fan_in)));
  pick(gen).fill_uniform(t, -bound, bound);
}

void kaiming_normal_(Tensor& t, double a, Generator* gen) {
  check_float(t, "kaiming_normal_");
  int64_t fan_in = compute_fans(t.shape()).first;
  CREW_CHECK(fan_in > 0, "init::kaiming_normal_: zero fan_in for shape ", shape_str(t.shape()));
  pick(gen).fill_normal(t, 0.0, std::sqrt(2.0 / ((1.0 + a * a) * static_cast<double>(fan_in))));
}

}  // namespace crew::nn::init

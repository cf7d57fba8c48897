#include "crew/tensor/random.h"

#include <sstream>

namespace crew {
namespace {

// Fills floating t with draws of dist from engine, in element order.
template <typename Dist>
void fill_from(Tensor& t, Dist& dist, std::mt19937_64& engine) {
  dispatch_storage_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(t.raw_data());
    for (int64_t i = 0, n = t.numel(); i < n; ++i) p[i] = element_cast<T>(dist(engine));
  });
}

}  // namespace

void Generator::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mu_);
  engine_.seed(seed);
  seed_ = seed;
}

uint64_t Generator::next_u64() {
  std::lock_guard<std::mutex> lock(mu_);
  return engine_();
}

double Generator::uniform(double low, double high) {
  std::lock_guard<std::mutex> lock(mu_);
  return std::uniform_real_distribution<double>(low, high)(engine_);
}

double Generator::normal(double mean, double stddev) {
  std::lock_guard<std::mutex> lock(mu_);
  return std::normal_distribution<double>(mean, stddev)(engine_);
}

void Generator::fill_uniform(Tensor& t, double low, double high) {
  CREW_CHECK(is_floating(t.dtype()), "fill_uniform: dtype ", dtype_name(t.dtype()), " is not floating");
  std::lock_guard<std::mutex> lock(mu_);
  std::uniform_real_distribution<double> dist(low, high);
  fill_from(t, dist, engine_);
}

void Generator::fill_normal(Tensor& t, double mean, double stddev) {
  CREW_CHECK(is_floating(t.dtype()), "fill_normal: dtype ", dtype_name(t.dtype()), " is not floating");
  std::lock_guard<std::mutex> lock(mu_);
  std::normal_distribution<double> dist(mean, stddev);
  fill_from(t, dist, engine_);
}

std::string Generator::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::ostringstream os;
  os << seed_ << ' ' << engine_;
  return os.str();
}

void Generator::set_state(const std::string& state) {
  std::lock_guard<std::mutex> lock(mu_);
  std::istringstream is(state);
  uint64_t seed = 0;
  std::mt19937_64 engine;
  is >> seed >> engine;
  CREW_CHECK(!is.fail(), "Generator::set_state: malformed state string (", state.size(), " bytes)");
  seed_ = seed;
  engine_ = engine;
}

Generator& default_generator() {
  static Generator gen;
  return gen;
}

void seed(uint64_t value) { default_generator().manual_seed(value); }

Tensor uniform(const Shape& shape, double low, double high, DType dtype, Generator* gen) {
  Tensor t = Tensor::empty(shape, dtype);
  (gen ? *gen : default_generator()).fill_uniform(t, low, high);
  return t;
}

Tensor normal(const Shape& shape, double mean, double stddev, DType dtype, Generator* gen) {
  Tensor t = Tensor::empty(shape, dtype);
  (gen ? *gen : default_generator()).fill_normal(t, mean, stddev);
  return t;
}

}  // namespace crew

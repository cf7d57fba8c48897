#include "crew/io/transforms/transform.h"

#include "crew/core/check.h"

namespace crew::io {
namespace {
thread_local SampleSeedScope* t_sample_scope = nullptr;
}

Compose::Compose(std::vector<TransformPtr> transforms) : transforms_(std::move(transforms)) {
  for (size_t k = 0; k < transforms_.size(); ++k) CREW_CHECK(transforms_[k] != nullptr, "Compose: transform ", k, " is null");
}

Tensor Compose::operator()(const Tensor& image) const {
  Tensor x = image;
  for (const auto& t : transforms_) x = (*t)(x);
  return x;
}

TransformPtr compose(std::vector<TransformPtr> transforms) {
  return std::make_shared<Compose>(std::move(transforms));
}

SampleSeedScope::SampleSeedScope(uint64_t seed) : seed_(seed), previous_(t_sample_scope) { t_sample_scope = this; }

SampleSeedScope::~SampleSeedScope() { t_sample_scope = previous_; }

Generator* SampleSeedScope::generator() {
  if (!gen_) gen_.emplace(seed_);
  return &*gen_;
}

Generator* current_sample_generator() { return t_sample_scope ? t_sample_scope->generator() : nullptr; }

uint64_t mix_seed(uint64_t a, uint64_t b, uint64_t c) {
  auto splitmix = [](uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  };
  return splitmix(splitmix(splitmix(a) ^ b) ^ c);
}

RandomTransform::RandomTransform(std::optional<uint64_t> seed)
    : own_(seed ? *seed : default_generator().next_u64()) {}

Generator& RandomTransform::generator() const {
  Generator* g = current_sample_generator();
  return g ? *g : own_;
}

}  // namespace crew::io

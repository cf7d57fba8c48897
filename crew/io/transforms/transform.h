#pragma once
// Image transforms, as paddle.vision.transforms: callables image -> image applied by the
// data sets in get(). Random transforms draw from the per-sample generator that
// DataLoader installs (SampleSeedScope), so augmentations are reproducible and do not
// depend on num_workers; outside a loader they use their own seeded generator.
//
//   auto tf = crew::io::compose({std::make_shared<ToTensor>(),
//                                std::make_shared<Normalize>({0.5f}, {0.5f})});
//   Tensor x = (*tf)(image_hw_uint8);   // [1, H, W] float32 in [-1, 1]
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "crew/tensor/random.h"
#include "crew/tensor/tensor.h"

namespace crew::io {

class Transform {
 public:
  virtual ~Transform() = default;
  // Must be safe to call from several threads at once.
  virtual Tensor operator()(const Tensor& image) const = 0;
};

using TransformPtr = std::shared_ptr<const Transform>;

// Applies transforms in order.
class Compose : public Transform {
 public:
  explicit Compose(std::vector<TransformPtr> transforms);
  Tensor operator()(const Tensor& image) const override;

 private:
  std::vector<TransformPtr> transforms_;
};

TransformPtr compose(std::vector<TransformPtr> transforms);

// Installs a generator seeded with `seed` as this thread's per-sample generator for the
// scope's lifetime (scopes nest). The generator is seeded on first use only: most samples
// go through no random transform, and seeding a Mersenne Twister costs more than a
// ToTensor of a 28x28 image.
class SampleSeedScope {
 public:
  explicit SampleSeedScope(uint64_t seed);
  ~SampleSeedScope();
  SampleSeedScope(const SampleSeedScope&) = delete;
  SampleSeedScope& operator=(const SampleSeedScope&) = delete;

  Generator* generator();

 private:
  uint64_t seed_;
  std::optional<Generator> gen_;
  SampleSeedScope* previous_;
};

// This thread's per-sample generator, or null outside a SampleSeedScope.
Generator* current_sample_generator();

// A well-mixed 64-bit seed from several values (SplitMix64 steps).
uint64_t mix_seed(uint64_t a, uint64_t b, uint64_t c = 0);

// Base of random transforms: the generator to draw from for this call.
class RandomTransform : public Transform {
 protected:
  // No seed: seeded from crew::default_generator() at construction.
  explicit RandomTransform(std::optional<uint64_t> seed);
  Generator& generator() const;

 private:
  mutable Generator own_;
};

}  // namespace crew::io

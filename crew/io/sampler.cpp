#include "crew/io/sampler.h"

#include <numeric>
#include <utility>

#include "crew/core/check.h"

namespace crew::io {

SequenceSampler::SequenceSampler(int64_t num_samples) : num_samples_(num_samples) {
  CREW_CHECK(num_samples >= 0, "SequenceSampler: num_samples must be >= 0, got ", num_samples);
}

std::vector<int64_t> SequenceSampler::indices() {
  std::vector<int64_t> out(static_cast<size_t>(num_samples_));
  std::iota(out.begin(), out.end(), int64_t{0});
  return out;
}

RandomSampler::RandomSampler(int64_t num_samples, std::optional<uint64_t> seed)
    : num_samples_(num_samples), gen_(seed ? *seed : default_generator().next_u64()) {
  CREW_CHECK(num_samples >= 0, "RandomSampler: num_samples must be >= 0, got ", num_samples);
}

std::vector<int64_t> RandomSampler::indices() {
  std::vector<int64_t> out(static_cast<size_t>(num_samples_));
  std::iota(out.begin(), out.end(), int64_t{0});
  // Fisher-Yates with unbiased bounded draws from the sampler's own generator.
  for (size_t i = out.size(); i-- > 1;) {
    uint64_t bound = i + 1;
    uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t r;
    do {
      r = gen_.next_u64();
    } while (r >= limit);
    std::swap(out[i], out[static_cast<size_t>(r % bound)]);
  }
  return out;
}

}  // namespace crew::io

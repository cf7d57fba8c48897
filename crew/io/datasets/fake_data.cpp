#include "crew/io/datasets/fake_data.h"

#include <random>
#include <vector>

#include "crew/core/check.h"

namespace crew::io {

FakeData::FakeData(FakeDataOptions options) : options_(std::move(options)) {
  const auto& o = options_;
  CREW_CHECK(o.size >= 0 && o.channels > 0 && o.height > 0 && o.width > 0 && o.num_classes > 0,
             "FakeData: size ", o.size, ", image ", o.channels, "x", o.height, "x", o.width,
             " and num_classes ", o.num_classes, " must be positive");
}

Sample FakeData::get(int64_t index) const {
  check_sample_index("FakeData::get", index, size());
  std::seed_seq seq{static_cast<uint64_t>(options_.seed), static_cast<uint64_t>(index)};
  std::mt19937_64 engine(seq);
  std::vector<uint8_t> pixels(static_cast<size_t>(options_.height * options_.width * options_.channels));
  for (uint8_t& p : pixels) p = static_cast<uint8_t>(engine() >> 56);
  Tensor image = Tensor::from_bytes(pixels.data(), {options_.height, options_.width, options_.channels}, DType::UINT8);
  Tensor label = Tensor::scalar(static_cast<double>(engine() % static_cast<uint64_t>(options_.num_classes)),
                                DType::INT64);
  if (options_.transform) image = (*options_.transform)(image);
  return {image, label};
}

}  // namespace crew::io

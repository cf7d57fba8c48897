#include "crew/io/collate.h"

#include "crew/core/check.h"

namespace crew::io {

Batch default_collate(const std::vector<Sample>& samples) {
  CREW_CHECK(!samples.empty(), "default_collate: empty batch");
  const size_t fields = samples[0].size();
  for (size_t s = 1; s < samples.size(); ++s) {
    CREW_CHECK(samples[s].size() == fields, "default_collate: fields number not same among samples in a batch: sample 0 has ",
               fields, ", sample ", s, " has ", samples[s].size());
  }
  Batch batch;
  batch.reserve(fields);
  const int64_t count = static_cast<int64_t>(samples.size());
  for (size_t f = 0; f < fields; ++f) {
    const Tensor& first = samples[0][f];
    CREW_CHECK(first.defined(), "default_collate: field ", f, " of sample 0 is undefined");
    Shape shape{count};
    shape.insert(shape.end(), first.shape().begin(), first.shape().end());
    Tensor out = Tensor::uninitialized(shape, first.dtype(), first.place());
    for (int64_t s = 0; s < count; ++s) {
      const Tensor& t = samples[static_cast<size_t>(s)][f];
      CREW_CHECK(t.defined() && t.shape() == first.shape() && t.dtype() == first.dtype(), "default_collate: field ", f,
                 " of sample ", s, " is ", t.defined() ? shape_str(t.shape()) + " " + dtype_name(t.dtype()) : "undefined",
                 ", sample 0 has ", shape_str(first.shape()), " ", dtype_name(first.dtype()));
      out.select(s).copy_(t);
    }
    batch.push_back(std::move(out));
  }
  return batch;
}

}  // namespace crew::io

#pragma once
// Turning a list of samples into a batch, as Paddle's default_collate_fn.
#include <functional>
#include <vector>

#include "crew/io/dataset.h"

namespace crew::io {

// One mini-batch: field k of every sample stacked (e.g. {x [B, 1, 28, 28], y [B]}).
using Batch = std::vector<Tensor>;
using CollateFn = std::function<Batch(const std::vector<Sample>& samples)>;

// Stacks field k of all samples along a new axis 0. Samples must have the same number of
// fields and, per field, the same shape and dtype (ValueError naming the sample otherwise).
Batch default_collate(const std::vector<Sample>& samples);

}  // namespace crew::io

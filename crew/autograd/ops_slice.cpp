// slice and split along one axis (copies; gradients scatter back into zeros).
#include <algorithm>
#include <cstring>

#include "crew/autograd/function.h"
#include "crew/autograd/ops.h"

namespace crew {
namespace {

// Copies `rows` blocks: for each of `outer` blocks, `row` bytes from src (stride src_row)
// to dst (stride dst_row).
void copy_blocks(const char* src, int64_t src_row, char* dst, int64_t dst_row, int64_t outer, int64_t row) {
  for (int64_t o = 0; o < outer; ++o) std::memcpy(dst + o * dst_row, src + o * src_row, row);
}

int64_t clamp_index(int64_t i, int64_t extent) {
  if (i < 0) i += extent;
  return std::clamp<int64_t>(i, 0, extent);
}

}  // namespace

Tensor slice(const Tensor& x, int64_t axis, int64_t start, int64_t stop) {
  CREW_CHECK(x.dim() >= 1, "slice: tensor of shape ", shape_str(x.shape()), " has no axis ", axis);
  const int64_t a = normalize_axis(axis, x.dim());
  const AxisSplit p = split_at_axis(x.shape(), a);
  const int64_t begin = clamp_index(start, p.extent);
  const int64_t end = std::max(begin, clamp_index(stop, p.extent));
  Shape out = x.shape();
  out[a] = end - begin;
  Tensor y = Tensor::uninitialized(out, x.dtype());
  const int64_t es = static_cast<int64_t>(dtype_size(x.dtype()));
  const int64_t in_row = p.extent * p.inner * es, out_row = out[a] * p.inner * es;
  if (y.numel() > 0) {
    copy_blocks(static_cast<const char*>(x.raw_data()) + begin * p.inner * es, in_row,
                static_cast<char*>(y.raw_data()), out_row, p.outer, out_row);
  }
  if (autograd::should_record({&x})) {
    autograd::record(
        y, "slice", {x},
        [in = x.shape(), p, begin, es, in_row, out_row](const Tensor& g, const std::vector<bool>&) {
          Tensor gx = Tensor::zeros(in, g.dtype());
          if (g.numel() > 0) {
            copy_blocks(static_cast<const char*>(g.raw_data()), out_row,
                        static_cast<char*>(gx.raw_data()) + begin * p.inner * es, in_row, p.outer, out_row);
          }
          return std::vector<Tensor>{gx};
        });
  }
  return y;
}

std::vector<Tensor> split(const Tensor& x, int64_t sections, int64_t axis) {
  CREW_CHECK(x.dim() >= 1, "split: tensor of shape ", shape_str(x.shape()), " has no axis ", axis);
  const int64_t a = normalize_axis(axis, x.dim());
  const int64_t extent = x.shape()[a];
  CREW_CHECK(sections > 0 && extent % sections == 0, "split: axis ", axis, " of shape ", shape_str(x.shape()),
             " (extent ", extent, ") does not divide into ", sections, " equal sections");
  const int64_t step = extent / sections;
  std::vector<Tensor> out;
  out.reserve(static_cast<size_t>(sections));
  for (int64_t s = 0; s < sections; ++s) out.push_back(slice(x, a, s * step, (s + 1) * step));
  return out;
}

}  // namespace crew

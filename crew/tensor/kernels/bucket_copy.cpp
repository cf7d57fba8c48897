#include "crew/tensor/kernels/bucket_copy.h"

#include <cstring>

namespace crew::kernels {
namespace {

void pack_flat_cpu(const std::vector<Tensor>& parts, const Tensor& flat, int64_t offset) {
  char* dst = static_cast<char*>(flat.raw_data("pack_flat")) + offset * dtype_size(flat.dtype());
  for (const Tensor& t : parts) {
    const size_t bytes = t.nbytes();
    if (bytes) std::memcpy(dst, t.raw_data("pack_flat"), bytes);
    dst += bytes;
  }
}

void unpack_flat_cpu(const Tensor& flat, int64_t offset, const std::vector<Tensor>& parts) {
  const char* src =
      static_cast<const char*>(flat.raw_data("unpack_flat")) + offset * dtype_size(flat.dtype());
  for (const Tensor& t : parts) {
    const size_t bytes = t.nbytes();
    if (bytes) std::memcpy(t.raw_data("unpack_flat"), src, bytes);
    src += bytes;
  }
}

void check_operands(const char* op, const std::vector<Tensor>& parts, const Tensor& flat, int64_t offset) {
  CREW_CHECK(flat.defined(), op, ": the flat buffer is undefined");
  CREW_CHECK(offset >= 0, op, ": offset must be >= 0, got ", offset);
  int64_t total = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Tensor& t = parts[i];
    CREW_CHECK(t.defined(), op, ": part ", i, " is undefined");
    CREW_CHECK(t.dtype() == flat.dtype(), op, ": part ", i, " is ", dtype_name(t.dtype()),
               ", the flat buffer ", dtype_name(flat.dtype()));
    check_same_place(op, {{"flat", &flat}, {"part", &t}});
    total += t.numel();
  }
  CREW_CHECK(offset + total <= flat.numel(), op, ": ", total, " elements from offset ", offset,
             " do not fit a flat buffer of ", flat.numel());
}

}  // namespace

constinit KernelSlot<PackFlatFn> pack_flat_kernel("pack_flat", &pack_flat_cpu);
constinit KernelSlot<UnpackFlatFn> unpack_flat_kernel("unpack_flat", &unpack_flat_cpu);

void pack_flat(const std::vector<Tensor>& parts, const Tensor& flat, int64_t offset) {
  check_operands("pack_flat", parts, flat, offset);
  pack_flat_kernel.get(flat.place().type)(parts, flat, offset);
}

void unpack_flat(const Tensor& flat, int64_t offset, const std::vector<Tensor>& parts) {
  check_operands("unpack_flat", parts, flat, offset);
  unpack_flat_kernel.get(flat.place().type)(flat, offset, parts);
}

}  // namespace crew::kernels

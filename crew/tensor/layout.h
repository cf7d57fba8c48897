#pragma once
// OpaqueLayout: how a tensor's bytes are arranged when they are not row-major, e.g. oneDNN's
// channel-blocked nChw16c that its convolutions read and write fastest. Kernels that know the
// layout (crew/tensor/kernels/dnnl_layout.h) produce and consume such tensors directly, so a
// chain conv -> relu -> max_pool -> conv never reorders its activations; everything else sees
// a row-major tensor: Tensor::raw_data() (and data(), to_vector(), ...) converts the storage
// to row-major first, in place, for every tensor sharing it (PyTorch keeps such tensors as a
// separate mkldnn type with an explicit to_dense(); here the conversion is automatic).
#include <cstddef>
#include <string>

namespace crew {

class OpaqueLayout {
 public:
  virtual ~OpaqueLayout() = default;
  // Bytes of storage the layout needs (padding included).
  virtual size_t bytes() const = 0;
  // Bytes of the same data row-major.
  virtual size_t plain_bytes() const = 0;
  // Writes the row-major form of `src` (bytes() bytes in this layout) to `dst`.
  virtual void to_plain(const void* src, void* dst) const = 0;
  // For messages: "oneDNN aBcd16b".
  virtual std::string name() const = 0;
};

}  // namespace crew

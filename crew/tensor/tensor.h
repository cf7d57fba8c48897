#pragma once
// crew::Tensor: a reference-counted handle to a contiguous, row-major, 64-byte-aligned
// n-d array of float32 / float64 / int32 / int64 / uint8 on one place (host memory unless
// made elsewhere; crew/core/place.h). Copies of a Tensor share data; views (view, slice,
// select) share storage with an element offset. Host code reads elements only of tensors in
// host memory: data() of a device tensor is a DeviceError naming the op and the place.
//
//   Tensor x = Tensor::zeros({32, 1, 28, 28});
//   float* p = x.data<float>();
//   Tensor first = x.select(0);            // [1, 28, 28] view of sample 0
//   Tensor flat = x.view({32, -1});        // [32, 784] view
//   std::cout << Tensor::from_vector<float>({1, 2, 3}, {3});   // Tensor(shape=[3], dtype=float32, [1, 2, 3])
//
// Methods here never record autograd history. Differentiable operations are the free
// functions of crew/autograd and crew/nn/functional; the autograd members declared at the
// bottom (grad, backward, ...) are implemented in crew/autograd.
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "crew/core/check.h"
#include "crew/core/place.h"
#include "crew/tensor/dtype.h"
#include "crew/tensor/shape.h"
#include "crew/tensor/storage.h"

namespace crew {

namespace autograd {
struct AutogradMeta;  // defined in crew/autograd/autograd_meta.h
}

// The shared state behind Tensor handles.
struct TensorImpl {
  std::shared_ptr<Storage> storage;
  int64_t offset = 0;  // in elements
  Shape shape;
  DType dtype = DType::FLOAT32;
  std::shared_ptr<autograd::AutogradMeta> autograd;  // null until autograd touches it
};

class Tensor {
 public:
  Tensor() = default;  // an undefined tensor
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // Factories. All return new, contiguous, owned storage, on `place` (host memory by default:
  // C++ code that wants the current device passes current_place()).
  static Tensor empty(const Shape& shape, DType dtype = DType::FLOAT32, const Place& place = CPUPlace());  // zero-filled
  static Tensor zeros(const Shape& shape, DType dtype = DType::FLOAT32, const Place& place = CPUPlace());
  // Contents unspecified (0xFF bytes in builds without NDEBUG): for outputs the caller
  // overwrites in full, which then skip the zero-fill pass.
  static Tensor uninitialized(const Shape& shape, DType dtype = DType::FLOAT32, const Place& place = CPUPlace());
  static Tensor ones(const Shape& shape, DType dtype = DType::FLOAT32, const Place& place = CPUPlace());
  static Tensor full(const Shape& shape, double value, DType dtype = DType::FLOAT32,
                     const Place& place = CPUPlace());
  static Tensor scalar(double value, DType dtype = DType::FLOAT32);  // shape {}
  // [0, 1, ..., n-1].
  static Tensor arange(int64_t n, DType dtype = DType::INT64);
  // Storage in an opaque layout (crew/tensor/layout.h), contents unspecified: for a kernel
  // that writes that layout. Anything that reads it through raw_data()/data() gets it
  // converted to row-major first.
  static Tensor with_layout(const Shape& shape, DType dtype, std::shared_ptr<const OpaqueLayout> layout);
  template <typename T>
  static Tensor from_vector(const std::vector<T>& values, const Shape& shape);
  template <typename T>
  static Tensor from_vector(const std::vector<T>& values) {
    return from_vector(values, Shape{static_cast<int64_t>(values.size())});
  }
  // A copy of numel(shape) * dtype_size(dtype) bytes of host memory at `bytes`, on `place`:
  // for data sources (decoded files, generated samples) that hold their bytes elsewhere.
  static Tensor from_bytes(const void* bytes, const Shape& shape, DType dtype, const Place& place = CPUPlace());

  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const;
  int64_t dim() const { return static_cast<int64_t>(shape().size()); }
  // Extent of axis d (negative counts from the end).
  int64_t size(int64_t d) const;
  int64_t numel() const { return shape_numel(shape()); }
  DType dtype() const;
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype()); }
  // Where the data lives.
  const Place& place() const;

  // Typed host pointer to the elements; throws ValueError if T does not match dtype() and
  // DeviceError if the data is not in host memory.
  template <typename T>
  T* data() const {
    check_dtype(dtype_of<T>, "data");
    return static_cast<T*>(raw_data());
  }
  // Row-major host data (converting data in an opaque layout first, for every tensor sharing
  // it); DeviceError naming `op` and the place when the data is not in host memory.
  void* raw_data(const char* op = "data") const;
  // The data's address on its own place, unchecked: for the kernels of that place's backend.
  void* device_data() const;
  // The opaque layout this tensor's data is in (the whole storage, from offset 0), or null
  // when it is row-major. For kernels that read such layouts, with layout_data().
  const OpaqueLayout* layout() const;
  // The bytes as they are, without conversion.
  void* layout_data() const;

  // Views sharing storage (no copy, no autograd).
  Tensor view(const Shape& shape) const;            // one -1 extent allowed
  Tensor flatten_view(int64_t start_axis = 1) const;  // [N, ...] -> [N, prod(...)]
  Tensor slice(int64_t begin, int64_t end) const;   // rows [begin, end) of axis 0
  Tensor select(int64_t index) const;               // row `index` of axis 0, one less axis

  // Copies.
  Tensor clone() const;                // deep copy, same dtype and place
  Tensor to(DType dtype) const;        // converted copy (a clone when the dtype is the same)
  // A copy on `place`, or this tensor itself when it is there already (as PyTorch's to()).
  Tensor to(const Place& place) const;
  Tensor cpu() const { return to(CPUPlace()); }
  // Moves the data to `place` in place: every handle to this tensor then refers to the copy
  // there (an optimizer holding a parameter keeps updating it); views made before keep the
  // old data. For Layer::to.
  void move_to_(const Place& place);
  // Converts the data to `dtype` in place, likewise (Layer::to(dtype)).
  void convert_(DType dtype);
  // In place: each bumps the storage's version (Storage::version), so that backward through
  // a node that saved this data before the change raises instead of using changed values.
  void copy_(const Tensor& src);       // same numel and dtype; shapes may differ
  void fill_(double value);
  void zero_();
  // For code that changed the data in place through data()/raw_data() (an optimizer step).
  void bump_version() const;

  template <typename T>
  std::vector<T> to_vector() const;    // converts from any dtype
  double item() const;                 // the single element, as double

  // Printing in the style of Paddle: Tensor(shape=[2], dtype=float32, [1, 2]).
  std::string to_string(int64_t max_elems = 64) const;

  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }
  bool shares_storage(const Tensor& other) const;
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

  // ---- autograd (implemented in crew/autograd) ----
  // Paddle's stop_gradient: true (the default) means no gradient is computed for this tensor.
  bool stop_gradient() const;
  Tensor& set_stop_gradient(bool stop);
  bool requires_grad() const { return defined() && !stop_gradient(); }
  // The accumulated gradient, or an undefined Tensor.
  Tensor grad() const;
  void set_grad(const Tensor& grad);
  // Sets the gradient to undefined (set_to_zero=false) or to zeros (true).
  void clear_grad(bool set_to_zero = false);
  // Backpropagates from this scalar (gradient 1); retain_graph keeps the graph for another pass.
  void backward(bool retain_graph = false) const;
  // Backpropagates from this tensor with an explicit gradient of its shape.
  void backward(const Tensor& grad_output, bool retain_graph = false) const;
  // A tensor sharing data, with no history and stop_gradient = true.
  Tensor detach() const;
  bool is_leaf() const;

 private:
  void check_defined(const char* op) const;
  void check_dtype(DType expected, const char* op) const;
  std::shared_ptr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace crew

#include "crew/tensor/tensor.h"

#include <cstring>

#include "crew/tensor/kernels/fill_cast.h"
#include <ostream>
#include <sstream>

namespace crew {
namespace {

std::shared_ptr<TensorImpl> new_impl(const Shape& shape, DType dtype, Storage::Init init, const Place& place) {
  for (int64_t d : shape) CREW_CHECK(d >= 0, "Tensor: negative extent in shape ", shape_str(shape));
  auto impl = std::make_shared<TensorImpl>();
  impl->shape = shape;
  impl->dtype = dtype;
  impl->storage =
      std::make_shared<Storage>(static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype), init, place);
  return impl;
}

template <typename Dst>
void convert_into(Dst* dst, const void* src, DType src_dtype, int64_t n) {
  dispatch_storage_dtype(src_dtype, [&](auto tag) {
    using S = decltype(tag);
    const S* s = static_cast<const S*>(src);
    for (int64_t i = 0; i < n; ++i) dst[i] = element_cast<Dst>(s[i]);
  });
}

}  // namespace

Tensor Tensor::empty(const Shape& shape, DType dtype, const Place& place) {
  return Tensor(new_impl(shape, dtype, Storage::Init::ZERO, place));
}
Tensor Tensor::zeros(const Shape& shape, DType dtype, const Place& place) { return empty(shape, dtype, place); }
Tensor Tensor::uninitialized(const Shape& shape, DType dtype, const Place& place) {
  return Tensor(new_impl(shape, dtype, Storage::Init::UNINITIALIZED, place));
}
Tensor Tensor::ones(const Shape& shape, DType dtype, const Place& place) { return full(shape, 1.0, dtype, place); }

Tensor Tensor::with_layout(const Shape& shape, DType dtype, std::shared_ptr<const OpaqueLayout> layout) {
  CREW_CHECK(layout != nullptr, "Tensor::with_layout: no layout");
  CREW_CHECK_EQ(layout->plain_bytes(), static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype),
                "Tensor::with_layout: ", layout->name(), " does not hold shape ", shape_str(shape));
  auto impl = std::make_shared<TensorImpl>();
  impl->shape = shape;
  impl->dtype = dtype;
  impl->storage = std::make_shared<Storage>(layout->bytes(), Storage::Init::UNINITIALIZED);
  impl->storage->set_layout(std::move(layout));
  return Tensor(impl);
}

Tensor Tensor::full(const Shape& shape, double value, DType dtype, const Place& place) {
  Tensor t = uninitialized(shape, dtype, place);
  t.fill_(value);
  return t;
}

Tensor Tensor::scalar(double value, DType dtype) { return full({}, value, dtype); }

Tensor Tensor::arange(int64_t n, DType dtype) {
  Tensor t = uninitialized({n}, dtype);
  dispatch_storage_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data<T>();
    for (int64_t i = 0; i < n; ++i) p[i] = element_cast<T>(i);
  });
  return t;
}

template <typename T>
Tensor Tensor::from_vector(const std::vector<T>& values, const Shape& shape) {
  CREW_CHECK_EQ(static_cast<int64_t>(values.size()), shape_numel(shape),
                "Tensor::from_vector: value count does not match shape ", shape_str(shape));
  Tensor t = uninitialized(shape, dtype_of<T>);
  if (!values.empty()) std::memcpy(t.raw_data(), values.data(), values.size() * sizeof(T));
  return t;
}

Tensor Tensor::from_bytes(const void* bytes, const Shape& shape, DType dtype, const Place& place) {
  Tensor t = uninitialized(shape, dtype, place);
  const size_t n = t.nbytes();
  if (n == 0) return t;
  CREW_CHECK(bytes != nullptr, "Tensor::from_bytes: null source for ", n, " bytes");
  if (place.host_accessible()) {
    std::memcpy(t.raw_data("from_bytes"), bytes, n);
  } else {
    copy_bytes(t.device_data(), place, bytes, CPUPlace(), n, "from_bytes");
  }
  return t;
}

const Shape& Tensor::shape() const {
  check_defined("shape");
  return impl_->shape;
}

int64_t Tensor::size(int64_t d) const { return shape()[normalize_axis(d, dim())]; }

DType Tensor::dtype() const {
  check_defined("dtype");
  return impl_->dtype;
}

const Place& Tensor::place() const {
  check_defined("place");
  return impl_->storage->place();
}

void* Tensor::raw_data(const char* op) const {
  check_defined(op);
  Storage& s = *impl_->storage;
  if (!s.place().host_accessible()) {
    CREW_THROW(DeviceError, op, ": the tensor (shape ", shape_str(impl_->shape), ") is on ", s.place().to_string(),
               ", not in host memory; copy it with .cpu() first");
  }
  if (s.layout() != nullptr) s.make_plain();
  return static_cast<char*>(s.data()) + impl_->offset * dtype_size(impl_->dtype);
}

void* Tensor::device_data() const {
  check_defined("device_data");
  CREW_CHECK(impl_->storage->layout() == nullptr, "device_data: the data is in an opaque layout");
  return static_cast<char*>(impl_->storage->data()) + impl_->offset * dtype_size(impl_->dtype);
}

const OpaqueLayout* Tensor::layout() const {
  if (!defined()) return nullptr;
  const OpaqueLayout* l = impl_->storage->layout();
  if (l == nullptr || impl_->offset != 0 || l->plain_bytes() != nbytes()) return nullptr;
  return l;
}

void* Tensor::layout_data() const {
  check_defined("layout_data");
  return static_cast<char*>(impl_->storage->data()) + impl_->offset * dtype_size(impl_->dtype);
}

Tensor Tensor::view(const Shape& shape) const {
  check_defined("view");
  auto impl = std::make_shared<TensorImpl>(*impl_);
  impl->autograd = nullptr;
  impl->shape = infer_shape(shape, numel());
  return Tensor(impl);
}

Tensor Tensor::flatten_view(int64_t start_axis) const {
  check_defined("flatten_view");
  int64_t a = normalize_axis(start_axis, dim());
  Shape s(shape().begin(), shape().begin() + a);
  int64_t rest = 1;
  for (int64_t i = a; i < dim(); ++i) rest *= shape()[i];
  s.push_back(rest);
  return view(s);
}

Tensor Tensor::slice(int64_t begin, int64_t end) const {
  check_defined("slice");
  CREW_CHECK(dim() >= 1, "slice: tensor has no axis 0");
  const int64_t n = shape()[0];
  CREW_CHECK_T(IndexError, 0 <= begin && begin <= end && end <= n, "slice: range [", begin, ", ", end,
               ") out of bounds for axis 0 of size ", n);
  auto impl = std::make_shared<TensorImpl>(*impl_);
  impl->autograd = nullptr;
  const int64_t row = n == 0 ? 0 : numel() / n;
  impl->offset += begin * row;
  impl->shape[0] = end - begin;
  return Tensor(impl);
}

Tensor Tensor::select(int64_t index) const {
  check_defined("select");
  CREW_CHECK(dim() >= 1, "select: tensor has no axis 0");
  const int64_t n = shape()[0];
  CREW_CHECK_T(IndexError, 0 <= index && index < n, "select: index ", index,
               " out of bounds for axis 0 of size ", n);
  Tensor row = slice(index, index + 1);
  row.impl_->shape.erase(row.impl_->shape.begin());
  return row;
}

Tensor Tensor::clone() const {
  check_defined("clone");
  const Place& at = place();
  Tensor out = uninitialized(shape(), dtype(), at);
  if (at.type == DeviceType::CPU) {
    if (nbytes()) std::memcpy(out.raw_data(), raw_data(), nbytes());
  } else {
    copy_bytes(out.device_data(), at, device_data(), at, nbytes(), "clone");
  }
  return out;
}

Tensor Tensor::to(DType target) const {
  check_defined("to");
  if (target == dtype()) return clone();
  Tensor out = uninitialized(shape(), target, place());
  kernels::cast_kernel.get(place().type)(*this, out);
  return out;
}

Tensor Tensor::to(const Place& target) const {
  check_defined("to");
  if (target == place()) return *this;
  device_backend(target, "to");  // "to: no backend for gpu:0 (crew is not compiled with CUDA)"
  Tensor out = uninitialized(shape(), dtype(), target);
  const void* src = place().host_accessible() ? raw_data("to") : device_data();
  copy_bytes(out.device_data(), target, src, place(), nbytes(), "to");
  return out;
}

void Tensor::move_to_(const Place& target) {
  check_defined("move_to_");
  if (target == place()) return;
  Tensor moved = to(target);
  impl_->storage = moved.impl_->storage;
  impl_->offset = 0;
}

void Tensor::convert_(DType target) {
  check_defined("convert_");
  if (target == dtype()) return;
  Tensor converted = to(target);
  impl_->storage = converted.impl_->storage;
  impl_->offset = 0;
  impl_->dtype = target;
}

void Tensor::copy_(const Tensor& src) {
  check_defined("copy_");
  CREW_CHECK_EQ(numel(), src.numel(), "copy_: element counts differ (", shape_str(shape()), " <- ",
                shape_str(src.shape()), ")");
  CREW_CHECK(dtype() == src.dtype(), "copy_: dtype ", dtype_name(dtype()), " <- ", dtype_name(src.dtype()));
  if (place().type == DeviceType::CPU && src.place().type == DeviceType::CPU) {
    if (nbytes()) std::memmove(raw_data(), src.raw_data(), nbytes());
  } else {
    void* dst = place().host_accessible() ? raw_data("copy_") : device_data();
    const void* from = src.place().host_accessible() ? src.raw_data("copy_") : src.device_data();
    copy_bytes(dst, place(), from, src.place(), nbytes(), "copy_");
  }
  impl_->storage->bump_version();
}

void Tensor::fill_(double value) {
  check_defined("fill_");
  kernels::fill_kernel.get(place().type)(*this, value);
  impl_->storage->bump_version();
}

void Tensor::zero_() {
  check_defined("zero_");
  if (place().type == DeviceType::CPU) {
    if (nbytes()) std::memset(raw_data(), 0, nbytes());
  } else if (nbytes()) {
    device_backend(place(), "zero_").zero(place(), device_data(), nbytes());
  }
  impl_->storage->bump_version();
}

void Tensor::bump_version() const {
  check_defined("bump_version");
  impl_->storage->bump_version();
}

template <typename T>
std::vector<T> Tensor::to_vector() const {
  check_defined("to_vector");
  if (!place().host_accessible()) return cpu().to_vector<T>();
  std::vector<T> out(static_cast<size_t>(numel()));
  convert_into(out.data(), raw_data(), dtype(), numel());
  return out;
}

double Tensor::item() const {
  check_defined("item");
  CREW_CHECK_EQ(numel(), 1, "item: tensor of shape ", shape_str(shape()), " is not a single element");
  return to_vector<double>()[0];
}

std::string Tensor::to_string(int64_t max_elems) const {
  if (!defined()) return "Tensor(undefined)";
  std::ostringstream os;
  os << "Tensor(shape=" << shape_str(shape()) << ", dtype=" << dtype_name(dtype()) << ", ";
  std::vector<double> v = to_vector<double>();
  const int64_t n = numel();
  const int64_t shown = n > max_elems ? max_elems : n;
  os << '[';
  for (int64_t i = 0; i < shown; ++i) {
    if (i) os << ", ";
    if (is_floating(dtype())) {
      os << static_cast<float>(v[i]);
    } else {
      os << static_cast<long long>(v[i]);
    }
  }
  if (shown < n) os << ", ... (" << n << " elements)";
  os << "])";
  return os.str();
}

bool Tensor::shares_storage(const Tensor& other) const {
  return defined() && other.defined() && impl_->storage == other.impl_->storage;
}

void Tensor::check_defined(const char* op) const {
  CREW_CHECK_T(StateError, impl_ != nullptr, "Tensor::", op, ": tensor is undefined");
}

void Tensor::check_dtype(DType expected, const char* op) const {
  check_defined(op);
  CREW_CHECK(impl_->dtype == expected, "Tensor::", op, ": tensor has dtype ", dtype_name(impl_->dtype),
             ", accessed as ", dtype_name(expected));
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.to_string(); }

#define CREW_INSTANTIATE(T)                                                           \
  template Tensor Tensor::from_vector<T>(const std::vector<T>&, const Shape&);         \
  template std::vector<T> Tensor::to_vector<T>() const;
CREW_INSTANTIATE(float)
CREW_INSTANTIATE(double)
CREW_INSTANTIATE(int32_t)
CREW_INSTANTIATE(int64_t)
CREW_INSTANTIATE(uint8_t)
CREW_INSTANTIATE(bfloat16)
CREW_INSTANTIATE(float16)
#undef CREW_INSTANTIATE

// std::vector<bool> packs its bits (no data()): BOOL tensors copy element by element.
template <>
Tensor Tensor::from_vector<bool>(const std::vector<bool>& values, const Shape& shape) {
  CREW_CHECK_EQ(static_cast<int64_t>(values.size()), shape_numel(shape),
                "Tensor::from_vector: value count does not match shape ", shape_str(shape));
  Tensor t = uninitialized(shape, DType::BOOL);
  bool* p = static_cast<bool*>(t.raw_data());
  for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  return t;
}

template <>
std::vector<bool> Tensor::to_vector<bool>() const {
  std::vector<uint8_t> bytes = to(DType::BOOL).to_vector<uint8_t>();
  return std::vector<bool>(bytes.begin(), bytes.end());
}

}  // namespace crew

#pragma once
// Kernel entries of the fake device (tests/testing/fake_device.h) made from the CPU entries:
// the fake device's memory is host memory, so its entry of a kernel runs the CPU entry on
// host-place aliases of its tensors (same bytes, no copy) and hands the results back as
// fake-place aliases. Whatever a training step computes on the fake device then goes through
// the kernels' slots, and anything above the kernels that touches elements itself meets the
// pointer guard (a DeviceError): this is what the fake-device tests check.
//
//   testing::set_fake_entry<&kernels::relu_forward_kernel>(true);   // registers
//   testing::set_fake_entry<&kernels::relu_forward_kernel>(false);  // removes
//
// Arguments and results convert through host_view()/fake_view(): Tensor, vectors, optionals,
// pairs and tuples of them; anything else passes as it is (see converts_to_fake). Kernels
// take tensors by const reference or value and return new ones; outputs passed in are
// written through (the aliases share the bytes).
#include <atomic>
#include <memory>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::testing {

// How often fake entries ran (FakeDevice::calls() counts these and the hand-written ones).
inline std::atomic<int>& fake_entry_calls() {
  static std::atomic<int> n{0};
  return n;
}

// The fake place of the call's arguments, for its results.
inline Place& fake_call_place() {
  static thread_local Place place{DeviceType::FAKE, 0};
  return place;
}

// `t`'s bytes as a tensor on `place` (a view of the same memory, which it keeps alive).
inline Tensor alias_on(const Tensor& t, const Place& place) {
  if (!t.defined() || t.place() == place) return t;
  const std::shared_ptr<Storage>& storage = t.impl()->storage;
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::make_shared<Storage>(storage->data(), storage->bytes(), storage, place);
  impl->offset = t.impl()->offset;
  impl->shape = t.shape();
  impl->dtype = t.dtype();
  return Tensor(std::move(impl));
}

// Types host_view()/fake_view() convert; everything else passes through as it is (a kernel's
// sizes, options, random generator...). A kernel whose signature carries a struct of tensors
// specialises this for it and adds overloads of both functions taking it by const reference.
template <typename T>
struct converts_to_fake : std::false_type {};
template <>
struct converts_to_fake<Tensor> : std::true_type {};
template <>
struct converts_to_fake<std::vector<Tensor>> : std::true_type {};
template <>
struct converts_to_fake<std::optional<Tensor>> : std::true_type {};
template <typename A, typename B>
struct converts_to_fake<std::pair<A, B>> : std::true_type {};
template <typename... Ts>
struct converts_to_fake<std::tuple<Ts...>> : std::true_type {};

template <typename T>
  requires(!converts_to_fake<std::remove_cvref_t<T>>::value)
decltype(auto) host_view(T&& v) {
  return std::forward<T>(v);
}
template <typename T>
  requires(!converts_to_fake<std::remove_cvref_t<T>>::value)
decltype(auto) fake_view(T&& v) {
  return std::forward<T>(v);
}

inline Tensor host_view(const Tensor& t) {
  if (t.defined() && t.place().type == DeviceType::FAKE) {
    fake_call_place() = t.place();
    return alias_on(t, CPUPlace());
  }
  return t;
}
inline Tensor fake_view(const Tensor& t) {
  if (!t.defined() || t.place().type != DeviceType::CPU) return t;
  if (t.layout() != nullptr) t.raw_data("fake_view");  // row-major first: fake memory is plain
  return alias_on(t, fake_call_place());
}
inline std::vector<Tensor> host_view(const std::vector<Tensor>& v) {
  std::vector<Tensor> out;
  out.reserve(v.size());
  for (const Tensor& t : v) out.push_back(host_view(t));
  return out;
}
inline std::vector<Tensor> fake_view(const std::vector<Tensor>& v) {
  std::vector<Tensor> out;
  out.reserve(v.size());
  for (const Tensor& t : v) out.push_back(fake_view(t));
  return out;
}
inline std::optional<Tensor> host_view(const std::optional<Tensor>& t) {
  return t ? std::optional<Tensor>(host_view(*t)) : std::nullopt;
}
inline std::optional<Tensor> fake_view(const std::optional<Tensor>& t) {
  return t ? std::optional<Tensor>(fake_view(*t)) : std::nullopt;
}
template <typename A, typename B>
std::pair<A, B> host_view(const std::pair<A, B>& p) {
  return {host_view(p.first), host_view(p.second)};
}
template <typename A, typename B>
std::pair<A, B> fake_view(const std::pair<A, B>& p) {
  return {fake_view(p.first), fake_view(p.second)};
}
template <typename... Ts>
std::tuple<Ts...> host_view(const std::tuple<Ts...>& t) {
  return std::apply([](const auto&... e) { return std::tuple<Ts...>(host_view(e)...); }, t);
}
template <typename... Ts>
std::tuple<Ts...> fake_view(const std::tuple<Ts...>& t) {
  return std::apply([](const auto&... e) { return std::tuple<Ts...>(fake_view(e)...); }, t);
}

template <auto* Slot, typename Fn>
struct FakeEntry;

template <auto* Slot, typename R, typename... Args>
struct FakeEntry<Slot, R(Args...)> {
  static R call(Args... args) {
    ++fake_entry_calls();
    auto* cpu = Slot->get(DeviceType::CPU);
    if constexpr (std::is_void_v<R>) {
      cpu(host_view(static_cast<Args&&>(args))...);
    } else {
      return fake_view(cpu(host_view(static_cast<Args&&>(args))...));
    }
  }
};

// Registers (on) or removes (off) the fake entry of `*Slot`.
template <auto* Slot>
void set_fake_entry(bool on) {
  using Fn = typename std::remove_pointer_t<decltype(Slot)>::FnType;
  Slot->set(DeviceType::FAKE, on ? &FakeEntry<Slot, Fn>::call : nullptr);
}

}  // namespace crew::testing

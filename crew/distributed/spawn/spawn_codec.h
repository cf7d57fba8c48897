#pragma once
// The byte encoding crew::dist::spawn uses for a function's arguments and its return value:
// little-endian fixed-width numbers, length-prefixed strings, and vectors/pairs/tuples of
// those. Types: bool, integers, float, double, std::string, std::vector<T>, std::pair,
// std::tuple.
//
//   std::string bytes;
//   spawn_codec::encode(bytes, std::tuple<int, std::string>{3, "x"});
//   size_t pos = 0;
//   auto t = spawn_codec::decode<std::tuple<int, std::string>>(bytes, pos);
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "crew/core/check.h"

namespace crew::dist::spawn_codec {

template <typename T>
struct is_vector : std::false_type {};
template <typename T, typename A>
struct is_vector<std::vector<T, A>> : std::true_type {};
template <typename T>
struct is_pair : std::false_type {};
template <typename A, typename B>
struct is_pair<std::pair<A, B>> : std::true_type {};
template <typename T>
struct is_tuple : std::false_type {};
template <typename... T>
struct is_tuple<std::tuple<T...>> : std::true_type {};

template <typename T>
constexpr bool kSupported = std::is_arithmetic_v<T> || std::is_same_v<T, std::string> ||
                            is_vector<T>::value || is_pair<T>::value || is_tuple<T>::value;

template <typename T>
void encode(std::string& out, const T& value);
template <typename T>
T decode(const std::string& in, size_t& pos);
template <typename T, size_t... I>
T decode_tuple(const std::string& in, size_t& pos, std::index_sequence<I...>);

inline void encode_raw(std::string& out, const void* data, size_t size) {
  out.append(static_cast<const char*>(data), size);
}

inline void decode_raw(const std::string& in, size_t& pos, void* data, size_t size) {
  CREW_CHECK_T(SpawnError, pos + size <= in.size(), "spawn: argument bytes truncated (need ", size,
               " at offset ", pos, ", have ", in.size(), ")");
  std::memcpy(data, in.data() + pos, size);
  pos += size;
}

template <typename T>
void encode(std::string& out, const T& value) {
  static_assert(kSupported<T>,
                "crew::dist::spawn: argument and result types must be bool, integers, float, double, "
                "std::string, or std::vector/std::pair/std::tuple of those");
  if constexpr (std::is_arithmetic_v<T>) {
    encode_raw(out, &value, sizeof(T));  // x86-64 and aarch64 are little-endian
  } else if constexpr (std::is_same_v<T, std::string>) {
    uint64_t n = value.size();
    encode_raw(out, &n, sizeof(n));
    out += value;
  } else if constexpr (is_vector<T>::value) {
    uint64_t n = value.size();
    encode_raw(out, &n, sizeof(n));
    for (const auto& v : value) encode(out, static_cast<const typename T::value_type&>(v));
  } else if constexpr (is_pair<T>::value) {
    encode(out, value.first);
    encode(out, value.second);
  } else {
    std::apply([&](const auto&... items) { (encode(out, items), ...); }, value);
  }
}

template <typename T>
T decode(const std::string& in, size_t& pos) {
  static_assert(kSupported<T>, "crew::dist::spawn: unsupported argument or result type");
  if constexpr (std::is_arithmetic_v<T>) {
    T v{};
    decode_raw(in, pos, &v, sizeof(T));
    return v;
  } else if constexpr (std::is_same_v<T, std::string>) {
    uint64_t n = decode<uint64_t>(in, pos);
    CREW_CHECK_T(SpawnError, pos + n <= in.size(), "spawn: string of ", n, " bytes truncated");
    std::string s = in.substr(pos, n);
    pos += n;
    return s;
  } else if constexpr (is_vector<T>::value) {
    uint64_t n = decode<uint64_t>(in, pos);
    CREW_CHECK_T(SpawnError, n <= in.size() - pos, "spawn: vector of ", n, " elements truncated");
    T v;
    v.reserve(n);
    for (uint64_t i = 0; i < n; ++i) v.push_back(decode<typename T::value_type>(in, pos));
    return v;
  } else if constexpr (is_pair<T>::value) {
    auto a = decode<typename T::first_type>(in, pos);
    auto b = decode<typename T::second_type>(in, pos);
    return T{std::move(a), std::move(b)};
  } else {
    return decode_tuple<T>(in, pos, std::make_index_sequence<std::tuple_size_v<T>>{});
  }
}

// Elements in order (a braced list sequences its initialisers left to right).
template <typename T, size_t... I>
T decode_tuple(const std::string& in, size_t& pos, std::index_sequence<I...>) {
  return T{decode<std::tuple_element_t<I, T>>(in, pos)...};
}

}  // namespace crew::dist::spawn_codec

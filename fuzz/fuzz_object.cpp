// Object::decode on arbitrary bytes (crew/distributed/object). Invariants beyond "no crash":
//   - decoding throws crew::Error (ValueError) or returns a value, nothing else;
//   - a decoded value re-encodes to at most the input's size (dict keys may collapse: {1: a,
//     1: b} decodes to {1: b}) and that encoding is a fixed point: decode -> encode gives the
//     same bytes and the same repr (repr, not ==, so that NaN compares equal to itself);
//   - without duplicate dict keys the re-encoding is byte-identical to the input (checked
//     when the sizes agree: the format has exactly one encoding per value).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "crew/core/error.h"
#include "crew/distributed/object/object.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using crew::dist::DecodeLimits;
  using crew::dist::Object;
  const DecodeLimits limits{.max_bytes = 1u << 20, .max_depth = 64, .max_elems = 1u << 16};
  Object o;
  try {
    o = Object::decode(data, size, limits);
  } catch (const crew::Error&) {
    return 0;  // malformed input, rejected with a typed error
  }
  const std::vector<uint8_t> e1 = o.encode();
  FUZZ_CHECK(e1.size() <= size, "re-encoding grew the value");
  if (e1.size() == size) FUZZ_CHECK(std::equal(e1.begin(), e1.end(), data), "same-size re-encoding differs");
  Object o2 = Object::decode(e1, limits);
  FUZZ_CHECK(o2.encode() == e1, "encode(decode(encode(x))) != encode(x)");
  FUZZ_CHECK(o2.repr() == o.repr(), "round trip changed the repr");
  return 0;
}

// The Object wire format (little-endian):
//   "CRO" 0x01 (magic + version), then one value:
//   value = tag:u8 payload; tags: 0 None, 1 False, 2 True, 3 int (i64), 4 float (f64 bits),
//           5 str (u32 n + n bytes), 6 bytes (same), 7 list (u32 n + n values),
//           8 dict (u32 n + n key/value pairs)
// Decoding is a bounds-checked recursive descent with depth and element limits; it builds
// only plain values, so no input can make it run code.
#include <algorithm>
#include <cstring>

#include "crew/core/check.h"
#include "crew/distributed/object/object.h"

namespace crew::dist {

class ObjectCodec {
 public:
  static constexpr uint8_t kMagic[4] = {'C', 'R', 'O', 1};

  static void encode(const Object& o, std::vector<uint8_t>& out, size_t depth) {
    CREW_CHECK(depth <= 1000, "Object::encode: nesting deeper than 1000 levels");
    switch (o.kind_) {
      case Object::Kind::NONE:
        out.push_back(0);
        break;
      case Object::Kind::BOOL:
        out.push_back(o.int_ ? 2 : 1);
        break;
      case Object::Kind::INT:
        out.push_back(3);
        put64(out, static_cast<uint64_t>(o.int_));
        break;
      case Object::Kind::FLOAT: {
        out.push_back(4);
        uint64_t bits;
        std::memcpy(&bits, &o.float_, 8);
        put64(out, bits);
        break;
      }
      case Object::Kind::STR:
      case Object::Kind::BYTES:
        out.push_back(o.kind_ == Object::Kind::STR ? 5 : 6);
        put32(out, o.str_.size());
        out.insert(out.end(), o.str_.begin(), o.str_.end());
        break;
      case Object::Kind::LIST:
        out.push_back(7);
        put32(out, o.list_->size());
        for (auto& item : *o.list_) encode(item, out, depth + 1);
        break;
      case Object::Kind::DICT:
        out.push_back(8);
        put32(out, o.dict_->size());
        for (auto& [k, v] : *o.dict_) {
          encode(k, out, depth + 1);
          encode(v, out, depth + 1);
        }
        break;
    }
  }

  struct Reader {
    const uint8_t* data;
    size_t size;
    size_t pos;
    const DecodeLimits& limits;
    size_t elems = 0;

    void need(size_t n, const char* what) {
      CREW_CHECK(n <= size - pos, "Object::decode: truncated input: ", what, " at byte offset ", pos,
                 " needs ", n, " bytes, ", size - pos, " left");
    }
    uint8_t u8() {
      need(1, "tag");
      return data[pos++];
    }
    uint32_t u32(const char* what) { return little_endian<uint32_t>(what); }
    uint64_t u64(const char* what) { return little_endian<uint64_t>(what); }
    template <typename U>
    U little_endian(const char* what) {
      need(sizeof(U), what);
      U v = 0;
      for (size_t i = 0; i < sizeof(U); ++i) v |= static_cast<U>(data[pos + i]) << (8 * i);
      pos += sizeof(U);
      return v;
    }

    // A claimed count is only a hint: never reserve more than the values still allowed (an
    // Object is ~90 bytes, so trusting n would turn a 64 MiB input into a 6 GiB allocation).
    size_t reserve_for(uint32_t n) const {
      const size_t allowed = limits.max_elems > elems ? limits.max_elems - elems : 0;
      return std::min<size_t>({n, allowed, size_t{1} << 16});
    }

    Object value(size_t depth) {
      CREW_CHECK(depth <= limits.max_depth, "Object::decode: nesting deeper than ", limits.max_depth,
                 " levels at byte offset ", pos);
      CREW_CHECK(++elems <= limits.max_elems, "Object::decode: more than ", limits.max_elems, " values");
      const size_t at = pos;
      const uint8_t tag = u8();
      switch (tag) {
        case 0:
          return Object();
        case 1:
          return Object(false);
        case 2:
          return Object(true);
        case 3:
          return Object(static_cast<long long>(u64("int")));
        case 4:
          return float64();
        case 5:
        case 6:
          return text(tag == 5);
        case 7:
          return list(depth, at);
        case 8:
          return dict(depth, at);
        default:
          CREW_THROW(ValueError, "Object::decode: unknown tag ", int(tag), " at byte offset ", at);
      }
    }

    // The payloads after a tag; `at` is the tag's offset (for messages).
    Object float64() {
      uint64_t bits = u64("float");
      double v;
      std::memcpy(&v, &bits, 8);
      return Object(v);
    }

    Object text(bool is_str) {
      uint32_t n = u32("length");
      need(n, is_str ? "str" : "bytes");
      std::string s(reinterpret_cast<const char*>(data + pos), n);
      pos += n;
      return is_str ? Object(std::move(s)) : Object::bytes(std::move(s));
    }

    Object list(size_t depth, size_t at) {
      uint32_t n = u32("list length");
      // Each element takes at least one byte: a length beyond the input is malformed.
      CREW_CHECK(n <= size - pos, "Object::decode: list at byte offset ", at, " claims ", n,
                 " elements but only ", size - pos, " bytes follow");
      Object::Items items;
      items.reserve(reserve_for(n));
      for (uint32_t i = 0; i < n; ++i) items.push_back(value(depth + 1));
      return Object::list(std::move(items));
    }

    Object dict(size_t depth, size_t at) {
      uint32_t n = u32("dict length");
      CREW_CHECK(n <= (size - pos) / 2, "Object::decode: dict at byte offset ", at, " claims ", n,
                 " entries but only ", size - pos, " bytes follow");
      Object::Pairs pairs;
      pairs.reserve(reserve_for(n));
      for (uint32_t i = 0; i < n; ++i) {
        Object k = value(depth + 1);
        Object v = value(depth + 1);
        CREW_CHECK(k.kind() != Object::Kind::LIST && k.kind() != Object::Kind::DICT,
                   "Object::decode: unhashable ", kind_name(k.kind()), " dict key at byte offset ", at);
        pairs.emplace_back(std::move(k), std::move(v));
      }
      return Object::dict_of(std::move(pairs));
    }
  };

 private:
  static void put32(std::vector<uint8_t>& out, size_t v) {
    CREW_CHECK(v <= 0xffffffffu, "Object::encode: length ", v, " does not fit the format");
    put_le(out, v, 4);
  }
  static void put64(std::vector<uint8_t>& out, uint64_t v) { put_le(out, v, 8); }
  // The low `bytes` bytes of v, least significant first.
  static void put_le(std::vector<uint8_t>& out, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
};

std::vector<uint8_t> Object::encode() const {
  std::vector<uint8_t> out(ObjectCodec::kMagic, ObjectCodec::kMagic + 4);
  ObjectCodec::encode(*this, out, 0);
  return out;
}

Object Object::decode(const uint8_t* data, size_t size, const DecodeLimits& limits) {
  CREW_CHECK(size <= limits.max_bytes, "Object::decode: ", size, " bytes is over the limit of ",
             limits.max_bytes);
  CREW_CHECK(size >= 4 && std::memcmp(data, ObjectCodec::kMagic, 4) == 0,
             "Object::decode: bad header at byte offset 0 (not a crew Object encoding, or another version)");
  ObjectCodec::Reader r{data, size, 4, limits};
  Object o = r.value(0);
  CREW_CHECK(r.pos == size, "Object::decode: ", size - r.pos, " trailing bytes at byte offset ", r.pos);
  return o;
}

}  // namespace crew::dist

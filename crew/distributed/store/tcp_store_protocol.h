#pragma once
// The TCPStore wire protocol: little-endian, fixed-width, versioned frames.
//
//   frame  = header(12 bytes) body
//   header = u32 magic "CRWS" | u8 version | u8 code (op in requests, status in replies)
//            | u16 reserved (0) | u32 body length
//   body   = fields: u8, u32, i64, or bytes = u32 length + that many bytes
//
// Requests (first a HELLO, whose reply must be OK before anything else):
//   HELLO version:u32 token:bytes          -> OK | ERROR message
//   SET key value                          -> OK | ERROR message  (value over the server's limit)
//   GET timeout_ms:i64 key                 -> OK value | TIMEOUT            (waits for the key)
//   ADD key delta:i64                      -> OK new_value:i64
//   COMPARE_SET key expected desired       -> OK value_after
//   CHECK n:u32 key*n                      -> OK all_present:u8
//   DELETE_KEY key                         -> OK existed:u8
//   NUM_KEYS                               -> OK count:i64
//   WAIT timeout_ms:i64 n:u32 key*n        -> OK | TIMEOUT n:u32 missing_key*n
// A malformed frame (bad magic or version, body over the limit, a field running past the
// body) makes the server drop that client only.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "crew/core/check.h"

namespace crew::dist::detail {

constexpr uint32_t kStoreMagic = 0x53575243u;  // "CRWS" in little-endian byte order
constexpr uint8_t kStoreVersion = 1;
constexpr size_t kFrameHeaderBytes = 12;

enum class StoreOp : uint8_t { HELLO = 1, SET, GET, ADD, COMPARE_SET, CHECK, DELETE_KEY, NUM_KEYS, WAIT };
enum class StoreStatus : uint8_t { OK = 0, TIMEOUT = 1, ERROR = 2 };

const char* store_op_name(StoreOp op);

struct FrameHeader {
  uint8_t code = 0;
  uint32_t body_len = 0;
};

void encode_header(uint8_t code, uint32_t body_len, uint8_t out[kFrameHeaderBytes]);
// Throws ValueError for a bad magic or version.
FrameHeader decode_header(const uint8_t in[kFrameHeaderBytes]);

// Appends fields to a body.
class BodyWriter {
 public:
  BodyWriter& u8(uint8_t v) {
    buf_.push_back(v);
    return *this;
  }
  BodyWriter& u32(uint32_t v);
  BodyWriter& i64(int64_t v);
  BodyWriter& bytes(const void* data, size_t size);
  BodyWriter& bytes(const std::string& s) { return bytes(s.data(), s.size()); }
  BodyWriter& bytes(const std::vector<uint8_t>& v) { return bytes(v.data(), v.size()); }
  const std::vector<uint8_t>& data() const { return buf_; }
  // The whole frame: header + body.
  std::vector<uint8_t> frame(uint8_t code) const;

 private:
  std::vector<uint8_t> buf_;
};

// Reads fields from a body; every read is bounds-checked (ValueError naming the offset).
class BodyReader {
 public:
  BodyReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t u8();
  uint32_t u32();
  int64_t i64();
  std::vector<uint8_t> bytes(size_t max_size);
  std::string str(size_t max_size) {
    auto v = bytes(max_size);
    return std::string(v.begin(), v.end());
  }
  bool done() const { return pos_ == size_; }
  size_t remaining() const { return size_ - pos_; }
  size_t offset() const { return pos_; }

 private:
  void need(size_t n, const char* what);
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace crew::dist::detail

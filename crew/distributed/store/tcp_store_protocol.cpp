#include "crew/distributed/store/tcp_store_protocol.h"

namespace crew::dist::detail {
namespace {

void put_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint32_t get_u32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace

const char* store_op_name(StoreOp op) {
  switch (op) {
    case StoreOp::HELLO:
      return "hello";
    case StoreOp::SET:
      return "set";
    case StoreOp::GET:
      return "get";
    case StoreOp::ADD:
      return "add";
    case StoreOp::COMPARE_SET:
      return "compare_set";
    case StoreOp::CHECK:
      return "check";
    case StoreOp::DELETE_KEY:
      return "delete_key";
    case StoreOp::NUM_KEYS:
      return "num_keys";
    case StoreOp::WAIT:
      return "wait";
  }
  return "unknown";
}

void encode_header(uint8_t code, uint32_t body_len, uint8_t out[kFrameHeaderBytes]) {
  put_u32(out, kStoreMagic);
  out[4] = kStoreVersion;
  out[5] = code;
  out[6] = 0;
  out[7] = 0;
  put_u32(out + 8, body_len);
}

FrameHeader decode_header(const uint8_t in[kFrameHeaderBytes]) {
  uint32_t magic = get_u32(in);
  CREW_CHECK(magic == kStoreMagic, "TCPStore: bad frame magic 0x", std::hex, magic,
             " (not a crew store peer?)");
  CREW_CHECK(in[4] == kStoreVersion, "TCPStore: protocol version ", int(in[4]), ", expected ",
             int(kStoreVersion));
  FrameHeader h;
  h.code = in[5];
  h.body_len = get_u32(in + 8);
  return h;
}

BodyWriter& BodyWriter::u32(uint32_t v) {
  uint8_t b[4];
  put_u32(b, v);
  buf_.insert(buf_.end(), b, b + 4);
  return *this;
}

BodyWriter& BodyWriter::i64(int64_t v) {
  uint64_t u = static_cast<uint64_t>(v);
  for (int i = 0; i < 8; ++i) buf_.push_back(static_cast<uint8_t>(u >> (8 * i)));
  return *this;
}

BodyWriter& BodyWriter::bytes(const void* data, size_t size) {
  CREW_CHECK(size <= 0xffffffffu, "TCPStore: field of ", size, " bytes is too large");
  u32(static_cast<uint32_t>(size));
  const uint8_t* p = static_cast<const uint8_t*>(data);
  buf_.insert(buf_.end(), p, p + size);
  return *this;
}

std::vector<uint8_t> BodyWriter::frame(uint8_t code) const {
  std::vector<uint8_t> out(kFrameHeaderBytes + buf_.size());
  encode_header(code, static_cast<uint32_t>(buf_.size()), out.data());
  if (!buf_.empty()) std::memcpy(out.data() + kFrameHeaderBytes, buf_.data(), buf_.size());
  return out;
}

void BodyReader::need(size_t n, const char* what) {
  CREW_CHECK(n <= size_ - pos_, "TCPStore: malformed message: ", what, " at offset ", pos_, " needs ", n,
             " bytes, only ", size_ - pos_, " left");
}

uint8_t BodyReader::u8() {
  need(1, "u8");
  return data_[pos_++];
}

uint32_t BodyReader::u32() {
  need(4, "u32");
  uint32_t v = get_u32(data_ + pos_);
  pos_ += 4;
  return v;
}

int64_t BodyReader::i64() {
  need(8, "i64");
  uint64_t u = 0;
  for (int i = 0; i < 8; ++i) u |= static_cast<uint64_t>(data_[pos_ + i]) << (8 * i);
  pos_ += 8;
  return static_cast<int64_t>(u);
}

std::vector<uint8_t> BodyReader::bytes(size_t max_size) {
  const size_t at = pos_;
  uint32_t n = u32();
  CREW_CHECK(n <= max_size, "TCPStore: field at offset ", at, " has ", n, " bytes, over the limit of ",
             max_size);
  need(n, "bytes");
  std::vector<uint8_t> v(data_ + pos_, data_ + pos_ + n);
  pos_ += n;
  return v;
}

}  // namespace crew::dist::detail

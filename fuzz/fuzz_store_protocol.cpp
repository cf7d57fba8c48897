// The TCPStore wire protocol (crew/distributed/store/tcp_store_protocol.*) on arbitrary bytes: the
// input is what a client sends, a stream of frames, read the way the server reads it (header,
// body limit, then the request's fields by op, HELLO first, no trailing bytes). Invariants:
//   - decode_header / BodyReader throw crew::Error (ValueError) or succeed, nothing else;
//   - a BodyReader never reads past its body and every successful read advances it by the
//     field's encoded size;
//   - a request that parses re-encodes with BodyWriter to exactly the body it came from, and
//     its frame header re-encodes to the input header (the reserved u16 aside);
//   - the frames consumed never exceed the input.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "crew/core/error.h"
#include "crew/distributed/store/tcp_store_protocol.h"
#include "fuzz/fuzz_check.h"

namespace {

using crew::dist::detail::BodyReader;
using crew::dist::detail::BodyWriter;
using crew::dist::detail::StoreOp;

// The server's defaults, scaled down so that inputs of a few KiB reach every limit.
constexpr size_t kMaxKey = 64;
constexpr size_t kMaxValue = 256;
constexpr uint32_t kMaxKeysPerOp = 65536;

// Reads one request body of `op` field by field, mirroring each field into `echo`.
// Throws crew::Error on a malformed body, as the server does.
void parse_request(StoreOp op, BodyReader& r, BodyWriter& echo) {
  auto key = [&] {
    const size_t before = r.offset();
    std::string k = r.str(kMaxKey);
    FUZZ_CHECK(r.offset() == before + 4 + k.size(), "bytes() advanced by the wrong amount");
    echo.bytes(k);
  };
  auto value = [&] {
    std::vector<uint8_t> v = r.bytes(kMaxValue);
    FUZZ_CHECK(v.size() <= kMaxValue, "bytes() returned more than its limit");
    echo.bytes(v);
  };
  auto count = [&] {
    uint32_t n = r.u32();
    CREW_CHECK(n <= kMaxKeysPerOp, "op on ", n, " keys");
    echo.u32(n);
    return n;
  };
  switch (op) {
    case StoreOp::HELLO: {
      echo.u32(r.u32());
      std::string token = r.str(1024);
      echo.bytes(token);
      break;
    }
    case StoreOp::SET:
      key();
      value();
      break;
    case StoreOp::GET:
      echo.i64(r.i64());
      key();
      break;
    case StoreOp::ADD:
      key();
      echo.i64(r.i64());
      break;
    case StoreOp::COMPARE_SET:
      key();
      value();
      value();
      break;
    case StoreOp::CHECK:
      for (uint32_t i = count(); i > 0; --i) key();
      break;
    case StoreOp::DELETE_KEY:
      key();
      break;
    case StoreOp::NUM_KEYS:
      break;
    case StoreOp::WAIT: {
      echo.i64(r.i64());
      for (uint32_t i = count(); i > 0; --i) key();
      break;
    }
    default:
      CREW_THROW(ValueError, "unknown op ", int(op));
  }
  CREW_CHECK(r.done(), "message has ", r.offset(), " of its bytes read, trailing bytes left");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace d = crew::dist::detail;
  const size_t limit = kMaxValue * 2 + kMaxKey + 64;
  size_t pos = 0;
  bool hello_done = false;
  try {
    while (size - pos >= d::kFrameHeaderBytes) {
      const uint8_t* head = data + pos;
      d::FrameHeader h = d::decode_header(head);
      CREW_CHECK(h.body_len <= limit, "message body of ", h.body_len, " bytes is over the limit");
      if (size - pos - d::kFrameHeaderBytes < h.body_len) break;  // incomplete frame: wait for more
      const uint8_t* body = head + d::kFrameHeaderBytes;
      const StoreOp op = static_cast<StoreOp>(h.code);
      CREW_CHECK(hello_done || op == StoreOp::HELLO, "first message is ", int(h.code), ", expected HELLO");
      BodyReader r(body, h.body_len);
      BodyWriter echo;
      parse_request(op, r, echo);
      hello_done = true;
      FUZZ_CHECK(echo.data().size() == h.body_len, "re-encoded body has another size");
      FUZZ_CHECK(h.body_len == 0 || std::memcmp(echo.data().data(), body, h.body_len) == 0,
                 "re-encoded body differs from the input");
      std::vector<uint8_t> frame = echo.frame(h.code);
      FUZZ_CHECK(std::memcmp(frame.data(), head, 6) == 0 && std::memcmp(frame.data() + 8, head + 8, 4) == 0,
                 "re-encoded header differs");
      d::FrameHeader again = d::decode_header(frame.data());
      FUZZ_CHECK(again.code == h.code && again.body_len == h.body_len, "header round trip");
      pos += d::kFrameHeaderBytes + h.body_len;
      FUZZ_CHECK(pos <= size, "consumed past the input");
    }
  } catch (const crew::Error&) {
    // malformed: the server drops this client
  }
  return 0;
}

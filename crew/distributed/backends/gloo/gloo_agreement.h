#pragma once
// The preamble every Gloo collective starts with, and the check it carries. Each rank sends
// every other rank one message on a slot of its own: its call header (kind, element count,
// dtype, root, reduction; 40 bytes) followed by up to preamble_data_bytes(size) of the op's own data.
// Every rank receives every header, so when the calls differ every rank throws a DesyncError
// naming both calls. Gloo checks none of this itself: a size mismatch aborts the process
// (gloo::EnforceNotMet), a dtype or reduction mismatch completes with wrong numbers.
//
// Why this costs no extra round trip where it matters: a collective whose messages fit in a
// preamble (all_reduce, reduce_scatter, broadcast, reduce, all_gather, gather, scatter and
// alltoall up to preamble_data_bytes(size) per message; barrier always) moves its data in this one
// exchange and makes no Gloo call after it. A larger one sends the header alone first and
// then runs Gloo's algorithm: its first data exchange happens inside Gloo, where no header
// can ride along, and it must not start before the check (a receiver whose buffer is smaller
// than what a peer sends aborts inside Gloo), so there the header keeps its own exchange,
// one latency against a transfer of more than preamble_data_bytes(size) per peer.
//
// A message never exceeds kPreambleHeaderBytes + preamble_data_bytes(size), the size every receive
// is posted with, so even a mismatched call cannot overflow a peer's buffer; a DesyncError
// is thrown before any data is used, so the group stays usable after one.
//
//   GlooCall call{"all_reduce", t.numel(), t.dtype(), -1, static_cast<int>(ReduceOp::SUM)};
//   preamble.exchange(context, call, tag, timeout, info, [&](int) { return PreambleData{p, n}; });
//   const uint8_t* theirs = preamble.data_from(peer);
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "crew/distributed/process_group/work.h"
#include "crew/tensor/dtype.h"

namespace gloo {
class Context;
}

namespace crew::dist::detail {

// One rank's view of a collective, as the ranks compare it.
struct GlooCall {
  std::string op;     // "all_reduce", "broadcast", ..., "barrier"
  int64_t numel = 0;  // elements per rank (all_gather/gather: input; scatter/reduce_scatter: output)
  DType dtype = DType::FLOAT32;
  int root = -1;       // broadcast/reduce/gather/scatter; -1 otherwise
  int reduce_op = -1;  // ReduceOp as int for reductions; -1 otherwise

  // "all_reduce (8 x float32, SUM)", "broadcast (4 x int64, root 0)", "barrier".
  std::string describe() const;
  bool operator==(const GlooCall& other) const;

  static constexpr int kWireElems = 5;
  void to_wire(int64_t* out) const;
  // Inverse of to_wire(); an unknown kind or dtype reads as op "unknown collective".
  static GlooCall from_wire(const int64_t* in);
};

// Bytes of the op's data one preamble message carries after the header, in a group of `size`
// ranks: the exchange is a full mesh (each rank sends every peer its message), so the budget
// shrinks as the group grows, to keep what a rank sends near 2 MiB: 1 MiB per peer up to 3
// ranks, 64 KiB from 33 ranks on (multiples of 8 bytes). Above it, the op runs Gloo's own
// algorithm after a header-only exchange.
inline constexpr size_t kPreambleMaxDataBytes = size_t{1} << 20;
inline constexpr size_t kPreambleMinDataBytes = size_t{64} << 10;
inline size_t preamble_data_bytes(int size) {
  const size_t peers = size > 1 ? static_cast<size_t>(size - 1) : 1;
  const size_t share = (2 * kPreambleMaxDataBytes / peers) / 8 * 8;
  return share > kPreambleMaxDataBytes   ? kPreambleMaxDataBytes
         : share < kPreambleMinDataBytes ? kPreambleMinDataBytes
                                         : share;
}
inline constexpr size_t kPreambleHeaderBytes = GlooCall::kWireElems * sizeof(int64_t);

// What this rank sends one peer after its header (bytes <= preamble_data_bytes(size)).
struct PreambleData {
  const void* data = nullptr;
  size_t bytes = 0;
};
using PreambleDataFn = std::function<PreambleData(int peer)>;

// The preamble exchange of a group, with buffers reused from op to op (a group runs one op at
// a time). Each exchange also posts the receives of the next collective's preamble (its tag is
// this one's + 2: every collective takes two consecutive tags) into a second buffer, and Gloo
// tells the peers at once. Gloo sends a message straight from the sender's thread only when
// the receiver's receive is already known there; otherwise the sender announces it, waits
// for the receiver's announcement and sends from its event loop: a round trip more per op.
// Posted one op ahead, the announcement travels before this op's data on the same connection,
// so it is there when the next op sends.
class GlooPreamble {
 public:
  GlooPreamble();
  ~GlooPreamble();
  GlooPreamble(const GlooPreamble&) = delete;
  GlooPreamble& operator=(const GlooPreamble&) = delete;

  // Sends [header | data_for(peer)] (header only when data_for is null) to every peer on Gloo
  // slot (prefix 0xF2, tag) and receives every peer's message, within `timeout`. Throws
  // DesyncError naming the first rank whose call differs from `mine`, and both calls.
  void exchange(const std::shared_ptr<::gloo::Context>& context, const GlooCall& mine, uint32_t tag,
                std::chrono::milliseconds timeout, const OpInfo& info, const PreambleDataFn& data_for);
  // The data rank `peer` sent this rank in the last exchange (8-byte aligned).
  const uint8_t* data_from(int peer) const {
    return reinterpret_cast<const uint8_t*>(in_[current_].data()) + static_cast<size_t>(peer) * message_bytes_ +
           kPreambleHeaderBytes;
  }

 private:
  struct Receive;  // one receive buffer: its memory, Gloo's buffer over it, the slot posted on
  void post(const std::shared_ptr<::gloo::Context>& context, int index, uint32_t tag);

  size_t message_bytes_ = 0;   // header + preamble_data_bytes(size) of the group
  std::vector<uint64_t> out_;  // size * message_bytes_: the message for peer r at r * message_bytes_
  std::vector<uint64_t> in_[2];  // the same layout for the messages received, two ops' worth
  std::unique_ptr<Receive> receives_[2];
  int current_ = 0;  // the buffer of the last exchange
};

}  // namespace crew::dist::detail

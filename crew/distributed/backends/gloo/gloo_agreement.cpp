#include "crew/distributed/backends/gloo/gloo_agreement.h"

#include <gloo/context.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>

#include <array>
#include <cstring>
#include <vector>

#include "crew/core/check.h"
#include "crew/core/error.h"
#include "crew/distributed/process_group/process_group.h"

namespace crew::dist::detail {

namespace {

// The wire codes of the collectives (index + 1; 0 is never sent).
constexpr std::array<const char*, 9> kOps = {"all_reduce",     "broadcast", "reduce",
                                             "all_gather",     "gather",    "scatter",
                                             "reduce_scatter", "alltoall",  "barrier"};
constexpr std::array<DType, 8> kDtypes = {DType::FLOAT32, DType::FLOAT64,  DType::INT32,   DType::INT64,
                                          DType::UINT8,   DType::BFLOAT16, DType::FLOAT16, DType::BOOL};

int64_t op_code(const std::string& op) {
  for (size_t i = 0; i < kOps.size(); ++i) {
    if (op == kOps[i]) return static_cast<int64_t>(i) + 1;
  }
  CREW_INTERNAL_ASSERT(false, "gloo agreement: unknown collective '", op, "'");
  return 0;
}

int64_t dtype_code(DType dtype) {
  for (size_t i = 0; i < kDtypes.size(); ++i) {
    if (dtype == kDtypes[i]) return static_cast<int64_t>(i);
  }
  return -1;
}

}  // namespace

std::string GlooCall::describe() const {
  if (op == "barrier") return op;
  std::string text = str_cat(op, " (", numel, " x ", dtype_name(dtype));
  if (root >= 0) text += str_cat(", root ", root);
  if (reduce_op >= 0) text += str_cat(", ", reduce_op_name(static_cast<ReduceOp>(reduce_op)));
  return text + ")";
}

bool GlooCall::operator==(const GlooCall& o) const {
  if (op == "barrier" || o.op == "barrier") return op == o.op;
  return op == o.op && numel == o.numel && dtype == o.dtype && root == o.root && reduce_op == o.reduce_op;
}

void GlooCall::to_wire(int64_t* out) const {
  out[0] = op_code(op);
  out[1] = numel;
  out[2] = dtype_code(dtype);
  out[3] = root;
  out[4] = reduce_op;
}

GlooCall GlooCall::from_wire(const int64_t* in) {
  GlooCall c;
  const bool known = in[0] >= 1 && in[0] <= static_cast<int64_t>(kOps.size()) && in[2] >= 0 &&
                     in[2] < static_cast<int64_t>(kDtypes.size());
  c.op = known ? kOps[in[0] - 1] : "unknown collective";
  c.numel = in[1];
  c.dtype = known ? kDtypes[in[2]] : DType::UINT8;
  c.root = static_cast<int>(in[3]);
  c.reduce_op = static_cast<int>(in[4]);
  return c;
}

namespace {

constexpr uint8_t kPreambleSlotPrefix = 0xF2;  // crew's own (Gloo's algorithms use low prefixes)

// DesyncError naming the first rank whose header in `in` (one message per rank) differs from
// `mine`.
void throw_if_desync(const uint8_t* in, size_t message_bytes, int size, int rank, const GlooCall& mine,
                     const OpInfo& info) {
  for (int r = 0; r < size; ++r) {
    if (r == rank) continue;
    int64_t wire[GlooCall::kWireElems];
    std::memcpy(wire, in + static_cast<size_t>(r) * message_bytes, kPreambleHeaderBytes);
    const GlooCall theirs = GlooCall::from_wire(wire);
    if (theirs == mine) continue;
    CREW_THROW(DesyncError, info.describe(), ": rank ", r, " issued ", theirs.describe(), " but rank ", rank,
               " issued ", mine.describe(),
               " (every rank must issue the same collectives, with the same sizes, dtypes, roots and "
               "reductions, in the same order)");
  }
}

}  // namespace

struct GlooPreamble::Receive {
  std::unique_ptr<::gloo::transport::UnboundBuffer> buffer;
  bool posted = false;
  uint32_t tag = 0;
};

GlooPreamble::GlooPreamble() = default;
GlooPreamble::~GlooPreamble() = default;

// Posts buffer `index`'s receives of every peer's message on the preamble slot of `tag`.
void GlooPreamble::post(const std::shared_ptr<::gloo::Context>& context, int index, uint32_t tag) {
  const int size = context->size;
  auto& r = receives_[index];
  CREW_INTERNAL_ASSERT(!r || !r->posted, "gloo preamble: buffer ", index, " still has receives posted");
  if (!r) {
    r = std::make_unique<Receive>();
    in_[index].resize(out_.size());
    r->buffer = context->createUnboundBuffer(in_[index].data(), in_[index].size() * sizeof(uint64_t));
  }
  const uint64_t slot = ::gloo::Slot::build(kPreambleSlotPrefix, tag);
  for (int peer = 0; peer < size; ++peer) {
    // Posted at full size: a peer's message never exceeds it, whatever that peer issued.
    if (peer == context->rank) continue;
    r->buffer->recv(peer, slot, static_cast<size_t>(peer) * message_bytes_, message_bytes_);
  }
  r->posted = true;
  r->tag = tag;
}

void GlooPreamble::exchange(const std::shared_ptr<::gloo::Context>& context, const GlooCall& mine,
                            uint32_t tag, std::chrono::milliseconds timeout, const OpInfo& info,
                            const PreambleDataFn& data_for) {
  static_assert(kPreambleHeaderBytes % sizeof(uint64_t) == 0);
  const int size = context->size;
  const int rank = context->rank;
  const size_t data_bytes = preamble_data_bytes(size);
  if (out_.empty()) {  // one group, one size: set once
    message_bytes_ = kPreambleHeaderBytes + data_bytes;
    out_.resize(static_cast<size_t>(size) * message_bytes_ / sizeof(uint64_t));
  }
  // This op's receives were posted by the previous exchange (all but the group's first).
  const int use = current_ ^ 1;
  if (receives_[use] && receives_[use]->posted) {
    CREW_INTERNAL_ASSERT(receives_[use]->tag == tag, "gloo preamble: receives posted for tag ",
                         receives_[use]->tag, ", the op has tag ", tag);
  } else {
    post(context, use, tag);
  }
  receives_[use]->posted = false;
  current_ = use;
  post(context, use ^ 1, tag + 2);  // the buffer of the previous op, whose receives completed
  auto* out = reinterpret_cast<uint8_t*>(out_.data());
  int64_t header[GlooCall::kWireElems];
  mine.to_wire(header);
  auto send_buf = context->createUnboundBuffer(out, out_.size() * sizeof(uint64_t));
  const uint64_t slot = ::gloo::Slot::build(kPreambleSlotPrefix, tag);
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    const size_t at = static_cast<size_t>(peer) * message_bytes_;
    const PreambleData data = data_for ? data_for(peer) : PreambleData{};
    CREW_INTERNAL_ASSERT(data.bytes <= data_bytes, "gloo preamble: ", data.bytes, " bytes of data");
    std::memcpy(out + at, header, kPreambleHeaderBytes);
    if (data.bytes > 0) std::memcpy(out + at + kPreambleHeaderBytes, data.data, data.bytes);
    send_buf->send(peer, slot, at, kPreambleHeaderBytes + data.bytes);
  }
  auto& recv_buf = receives_[current_]->buffer;
  for (int i = 0; i < size - 1; ++i) {
    if (!recv_buf->waitRecv(timeout))
      CREW_THROW(CommError, info.describe(), ": preamble receive was aborted");
  }
  for (int i = 0; i < size - 1; ++i) {
    if (!send_buf->waitSend(timeout)) CREW_THROW(CommError, info.describe(), ": preamble send was aborted");
  }
  throw_if_desync(reinterpret_cast<const uint8_t*>(in_[current_].data()), message_bytes_, size, rank, mine,
                  info);
}

}  // namespace crew::dist::detail

#include "crew/distributed/backends/gloo/gloo_agreement.h"

#include <gloo/allgather.h>
#include <gloo/context.h>

#include <array>
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
constexpr std::array<DType, 5> kDtypes = {DType::FLOAT32, DType::FLOAT64, DType::INT32, DType::INT64,
                                          DType::UINT8};

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

void agree_on_call(const std::shared_ptr<::gloo::Context>& context, const GlooCall& mine, uint32_t tag,
                   std::chrono::milliseconds timeout, const OpInfo& info) {
  constexpr int kElems = GlooCall::kWireElems;
  std::array<int64_t, kElems> wire{};
  mine.to_wire(wire.data());
  std::vector<int64_t> all(static_cast<size_t>(context->size) * kElems);
  ::gloo::AllgatherOptions opts(context);
  opts.setInput<int64_t>(wire.data(), kElems);
  opts.setOutput<int64_t>(all.data(), all.size());
  opts.setTag(tag);
  opts.setTimeout(timeout);
  ::gloo::allgather(opts);
  for (int r = 0; r < context->size; ++r) {
    if (r == context->rank) continue;
    const GlooCall theirs = GlooCall::from_wire(all.data() + static_cast<size_t>(r) * kElems);
    if (theirs == mine) continue;
    CREW_THROW(DesyncError, info.describe(), ": rank ", r, " issued ", theirs.describe(), " but rank ",
               context->rank, " issued ", mine.describe(),
               " (every rank must issue the same collectives, with the same sizes, dtypes, roots and "
               "reductions, in the same order)");
  }
}

}  // namespace crew::dist::detail

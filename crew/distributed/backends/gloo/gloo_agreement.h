#pragma once
// The check every Gloo collective runs first: the ranks all-gather what each issued (kind,
// element count, dtype, root, reduction; 40 bytes) on a tag of its own and fail together with
// a DesyncError naming both calls when they differ. Gloo checks none of this itself: a size
// mismatch aborts the process (gloo::EnforceNotMet), a dtype or reduction mismatch completes
// with wrong numbers. The preamble moves no data of the op, so after a DesyncError the ranks
// still agree on the next collective and the group stays usable.
//
//   GlooCall call{"all_reduce", t.numel(), t.dtype(), -1, static_cast<int>(ReduceOp::SUM)};
//   agree_on_call(context, call, preamble_tag, timeout, info);  // DesyncError on a mismatch
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

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

// All-gathers `mine` on Gloo tag `tag` (within `timeout`) and throws DesyncError naming the
// first rank whose call differs, and both calls, when the ranks disagree.
void agree_on_call(const std::shared_ptr<::gloo::Context>& context, const GlooCall& mine, uint32_t tag,
                   std::chrono::milliseconds timeout, const OpInfo& info);

}  // namespace crew::dist::detail

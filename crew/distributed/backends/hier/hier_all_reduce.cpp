#include "crew/distributed/backends/hier/hier_all_reduce.h"

#include <vector>

#include "crew/distributed/backends/shm/shm_reduce.h"

namespace crew::dist::detail {
namespace {

using std::chrono::milliseconds;

void leader_schedule(Tensor& t, ReduceOp step, const HierSubGroups& g, const HierPhase& phase,
                     milliseconds timeout) {
  phase("intra-host reduce", g.intra_name,
        [&] { return g.intra->reduce(t, {.root = 0, .op = step, .timeout = timeout, .async_op = false}); });
  if (g.inter) {
    phase("inter-host all_reduce", g.inter_name,
          [&] { return g.inter->all_reduce(t, {.op = step, .timeout = timeout, .async_op = false}); });
  }
  phase("intra-host broadcast", g.intra_name,
        [&] { return g.intra->broadcast(t, {.root = 0, .timeout = timeout, .async_op = false}); });
}

void split_schedule(Tensor& t, ReduceOp step, const HierSubGroups& g, const HierPhase& phase,
                    milliseconds timeout) {
  const int local_size = g.intra->size();
  const int64_t n = t.numel();
  const int64_t slice = (n + local_size - 1) / local_size;
  // Equal slices: a flat view of the tensor, or a zero-padded copy when L does not divide n
  // (the padding is reduced too and dropped).
  const bool padded = slice * local_size != n;
  Tensor flat = padded ? Tensor::zeros({slice * local_size}, t.dtype()) : t.view({n});
  if (padded) flat.slice(0, n).copy_(t.view({n}));
  std::vector<Tensor> slices;
  for (int i = 0; i < local_size; ++i) slices.push_back(flat.slice(i * slice, (i + 1) * slice));
  Tensor mine = Tensor::empty({slice}, t.dtype());
  phase("intra-host reduce_scatter", g.intra_name, [&] {
    return g.intra->reduce_scatter(mine, slices, {.op = step, .timeout = timeout, .async_op = false});
  });
  if (g.inter) {
    phase("inter-host all_reduce", g.inter_name,
          [&] { return g.inter->all_reduce(mine, {.op = step, .timeout = timeout, .async_op = false}); });
  }
  phase("intra-host all_gather", g.intra_name,
        [&] { return g.intra->all_gather(slices, mine, {.timeout = timeout, .async_op = false}); });
  if (padded) t.view({n}).copy_(flat.slice(0, n));
}

}  // namespace

void hier_all_reduce(Tensor& tensor, ReduceOp op, int group_size, const HierSubGroups& groups,
                     const HierPhase& phase, milliseconds phase_timeout) {
  // Partial results are combined again at the next level, so AVG runs as SUM throughout and
  // divides once at the end (by the whole group's size).
  const ReduceOp step = op == ReduceOp::AVG ? ReduceOp::SUM : op;
  if (groups.split_ok && tensor.nbytes() >= groups.split_min_bytes) {
    split_schedule(tensor, step, groups, phase, phase_timeout);
  } else {
    leader_schedule(tensor, step, groups, phase, phase_timeout);
  }
  if (op == ReduceOp::AVG) finish_avg(tensor.raw_data(), tensor.numel(), tensor.dtype(), group_size);
}

}  // namespace crew::dist::detail

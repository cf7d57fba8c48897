#include "crew/distributed/collective/collective.h"

#include "crew/core/check.h"
#include "crew/core/logging.h"
#include "crew/distributed/process_group/work.h"

namespace crew::dist {

namespace {

// The group's ProcessGroup, or null (after a warning) when this rank is not a member.
ProcessGroup* member_pg(Group& group, const char* op) {
  if (group.is_member()) return group.process_group();
  CREW_LOG(WARNING) << op << ": current global rank " << get_rank() << " is not in group " << group.name()
                    << "; the call does nothing";
  return nullptr;
}

int to_group_rank(const Group& group, int global_rank, const char* op, const char* what) {
  const int r = group.get_group_rank(global_rank);
  CREW_CHECK(r >= 0, op, " (rank ", group.rank(), ", group ", group.name(), "): ", what, " ", global_rank,
             " is not a member of the group (ranks ", group.ranks().size(), ")");
  return r;
}

// Waits for the op when sync_op (which was issued with async_op = !sync_op, so that the
// backend leaves it to this wait() instead of waking its worker).
std::shared_ptr<Work> finish(bool sync_op, std::shared_ptr<Work> work) {
  if (sync_op) work->wait();
  return work;
}

std::shared_ptr<Work> skipped(const char* op, const Group& group) {
  return completed_work(OpInfo{op, -1, 0, group.name()});
}

void fill_like(std::vector<Tensor>& list, const Tensor& like, int count) {
  if (!list.empty()) return;
  for (int i = 0; i < count; ++i) list.push_back(Tensor::empty(like.shape(), like.dtype()));
}

}  // namespace

std::shared_ptr<Work> all_reduce(Tensor& tensor, ReduceOp op, Group* group, bool sync_op) {
  Group& g = detail::resolve_group(group);
  ProcessGroup* pg = member_pg(g, "all_reduce");
  if (!pg) return skipped("all_reduce", g);
  return finish(sync_op, pg->all_reduce(tensor, {.op = op, .async_op = !sync_op}));
}

std::shared_ptr<Work> broadcast(Tensor& tensor, int src, Group* group, bool sync_op) {
  Group& g = detail::resolve_group(group);
  ProcessGroup* pg = member_pg(g, "broadcast");
  if (!pg) return skipped("broadcast", g);
  const int root = to_group_rank(g, src, "broadcast", "src");
  return finish(sync_op, pg->broadcast(tensor, {.root = root, .async_op = !sync_op}));
}

std::shared_ptr<Work> reduce(Tensor& tensor, int dst, ReduceOp op, Group* group, bool sync_op) {
  Group& g = detail::resolve_group(group);
  ProcessGroup* pg = member_pg(g, "reduce");
  if (!pg) return skipped("reduce", g);
  const int root = to_group_rank(g, dst, "reduce", "dst");
  return finish(sync_op, pg->reduce(tensor, {.root = root, .op = op, .async_op = !sync_op}));
}

std::shared_ptr<Work> all_gather(std::vector<Tensor>& tensor_list, const Tensor& tensor, Group* group,
                                 bool sync_op) {
  Group& g = detail::resolve_group(group);
  ProcessGroup* pg = member_pg(g, "all_gather");
  if (!pg) return skipped("all_gather", g);
  CREW_CHECK(tensor.defined(), "all_gather (rank ", g.rank(), ", group ", g.name(), "): tensor is undefined");
  fill_like(tensor_list, tensor, pg->size());
  return finish(sync_op, pg->all_gather(tensor_list, tensor, {.async_op = !sync_op}));
}

std::shared_ptr<Work> gather(const Tensor& tensor, std::vector<Tensor>& gather_list, int dst, Group* group,
                             bool sync_op) {
  Group& g = detail::resolve_group(group);
  ProcessGroup* pg = member_pg(g, "gather");
  if (!pg) return skipped("gather", g);
  const int root = to_group_rank(g, dst, "gather", "dst");
  CREW_CHECK(tensor.defined(), "gather (rank ", g.rank(), ", group ", g.name(), "): tensor is undefined");
  if (pg->rank() == root) fill_like(gather_list, tensor, pg->size());
  return finish(sync_op, pg->gather(gather_list, tensor, {.root = root, .async_op = !sync_op}));
}

std::shared_ptr<Work> scatter(Tensor& tensor, const std::vector<Tensor>& tensor_list, int src, Group* group,
                              bool sync_op) {
  Group& g = detail::resolve_group(group);
  ProcessGroup* pg = member_pg(g, "scatter");
  if (!pg) return skipped("scatter", g);
  const int root = to_group_rank(g, src, "scatter", "src");
  return finish(sync_op, pg->scatter(tensor, tensor_list, {.root = root, .async_op = !sync_op}));
}

std::shared_ptr<Work> reduce_scatter(Tensor& tensor, const std::vector<Tensor>& tensor_list, ReduceOp op,
                                     Group* group, bool sync_op) {
  Group& g = detail::resolve_group(group);
  ProcessGroup* pg = member_pg(g, "reduce_scatter");
  if (!pg) return skipped("reduce_scatter", g);
  return finish(sync_op, pg->reduce_scatter(tensor, tensor_list, {.op = op, .async_op = !sync_op}));
}

std::shared_ptr<Work> alltoall(const std::vector<Tensor>& in_tensor_list,
                               std::vector<Tensor>& out_tensor_list, Group* group, bool sync_op) {
  Group& g = detail::resolve_group(group);
  ProcessGroup* pg = member_pg(g, "alltoall");
  if (!pg) return skipped("alltoall", g);
  if (!in_tensor_list.empty()) fill_like(out_tensor_list, in_tensor_list[0], pg->size());
  return finish(sync_op, pg->alltoall(out_tensor_list, in_tensor_list, {.async_op = !sync_op}));
}

std::shared_ptr<Work> send(const Tensor& tensor, int dst, Group* group, bool sync_op) {
  Group& g = detail::resolve_group(group);
  ProcessGroup* pg = member_pg(g, "send");
  if (!pg) return skipped("send", g);
  const int peer = to_group_rank(g, dst, "send", "dst");
  return finish(sync_op, pg->send(tensor, peer, {.tag = 0, .async_op = !sync_op}));
}

std::shared_ptr<Work> recv(Tensor& tensor, int src, Group* group, bool sync_op) {
  Group& g = detail::resolve_group(group);
  ProcessGroup* pg = member_pg(g, "recv");
  if (!pg) return skipped("recv", g);
  const int peer = to_group_rank(g, src, "recv", "src");
  return finish(sync_op, pg->recv(tensor, peer, {.tag = 0, .async_op = !sync_op}));
}

std::shared_ptr<Work> barrier(Group* group) {
  Group& g = detail::resolve_group(group);
  ProcessGroup* pg = member_pg(g, "barrier");
  if (!pg) return skipped("barrier", g);
  return finish(true, pg->barrier({.async_op = false}));
}

}  // namespace crew::dist

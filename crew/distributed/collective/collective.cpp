#include "crew/distributed/collective/collective.h"

#include "crew/core/check.h"
#include "crew/core/logging.h"
#include "crew/distributed/process_group/wait_at_once.h"
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

// Issues the op (in a WaitAtOnceScope when it is synchronous: the backend leaves it to this
// thread's wait() instead of waking its worker) and waits for it when sync_op.
template <typename Issue>
std::shared_ptr<Work> finish(bool sync_op, Issue issue) {
  std::shared_ptr<Work> work;
  {
    WaitAtOnceScope at_once(sync_op);
    work = issue();
  }
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
  return finish(sync_op, [&] { return pg->all_reduce(tensor, op); });
}

std::shared_ptr<Work> broadcast(Tensor& tensor, int src, Group* group, bool sync_op) {
  Group& g = detail::resolve_group(group);
  ProcessGroup* pg = member_pg(g, "broadcast");
  if (!pg) return skipped("broadcast", g);
  return finish(sync_op, [&] { return pg->broadcast(tensor, to_group_rank(g, src, "broadcast", "src")); });
}

std::shared_ptr<Work> reduce(Tensor& tensor, int dst, ReduceOp op, Group* group, bool sync_op) {
  Group& g = detail::resolve_group(group);
  ProcessGroup* pg = member_pg(g, "reduce");
  if (!pg) return skipped("reduce", g);
  return finish(sync_op, [&] { return pg->reduce(tensor, to_group_rank(g, dst, "reduce", "dst"), op); });
}

std::shared_ptr<Work> all_gather(std::vector<Tensor>& tensor_list, const Tensor& tensor, Group* group,
                                 bool sync_op) {
  Group& g = detail::resolve_group(group);
  ProcessGroup* pg = member_pg(g, "all_gather");
  if (!pg) return skipped("all_gather", g);
  CREW_CHECK(tensor.defined(), "all_gather (rank ", g.rank(), ", group ", g.name(), "): tensor is undefined");
  fill_like(tensor_list, tensor, pg->size());
  return finish(sync_op, [&] { return pg->all_gather(tensor_list, tensor); });
}

std::shared_ptr<Work> gather(const Tensor& tensor, std::vector<Tensor>& gather_list, int dst, Group* group,
                             bool sync_op) {
  Group& g = detail::resolve_group(group);
  ProcessGroup* pg = member_pg(g, "gather");
  if (!pg) return skipped("gather", g);
  const int root = to_group_rank(g, dst, "gather", "dst");
  CREW_CHECK(tensor.defined(), "gather (rank ", g.rank(), ", group ", g.name(), "): tensor is undefined");
  if (pg->rank() == root) fill_like(gather_list, tensor, pg->size());
  return finish(sync_op, [&] { return pg->gather(gather_list, tensor, root); });
}

std::shared_ptr<Work> scatter(Tensor& tensor, const std::vector<Tensor>& tensor_list, int src, Group* group,
                              bool sync_op) {
  Group& g = detail::resolve_group(group);
  ProcessGroup* pg = member_pg(g, "scatter");
  if (!pg) return skipped("scatter", g);
  return finish(sync_op, [&] { return pg->scatter(tensor, tensor_list, to_group_rank(g, src, "scatter", "src")); });
}

std::shared_ptr<Work> reduce_scatter(Tensor& tensor, const std::vector<Tensor>& tensor_list, ReduceOp op,
                                     Group* group, bool sync_op) {
  Group& g = detail::resolve_group(group);
  ProcessGroup* pg = member_pg(g, "reduce_scatter");
  if (!pg) return skipped("reduce_scatter", g);
  return finish(sync_op, [&] { return pg->reduce_scatter(tensor, tensor_list, op); });
}

std::shared_ptr<Work> alltoall(const std::vector<Tensor>& in_tensor_list,
                               std::vector<Tensor>& out_tensor_list, Group* group, bool sync_op) {
  Group& g = detail::resolve_group(group);
  ProcessGroup* pg = member_pg(g, "alltoall");
  if (!pg) return skipped("alltoall", g);
  if (!in_tensor_list.empty()) fill_like(out_tensor_list, in_tensor_list[0], pg->size());
  return finish(sync_op, [&] { return pg->alltoall(out_tensor_list, in_tensor_list); });
}

std::shared_ptr<Work> send(const Tensor& tensor, int dst, Group* group, bool sync_op) {
  Group& g = detail::resolve_group(group);
  ProcessGroup* pg = member_pg(g, "send");
  if (!pg) return skipped("send", g);
  return finish(sync_op, [&] { return pg->send(tensor, to_group_rank(g, dst, "send", "dst"), 0); });
}

std::shared_ptr<Work> recv(Tensor& tensor, int src, Group* group, bool sync_op) {
  Group& g = detail::resolve_group(group);
  ProcessGroup* pg = member_pg(g, "recv");
  if (!pg) return skipped("recv", g);
  return finish(sync_op, [&] { return pg->recv(tensor, to_group_rank(g, src, "recv", "src"), 0); });
}

std::shared_ptr<Work> barrier(Group* group) {
  Group& g = detail::resolve_group(group);
  ProcessGroup* pg = member_pg(g, "barrier");
  if (!pg) return skipped("barrier", g);
  return finish(true, [&] { return pg->barrier(); });
}

}  // namespace crew::dist

#pragma once
// Paddle-shaped collectives on a Group (nullptr = the default group).
//
//   crew::dist::all_reduce(grad);                          // SUM over the default group, waits
//   auto work = crew::dist::all_reduce(grad, ReduceOp::AVG, nullptr, /*sync_op=*/false);
//   work->wait();                                          // rethrows a failure
//   std::vector<Tensor> parts;                             // filled with one tensor per rank
//   crew::dist::all_gather(parts, x);
//
// Every call returns the op's Work; with sync_op = true it has already waited (Paddle's
// spelling of the options structs' async_op = !sync_op; process_group.h has the contract).
// src/dst are global ranks, translated to group ranks as in Paddle. A rank that is not a member
// of `group` logs a warning and returns a completed Work. Before init_parallel_env every call
// throws StateError("Call crew::dist::init_parallel_env first ..."); after it in a world of
// one process the calls act on that one rank. Collectives on a group run in issue order and
// every member must issue the same ones in the same order.
#include <memory>
#include <vector>

#include "crew/distributed/parallel/parallel.h"
#include "crew/distributed/process_group/process_group.h"
#include "crew/tensor/tensor.h"

namespace crew::dist {

// In place: the reduction over the group's ranks.
std::shared_ptr<Work> all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::SUM, Group* group = nullptr,
                                 bool sync_op = true);
// In place: src's tensor on every rank.
std::shared_ptr<Work> broadcast(Tensor& tensor, int src, Group* group = nullptr, bool sync_op = true);
// In place on dst: the reduction; other ranks' tensors are left unspecified.
std::shared_ptr<Work> reduce(Tensor& tensor, int dst, ReduceOp op = ReduceOp::SUM, Group* group = nullptr,
                             bool sync_op = true);
// tensor_list[r] = rank r's tensor; an empty list is filled with new tensors shaped like tensor.
std::shared_ptr<Work> all_gather(std::vector<Tensor>& tensor_list, const Tensor& tensor,
                                 Group* group = nullptr, bool sync_op = true);
// On dst, gather_list[r] = rank r's tensor (an empty list is filled); ignored elsewhere.
std::shared_ptr<Work> gather(const Tensor& tensor, std::vector<Tensor>& gather_list, int dst = 0,
                             Group* group = nullptr, bool sync_op = true);
// tensor = src's tensor_list[group rank]; tensor_list is read on src only.
std::shared_ptr<Work> scatter(Tensor& tensor, const std::vector<Tensor>& tensor_list, int src = 0,
                              Group* group = nullptr, bool sync_op = true);
// tensor = the reduction over ranks of their tensor_list[group rank].
std::shared_ptr<Work> reduce_scatter(Tensor& tensor, const std::vector<Tensor>& tensor_list,
                                     ReduceOp op = ReduceOp::SUM, Group* group = nullptr,
                                     bool sync_op = true);
// out_tensor_list[r] = rank r's in_tensor_list[this rank]; an empty out list is filled.
std::shared_ptr<Work> alltoall(const std::vector<Tensor>& in_tensor_list,
                               std::vector<Tensor>& out_tensor_list, Group* group = nullptr,
                               bool sync_op = true);
// Point to point (tag 0 as Paddle; run in the group's queue, so pair them in a matching order).
std::shared_ptr<Work> send(const Tensor& tensor, int dst = 0, Group* group = nullptr, bool sync_op = true);
std::shared_ptr<Work> recv(Tensor& tensor, int src = 0, Group* group = nullptr, bool sync_op = true);
inline std::shared_ptr<Work> isend(const Tensor& tensor, int dst, Group* group = nullptr) {
  return send(tensor, dst, group, false);
}
inline std::shared_ptr<Work> irecv(Tensor& tensor, int src, Group* group = nullptr) {
  return recv(tensor, src, group, false);
}
// Blocks until every member arrived.
std::shared_ptr<Work> barrier(Group* group = nullptr);

}  // namespace crew::dist

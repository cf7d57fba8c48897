// The data collectives of GlooProcessGroup. Each checks its arguments on the calling thread
// (so a bad call throws at once), then queues the Gloo call. Tensors are captured by handle,
// which keeps their storage alive until the op ran.
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/broadcast.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/scatter.h>

#include "crew/core/check.h"
#include "crew/distributed/backends/gloo/gloo_process_group.h"
#include "crew/distributed/backends/gloo/gloo_reduce.h"

namespace crew::dist {

namespace {

// The elements a rank sends in an alltoall (its inputs together).
int64_t alltoall_numel(const std::vector<Tensor>& ins) {
  int64_t n = 0;
  for (const auto& t : ins) n += t.numel();
  return n;
}

// Copies `parts` (each n elements) into one contiguous tensor of size * n elements.
Tensor concat(const std::vector<Tensor>& parts, const Tensor& like) {
  Tensor flat = Tensor::empty({static_cast<int64_t>(parts.size()) * like.numel()}, like.dtype());
  for (size_t r = 0; r < parts.size(); ++r) {
    flat.slice(r * like.numel(), (r + 1) * like.numel()).copy_(parts[r]);
  }
  return flat;
}

// Copies consecutive n-element chunks of `flat` into `parts`.
void split_into(const Tensor& flat, std::vector<Tensor>& parts) {
  for (size_t r = 0; r < parts.size(); ++r) {
    const int64_t n = parts[r].numel();
    parts[r].copy_(flat.slice(r * n, (r + 1) * n));
  }
}

void gloo_all_reduce(const std::shared_ptr<::gloo::Context>& context, Tensor& t, ReduceOp op, uint32_t tag,
                     std::chrono::milliseconds timeout) {
  if (t.numel() == 0) return;
  dispatch_dtype(t.dtype(), [&](auto type_tag) {
    using T = decltype(type_tag);
    ::gloo::AllreduceOptions opts(context);
    opts.setOutput<T>(static_cast<T*>(t.raw_data()), static_cast<size_t>(t.numel()));
    opts.setReduceFunction(detail::gloo_reduce_fn(op, t.dtype()));
    opts.setTag(tag);
    opts.setTimeout(timeout);
    ::gloo::allreduce(opts);
  });
  if (op == ReduceOp::AVG) detail::divide_in_place(t, context->size);
}

}  // namespace

std::shared_ptr<Work> GlooProcessGroup::all_reduce(Tensor& tensor, ReduceOp op) {
  detail::check_tensor(*this, "all_reduce", tensor, "tensor");
  auto context = context_;
  const auto timeout = options_.timeout;
  Tensor t = tensor;
  return submit({"all_reduce", t.numel(), t.dtype(), -1, static_cast<int>(op)}, [=](uint32_t tag) mutable { gloo_all_reduce(context, t, op, tag, timeout); });
}

std::shared_ptr<Work> GlooProcessGroup::broadcast(Tensor& tensor, int root) {
  detail::check_tensor(*this, "broadcast", tensor, "tensor");
  detail::check_peer(*this, "broadcast", root, "root");
  auto context = context_;
  const auto timeout = options_.timeout;
  Tensor t = tensor;
  return submit({"broadcast", t.numel(), t.dtype(), root}, [=](uint32_t tag) {
    if (t.numel() == 0) return;
    dispatch_dtype(t.dtype(), [&](auto type_tag) {
      using T = decltype(type_tag);
      ::gloo::BroadcastOptions opts(context);
      opts.setOutput<T>(static_cast<T*>(t.raw_data()), static_cast<size_t>(t.numel()));
      opts.setRoot(root);
      opts.setTag(tag);
      opts.setTimeout(timeout);
      ::gloo::broadcast(opts);
    });
  });
}

std::shared_ptr<Work> GlooProcessGroup::reduce(Tensor& tensor, int root, ReduceOp op) {
  detail::check_tensor(*this, "reduce", tensor, "tensor");
  detail::check_peer(*this, "reduce", root, "root");
  auto context = context_;
  const auto timeout = options_.timeout;
  Tensor t = tensor;
  return submit({"reduce", t.numel(), t.dtype(), root, static_cast<int>(op)}, [=](uint32_t tag) mutable {
    if (t.numel() == 0) return;
    dispatch_dtype(t.dtype(), [&](auto type_tag) {
      using T = decltype(type_tag);
      ::gloo::ReduceOptions opts(context);
      opts.setOutput<T>(static_cast<T*>(t.raw_data()), static_cast<size_t>(t.numel()));
      opts.setReduceFunction(detail::gloo_reduce_fn(op, t.dtype()));
      opts.setRoot(root);
      opts.setTag(tag);
      opts.setTimeout(timeout);
      ::gloo::reduce(opts);
    });
    if (op == ReduceOp::AVG && context->rank == root) detail::divide_in_place(t, context->size);
  });
}

std::shared_ptr<Work> GlooProcessGroup::all_gather(std::vector<Tensor>& outputs, const Tensor& input) {
  detail::check_tensor(*this, "all_gather", input, "input");
  detail::check_list(*this, "all_gather", outputs, input, "output");
  auto context = context_;
  const auto timeout = options_.timeout;
  Tensor in = input;
  std::vector<Tensor> outs = outputs;
  return submit({"all_gather", in.numel(), in.dtype()}, [=](uint32_t tag) mutable {
    if (in.numel() == 0) return;
    Tensor flat = Tensor::empty({static_cast<int64_t>(outs.size()) * in.numel()}, in.dtype());
    dispatch_dtype(in.dtype(), [&](auto type_tag) {
      using T = decltype(type_tag);
      ::gloo::AllgatherOptions opts(context);
      opts.setInput<T>(static_cast<T*>(in.raw_data()), static_cast<size_t>(in.numel()));
      opts.setOutput<T>(static_cast<T*>(flat.raw_data()), static_cast<size_t>(flat.numel()));
      opts.setTag(tag);
      opts.setTimeout(timeout);
      ::gloo::allgather(opts);
    });
    split_into(flat, outs);
  });
}

std::shared_ptr<Work> GlooProcessGroup::gather(std::vector<Tensor>& outputs, const Tensor& input, int root) {
  detail::check_tensor(*this, "gather", input, "input");
  detail::check_peer(*this, "gather", root, "root");
  if (rank_ == root) detail::check_list(*this, "gather", outputs, input, "output");
  auto context = context_;
  const auto timeout = options_.timeout;
  Tensor in = input;
  std::vector<Tensor> outs = rank_ == root ? outputs : std::vector<Tensor>{};
  return submit({"gather", in.numel(), in.dtype(), root}, [=](uint32_t tag) mutable {
    if (in.numel() == 0) return;
    const bool is_root = context->rank == root;
    Tensor flat =
        is_root ? Tensor::empty({static_cast<int64_t>(context->size) * in.numel()}, in.dtype()) : Tensor();
    dispatch_dtype(in.dtype(), [&](auto type_tag) {
      using T = decltype(type_tag);
      ::gloo::GatherOptions opts(context);
      opts.setInput<T>(static_cast<T*>(in.raw_data()), static_cast<size_t>(in.numel()));
      if (is_root) opts.setOutput<T>(static_cast<T*>(flat.raw_data()), static_cast<size_t>(flat.numel()));
      opts.setRoot(root);
      opts.setTag(tag);
      opts.setTimeout(timeout);
      ::gloo::gather(opts);
    });
    if (is_root) split_into(flat, outs);
  });
}

std::shared_ptr<Work> GlooProcessGroup::scatter(Tensor& output, const std::vector<Tensor>& inputs, int root) {
  detail::check_tensor(*this, "scatter", output, "output");
  detail::check_peer(*this, "scatter", root, "root");
  if (rank_ == root) detail::check_list(*this, "scatter", inputs, output, "input");
  auto context = context_;
  const auto timeout = options_.timeout;
  Tensor out = output;
  std::vector<Tensor> ins = rank_ == root ? inputs : std::vector<Tensor>{};
  return submit({"scatter", out.numel(), out.dtype(), root}, [=](uint32_t tag) mutable {
    if (out.numel() == 0) return;
    dispatch_dtype(out.dtype(), [&](auto type_tag) {
      using T = decltype(type_tag);
      ::gloo::ScatterOptions opts(context);
      if (!ins.empty()) {
        std::vector<T*> ptrs;
        for (auto& t : ins) ptrs.push_back(static_cast<T*>(t.raw_data()));
        opts.setInputs<T>(ptrs, static_cast<size_t>(out.numel()));
      }
      opts.setOutput<T>(static_cast<T*>(out.raw_data()), static_cast<size_t>(out.numel()));
      opts.setRoot(root);
      opts.setTag(tag);
      opts.setTimeout(timeout);
      ::gloo::scatter(opts);
    });
  });
}

// Built from one all_reduce over the concatenated inputs: simple, and Gloo's own
// reduce_scatter is an old-style algorithm class without the options API.
std::shared_ptr<Work> GlooProcessGroup::reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                                       ReduceOp op) {
  detail::check_tensor(*this, "reduce_scatter", output, "output");
  detail::check_list(*this, "reduce_scatter", inputs, output, "input");
  auto context = context_;
  const auto timeout = options_.timeout;
  Tensor out = output;
  std::vector<Tensor> ins = inputs;
  return submit({"reduce_scatter", out.numel(), out.dtype(), -1, static_cast<int>(op)}, [=](uint32_t tag) mutable {
    if (out.numel() == 0) return;
    Tensor flat = concat(ins, out);
    gloo_all_reduce(context, flat, op, tag, timeout);
    const int64_t n = out.numel();
    out.copy_(flat.slice(context->rank * n, (context->rank + 1) * n));
  });
}

std::shared_ptr<Work> GlooProcessGroup::alltoall(std::vector<Tensor>& outputs,
                                                 const std::vector<Tensor>& inputs) {
  detail::check_alltoall(*this, outputs, inputs);
  auto context = context_;
  const auto timeout = options_.timeout;
  std::vector<Tensor> ins = inputs;
  std::vector<Tensor> outs = outputs;
  return submit({"alltoall", alltoall_numel(ins), ins[0].dtype()}, [=](uint32_t tag) mutable {
    if (ins[0].numel() == 0) return;
    Tensor flat_in = concat(ins, ins[0]);
    Tensor flat_out = Tensor::empty({flat_in.numel()}, flat_in.dtype());
    dispatch_dtype(flat_in.dtype(), [&](auto type_tag) {
      using T = decltype(type_tag);
      ::gloo::AlltoallOptions opts(context);
      opts.setInput<T>(static_cast<T*>(flat_in.raw_data()), static_cast<size_t>(flat_in.numel()));
      opts.setOutput<T>(static_cast<T*>(flat_out.raw_data()), static_cast<size_t>(flat_out.numel()));
      opts.setTag(tag);
      opts.setTimeout(timeout);
      ::gloo::alltoall(opts);
    });
    split_into(flat_out, outs);
  });
}

}  // namespace crew::dist

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

#include <algorithm>
#include <cstring>
#include <vector>

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
  dispatch_storage_dtype(t.dtype(), [&](auto type_tag) {
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

// Whether one preamble message can carry `bytes` of the op's data.
bool fits(size_t bytes, int size) { return bytes <= detail::preamble_data_bytes(size); }

// The data `rank` contributes: its own tensor data, or what it sent in the preamble.
const void* contribution(const detail::GlooPreamble& preamble, int me, int rank, const void* own) {
  return rank == me ? own : preamble.data_from(rank);
}

// out = the reduction over ranks 0..size-1, in rank order (the same order on every rank, so
// every rank gets the same bits), of each rank's `count` elements; out may alias own. Runs in
// cache-sized chunks through one reused buffer: each input is read once and out written once.
void reduce_in_rank_order(void* out, const void* own, int64_t count, DType dtype, ReduceOp op, int me,
                          int size, const detail::GlooPreamble& preamble) {
  constexpr size_t kChunkBytes = size_t{32} << 10;
  thread_local std::vector<uint64_t> acc(kChunkBytes / sizeof(uint64_t));
  const size_t item = dtype_size(dtype);
  const size_t per_chunk = kChunkBytes / item;
  const auto fn = detail::gloo_reduce_fn(op, dtype);
  const auto at = [&](const void* base, size_t first) { return static_cast<const char*>(base) + first * item; };
  for (size_t first = 0; first < static_cast<size_t>(count); first += per_chunk) {
    const size_t n = std::min(per_chunk, static_cast<size_t>(count) - first);
    std::memcpy(acc.data(), at(contribution(preamble, me, 0, own), first), n * item);
    for (int r = 1; r < size; ++r) fn(acc.data(), acc.data(), at(contribution(preamble, me, r, own), first), n);
    std::memcpy(static_cast<char*>(out) + first * item, acc.data(), n * item);
  }
}

// Sends every peer the same data in the preamble.
detail::PreambleDataFn same_to_all(const Tensor& t) {
  return [t](int) { return detail::PreambleData{t.raw_data(), t.nbytes()}; };
}

}  // namespace

// Each collective: its preamble carries the data when one message can (then the task only
// combines what arrived), else the header alone and the task runs Gloo's algorithm.

std::shared_ptr<Work> GlooProcessGroup::all_reduce(Tensor& tensor, const AllReduceOptions& options) {
  detail::check_tensor(*this, "all_reduce", tensor, "tensor");
  const ReduceOp op = options.op;
  auto context = context_;
  const auto timeout = op_timeout(options.timeout);
  Tensor t = tensor;
  const bool small = fits(t.nbytes(), size_);
  return submit(
      {"all_reduce", t.numel(), t.dtype(), -1, static_cast<int>(op)}, timeout, options.async_op,
      [=](uint32_t tag, const detail::GlooPreamble& preamble) mutable {
        if (t.numel() == 0) return;
        if (!small) return gloo_all_reduce(context, t, op, tag, timeout);
        reduce_in_rank_order(t.raw_data(), t.raw_data(), t.numel(), t.dtype(), op, context->rank,
                             context->size, preamble);
        if (op == ReduceOp::AVG) detail::divide_in_place(t, context->size);
      },
      small ? same_to_all(t) : nullptr);
}

std::shared_ptr<Work> GlooProcessGroup::broadcast(Tensor& tensor, const BroadcastOptions& options) {
  const int root = options.root;
  detail::check_tensor(*this, "broadcast", tensor, "tensor");
  detail::check_peer(*this, "broadcast", root, "root");
  auto context = context_;
  const auto timeout = op_timeout(options.timeout);
  Tensor t = tensor;
  const bool small = fits(t.nbytes(), size_);
  detail::PreambleDataFn data_for;
  if (small && rank_ == root) data_for = same_to_all(t);
  return submit(
      {"broadcast", t.numel(), t.dtype(), root}, timeout, options.async_op,
      [=](uint32_t tag, const detail::GlooPreamble& preamble) {
        if (t.numel() == 0) return;
        if (small) {
          if (context->rank != root) std::memcpy(t.raw_data(), preamble.data_from(root), t.nbytes());
          return;
        }
        dispatch_storage_dtype(t.dtype(), [&](auto type_tag) {
          using T = decltype(type_tag);
          ::gloo::BroadcastOptions opts(context);
          opts.setOutput<T>(static_cast<T*>(t.raw_data()), static_cast<size_t>(t.numel()));
          opts.setRoot(root);
          opts.setTag(tag);
          opts.setTimeout(timeout);
          ::gloo::broadcast(opts);
        });
      },
      data_for);
}

std::shared_ptr<Work> GlooProcessGroup::reduce(Tensor& tensor, const ReduceOptions& options) {
  const int root = options.root;
  const ReduceOp op = options.op;
  detail::check_tensor(*this, "reduce", tensor, "tensor");
  detail::check_peer(*this, "reduce", root, "root");
  auto context = context_;
  const auto timeout = op_timeout(options.timeout);
  Tensor t = tensor;
  const bool small = fits(t.nbytes(), size_);
  detail::PreambleDataFn data_for;
  if (small) {
    data_for = [t, root](int peer) {
      return peer == root ? detail::PreambleData{t.raw_data(), t.nbytes()} : detail::PreambleData{};
    };
  }
  return submit(
      {"reduce", t.numel(), t.dtype(), root, static_cast<int>(op)}, timeout, options.async_op,
      [=](uint32_t tag, const detail::GlooPreamble& preamble) mutable {
        if (t.numel() == 0) return;
        const bool is_root = context->rank == root;
        if (small) {
          if (is_root) {
            reduce_in_rank_order(t.raw_data(), t.raw_data(), t.numel(), t.dtype(), op, context->rank,
                                 context->size, preamble);
          }
        } else {
          dispatch_storage_dtype(t.dtype(), [&](auto type_tag) {
            using T = decltype(type_tag);
            ::gloo::ReduceOptions opts(context);
            opts.setOutput<T>(static_cast<T*>(t.raw_data()), static_cast<size_t>(t.numel()));
            opts.setReduceFunction(detail::gloo_reduce_fn(op, t.dtype()));
            opts.setRoot(root);
            opts.setTag(tag);
            opts.setTimeout(timeout);
            ::gloo::reduce(opts);
          });
        }
        if (op == ReduceOp::AVG && is_root) detail::divide_in_place(t, context->size);
      },
      data_for);
}

std::shared_ptr<Work> GlooProcessGroup::all_gather(std::vector<Tensor>& outputs, const Tensor& input,
                                                   const AllGatherOptions& options) {
  detail::check_tensor(*this, "all_gather", input, "input");
  detail::check_list(*this, "all_gather", outputs, input, "output");
  auto context = context_;
  const auto timeout = op_timeout(options.timeout);
  Tensor in = input;
  std::vector<Tensor> outs = outputs;
  const bool small = fits(in.nbytes(), size_);
  return submit(
      {"all_gather", in.numel(), in.dtype()}, timeout, options.async_op,
      [=](uint32_t tag, const detail::GlooPreamble& preamble) mutable {
        if (in.numel() == 0) return;
        if (small) {
          for (int r = 0; r < context->size; ++r) {
            std::memcpy(outs[r].raw_data(), contribution(preamble, context->rank, r, in.raw_data()),
                        in.nbytes());
          }
          return;
        }
        Tensor flat = Tensor::empty({static_cast<int64_t>(outs.size()) * in.numel()}, in.dtype());
        dispatch_storage_dtype(in.dtype(), [&](auto type_tag) {
          using T = decltype(type_tag);
          ::gloo::AllgatherOptions opts(context);
          opts.setInput<T>(static_cast<T*>(in.raw_data()), static_cast<size_t>(in.numel()));
          opts.setOutput<T>(static_cast<T*>(flat.raw_data()), static_cast<size_t>(flat.numel()));
          opts.setTag(tag);
          opts.setTimeout(timeout);
          ::gloo::allgather(opts);
        });
        split_into(flat, outs);
      },
      small ? same_to_all(in) : nullptr);
}

std::shared_ptr<Work> GlooProcessGroup::gather(std::vector<Tensor>& outputs, const Tensor& input,
                                               const GatherOptions& options) {
  const int root = options.root;
  detail::check_tensor(*this, "gather", input, "input");
  detail::check_peer(*this, "gather", root, "root");
  if (rank_ == root) detail::check_list(*this, "gather", outputs, input, "output");
  auto context = context_;
  const auto timeout = op_timeout(options.timeout);
  Tensor in = input;
  std::vector<Tensor> outs = rank_ == root ? outputs : std::vector<Tensor>{};
  const bool small = fits(in.nbytes(), size_);
  detail::PreambleDataFn data_for;
  if (small) {
    data_for = [in, root](int peer) {
      return peer == root ? detail::PreambleData{in.raw_data(), in.nbytes()} : detail::PreambleData{};
    };
  }
  return submit(
      {"gather", in.numel(), in.dtype(), root}, timeout, options.async_op,
      [=](uint32_t tag, const detail::GlooPreamble& preamble) mutable {
        if (in.numel() == 0) return;
        const bool is_root = context->rank == root;
        if (small) {
          if (!is_root) return;
          for (int r = 0; r < context->size; ++r) {
            std::memcpy(outs[r].raw_data(), contribution(preamble, context->rank, r, in.raw_data()),
                        in.nbytes());
          }
          return;
        }
        Tensor flat = is_root ? Tensor::empty({static_cast<int64_t>(context->size) * in.numel()}, in.dtype())
                              : Tensor();
        dispatch_storage_dtype(in.dtype(), [&](auto type_tag) {
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
      },
      data_for);
}

std::shared_ptr<Work> GlooProcessGroup::scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                                const ScatterOptions& options) {
  const int root = options.root;
  detail::check_tensor(*this, "scatter", output, "output");
  detail::check_peer(*this, "scatter", root, "root");
  if (rank_ == root) detail::check_list(*this, "scatter", inputs, output, "input");
  auto context = context_;
  const auto timeout = op_timeout(options.timeout);
  Tensor out = output;
  std::vector<Tensor> ins = rank_ == root ? inputs : std::vector<Tensor>{};
  const bool small = fits(out.nbytes(), size_);
  detail::PreambleDataFn data_for;
  if (small && rank_ == root) {
    data_for = [ins](int peer) { return detail::PreambleData{ins[peer].raw_data(), ins[peer].nbytes()}; };
  }
  return submit(
      {"scatter", out.numel(), out.dtype(), root}, timeout, options.async_op,
      [=](uint32_t tag, const detail::GlooPreamble& preamble) mutable {
        if (out.numel() == 0) return;
        if (small) {
          const void* src = context->rank == root ? ins[root].raw_data() : preamble.data_from(root);
          std::memcpy(out.raw_data(), src, out.nbytes());
          return;
        }
        dispatch_storage_dtype(out.dtype(), [&](auto type_tag) {
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
      },
      data_for);
}

// Small: each rank sends peer r its inputs[r] in the preamble and reduces what it received.
// Large: one all_reduce over the concatenated inputs (Gloo's own reduce_scatter is an
// old-style algorithm class without the options API).
std::shared_ptr<Work> GlooProcessGroup::reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                                       const ReduceScatterOptions& options) {
  const ReduceOp op = options.op;
  detail::check_tensor(*this, "reduce_scatter", output, "output");
  detail::check_list(*this, "reduce_scatter", inputs, output, "input");
  auto context = context_;
  const auto timeout = op_timeout(options.timeout);
  Tensor out = output;
  std::vector<Tensor> ins = inputs;
  const bool small = fits(out.nbytes(), size_);
  detail::PreambleDataFn data_for;
  if (small) {
    data_for = [ins](int peer) { return detail::PreambleData{ins[peer].raw_data(), ins[peer].nbytes()}; };
  }
  return submit(
      {"reduce_scatter", out.numel(), out.dtype(), -1, static_cast<int>(op)}, timeout, options.async_op,
      [=](uint32_t tag, const detail::GlooPreamble& preamble) mutable {
        if (out.numel() == 0) return;
        const int me = context->rank;
        if (small) {
          reduce_in_rank_order(out.raw_data(), ins[me].raw_data(), out.numel(), out.dtype(), op, me,
                               context->size, preamble);
          if (op == ReduceOp::AVG) detail::divide_in_place(out, context->size);
          return;
        }
        Tensor flat = concat(ins, out);
        gloo_all_reduce(context, flat, op, tag, timeout);
        const int64_t n = out.numel();
        out.copy_(flat.slice(me * n, (me + 1) * n));
      },
      data_for);
}

std::shared_ptr<Work> GlooProcessGroup::alltoall(std::vector<Tensor>& outputs,
                                                 const std::vector<Tensor>& inputs,
                                                 const AllToAllOptions& options) {
  detail::check_alltoall(*this, outputs, inputs);
  auto context = context_;
  const auto timeout = op_timeout(options.timeout);
  std::vector<Tensor> ins = inputs;
  std::vector<Tensor> outs = outputs;
  const bool small = fits(ins[0].nbytes(), size_);
  detail::PreambleDataFn data_for;
  if (small) {
    data_for = [ins](int peer) { return detail::PreambleData{ins[peer].raw_data(), ins[peer].nbytes()}; };
  }
  return submit(
      {"alltoall", alltoall_numel(ins), ins[0].dtype()}, timeout, options.async_op,
      [=](uint32_t tag, const detail::GlooPreamble& preamble) mutable {
        if (ins[0].numel() == 0) return;
        const int me = context->rank;
        if (small) {
          for (int r = 0; r < context->size; ++r) {
            std::memcpy(outs[r].raw_data(), contribution(preamble, me, r, ins[me].raw_data()),
                        ins[me].nbytes());
          }
          return;
        }
        Tensor flat_in = concat(ins, ins[0]);
        Tensor flat_out = Tensor::empty({flat_in.numel()}, flat_in.dtype());
        dispatch_storage_dtype(flat_in.dtype(), [&](auto type_tag) {
          using T = decltype(type_tag);
          ::gloo::AlltoallOptions opts(context);
          opts.setInput<T>(static_cast<T*>(flat_in.raw_data()), static_cast<size_t>(flat_in.numel()));
          opts.setOutput<T>(static_cast<T*>(flat_out.raw_data()), static_cast<size_t>(flat_out.numel()));
          opts.setTag(tag);
          opts.setTimeout(timeout);
          ::gloo::alltoall(opts);
        });
        split_into(flat_out, outs);
      },
      data_for);
}

}  // namespace crew::dist

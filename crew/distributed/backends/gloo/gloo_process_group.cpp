#include "crew/distributed/backends/gloo/gloo_process_group.h"

#include <gloo/barrier.h>
#include <gloo/common/error.h>
#include <gloo/common/logging.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>
#include <signal.h>
#include <unistd.h>

#include "crew/core/check.h"
#include "crew/core/comm_affinity.h"
#include "crew/core/env.h"
#include "crew/core/error.h"
#include "crew/distributed/backends/gloo/gloo_pair_check.h"
#include "crew/distributed/backends/gloo/gloo_store_adapter.h"

namespace crew::dist {

namespace {

// Slot prefix of send/recv, above every prefix Gloo's own collectives use.
constexpr uint8_t kP2PSlotPrefix = 0xF0;
// Gloo tag of the barrier that ends the rendezvous; collectives count from kSetupTag + 1.
constexpr uint32_t kSetupTag = 0;

bool is_timeout_message(const std::string& text) {
  return text.find("Timed out") != std::string::npos || text.find("timed out") != std::string::npos;
}

// Gloo 0.5 writes to its sockets without MSG_NOSIGNAL, so a write to a peer that died would
// kill this process with SIGPIPE instead of failing the op with EPIPE (a CommError naming the
// op). Python (and so PyTorch) ignores SIGPIPE for the same reason; a handler the program
// installed itself is left alone.
void ignore_default_sigpipe() {
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL &&
      !(current.sa_flags & SA_SIGINFO)) {
    ::signal(SIGPIPE, SIG_IGN);
  }
}

std::string this_host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return GlooOptions::kDefaultHostname;
  return name;
}

}  // namespace

GlooOptions GlooOptions::from_env() {
  GlooOptions options;
  // One host: loopback. Several: this host's name, which its peers can resolve.
  const long long nnodes = env::get_int("CREW_NNODES", env::get_int("PADDLE_NNODES", 1));
  if (nnodes > 1) options.hostname = "";
  options.hostname = env::get_string("CREW_HOST", options.hostname);
  options.iface = env::get_string("CREW_GLOO_IFNAME", options.iface);
  return options;
}

GlooProcessGroup::GlooProcessGroup(std::shared_ptr<Store> store, int rank, int size,
                                   ProcessGroupOptions options, GlooOptions gloo_options)
    : ProcessGroup(rank, size, std::move(options)) {
  CREW_CHECK(store != nullptr, "GlooProcessGroup (rank ", rank, ", group ", options_.group_name,
             "): store is null");
  CREW_CHECK(size >= 1 && rank >= 0 && rank < size, "GlooProcessGroup (group ", options_.group_name,
             "): rank ", rank, " is not in [0, ", size, ")");
  const std::string where =
      str_cat("gloo rendezvous (rank ", rank, " of ", size, ", group ", options_.group_name, ")");
  ignore_default_sigpipe();
  ::gloo::transport::tcp::attr attr;
  if (!gloo_options.iface.empty()) {
    attr.iface = gloo_options.iface;
  } else {
    attr.hostname = gloo_options.hostname.empty() ? this_host_name() : gloo_options.hostname;
  }
  try {
    // The device's event loop thread moves bytes only: it may run on any of the node's CPUs.
    std::shared_ptr<::gloo::transport::Device> device;
    {
      CommAffinityScope wide;
      device = ::gloo::transport::tcp::CreateDevice(attr);
    }
    auto context = std::make_shared<::gloo::rendezvous::Context>(rank, size);
    context->setTimeout(options_.timeout);
    const std::vector<uint8_t> nonces = detail::publish_pair_nonces(*store, rank, size);
    detail::GlooStoreAdapter adapter(store, options_.timeout);
    context->connectFullMesh(adapter, device);
    detail::check_gloo_pairs(*context, *store, nonces, options_.timeout, where);
    // A rank's mesh can be complete while a peer is still finishing its side; a barrier (tag
    // 0, before every collective's) keeps any rank from closing its connections early.
    ::gloo::BarrierOptions barrier(context);
    barrier.setTag(kSetupTag);
    barrier.setTimeout(options_.timeout);
    ::gloo::barrier(barrier);
    context_ = std::move(context);
  } catch (const TimeoutError& e) {
    CREW_THROW(TimeoutError, where, ": ", e.what());
  } catch (const crew::Error&) {
    throw;
  } catch (const ::gloo::EnforceNotMet& e) {
    CREW_THROW(CommError, where, ": ", e.what(), " (address '", attr.hostname, attr.iface, "')");
  } catch (const std::exception& e) {
    if (is_timeout_message(e.what())) {
      CREW_THROW(TimeoutError, where, ": timed out after ", format_duration(options_.timeout),
                 " (gloo: ", e.what(), ")");
    }
    CREW_THROW(CommError, where, ": ", e.what(), " (address '", attr.hostname, attr.iface,
               "'; set CREW_HOST or CREW_GLOO_IFNAME to choose another)");
  }
  // The queue's worker moves bytes only, like the event loop.
  CommAffinityScope wide;
  queue_ = std::make_unique<WorkQueue>(options_.group_name, rank, options_.timeout);
}

GlooProcessGroup::~GlooProcessGroup() {
  queue_.reset();  // joins the worker before the context goes away
  if (context_) {
    try {
      context_->closeConnections();
    } catch (...) {
      // Peers may be gone already; nothing to report at teardown.
    }
  }
}

std::shared_ptr<Work> GlooProcessGroup::submit(detail::GlooCall call, std::chrono::milliseconds timeout,
                                               bool async_op, Task task, detail::PreambleDataFn data_for,
                                               bool collective) {
  auto context = context_;
  detail::GlooPreamble* preamble = preamble_.get();
  // Tags and queue position are taken together so that they agree in issue order.
  std::lock_guard<std::mutex> lock(submit_mutex_);
  const uint32_t check_tag = collective ? kSetupTag + 1 + next_tag_++ : 0;
  const uint32_t tag = collective ? kSetupTag + 1 + next_tag_++ : 0;
  const std::string op = call.op;
  return queue_->submit(
      op,
      [task = std::move(task), data_for = std::move(data_for), call = std::move(call), context, preamble,
       collective, timeout, check_tag, tag](const OpInfo& info) {
        // An op run inline by a pinned caller waits on the event loop at every hop: it may
        // run on any of the node's CPUs while it does (two affinity calls, ~2 us).
        CommAffinityScope wide;
        try {
          if (collective) preamble->exchange(context, call, check_tag, timeout, info, data_for);
          task(tag, *preamble);
        } catch (const crew::Error&) {
          throw;
        } catch (const ::gloo::EnforceNotMet& e) {
          CREW_THROW(CommError, info.describe(), ": ", e.what());
        } catch (const std::exception& e) {
          if (is_timeout_message(e.what())) {
            CREW_THROW(TimeoutError, info.describe(), ": timed out after ", format_duration(timeout),
                       " (gloo: ", e.what(), ")");
          }
          CREW_THROW(CommError, info.describe(),
                     ": communication failed; a peer may have exited (gloo: ", e.what(), ")");
        }
      },
      async_op, timeout);
}

std::shared_ptr<Work> GlooProcessGroup::barrier(const BarrierOptions& options) {
  auto context = context_;
  const auto timeout = op_timeout(options.timeout);
  // The preamble exchange is the barrier: every rank has heard from every other.
  return submit({"barrier"}, timeout, options.async_op, [](uint32_t, const detail::GlooPreamble&) {});
}

std::shared_ptr<Work> GlooProcessGroup::send(const Tensor& tensor, int dst, const SendOptions& options) {
  return point_to_point(true, tensor, dst, options.tag, op_timeout(options.timeout), options.async_op);
}

std::shared_ptr<Work> GlooProcessGroup::recv(Tensor& tensor, int src, const RecvOptions& options) {
  return point_to_point(false, tensor, src, options.tag, op_timeout(options.timeout), options.async_op);
}

std::shared_ptr<Work> GlooProcessGroup::point_to_point(bool sending, const Tensor& tensor, int peer, int tag,
                                                       std::chrono::milliseconds timeout, bool async_op) {
  const char* op = sending ? "send" : "recv";
  detail::check_tensor(*this, op, tensor, "tensor");
  detail::check_p2p(*this, op, peer, tag, sending ? "dst" : "src");
  auto context = context_;
  Tensor t = tensor;
  return submit(
      {op}, timeout, async_op,
      [context, timeout, t, sending, peer, tag](uint32_t, const detail::GlooPreamble&) {
        if (t.nbytes() == 0) return;
        auto buf = context->createUnboundBuffer(t.raw_data(), t.nbytes());
        const auto slot = ::gloo::Slot::build(kP2PSlotPrefix, static_cast<uint32_t>(tag));
        if (sending) {
          buf->send(peer, slot);
          if (!buf->waitSend(timeout)) CREW_THROW(CommError, "send to rank ", peer, " was aborted");
        } else {
          buf->recv(peer, slot);
          if (!buf->waitRecv(timeout)) CREW_THROW(CommError, "recv from rank ", peer, " was aborted");
        }
      },
      nullptr, /*collective=*/false);
}

std::shared_ptr<ProcessGroup> create_gloo_process_group(const std::shared_ptr<Store>& store, int rank,
                                                        int size, const ProcessGroupOptions& options) {
  return std::make_shared<GlooProcessGroup>(store, rank, size, options, GlooOptions::from_env());
}

void register_gloo_backend() { register_backend("gloo", create_gloo_process_group); }

}  // namespace crew::dist

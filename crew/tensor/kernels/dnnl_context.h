#pragma once
// Shared oneDNN state: the CPU engine, a stream per thread, a keyed primitive cache, and
// helpers that view crew tensors as dnnl::memory (no copies).
#include <dnnl.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "crew/tensor/kernels/threading.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels::detail {

dnnl::engine& cpu_engine();
// One stream per calling thread (streams are not meant to be shared across threads).
dnnl::stream& cpu_stream();

dnnl::memory::dims to_dims(const Shape& shape);
// A plain (row-major) descriptor: nchw for 4-d, nc for 2-d, x for 1-d, goihw for 5-d.
dnnl::memory::desc plain_desc(const dnnl::memory::dims& dims,
                              dnnl::memory::data_type dt = dnnl::memory::data_type::f32);
// oneDNN's data type of a floating dtype (f32, bf16, f16); ValueError for the others.
dnnl::memory::data_type dnnl_type(DType dtype);
// The crew dtype of a oneDNN data type (f32, bf16, f16).
DType crew_dtype(dnnl::memory::data_type dt);
// A dnnl::memory over t's data (t's dtype must be desc's data type, and have dims' element count).
dnnl::memory as_memory(const Tensor& t, const dnnl::memory::desc& desc);

// Thread-safe map from a config key ("conv_fwd|1,32,28,28|...") to a built entry. Entries
// are built once per key and never evicted (a net has a handful of shapes). The thread count
// is part of every key: oneDNN splits the work for the thread count current when a primitive
// is created, so a primitive built for 1 thread must not serve a 2-thread run.
template <typename Entry>
class PrimitiveCache {
 public:
  std::shared_ptr<Entry> get(const std::string& config,
                             const std::function<std::shared_ptr<Entry>()>& build) {
    const std::string key = std::to_string(get_num_threads()) + '|' + config;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = map_.find(key);
      if (it != map_.end()) return it->second;
    }
    std::shared_ptr<Entry> entry = build();  // outside the lock: building can take milliseconds
    std::lock_guard<std::mutex> lock(mu_);
    return map_.emplace(key, std::move(entry)).first->second;
  }

 private:
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<Entry>> map_;
};

// Moves data between a plain tensor and the layout a primitive wants: `from_plain` reorders
// plain -> wanted before execution, `to_plain` wanted -> plain after. Identity when equal.
struct LayoutBridge {
  dnnl::memory::desc plain;
  dnnl::memory::desc wanted;
  bool needed = false;
  dnnl::reorder to_wanted;  // valid when needed
  dnnl::reorder to_plain;   // valid when needed
  LayoutBridge() = default;
  LayoutBridge(const dnnl::memory::desc& plain_md, const dnnl::memory::desc& wanted_md);
};

// The memory a primitive reads: t itself when no reorder is needed, else a reordered copy.
dnnl::memory bridge_input(const LayoutBridge& b, const Tensor& t);
// The memory a primitive writes: t itself, or a scratch buffer to pass to bridge_output.
dnnl::memory bridge_output_buffer(const LayoutBridge& b, const Tensor& t);
// Copies the scratch buffer back into t (no-op when no reorder is needed).
void bridge_output(const LayoutBridge& b, const dnnl::memory& buffer, const Tensor& t);

// Scratchpads. By default each oneDNN primitive allocates its own scratchpad when it is built
// and holds it while cached (a bf16 weight-gradient primitive: a float32 copy of its weights),
// so cached primitives together hold many times what one execution needs. Primitives built
// with user_scratchpad() instead get one per execution from execute(): freed heap memory the
// next primitive reuses.
dnnl::primitive_attr user_scratchpad();
// Runs prim on the thread's stream with args, adding the scratchpad its descriptor asks for.
void execute(const dnnl::primitive& prim, std::unordered_map<int, dnnl::memory> args);

// Throws crew::InternalError/ValueError with the op name for a dnnl::error.
[[noreturn]] void rethrow_dnnl(const char* op, const dnnl::error& e);

}  // namespace crew::kernels::detail

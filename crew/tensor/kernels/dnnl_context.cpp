#include "crew/tensor/kernels/dnnl_context.h"

#include <cstdlib>
#include <iterator>

#include "crew/core/check.h"
#include "crew/tensor/kernels/threading.h"

namespace crew::kernels::detail {

dnnl::engine& cpu_engine() {
  static dnnl::engine engine = [] {
    // oneDNN's VTune (ITT) task annotations cost a measurable part of a training step
    // (docs/kernels.md, "Threads"); off unless the user asked for them.
    setenv("ONEDNN_ITT_TASK_LEVEL", "0", /*overwrite=*/0);
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return engine;
}

dnnl::stream& cpu_stream() {
  thread_local dnnl::stream stream(cpu_engine());
  crew::detail::ensure_threads_initialized();
  return stream;
}

dnnl::memory::dims to_dims(const Shape& shape) { return dnnl::memory::dims(shape.begin(), shape.end()); }

dnnl::memory::desc plain_desc(const dnnl::memory::dims& dims, dnnl::memory::data_type dt) {
  using tag = dnnl::memory::format_tag;
  // The plain (row-major) tag of each rank, 1 to 5.
  static constexpr tag kPlainTags[] = {tag::x, tag::nc, tag::ncw, tag::nchw, tag::goihw};
  CREW_CHECK(dims.size() >= 1 && dims.size() <= std::size(kPlainTags), "oneDNN: unsupported rank ",
             dims.size());
  return dnnl::memory::desc(dims, dt, kPlainTags[dims.size() - 1]);
}

dnnl::memory::data_type dnnl_type(DType dtype) {
  switch (dtype) {
    case DType::FLOAT32:
      return dnnl::memory::data_type::f32;
    case DType::BFLOAT16:
      return dnnl::memory::data_type::bf16;
    case DType::FLOAT16:
      return dnnl::memory::data_type::f16;
    default:
      CREW_THROW(DTypeError, "oneDNN kernels take float32, bfloat16 or float16, got ", dtype_name(dtype));
  }
}

DType crew_dtype(dnnl::memory::data_type dt) {
  if (dt == dnnl::memory::data_type::bf16) return DType::BFLOAT16;
  if (dt == dnnl::memory::data_type::f16) return DType::FLOAT16;
  CREW_INTERNAL_ASSERT(dt == dnnl::memory::data_type::f32, "unexpected oneDNN data type");
  return DType::FLOAT32;
}

dnnl::memory as_memory(const Tensor& t, const dnnl::memory::desc& desc) {
  CREW_CHECK_T(DTypeError, dnnl_type(t.dtype()) == desc.data_type(), "oneDNN kernel: expected ",
               dtype_name(crew_dtype(desc.data_type())), ", got ", dtype_name(t.dtype()));
  CREW_INTERNAL_ASSERT(desc.get_size() <= t.nbytes() || t.nbytes() == 0);
  return dnnl::memory(desc, cpu_engine(), t.raw_data());
}

LayoutBridge::LayoutBridge(const dnnl::memory::desc& plain_md, const dnnl::memory::desc& wanted_md)
    : plain(plain_md), wanted(wanted_md), needed(plain_md != wanted_md) {
  if (!needed) return;
  to_wanted = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), plain, cpu_engine(), wanted));
  to_plain = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), wanted, cpu_engine(), plain));
}

dnnl::memory bridge_input(const LayoutBridge& b, const Tensor& t) {
  dnnl::memory src = as_memory(t, b.plain);
  if (!b.needed) return src;
  dnnl::memory dst(b.wanted, cpu_engine());
  b.to_wanted.execute(cpu_stream(), src, dst);
  return dst;
}

dnnl::memory bridge_output_buffer(const LayoutBridge& b, const Tensor& t) {
  if (!b.needed) return as_memory(t, b.plain);
  return dnnl::memory(b.wanted, cpu_engine());
}

void bridge_output(const LayoutBridge& b, const dnnl::memory& buffer, const Tensor& t) {
  if (!b.needed) return;
  dnnl::memory src = buffer;
  dnnl::memory dst = as_memory(t, b.plain);
  b.to_plain.execute(cpu_stream(), src, dst);
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void execute(const dnnl::primitive& prim, std::unordered_map<int, dnnl::memory> args) {
  const dnnl_memory_desc_t* md =
      dnnl_primitive_desc_query_md(prim.get_primitive_desc(), dnnl_query_scratchpad_md, 0);
  Tensor scratch;  // lives until the primitive has run (the stream is in-order and synchronous)
  if (md != nullptr) {
    const dnnl::memory::desc desc(*md);
    if (desc.get_size() > 0) {
      scratch = Tensor::uninitialized({static_cast<int64_t>(desc.get_size())}, DType::UINT8);
      args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(desc, cpu_engine(), scratch.raw_data()));
    }
  }
  prim.execute(cpu_stream(), args);
}

void rethrow_dnnl(const char* op, const dnnl::error& e) {
  if (e.status == dnnl_unimplemented || e.status == dnnl_invalid_arguments) {
    CREW_THROW(ValueError, op, ": oneDNN rejected the configuration: ", e.what());
  }
  CREW_THROW(InternalError, op, ": oneDNN failed: ", e.what());
}

}  // namespace crew::kernels::detail

#include "crew/distributed/data_parallel/data_parallel.h"

#include "crew/core/check.h"

namespace crew {
namespace {

dist::GradSyncOptions engine_options(const DataParallelOptions& o) {
  dist::GradSyncOptions e;
  e.bucket_bytes_cap = o.comm_buffer_bytes;
  e.first_bucket_bytes = o.last_comm_buffer_bytes;
  e.find_unused_parameters = o.find_unused_parameters;
  e.comm_dtype = o.comm_dtype;
  e.group = o.group;
  e.exit_check_timeout = o.exit_check_timeout;
  return e;
}

}  // namespace

DataParallel::DataParallel(std::shared_ptr<nn::Layer> layer, DataParallelOptions options)
    : nn::Layer("data_parallel"), layer_(std::move(layer)) {
  CREW_CHECK(layer_ != nullptr, "DataParallel: layer is null");
  sync_ = std::make_unique<dist::GradSync>(layer_->named_parameters(), layer_->buffers(),
                                           engine_options(options));
}

Tensor DataParallel::forward(const Tensor& x) {
  Tensor out = layer_->forward(x);
  sync_->prepare_for_backward({out});
  return out;
}

}  // namespace crew

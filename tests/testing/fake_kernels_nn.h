#pragma once
// The fake device's entries (CPU-made, tests/testing/fake_entries.h) of the kernels under
// nn's layers and functions: convolution, pooling, activations, norms, softmax, losses,
// embedding, dropout, attention, recurrent layers. One line per kernel slot.
#include "crew/tensor/kernels/accuracy.h"
#include "crew/tensor/kernels/activation.h"
#include "crew/tensor/kernels/adaptive_pool.h"
#include "crew/tensor/kernels/attention.h"
#include "crew/tensor/kernels/batch_norm.h"
#include "crew/tensor/kernels/batch_norm_loops.h"
#include "crew/tensor/kernels/conv.h"
#include "crew/tensor/kernels/cross_entropy.h"
#include "crew/tensor/kernels/dropout.h"
#include "crew/tensor/kernels/embedding.h"
#include "crew/tensor/kernels/layer_norm.h"
#include "crew/tensor/kernels/pool.h"
#include "crew/tensor/kernels/rnn.h"
#include "crew/tensor/kernels/softmax.h"
#include "crew/tensor/kernels/softmax_rows.h"
#include "tests/testing/fake_entries.h"

namespace crew::testing {

// The recurrent kernels' structs of tensors convert member by member (RnnSaved passes as it
// is: it holds host aliases of the forward's tensors, whose memory is the fake device's).
template <>
struct converts_to_fake<kernels::RnnForwardResult> : std::true_type {};
template <>
struct converts_to_fake<kernels::RnnGrads> : std::true_type {};

}  // namespace crew::testing

namespace crew::kernels {  // found by argument-dependent lookup from FakeEntry

inline RnnForwardResult host_view(const RnnForwardResult& r) {
  return {testing::host_view(r.y), testing::host_view(r.h_n), testing::host_view(r.c_n), r.saved};
}
inline RnnForwardResult fake_view(const RnnForwardResult& r) {
  return {testing::fake_view(r.y), testing::fake_view(r.h_n), testing::fake_view(r.c_n), r.saved};
}
inline RnnGrads host_view(const RnnGrads& g) {
  return {testing::host_view(g.x), testing::host_view(g.h0), testing::host_view(g.c0), testing::host_view(g.weights)};
}
inline RnnGrads fake_view(const RnnGrads& g) {
  return {testing::fake_view(g.x), testing::fake_view(g.h0), testing::fake_view(g.c0), testing::fake_view(g.weights)};
}

}  // namespace crew::kernels

namespace crew::testing {

inline void set_fake_nn_kernels(bool on) {
  set_fake_entry<&kernels::conv2d_forward_kernel>(on);
  set_fake_entry<&kernels::conv2d_backward_kernel>(on);
  set_fake_entry<&kernels::pool2d_forward_kernel>(on);
  set_fake_entry<&kernels::pool2d_backward_kernel>(on);
  set_fake_entry<&kernels::adaptive_avg_pool2d_forward_kernel>(on);
  set_fake_entry<&kernels::adaptive_avg_pool2d_backward_kernel>(on);
  set_fake_entry<&kernels::activation_forward_kernel>(on);
  set_fake_entry<&kernels::activation_backward_kernel>(on);
  set_fake_entry<&kernels::batch_norm_forward_kernel>(on);
  set_fake_entry<&kernels::batch_norm_backward_kernel>(on);
  set_fake_entry<&kernels::batch_norm_channel_sums_kernel>(on);
  set_fake_entry<&kernels::batch_norm_channel_sq_dev_kernel>(on);
  set_fake_entry<&kernels::batch_norm_normalize_kernel>(on);
  set_fake_entry<&kernels::batch_norm_grad_sums_kernel>(on);
  set_fake_entry<&kernels::batch_norm_input_grad_kernel>(on);
  set_fake_entry<&kernels::batch_norm_update_running_kernel>(on);
  set_fake_entry<&kernels::layer_norm_forward_kernel>(on);
  set_fake_entry<&kernels::layer_norm_backward_kernel>(on);
  set_fake_entry<&kernels::softmax_forward_kernel>(on);
  set_fake_entry<&kernels::softmax_backward_kernel>(on);
  set_fake_entry<&kernels::softmax_rows_kernel>(on);
  set_fake_entry<&kernels::softmax_rows_backward_kernel>(on);
  set_fake_entry<&kernels::cross_entropy_forward_kernel>(on);
  set_fake_entry<&kernels::cross_entropy_backward_kernel>(on);
  set_fake_entry<&kernels::accuracy_count_kernel>(on);
  set_fake_entry<&kernels::embedding_forward_kernel>(on);
  set_fake_entry<&kernels::embedding_backward_kernel>(on);
  set_fake_entry<&kernels::dropout_mask_kernel>(on);
  set_fake_entry<&kernels::attention_forward_kernel>(on);
  set_fake_entry<&kernels::attention_backward_kernel>(on);
  set_fake_entry<&kernels::attention_mask_softmax_kernel>(on);
  set_fake_entry<&kernels::rnn_layer_forward_kernel>(on);
  set_fake_entry<&kernels::rnn_layer_backward_kernel>(on);
}

}  // namespace crew::testing

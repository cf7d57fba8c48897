#pragma once
// The fake device's entries (CPU-made, tests/testing/fake_entries.h) of the kernels under
// nn's layers and functions: convolution, pooling, activations, norms, softmax, losses,
// embedding, dropout, attention. One line per kernel slot.
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
#include "crew/tensor/kernels/softmax.h"
#include "crew/tensor/kernels/softmax_rows.h"
#include "tests/testing/fake_entries.h"

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
}

}  // namespace crew::testing

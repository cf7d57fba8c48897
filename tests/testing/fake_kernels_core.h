#pragma once
// The fake device's entries (CPU-made, tests/testing/fake_entries.h) of the kernels under
// autograd's ops, the optimizers, gradient clipping and the loss scaler: element-wise and
// broadcast math, reductions, matmul, copies of shape ops. One line per kernel slot.
#include "crew/tensor/kernels/amp.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/compare.h"
#include "crew/tensor/kernels/copy_strided.h"
#include "crew/tensor/kernels/elementwise.h"
#include "crew/tensor/kernels/gather.h"
#include "crew/tensor/kernels/gemm.h"
#include "crew/tensor/kernels/grad_clip.h"
#include "crew/tensor/kernels/linear.h"
#include "crew/tensor/kernels/optimizer_update.h"
#include "crew/tensor/kernels/pointwise.h"
#include "crew/tensor/kernels/reduce.h"
#include "crew/tensor/kernels/sort_scan.h"
#include "tests/testing/fake_entries.h"

namespace crew::testing {

inline void set_fake_core_kernels(bool on) {
  set_fake_entry<&kernels::binary_kernel>(on);
  set_fake_entry<&kernels::sum_to_kernel>(on);
  set_fake_entry<&kernels::affine_kernel>(on);
  set_fake_entry<&kernels::add_inplace_kernel>(on);
  set_fake_entry<&kernels::unary_kernel>(on);
  set_fake_entry<&kernels::matmul_kernel>(on);
  set_fake_entry<&kernels::linear_forward_kernel>(on);
  set_fake_entry<&kernels::linear_backward_kernel>(on);
  set_fake_entry<&kernels::sum_axis_kernel>(on);
  set_fake_entry<&kernels::argmax_kernel>(on);
  set_fake_entry<&kernels::permute_kernel>(on);
  set_fake_entry<&kernels::slice_axis_kernel>(on);
  set_fake_entry<&kernels::slice_scatter_kernel>(on);
  set_fake_entry<&kernels::concat_kernel>(on);
  set_fake_entry<&kernels::sgd_update_kernel>(on);
  set_fake_entry<&kernels::momentum_update_kernel>(on);
  set_fake_entry<&kernels::adam_update_kernel>(on);
  set_fake_entry<&kernels::squared_norm_kernel>(on);
  set_fake_entry<&kernels::scale_kernel>(on);
  set_fake_entry<&kernels::clamp_kernel>(on);
  set_fake_entry<&kernels::unscale_and_check_finite_kernel>(on);
  // tensor math of issue 30 (crew/autograd/ops_math.h, indexing.h)
  set_fake_entry<&kernels::pointwise_kernel>(on);
  set_fake_entry<&kernels::pointwise_backward_kernel>(on);
  set_fake_entry<&kernels::compare_kernel>(on);
  set_fake_entry<&kernels::test_kernel>(on);
  set_fake_entry<&kernels::isclose_kernel>(on);
  set_fake_entry<&kernels::where_kernel>(on);
  set_fake_entry<&kernels::nonzero_kernel>(on);
  set_fake_entry<&kernels::expand_kernel>(on);
  set_fake_entry<&kernels::index_select_kernel>(on);
  set_fake_entry<&kernels::index_add_kernel>(on);
  set_fake_entry<&kernels::take_along_kernel>(on);
  set_fake_entry<&kernels::take_along_backward_kernel>(on);
  set_fake_entry<&kernels::nd_linear_index_kernel>(on);
  set_fake_entry<&kernels::scatter_rows_kernel>(on);
  set_fake_entry<&kernels::put_kernel>(on);
  set_fake_entry<&kernels::sort_indices_kernel>(on);
  set_fake_entry<&kernels::cumsum_kernel>(on);
  set_fake_entry<&kernels::cumprod_kernel>(on);
  set_fake_entry<&kernels::cumprod_backward_kernel>(on);
  set_fake_entry<&kernels::prod_axis_kernel>(on);
  set_fake_entry<&kernels::prod_backward_kernel>(on);
}

}  // namespace crew::testing

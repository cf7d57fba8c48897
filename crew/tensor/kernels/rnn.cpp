#include "crew/tensor/kernels/rnn.h"

#include <cstring>

#include "crew/core/check.h"
#include "crew/tensor/kernels/dnnl_context.h"

namespace crew::kernels {

const char* rnn_cell_name(RnnCell cell) {
  switch (cell) {
    case RnnCell::RNN_TANH:
      return "RNN_TANH";
    case RnnCell::RNN_RELU:
      return "RNN_RELU";
    case RnnCell::LSTM:
      return "LSTM";
    case RnnCell::GRU:
      return "GRU";
  }
  return "?";
}

int64_t rnn_gate_count(RnnCell cell) {
  switch (cell) {
    case RnnCell::LSTM:
      return 4;
    case RnnCell::GRU:
      return 3;
    default:
      return 1;
  }
}

namespace {

using dnnl::memory;
using tag = memory::format_tag;

// One layer's sizes. oneDNN's dims: src_layer {T, N, I}, src_iter {1, D, N, H}, weights
// {1, D, I|H, G, H}, bias {1, D, Gb, H} (Gb = 4 for the linear-before-reset GRU: its fourth
// gate is the bias of U_c h), dst_layer {T, N, D*H}.
struct Geometry {
  RnnCell cell;
  int64_t T, N, I, H, D, G, Gb;
  bool batch_major;
  dnnl::rnn_direction dir;
  std::string key;
};

// oneDNN's gate g is Paddle's gate paddle_gate(g): the GRU's gates are u(=z), r, o(=c) in
// oneDNN and r, z, c in Paddle; LSTM (i, f, g, o) and SimpleRNN agree.
int64_t paddle_gate(RnnCell cell, int64_t g) {
  static constexpr int64_t kGru[3] = {1, 0, 2};
  return cell == RnnCell::GRU ? kGru[g] : g;
}

memory::desc f32(const memory::dims& dims, tag t) { return memory::desc(dims, memory::data_type::f32, t); }

struct Descs {
  memory::desc src_layer, src_iter, w_layer, w_iter, w_layer_user, w_iter_user, bias, dst_layer;
};

Descs descs(const Geometry& g) {
  Descs d;
  const tag layer_tag = g.batch_major ? tag::ntc : tag::tnc;
  d.src_layer = f32({g.T, g.N, g.I}, layer_tag);
  d.src_iter = f32({1, g.D, g.N, g.H}, tag::ldnc);
  d.w_layer = f32({1, g.D, g.I, g.G, g.H}, tag::any);
  d.w_iter = f32({1, g.D, g.H, g.G, g.H}, tag::any);
  d.w_layer_user = f32({1, g.D, g.I, g.G, g.H}, tag::ldgoi);  // [D][G][H][I]: Paddle's rows
  d.w_iter_user = f32({1, g.D, g.H, g.G, g.H}, tag::ldgoi);
  d.bias = f32({1, g.D, g.Gb, g.H}, tag::ldgo);
  d.dst_layer = f32({g.T, g.N, g.D * g.H}, layer_tag);
  return d;
}

struct Entry {
  dnnl::rnn_primitive_desc_base fwd_pd;
  dnnl::primitive fwd;
  dnnl::rnn_primitive_desc_base bwd_pd;  // training entries only
  dnnl::primitive bwd;
};

template <typename Fwd, typename Bwd>
void set_entry(Entry& e, const typename Fwd::primitive_desc& fwd, const typename Bwd::primitive_desc* bwd) {
  e.fwd_pd = fwd;
  e.fwd = Fwd(fwd);
  if (bwd != nullptr) {
    e.bwd_pd = *bwd;
    e.bwd = Bwd(*bwd);
  }
}

std::shared_ptr<Entry> build_entry(const Geometry& g, bool training) {
  const Descs d = descs(g);
  const auto prop = training ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference;
  const auto bprop = dnnl::prop_kind::backward;
  dnnl::engine& eng = detail::cpu_engine();
  auto e = std::make_shared<Entry>();
  switch (g.cell) {
    case RnnCell::RNN_TANH:
    case RnnCell::RNN_RELU: {
      const auto act =
          g.cell == RnnCell::RNN_TANH ? dnnl::algorithm::eltwise_tanh : dnnl::algorithm::eltwise_relu;
      dnnl::vanilla_rnn_forward::primitive_desc fwd(
          dnnl::vanilla_rnn_forward::desc(prop, act, g.dir, d.src_layer, d.src_iter, d.w_layer, d.w_iter,
                                          d.bias, d.dst_layer, d.src_iter),
          eng);
      if (!training) {
        set_entry<dnnl::vanilla_rnn_forward, dnnl::vanilla_rnn_backward>(*e, fwd, nullptr);
        break;
      }
      dnnl::vanilla_rnn_backward::primitive_desc bwd(
          dnnl::vanilla_rnn_backward::desc(bprop, act, g.dir, d.src_layer, d.src_iter, d.w_layer, d.w_iter,
                                           d.bias, d.dst_layer, d.src_iter, d.src_layer, d.src_iter,
                                           d.w_layer, d.w_iter, d.bias, d.dst_layer, d.src_iter),
          eng, fwd);
      set_entry<dnnl::vanilla_rnn_forward, dnnl::vanilla_rnn_backward>(*e, fwd, &bwd);
      break;
    }
    case RnnCell::LSTM: {
      dnnl::lstm_forward::primitive_desc fwd(
          dnnl::lstm_forward::desc(prop, g.dir, d.src_layer, d.src_iter, d.src_iter, d.w_layer, d.w_iter,
                                   d.bias, d.dst_layer, d.src_iter, d.src_iter),
          eng);
      if (!training) {
        set_entry<dnnl::lstm_forward, dnnl::lstm_backward>(*e, fwd, nullptr);
        break;
      }
      dnnl::lstm_backward::primitive_desc bwd(
          dnnl::lstm_backward::desc(bprop, g.dir, d.src_layer, d.src_iter, d.src_iter, d.w_layer, d.w_iter,
                                    d.bias, d.dst_layer, d.src_iter, d.src_iter, d.src_layer, d.src_iter,
                                    d.src_iter, d.w_layer, d.w_iter, d.bias, d.dst_layer, d.src_iter,
                                    d.src_iter),
          eng, fwd);
      set_entry<dnnl::lstm_forward, dnnl::lstm_backward>(*e, fwd, &bwd);
      break;
    }
    case RnnCell::GRU: {
      dnnl::lbr_gru_forward::primitive_desc fwd(
          dnnl::lbr_gru_forward::desc(prop, g.dir, d.src_layer, d.src_iter, d.w_layer, d.w_iter, d.bias,
                                      d.dst_layer, d.src_iter),
          eng);
      if (!training) {
        set_entry<dnnl::lbr_gru_forward, dnnl::lbr_gru_backward>(*e, fwd, nullptr);
        break;
      }
      dnnl::lbr_gru_backward::primitive_desc bwd(
          dnnl::lbr_gru_backward::desc(bprop, g.dir, d.src_layer, d.src_iter, d.w_layer, d.w_iter, d.bias,
                                       d.dst_layer, d.src_iter, d.src_layer, d.src_iter, d.w_layer, d.w_iter,
                                       d.bias, d.dst_layer, d.src_iter),
          eng, fwd);
      set_entry<dnnl::lbr_gru_forward, dnnl::lbr_gru_backward>(*e, fwd, &bwd);
      break;
    }
  }
  return e;
}

std::shared_ptr<Entry> entry(const Geometry& g, bool training) {
  static detail::PrimitiveCache<Entry> cache;
  return cache.get(str_cat(g.key, training ? "|train" : "|infer"), [&] { return build_entry(g, training); });
}

void check_f32(const Tensor& t, const char* what) {
  CREW_CHECK(t.dtype() == DType::FLOAT32, "rnn: ", what, " must be float32 (oneDNN's RNN), got ",
             dtype_name(t.dtype()));
}

Geometry geometry(const Tensor& x, const std::vector<Tensor>& w, const RnnLayerParams& p) {
  Geometry g;
  g.cell = p.cell;
  g.D = p.bidirectional ? 2 : 1;
  g.G = rnn_gate_count(p.cell);
  g.Gb = p.cell == RnnCell::GRU ? 4 : g.G;
  check_f32(x, "x");
  g.batch_major = p.batch_major;
  CREW_CHECK(x.dim() == 3, "rnn: x must be ", p.batch_major ? "[N, T, I]" : "[T, N, I]", ", got ",
             shape_str(x.shape()));
  g.T = x.size(p.batch_major ? 1 : 0);
  g.N = x.size(p.batch_major ? 0 : 1);
  g.I = x.size(2);
  CREW_CHECK(g.T >= 1 && g.N >= 1 && g.I >= 1, "rnn: x ", shape_str(x.shape()), " has an empty axis");
  CREW_CHECK(static_cast<int64_t>(w.size()) == 4 * g.D, "rnn: expected ", 4 * g.D,
             " weights (weight_ih, weight_hh, bias_ih, bias_hh per direction), got ", w.size());
  CREW_CHECK(w[1].defined() && w[1].dim() == 2, "rnn: weight_hh must be [G*H, H]");
  g.H = w[1].size(1);
  const int64_t rows = g.G * g.H;
  for (int64_t d = 0; d < g.D; ++d) {
    const Shape want[4] = {{rows, g.I}, {rows, g.H}, {rows}, {rows}};
    static constexpr const char* kNames[4] = {"weight_ih", "weight_hh", "bias_ih", "bias_hh"};
    for (int k = 0; k < 4; ++k) {
      const Tensor& t = w[4 * d + k];
      if (k >= 2 && !t.defined()) continue;
      CREW_CHECK(t.defined(), "rnn: ", kNames[k], " is missing");
      check_f32(t, kNames[k]);
      CREW_CHECK(t.shape() == want[k], "rnn: ", rnn_cell_name(p.cell), " ", kNames[k], d ? "_reverse" : "",
                 " has shape ", shape_str(t.shape()), ", expected ", shape_str(want[k]), " (input_size ", g.I,
                 ", hidden_size ", g.H, ")");
    }
  }
  g.dir = p.bidirectional ? dnnl::rnn_direction::bidirectional_concat
          : p.reverse     ? dnnl::rnn_direction::unidirectional_right2left
                          : dnnl::rnn_direction::unidirectional_left2right;
  g.key = str_cat("rnn|", rnn_cell_name(p.cell), '|', g.T, ',', g.N, ',', g.I, ',', g.H, ',', g.D, ',',
                  static_cast<int>(g.dir), g.batch_major ? "|ntc" : "|tnc");
  return g;
}

float* ptr(const memory& m) { return static_cast<float*>(m.get_data_handle()); }

// Paddle's weights and biases as oneDNN user memories (ldgoi, ldgo; gates in oneDNN's order).
struct UserWeights {
  memory layer, iter, bias;
  bool has_bias[2][2] = {{false, false}, {false, false}};  // [direction][ih, hh]
};

UserWeights user_weights(const Geometry& g, const std::vector<Tensor>& w) {
  const Descs d = descs(g);
  dnnl::engine& eng = detail::cpu_engine();
  UserWeights u{memory(d.w_layer_user, eng), memory(d.w_iter_user, eng), memory(d.bias, eng)};
  float* wl = ptr(u.layer);
  float* wi = ptr(u.iter);
  float* b = ptr(u.bias);
  std::memset(b, 0, d.bias.get_size());
  const int64_t H = g.H;
  for (int64_t dir = 0; dir < g.D; ++dir) {
    const float* w_ih = w[4 * dir].data<float>();
    const float* w_hh = w[4 * dir + 1].data<float>();
    const float* b_ih = w[4 * dir + 2].defined() ? w[4 * dir + 2].data<float>() : nullptr;
    const float* b_hh = w[4 * dir + 3].defined() ? w[4 * dir + 3].data<float>() : nullptr;
    u.has_bias[dir][0] = b_ih != nullptr;
    u.has_bias[dir][1] = b_hh != nullptr;
    for (int64_t gate = 0; gate < g.G; ++gate) {
      const int64_t pg = paddle_gate(g.cell, gate);
      std::memcpy(wl + (dir * g.G + gate) * H * g.I, w_ih + pg * H * g.I, sizeof(float) * H * g.I);
      std::memcpy(wi + (dir * g.G + gate) * H * H, w_hh + pg * H * H, sizeof(float) * H * H);
      float* bg = b + (dir * g.Gb + gate) * H;
      // The GRU's candidate keeps b_hc apart (oneDNN's fourth bias gate); every other gate
      // adds the two biases.
      const bool split = g.cell == RnnCell::GRU && gate == 2;
      for (int64_t o = 0; o < H; ++o) {
        if (b_ih != nullptr) bg[o] += b_ih[pg * H + o];
        if (b_hh != nullptr) (split ? bg[H + o] : bg[o]) += b_hh[pg * H + o];
      }
    }
  }
  return u;
}

// `user` in `want`'s layout (itself when they agree).
memory to_layout(const memory& user, const memory::desc& want) {
  if (user.get_desc() == want) return user;
  memory m(want, detail::cpu_engine());
  memory src = user;
  dnnl::reorder(src, m).execute(detail::cpu_stream(), src, m);
  return m;
}

memory as_mem(const Tensor& t, const memory::desc& md) { return detail::as_memory(t, md); }

}  // namespace

struct RnnSaved {
  Geometry g;
  std::shared_ptr<Entry> e;
  Tensor x, h0, c0, y, h_n, c_n;
  UserWeights w;
  memory workspace;
};

namespace {

RnnForwardResult rnn_layer_forward_cpu(const Tensor& x, const std::vector<Tensor>& weights, const Tensor& h0,
                                       const Tensor& c0, const RnnLayerParams& p, bool training) {
  const Geometry g = geometry(x, weights, p);
  const bool lstm = p.cell == RnnCell::LSTM;
  const Shape state{g.D, g.N, g.H};
  for (const Tensor* s : {&h0, &c0}) {
    if (!s->defined()) continue;
    check_f32(*s, s == &h0 ? "h0" : "c0");
    CREW_CHECK(s->shape() == state, "rnn: initial ", s == &h0 ? "h" : "c", " has shape ",
               shape_str(s->shape()), ", expected [num_directions, batch, hidden] ", shape_str(state));
  }
  RnnForwardResult r;
  try {
    auto e = entry(g, training);
    const Descs d = descs(g);
    UserWeights u = user_weights(g, weights);
    memory wl = to_layout(u.layer, e->fwd_pd.weights_layer_desc());
    memory wi = to_layout(u.iter, e->fwd_pd.weights_iter_desc());
    Tensor hx = h0.defined() ? h0 : Tensor::zeros(state);
    Tensor cx = lstm ? (c0.defined() ? c0 : Tensor::zeros(state)) : Tensor();
    r.y = g.batch_major ? Tensor::uninitialized({g.N, g.T, g.D * g.H})
                        : Tensor::uninitialized({g.T, g.N, g.D * g.H});
    r.h_n = Tensor::uninitialized(state);
    if (lstm) r.c_n = Tensor::uninitialized(state);
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC_LAYER, as_mem(x, d.src_layer)},
                                         {DNNL_ARG_SRC_ITER, as_mem(hx, d.src_iter)},
                                         {DNNL_ARG_WEIGHTS_LAYER, wl},
                                         {DNNL_ARG_WEIGHTS_ITER, wi},
                                         {DNNL_ARG_BIAS, u.bias},
                                         {DNNL_ARG_DST_LAYER, as_mem(r.y, d.dst_layer)},
                                         {DNNL_ARG_DST_ITER, as_mem(r.h_n, d.src_iter)}};
    if (lstm) {
      args.emplace(DNNL_ARG_SRC_ITER_C, as_mem(cx, d.src_iter));
      args.emplace(DNNL_ARG_DST_ITER_C, as_mem(r.c_n, d.src_iter));
    }
    memory ws;
    if (training) {
      ws = memory(e->fwd_pd.workspace_desc(), detail::cpu_engine());
      args.emplace(DNNL_ARG_WORKSPACE, ws);
    }
    e->fwd.execute(detail::cpu_stream(), args);
    if (training) {
      auto s = std::make_shared<RnnSaved>();
      s->g = g;
      s->e = e;
      s->x = x;
      s->h0 = hx;
      s->c0 = cx;
      s->y = r.y;
      s->h_n = r.h_n;
      s->c_n = r.c_n;
      s->w = std::move(u);
      s->workspace = ws;
      r.saved = std::move(s);
    }
  } catch (const dnnl::error& err) {
    detail::rethrow_dnnl("rnn forward", err);
  }
  return r;
}

// The weight gradients oneDNN left in its user layouts (dwl, dwi, db), as Paddle's
// [w_ih, w_hh, b_ih, b_hh] per direction in Paddle's gate order (undefined where no bias).
std::vector<Tensor> weight_grads_to_paddle(const Geometry& g, const UserWeights& w, const memory& dwl_user,
                                           const memory& dwi_user, const memory& db) {
  const float* pl = ptr(dwl_user);
  const float* pi = ptr(dwi_user);
  const float* pb = ptr(db);
  const int64_t H = g.H;
  std::vector<Tensor> out(4 * g.D);
  for (int64_t dir = 0; dir < g.D; ++dir) {
    Tensor gw_ih = Tensor::uninitialized({g.G * H, g.I});
    Tensor gw_hh = Tensor::uninitialized({g.G * H, H});
    Tensor gb_ih = w.has_bias[dir][0] ? Tensor::uninitialized({g.G * H}) : Tensor();
    Tensor gb_hh = w.has_bias[dir][1] ? Tensor::uninitialized({g.G * H}) : Tensor();
    for (int64_t gate = 0; gate < g.G; ++gate) {
      const int64_t pg = paddle_gate(g.cell, gate);
      std::memcpy(gw_ih.data<float>() + pg * H * g.I, pl + (dir * g.G + gate) * H * g.I, sizeof(float) * H * g.I);
      std::memcpy(gw_hh.data<float>() + pg * H * H, pi + (dir * g.G + gate) * H * H, sizeof(float) * H * H);
      const float* bg = pb + (dir * g.Gb + gate) * H;
      const bool split = g.cell == RnnCell::GRU && gate == 2;
      if (gb_ih.defined()) std::memcpy(gb_ih.data<float>() + pg * H, bg, sizeof(float) * H);
      if (gb_hh.defined()) std::memcpy(gb_hh.data<float>() + pg * H, split ? bg + H : bg, sizeof(float) * H);
    }
    out[4 * dir] = gw_ih;
    out[4 * dir + 1] = gw_hh;
    out[4 * dir + 2] = gb_ih;
    out[4 * dir + 3] = gb_hh;
  }
  return out;
}

RnnGrads rnn_layer_backward_cpu(const Tensor& dy, const Tensor& dh_n, const Tensor& dc_n, const RnnSaved& s) {
  const Geometry& g = s.g;
  const bool lstm = g.cell == RnnCell::LSTM;
  const Shape state{g.D, g.N, g.H};
  check_f32(dy, "grad of the output");
  CREW_CHECK(dy.shape() == s.y.shape(), "rnn backward: grad of the output has shape ", shape_str(dy.shape()),
             ", expected ", shape_str(s.y.shape()));
  for (const Tensor* t : {&dh_n, &dc_n}) {
    if (!t->defined()) continue;
    check_f32(*t, "grad of a final state");
    CREW_CHECK(t->shape() == state, "rnn backward: grad of a final state has shape ", shape_str(t->shape()),
               ", expected ", shape_str(state));
  }
  RnnGrads r;
  try {
    const Entry& e = *s.e;
    const Descs d = descs(g);
    dnnl::engine& eng = detail::cpu_engine();
    memory wl = to_layout(s.w.layer, e.bwd_pd.weights_layer_desc());
    memory wi = to_layout(s.w.iter, e.bwd_pd.weights_iter_desc());
    // oneDNN adds the weight gradients into these: they start at zero.
    memory dwl(e.bwd_pd.diff_weights_layer_desc(), eng);
    memory dwi(e.bwd_pd.diff_weights_iter_desc(), eng);
    memory db(d.bias, eng);
    for (const memory* m : {&dwl, &dwi, &db}) std::memset(m->get_data_handle(), 0, m->get_desc().get_size());
    Tensor dh = dh_n.defined() ? dh_n : Tensor::zeros(state);
    Tensor dc = lstm ? (dc_n.defined() ? dc_n : Tensor::zeros(state)) : Tensor();
    r.x = Tensor::uninitialized(s.x.shape());
    r.h0 = Tensor::uninitialized(state);
    if (lstm) r.c0 = Tensor::uninitialized(state);
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC_LAYER, as_mem(s.x, d.src_layer)},
                                         {DNNL_ARG_SRC_ITER, as_mem(s.h0, d.src_iter)},
                                         {DNNL_ARG_WEIGHTS_LAYER, wl},
                                         {DNNL_ARG_WEIGHTS_ITER, wi},
                                         {DNNL_ARG_BIAS, s.w.bias},
                                         {DNNL_ARG_DST_LAYER, as_mem(s.y, d.dst_layer)},
                                         {DNNL_ARG_DST_ITER, as_mem(s.h_n, d.src_iter)},
                                         {DNNL_ARG_WORKSPACE, s.workspace},
                                         {DNNL_ARG_DIFF_SRC_LAYER, as_mem(r.x, d.src_layer)},
                                         {DNNL_ARG_DIFF_SRC_ITER, as_mem(r.h0, d.src_iter)},
                                         {DNNL_ARG_DIFF_WEIGHTS_LAYER, dwl},
                                         {DNNL_ARG_DIFF_WEIGHTS_ITER, dwi},
                                         {DNNL_ARG_DIFF_BIAS, db},
                                         {DNNL_ARG_DIFF_DST_LAYER, as_mem(dy, d.dst_layer)},
                                         {DNNL_ARG_DIFF_DST_ITER, as_mem(dh, d.src_iter)}};
    if (lstm) {
      args.emplace(DNNL_ARG_SRC_ITER_C, as_mem(s.c0, d.src_iter));
      args.emplace(DNNL_ARG_DST_ITER_C, as_mem(s.c_n, d.src_iter));
      args.emplace(DNNL_ARG_DIFF_SRC_ITER_C, as_mem(r.c0, d.src_iter));
      args.emplace(DNNL_ARG_DIFF_DST_ITER_C, as_mem(dc, d.src_iter));
    }
    e.bwd.execute(detail::cpu_stream(), args);
    // Back to Paddle's layout and gate order.
    r.weights = weight_grads_to_paddle(g, s.w, to_layout(dwl, d.w_layer_user), to_layout(dwi, d.w_iter_user), db);
  } catch (const dnnl::error& err) {
    detail::rethrow_dnnl("rnn backward", err);
  }
  return r;
}

}  // namespace

constinit KernelSlot<RnnLayerForwardFn> rnn_layer_forward_kernel("rnn_layer_forward", &rnn_layer_forward_cpu);
constinit KernelSlot<RnnLayerBackwardFn> rnn_layer_backward_kernel("rnn_layer_backward",
                                                                   &rnn_layer_backward_cpu);

RnnForwardResult rnn_layer_forward(const Tensor& x, const std::vector<Tensor>& weights, const Tensor& h0,
                                   const Tensor& c0, const RnnLayerParams& p, bool training) {
  for (const Tensor& w : weights) {
    check_same_place("rnn", {{"x", &x}, {"weight", &w}, {"h0", &h0}, {"c0", &c0}});
  }
  return rnn_layer_forward_kernel.get(x.place().type)(x, weights, h0, c0, p, training);
}

RnnGrads rnn_layer_backward(const Tensor& dy, const Tensor& dh_n, const Tensor& dc_n, const RnnSaved& saved) {
  check_same_place("rnn backward", {{"dy", &dy}, {"dh_n", &dh_n}, {"dc_n", &dc_n}});
  return rnn_layer_backward_kernel.get(dy.place().type)(dy, dh_n, dc_n, saved);
}

}  // namespace crew::kernels

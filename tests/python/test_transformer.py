"""nn.MultiHeadAttention and the Transformer layers: float64 NumPy references of Paddle's
formulas (fused and composed attention paths, masks of each kind), finite-difference gradient
checks, Paddle's state_dict keys and documentation examples, and torch.nn's layers with copied
weights when torch imports."""
import numpy as np
import pytest

import crew as paddle
from crew import nn

RNG = np.random.default_rng(7)


def t(a, grad=False):
    return paddle.to_tensor(np.asarray(a, np.float64), stop_gradient=not grad)


def f64(layer):
    return layer.to(dtype="float64")


# ---- NumPy references (Paddle's formulas, float64) ----
def ref_linear(x, lin):
    return x @ lin.weight.numpy() + lin.bias.numpy()


def ref_softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def ref_mha(m, q, k, v, mask=None):
    """-> (out [B, Tq, E], weights [B, H, Tq, Tk]); mask already additive (float)."""
    h, d = m.num_heads, m.head_dim

    def heads(x, lin):
        b, n = x.shape[:2]
        return ref_linear(x, lin).reshape(b, n, h, d).transpose(0, 2, 1, 3)

    s = heads(q, m.q_proj) @ heads(k, m.k_proj).transpose(0, 1, 3, 2) / np.sqrt(d)
    w = ref_softmax(s if mask is None else s + mask)
    o = (w @ heads(v, m.v_proj)).transpose(0, 2, 1, 3).reshape(q.shape[0], q.shape[1], h * d)
    return ref_linear(o, m.out_proj), w


def ref_norm(x, ln, eps=1e-5):
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * ln.weight.numpy() + ln.bias.numpy()


def ref_act(name, x):
    if name == "relu":
        return np.maximum(x, 0)
    from math import erf
    return 0.5 * x * (1 + np.vectorize(erf)(x / np.sqrt(2)))


def ref_block(layer, x, norm, fn):
    if layer.normalize_before:
        return x + fn(ref_norm(x, norm))
    return ref_norm(x + fn(x), norm)


def ref_ffn(layer, act, x):
    return ref_linear(ref_act(act, ref_linear(x, layer.linear1)), layer.linear2)


def ref_encoder_layer(layer, act, x, mask=None):
    x = ref_block(layer, x, layer.norm1, lambda y: ref_mha(layer.self_attn, y, y, y, mask)[0])
    return ref_block(layer, x, layer.norm2, lambda y: ref_ffn(layer, act, y))


def ref_decoder_layer(layer, act, x, mem, tgt_mask=None, mem_mask=None):
    x = ref_block(layer, x, layer.norm1, lambda y: ref_mha(layer.self_attn, y, y, y, tgt_mask)[0])
    x = ref_block(layer, x, layer.norm2, lambda y: ref_mha(layer.cross_attn, y, mem, mem, mem_mask)[0])
    return ref_block(layer, x, layer.norm3, lambda y: ref_ffn(layer, act, y))


def causal(n):
    return np.triu(np.full((n, n), -np.inf), 1)


# ---- MultiHeadAttention ----
def test_self_attention_matches_the_reference_fused_and_composed():
    m = f64(nn.MultiHeadAttention(12, 3))
    x = RNG.standard_normal((2, 5, 12))
    want, w_want = ref_mha(m, x, x, x)
    np.testing.assert_allclose(m(t(x)).numpy(), want, rtol=1e-10, atol=1e-12)  # fused kernel
    m.need_weights = True
    out, w = m(t(x))  # composed (weights asked for)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w.numpy(), w_want, rtol=1e-10, atol=1e-12)
    assert w.shape == [2, 3, 5, 5]


def test_cross_attention_with_kdim_vdim_and_each_kind_of_mask():
    m = f64(nn.MultiHeadAttention(8, 2, kdim=6, vdim=4))
    q, k, v = RNG.standard_normal((3, 4, 8)), RNG.standard_normal((3, 7, 6)), RNG.standard_normal((3, 7, 4))
    keep = RNG.random((3, 1, 4, 7)) > 0.3
    keep[..., 0] = True
    additive = np.where(keep, 0.0, -1e9)
    want = ref_mha(m, q, k, v, additive)[0]
    for mask in (paddle.to_tensor(keep.astype(np.int64)), paddle.to_tensor(keep.astype(np.uint8)), keep,
                 t(additive)):
        np.testing.assert_allclose(m(t(q), t(k), t(v), attn_mask=mask).numpy(), want, rtol=1e-9, atol=1e-12)
    floats = RNG.standard_normal((4, 7))  # a float mask is added as is, broadcast over batch and heads
    np.testing.assert_allclose(m(t(q), t(k), t(v), floats).numpy(), ref_mha(m, q, k, v, floats)[0], rtol=1e-9)


def test_a_key_padding_mask_hides_the_padded_keys():
    m = f64(nn.MultiHeadAttention(8, 2))
    x = RNG.standard_normal((2, 5, 8))
    keep = np.ones((2, 1, 1, 5), bool)  # [B, 1, 1, Tk]: sample 0 has 3 real tokens
    keep[0, ..., 3:] = False
    out = m(t(x), attn_mask=paddle.to_tensor(keep)).numpy()
    short = m(t(x[:1]), t(x[:1, :3]), t(x[:1, :3])).numpy()
    np.testing.assert_allclose(out[0], short[0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(out[1], m(t(x[1:])).numpy()[0], rtol=1e-9, atol=1e-12)


def test_causal_mask_takes_the_fused_kernel_and_matches_the_composed_path():
    m = f64(nn.MultiHeadAttention(8, 4))
    x = RNG.standard_normal((2, 6, 8))
    want = ref_mha(m, x, x, x, causal(6))[0]
    tril = paddle.to_tensor(np.tril(np.ones((6, 6))).astype(np.int64))
    for mask in (t(causal(6)), tril, nn.Transformer.generate_square_subsequent_mask(None, 6)):
        np.testing.assert_allclose(m(t(x), attn_mask=mask).numpy(), want, rtol=1e-9, atol=1e-12)
    m32 = nn.MultiHeadAttention(8, 4)
    x32 = paddle.to_tensor(x.astype(np.float32))
    fused = m32(x32, attn_mask=tril).numpy()
    m32.need_weights = True
    np.testing.assert_allclose(fused, m32(x32, attn_mask=tril)[0].numpy(), rtol=1e-5, atol=1e-6)


def param_gradcheck(loss_fn, param, eps=1e-6, tol=1e-6, samples=6):
    loss_fn().backward()
    analytic = param.grad.numpy().reshape(-1).copy()
    flat = param.numpy().reshape(-1)
    for i in RNG.choice(flat.size, size=samples, replace=False):
        old = flat[i]
        flat[i] = old + eps
        up = float(loss_fn().numpy())
        flat[i] = old - eps
        down = float(loss_fn().numpy())
        flat[i] = old
        num = (up - down) / (2 * eps)
        assert abs(num - analytic[i]) <= tol * max(1.0, abs(num)), (i, num, analytic[i])


def input_gradcheck(fn, x, eps=1e-6, tol=1e-6, samples=8):
    xt = t(x, grad=True)
    r = RNG.standard_normal(fn(t(x)).shape)
    paddle.sum(fn(xt) * t(r)).backward()
    analytic = xt.grad.numpy().reshape(-1)
    flat = x.reshape(-1)
    for i in RNG.choice(flat.size, size=samples, replace=False):
        old = flat[i]
        flat[i] = old + eps
        up = np.sum(fn(t(x)).numpy() * r)
        flat[i] = old - eps
        down = np.sum(fn(t(x)).numpy() * r)
        flat[i] = old
        num = (up - down) / (2 * eps)
        assert abs(num - analytic[i]) <= tol * max(1.0, abs(num)), (i, num, analytic[i])


@pytest.mark.parametrize("mask", [None, "causal", "random"])
def test_attention_gradients_match_finite_differences(mask):
    m = f64(nn.MultiHeadAttention(6, 2))
    x = RNG.standard_normal((2, 4, 6))
    masks = {None: None, "causal": t(causal(4)), "random": t(RNG.standard_normal((2, 1, 4, 4)))}
    input_gradcheck(lambda v: m(v, attn_mask=masks[mask]), x)
    r = t(RNG.standard_normal((2, 4, 6)))
    for p in (m.q_proj.weight, m.k_proj.bias, m.v_proj.weight, m.out_proj.weight):
        m.clear_gradients()
        param_gradcheck(lambda: paddle.sum(m(t(x), attn_mask=masks[mask]) * r), p)


def test_attention_dropout_applies_in_training_only():
    paddle.seed(3)
    m = nn.MultiHeadAttention(8, 2, dropout=0.5, need_weights=True)
    x = paddle.to_tensor(RNG.standard_normal((1, 6, 8)).astype(np.float32))
    _, w = m(x)
    zeros = (w.numpy() == 0).mean()
    assert 0.2 < zeros < 0.8  # kept weights are scaled by 2
    np.testing.assert_allclose(w.numpy().sum(-1).mean(), 1.0, atol=0.35)
    m.eval()
    _, w = m(x)
    np.testing.assert_allclose(w.numpy().sum(-1), 1.0, rtol=1e-5)


def test_attention_refuses_cache_and_bad_shapes():
    m = nn.MultiHeadAttention(8, 2)
    x = paddle.to_tensor(np.zeros((1, 3, 8), np.float32))
    with pytest.raises(NotImplementedError, match="cache"):
        m(x, cache=nn.MultiHeadAttention.__name__)
    with pytest.raises(ValueError, match="divisible"):
        nn.MultiHeadAttention(10, 3)
    with pytest.raises(ValueError, match=r"query must be \[batch, seq, 8\]"):
        m(paddle.to_tensor(np.zeros((3, 8), np.float32)))
    with pytest.raises(TypeError, match="bool, integer or floating"):
        m(x, attn_mask=np.array([["a"]]))


def test_attention_state_dict_keys_and_param_attrs():
    init = paddle.nn.initializer.Constant(0.5)
    m = nn.MultiHeadAttention(4, 2, weight_attr=paddle.ParamAttr(initializer=init), bias_attr=False)
    assert list(m.state_dict()) == ["q_proj.weight", "k_proj.weight", "v_proj.weight", "out_proj.weight"]
    assert m.q_proj.weight.shape == [4, 4] and np.all(m.out_proj.weight.numpy() == 0.5)


# ---- encoder and decoder layers ----
@pytest.mark.parametrize("normalize_before,act", [(False, "relu"), (True, "gelu")])
def test_encoder_layer_matches_the_reference(normalize_before, act):
    layer = f64(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1, activation=act,
                                           normalize_before=normalize_before)).eval()
    x = RNG.standard_normal((2, 5, 8))
    mask = RNG.standard_normal((2, 2, 5, 5))
    np.testing.assert_allclose(layer(t(x), t(mask)).numpy(), ref_encoder_layer(layer, act, x, mask),
                               rtol=1e-8, atol=1e-10)
    input_gradcheck(lambda v: layer(v, t(mask)), x)


@pytest.mark.parametrize("normalize_before", [False, True])
def test_decoder_layer_matches_the_reference(normalize_before):
    layer = f64(nn.TransformerDecoderLayer(8, 4, 12, dropout=0.0, normalize_before=normalize_before))
    x, mem = RNG.standard_normal((2, 4, 8)), RNG.standard_normal((2, 3, 8))
    mem_keep = RNG.random((2, 1, 4, 3)) > 0.4
    mem_keep[..., 0] = True
    want = ref_decoder_layer(layer, "relu", x, mem, causal(4), np.where(mem_keep, 0.0, -1e9))
    got = layer(t(x), t(mem), tgt_mask=t(causal(4)), memory_mask=paddle.to_tensor(mem_keep.astype(np.int64)))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-8, atol=1e-10)
    input_gradcheck(lambda v: layer(v, t(mem), tgt_mask=t(causal(4))), x)
    input_gradcheck(lambda v: layer(t(x), v), mem.copy())


def test_encoder_stacks_fresh_layers_and_the_final_norm():
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    enc = f64(nn.TransformerEncoder(layer, 3, nn.LayerNorm(8)))
    assert enc.layers[0] is layer
    w = [l.linear1.weight.numpy() for l in enc.layers]
    assert not np.allclose(w[0], w[1]) and not np.allclose(w[1], w[2])
    x = RNG.standard_normal((2, 3, 8))
    want = x
    for l in enc.layers:
        want = ref_encoder_layer(l, "relu", want)
    np.testing.assert_allclose(enc(t(x)).numpy(), ref_norm(want, enc.norm), rtol=1e-8, atol=1e-10)
    keys = list(enc.state_dict())
    assert keys[:4] == ["layers.0.self_attn.q_proj.weight", "layers.0.self_attn.q_proj.bias",
                        "layers.0.self_attn.k_proj.weight", "layers.0.self_attn.k_proj.bias"]
    assert keys[8:16] == ["layers.0.linear1.weight", "layers.0.linear1.bias", "layers.0.linear2.weight",
                          "layers.0.linear2.bias", "layers.0.norm1.weight", "layers.0.norm1.bias",
                          "layers.0.norm2.weight", "layers.0.norm2.bias"]
    assert keys[-2:] == ["norm.weight", "norm.bias"] and len(keys) == 3 * 16 + 2


def test_transformer_matches_encoder_then_decoder_and_paddles_example():
    # Paddle 2.4's nn.Transformer example: masks of random floats.
    enc_input, dec_input = np.random.rand(2, 4, 128), np.random.rand(2, 6, 128)
    enc_mask, dec_mask, cross_mask = np.random.rand(2, 2, 4, 4), np.random.rand(2, 2, 6, 6), np.random.rand(2, 2, 6, 4)
    transformer = nn.Transformer(128, 2, 4, 4, 512)
    f32 = lambda a: paddle.to_tensor(a.astype(np.float32))  # noqa: E731
    output = transformer(f32(enc_input), f32(dec_input), f32(enc_mask), f32(dec_mask), f32(cross_mask))
    assert output.shape == [2, 6, 128]
    keys = list(transformer.state_dict())
    assert len(keys) == 4 * 16 + 2 + 4 * 26 + 2
    assert "decoder.layers.3.cross_attn.out_proj.bias" in keys and keys[-1] == "decoder.norm.bias"
    small = f64(nn.Transformer(8, 2, 2, 1, 16, dropout=0.0, normalize_before=True))
    src, tgt = RNG.standard_normal((2, 5, 8)), RNG.standard_normal((2, 3, 8))
    memory = src
    for l in small.encoder.layers:
        memory = ref_encoder_layer(l, "relu", memory)
    memory = ref_norm(memory, small.encoder.norm)
    want = ref_norm(ref_decoder_layer(small.decoder.layers[0], "relu", tgt, memory, causal(3)), small.decoder.norm)
    mask = small.generate_square_subsequent_mask(3)
    assert mask.dtype == paddle.float32 and mask.shape == [3, 3]
    np.testing.assert_array_equal(mask.numpy(), causal(3).astype(np.float32))
    np.testing.assert_allclose(small(t(src), t(tgt), tgt_mask=mask).numpy(), want, rtol=1e-8, atol=1e-10)


def test_encoder_layer_paddle_example_and_weight_attr_lists():
    enc_input = paddle.to_tensor(np.random.rand(2, 4, 128).astype(np.float32))
    attn_mask = paddle.to_tensor(np.random.rand(2, 2, 4, 4).astype(np.float32))
    encoder_layer = nn.TransformerEncoderLayer(128, 2, 512)
    assert encoder_layer(enc_input, attn_mask).shape == [2, 4, 128]
    const = paddle.nn.initializer.Constant
    layer = nn.TransformerDecoderLayer(4, 2, 8, weight_attr=[const(1.0), const(2.0), const(3.0)],
                                       bias_attr=[None, False, None])
    assert np.all(layer.self_attn.q_proj.weight.numpy() == 1.0)
    assert np.all(layer.cross_attn.v_proj.weight.numpy() == 2.0) and "bias" not in layer.cross_attn.v_proj.state_dict()
    assert np.all(layer.linear2.weight.numpy() == 3.0) and "bias" in layer.linear2.state_dict()
    with pytest.raises(ValueError, match="activation"):
        nn.TransformerEncoderLayer(4, 2, 8, activation="nope")
    with pytest.raises(NotImplementedError, match="cache"):
        layer(paddle.to_tensor(np.zeros((1, 2, 4), np.float32)), paddle.to_tensor(np.zeros((1, 2, 4), np.float32)),
              cache=[])


def test_a_small_transformer_learns_to_copy_a_sequence():
    paddle.seed(0)
    vocab, d = 6, 16
    emb = nn.Embedding(vocab, d)
    model = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 2, 32, dropout=0.0), 2)
    head = nn.Linear(d, vocab)
    params = emb.parameters() + model.parameters() + head.parameters()
    opt = paddle.optimizer.Adam(learning_rate=0.01, parameters=params)
    data = np.random.default_rng(0).integers(0, vocab, size=(16, 5))
    x, y = paddle.to_tensor(data), paddle.to_tensor(data.reshape(-1))
    losses = []
    for _ in range(40):
        logits = head(model(emb(x)))
        loss = nn.functional.cross_entropy(paddle.reshape(logits, [-1, vocab]), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss.numpy()))
    assert losses[-1] < 0.3 * losses[0], losses


# ---- torch.nn with copied weights ----
def copy_mha_to_torch(m, tm):
    import torch
    cat = np.concatenate([m.q_proj.weight.numpy().T, m.k_proj.weight.numpy().T, m.v_proj.weight.numpy().T])
    with torch.no_grad():
        tm.in_proj_weight.copy_(torch.from_numpy(cat))
        tm.in_proj_bias.copy_(torch.from_numpy(np.concatenate([m.q_proj.bias.numpy(), m.k_proj.bias.numpy(),
                                                                m.v_proj.bias.numpy()])))
        tm.out_proj.weight.copy_(torch.from_numpy(m.out_proj.weight.numpy().T.copy()))
        tm.out_proj.bias.copy_(torch.from_numpy(m.out_proj.bias.numpy()))


def test_matches_torch_multihead_attention_and_encoder_layer():
    torch = pytest.importorskip("torch")
    m = nn.MultiHeadAttention(16, 4, need_weights=True)
    tm = torch.nn.MultiheadAttention(16, 4, batch_first=True)
    copy_mha_to_torch(m, tm)
    x = RNG.standard_normal((2, 5, 16)).astype(np.float32)
    keep = np.tril(np.ones((5, 5), bool))
    out, w = m(paddle.to_tensor(x), attn_mask=paddle.to_tensor(keep.astype(np.int64)))
    tx = torch.from_numpy(x)
    t_out, t_w = tm(tx, tx, tx, attn_mask=torch.from_numpy(~keep), average_attn_weights=False)
    np.testing.assert_allclose(out.numpy(), t_out.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(w.numpy(), t_w.detach().numpy(), rtol=1e-4, atol=1e-6)

    layer = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, normalize_before=True)
    tl = torch.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True, norm_first=True)
    copy_mha_to_torch(layer.self_attn, tl.self_attn)
    with torch.no_grad():
        for mine, theirs in ((layer.linear1, tl.linear1), (layer.linear2, tl.linear2)):
            theirs.weight.copy_(torch.from_numpy(mine.weight.numpy().T.copy()))
            theirs.bias.copy_(torch.from_numpy(mine.bias.numpy()))
    np.testing.assert_allclose(layer(paddle.to_tensor(x)).numpy(), tl(tx).detach().numpy(), rtol=1e-4, atol=1e-5)

"""The transformer layers, attention, ResNet and GPT from Python: values against NumPy
references, gradients, Paddle's state_dict keys, and the errors for what crew leaves out."""
import os

import numpy as np
import pytest

import crew
import crew.distributed as dist
import crew.nn.functional as F
from crew import nn
from crew.vision import models


def param(a):
    return crew.to_tensor(np.asarray(a, dtype=np.float32), stop_gradient=False)


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_layer_norm_matches_numpy_with_its_gradients():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 8)).astype(np.float32)
    g = rng.standard_normal((2, 3, 8)).astype(np.float32)
    ln = nn.LayerNorm(8)
    assert [k for k, _ in ln.named_parameters()] == ["weight", "bias"]
    w, b = rng.standard_normal(8).astype(np.float32), rng.standard_normal(8).astype(np.float32)
    ln.set_state_dict({"weight": w, "bias": b})
    xt = param(x)
    y = ln(xt)
    xhat = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(y.numpy(), xhat * w + b, atol=1e-5)
    (y * crew.to_tensor(g)).sum().backward()
    np.testing.assert_allclose(ln.weight.grad.numpy(), (xhat * g).sum((0, 1)), atol=1e-4)
    np.testing.assert_allclose(ln.bias.grad.numpy(), g.sum((0, 1)), atol=1e-4)
    assert xt.grad.shape == [2, 3, 8]
    # functional, over the two trailing axes, without weight and bias
    y2 = F.layer_norm(crew.to_tensor(x), [3, 8], epsilon=1e-5)
    flat = x.reshape(2, -1)
    ref = (flat - flat.mean(1, keepdims=True)) / np.sqrt(flat.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(y2.numpy(), ref.reshape(x.shape), atol=1e-5)
    with pytest.raises(ValueError, match="LayerNorm"):
        nn.LayerNorm([3, 8])


def test_embedding_looks_up_rows_and_skips_padding_in_backward():
    emb = nn.Embedding(5, 3, padding_idx=0)
    w = emb.weight.numpy()
    ids = crew.to_tensor(np.array([[1, 2], [0, 1]], dtype=np.int64))
    y = emb(ids)
    ref = w[[[1, 2], [0, 1]]].copy()
    ref[1, 0] = 0
    np.testing.assert_allclose(y.numpy(), ref)
    y.sum().backward()
    np.testing.assert_allclose(emb.weight.grad.numpy()[:, 0], [0, 2, 1, 0, 0])
    # padding_idx=-1 is Paddle's V - 1; None is no padding
    table = param(np.arange(15.0).reshape(5, 3))
    four = crew.to_tensor(np.array([4], dtype=np.int64))
    np.testing.assert_allclose(F.embedding(four, table, padding_idx=-1).numpy(), [[0, 0, 0]])
    np.testing.assert_allclose(F.embedding(four, table).numpy(), [[12, 13, 14]])
    with pytest.raises(ValueError, match="padding_idx 5"):
        nn.Embedding(5, 3, padding_idx=5)


def test_adaptive_avg_pool2d_bins():
    x = np.random.default_rng(1).standard_normal((1, 2, 5, 7)).astype(np.float32)
    ref = np.zeros((1, 2, 2, 3), np.float32)
    for i in range(2):
        for j in range(3):
            r0, r1 = (i * 5) // 2, -((-(i + 1) * 5) // 2)
            c0, c1 = (j * 7) // 3, -((-(j + 1) * 7) // 3)
            ref[:, :, i, j] = x[:, :, r0:r1, c0:c1].mean((2, 3))
    np.testing.assert_allclose(nn.AdaptiveAvgPool2D((2, 3))(crew.to_tensor(x)).numpy(), ref, atol=1e-6)
    np.testing.assert_allclose(F.adaptive_avg_pool2d(crew.to_tensor(x), 1).numpy(),
                               x.mean((2, 3), keepdims=True), atol=1e-6)


def attention_ref(q, k, v, causal):
    qh, kh, vh = (a.transpose(0, 2, 1, 3) for a in (q, k, v))  # [B, H, T, D]
    s = qh @ kh.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    if causal:
        t, tk = s.shape[-2:]
        s = np.where(np.tril(np.ones((t, tk), bool)), s, -np.inf)
    p = softmax(s)
    return (p @ vh).transpose(0, 2, 1, 3), p


@pytest.mark.parametrize("causal", [False, True])
def test_scaled_dot_product_attention_in_paddles_layout(causal):
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((2, 5, 3, 4)).astype(np.float32) for _ in range(3))  # [B, T, H, D]
    g = rng.standard_normal((2, 5, 3, 4)).astype(np.float32)
    qt, kt, vt = param(q), param(k), param(v)
    y = F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)
    ref, p = attention_ref(q, k, v, causal)
    np.testing.assert_allclose(y.numpy(), ref, atol=1e-5)
    (y * crew.to_tensor(g)).sum().backward()
    dv = (p.transpose(0, 1, 3, 2) @ g.transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3)
    np.testing.assert_allclose(vt.grad.numpy(), dv, atol=1e-4)
    assert qt.grad.shape == [2, 5, 3, 4] and np.isfinite(kt.grad.numpy()).all()


def test_attention_rejects_a_mask_and_dropout():
    q = crew.to_tensor(np.ones((1, 2, 1, 4), np.float32))
    with pytest.raises(ValueError, match="attn_mask"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=q)
    with pytest.raises(ValueError, match="dropout_p"):
        F.scaled_dot_product_attention(q, q, q, dropout_p=0.1)
    # no dropout outside training, so Paddle's eval call works
    assert F.scaled_dot_product_attention(q, q, q, dropout_p=0.1, training=False).shape == [1, 2, 1, 4]


def test_matmul_broadcasts_and_cross_entropy_takes_sequences():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 3, 4, 5)).astype(np.float32), rng.standard_normal((6, 5)).astype(np.float32)
    np.testing.assert_allclose(crew.matmul(crew.to_tensor(a), crew.to_tensor(b), transpose_y=True).numpy(),
                               a @ b.T, atol=1e-5)
    logits = rng.standard_normal((2, 3, 7)).astype(np.float32)
    labels = np.array([[0, 6, 2], [3, 3, 1]], dtype=np.int64)
    loss = F.cross_entropy(crew.to_tensor(logits), crew.to_tensor(labels))
    logp = np.log(softmax(logits))
    ref = -np.take_along_axis(logp, labels[..., None], -1).mean()
    assert loss.shape == [1]
    np.testing.assert_allclose(loss.item(), ref, rtol=1e-5)


def test_resnet18_has_paddles_keys_and_shapes():
    net = models.resnet18(num_classes=10)
    assert sum(int(np.prod(p.shape)) for p in net.parameters()) == 11_181_642
    sd = net.state_dict()
    assert "layer2.0.downsample.0.weight" in sd and "layer2.0.downsample.1._mean" in sd
    assert sd["fc.weight"].shape == [512, 10] and sd["conv1.weight"].shape == [64, 3, 7, 7]
    net.eval()
    x = crew.to_tensor(np.random.default_rng(4).standard_normal((2, 3, 32, 32)).astype(np.float32))
    assert net(x).shape == [2, 10]
    assert not net.training
    assert isinstance(models.ResNet(models.BasicBlock, 34, num_classes=10), nn.Layer)
    with pytest.raises(ValueError, match="depth 18 or 34"):
        models.ResNet(models.BasicBlock, 50)
    with pytest.raises(ValueError, match="pretrained"):
        models.resnet18(pretrained=True)


def test_resnet_trains_a_step():
    net = models.resnet18(num_classes=4)
    opt = crew.optimizer.Momentum(learning_rate=0.01, parameters=net.parameters())
    x = crew.to_tensor(np.random.default_rng(5).standard_normal((2, 3, 16, 16)).astype(np.float32))
    loss = F.cross_entropy(net(x), crew.to_tensor(np.array([1, 3], dtype=np.int64)))
    loss.backward()
    assert net.state_dict()["layer1.0.conv1.weight"].grad is not None
    before = net.state_dict()["fc.weight"].numpy().copy()
    opt.step()
    assert not np.array_equal(before, net.state_dict()["fc.weight"].numpy())


def small_gpt():
    return crew.text.GPT(vocab_size=32, block_size=16, n_layer=2, n_head=2, n_embd=32)


def test_gpt_keys_and_shapes():
    gpt = small_gpt()
    sd = gpt.state_dict()
    assert list(sd)[:3] == ["wte.weight", "wpe.weight", "h.0.ln_1.weight"]
    assert sd["h.0.attn.c_attn.weight"].shape == [32, 96]
    assert sd["h.1.mlp.c_fc.weight"].shape == [32, 128] and "ln_f.bias" in sd
    assert gpt.config["n_head"] == 2
    idx = crew.to_tensor(np.zeros((3, 10), dtype=np.int64))
    assert gpt(idx).shape == [3, 10, 32]
    default = crew.text.GPT()
    assert default.state_dict()["h.3.attn.c_attn.weight"].shape == [256, 768]


def test_gpt_optimizer_steps_lower_the_loss():
    crew.seed(7)
    gpt = small_gpt()
    opt = crew.optimizer.AdamW(learning_rate=3e-3, parameters=gpt.parameters(), weight_decay=0.0)
    tokens = np.random.default_rng(6).integers(0, 32, size=(4, 13))
    x, y = crew.to_tensor(tokens[:, :-1]), crew.to_tensor(tokens[:, 1:])
    losses = []
    for _ in range(8):
        loss = F.cross_entropy(gpt(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(loss.item())
    assert losses[-1] < losses[0] - 0.3, losses


def test_gpt_generate_samples_tokens_and_keeps_the_mode():
    gpt = small_gpt()
    crew.seed(11)
    a = gpt.generate([1, 2, 3], 20, temperature=0.8)
    crew.seed(11)
    b = gpt.generate(crew.to_tensor(np.array([1, 2, 3], dtype=np.int64)), 20, temperature=0.8)
    assert a == b and len(a) == 20 and all(0 <= t < 32 for t in a)
    assert gpt.training and gpt._impl.training
    with pytest.raises(ValueError, match="temperature"):
        gpt.generate([1], 2, temperature=0.0)


def _gpt_grads(rank, world):
    """One backward of the mean loss on this rank's half of a batch (all of it for world 1)."""
    crew.seed(5)  # the same initial weights in every process
    gpt = small_gpt()
    model = crew.DataParallel(gpt) if world > 1 else gpt
    tokens = np.random.default_rng(8).integers(0, 32, size=(4, 9))
    rows = slice(rank * 4 // world, (rank + 1) * 4 // world)
    x, y = crew.to_tensor(tokens[rows, :-1]), crew.to_tensor(tokens[rows, 1:])
    F.cross_entropy(model(x), y).backward()
    return {name: p.grad.numpy().copy() for name, p in gpt.named_parameters()}


def two_rank_gpt(out_dir):
    dist.init_parallel_env()
    np.savez(os.path.join(out_dir, f"rank{dist.get_rank()}.npz"), **_gpt_grads(dist.get_rank(), 2))


def test_gpt_under_data_parallel_averages_gradients(tmp_path):
    dist.spawn(two_rank_gpt, args=(str(tmp_path),), nprocs=2)
    one = _gpt_grads(0, 1)
    for rank in range(2):
        mine = np.load(tmp_path / f"rank{rank}.npz")
        assert sorted(mine.files) == sorted(one)
        for key in ("wte.weight", "h.0.attn.c_attn.weight", "h.1.mlp.c_proj.bias", "ln_f.weight"):
            np.testing.assert_allclose(mine[key], one[key], rtol=1e-4, atol=1e-6, err_msg=key)

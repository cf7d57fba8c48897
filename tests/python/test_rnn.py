"""Recurrent layers (crew.nn.rnn): SimpleRNN, LSTM and GRU against a float64 NumPy
reference of Paddle's math (outputs, final states; initial states, sequence_length, both
directions, one and two layers), the oneDNN path's gradients against the composed float64
path's, finite-difference gradchecks, Paddle's shapes, parameter names and state_dict keys,
the cells and the RNN/BiRNN wrappers, a cross-check against torch where it is installed, and
a tiny LSTM text classifier whose loss falls."""
import numpy as np
import pytest

import crew as paddle
from crew import nn


def sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def np_cell(mode, x, h, c, w_ih, w_hh, b_ih, b_hh):
    gx = x @ w_ih.T + b_ih
    gh = h @ w_hh.T + b_hh
    if mode == "LSTM":
        i, f, g, o = np.split(gx + gh, 4, axis=1)
        c = sig(f) * c + sig(i) * np.tanh(g)
        return sig(o) * np.tanh(c), c
    if mode == "GRU":
        xr, xz, xc = np.split(gx, 3, axis=1)
        hr, hz, hc = np.split(gh, 3, axis=1)
        r, z = sig(xr + hr), sig(xz + hz)
        cand = np.tanh(xc + r * hc)
        return (h - cand) * z + cand, c
    pre = gx + gh
    return (np.tanh(pre) if mode == "tanh" else np.maximum(pre, 0.0)), c


def np_rnn(mode, x, params, layers, dirs, h0, c0, lengths=None):
    """Paddle's nn.LSTM/GRU/SimpleRNN on batch-major x [N, T, I]: a sequence's state stops at
    its last step (the reverse direction starts there) and its outputs beyond are zero."""
    n, t_len, _ = x.shape
    lengths = np.full(n, t_len) if lengths is None else np.asarray(lengths)
    inp, hs, cs = x, [], []
    for layer in range(layers):
        outs = []
        for d in range(dirs):
            sfx = "_reverse" if d else ""
            w = [params[f"{p}_l{layer}{sfx}"] for p in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
            h = h0[layer * dirs + d].copy()
            c = c0[layer * dirs + d].copy()
            out = np.zeros((n, t_len, h.shape[1]))
            for t in (reversed(range(t_len)) if d else range(t_len)):
                hn, cn = np_cell(mode, inp[:, t], h, c, *w)
                m = (t < lengths)[:, None]
                h, c = np.where(m, hn, h), np.where(m, cn, c)
                out[:, t] = np.where(m, hn, 0.0)
            outs.append(out)
            hs.append(h)
            cs.append(c)
        inp = np.concatenate(outs, -1)
    return inp, np.stack(hs), np.stack(cs)


MODES = ["LSTM", "GRU", "tanh", "relu"]


def make(mode, i, h, layers=1, direction="forward", **kw):
    if mode == "LSTM":
        return nn.LSTM(i, h, layers, direction, **kw)
    if mode == "GRU":
        return nn.GRU(i, h, layers, direction, **kw)
    return nn.SimpleRNN(i, h, layers, direction, activation=mode, **kw)


def params_of(net):
    return {k: v.numpy().astype(np.float64) for k, v in net.state_dict().items()}


def run(net, mode, x, h0, c0, lengths=None, time_major=False, dtype=np.float32):
    xin = x.transpose(1, 0, 2) if time_major else x
    xt = paddle.to_tensor(xin.astype(dtype), stop_gradient=False)
    h0t = paddle.to_tensor(h0.astype(dtype), stop_gradient=False)
    c0t = paddle.to_tensor(c0.astype(dtype), stop_gradient=False)
    states = (h0t, c0t) if mode == "LSTM" else h0t
    seq = None if lengths is None else paddle.to_tensor(np.asarray(lengths, np.int64))
    y, st = net(xt, states, seq)
    if time_major:
        y = paddle.transpose(y, [1, 0, 2])
    h, c = st if mode == "LSTM" else (st, None)
    return y, h, c, (xt, h0t, c0t)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layers,direction", [(1, "forward"), (1, "bidirect"), (2, "forward"),
                                              (2, "bidirectional")])
@pytest.mark.parametrize("lengths", [None, [5, 2, 4]])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matches_numpy_reference(mode, layers, direction, lengths, dtype):
    paddle.seed(1)
    time_major = layers == 2 and lengths is None
    net = make(mode, 4, 3, layers, direction, time_major=time_major)
    if dtype == np.float64:
        net.to(dtype="float64")
    dirs = 2 if direction != "forward" else 1
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (3, 5, 4))
    h0 = rng.uniform(-0.5, 0.5, (layers * dirs, 3, 3))
    c0 = rng.uniform(-0.5, 0.5, (layers * dirs, 3, 3))
    y, h, c, _ = run(net, mode, x, h0, c0, lengths, time_major, dtype)
    ry, rh, rc = np_rnn(mode, x, params_of(net), layers, dirs, h0, c0, lengths)
    tol = 1e-5 if dtype == np.float32 else 1e-10
    assert y.shape == [3, 5, 3 * dirs]
    np.testing.assert_allclose(y.numpy(), ry, atol=tol, rtol=tol)
    np.testing.assert_allclose(h.numpy(), rh, atol=tol, rtol=tol)
    if mode == "LSTM":
        np.testing.assert_allclose(c.numpy(), rc, atol=tol, rtol=tol)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("direction", ["forward", "bidirect"])
def test_onednn_gradients_match_composed_float64(mode, direction):
    paddle.seed(2)
    fused = make(mode, 4, 3, 2, direction)
    ref = make(mode, 4, 3, 2, direction)
    ref.set_state_dict(fused.state_dict())
    ref.to(dtype="float64")
    dirs = 2 if direction == "bidirect" else 1
    rng = np.random.default_rng(4)
    x = rng.uniform(-1, 1, (2, 6, 4))
    h0 = rng.uniform(-0.5, 0.5, (2 * dirs, 2, 3))
    c0 = rng.uniform(-0.5, 0.5, (2 * dirs, 2, 3))
    ry = rng.standard_normal((2, 6, 3 * dirs))
    rh = rng.standard_normal((2 * dirs, 2, 3))
    grads = []
    for net, dt in ((fused, np.float32), (ref, np.float64)):
        y, h, c, ins = run(net, mode, x, h0, c0, dtype=dt)
        loss = paddle.sum(y * paddle.to_tensor(ry.astype(dt))) + paddle.sum(h * paddle.to_tensor(rh.astype(dt)))
        if c is not None:
            loss = loss + paddle.sum(c * paddle.to_tensor(rh.astype(dt)))
        loss.backward()
        g = [t.grad.numpy() for t in ins[:2]] + [p.grad.numpy() for p in net.parameters()]
        if mode == "LSTM":
            g.append(ins[2].grad.numpy())
        grads.append(g)
    assert len(grads[0]) == len(grads[1])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("mode", MODES)
def test_gradcheck_float64(mode):
    """Finite differences on the composed float64 path, bidirectional, with padding."""
    paddle.seed(5)
    net = make(mode, 3, 2, 1, "bidirect")
    net.to(dtype="float64")
    rng = np.random.default_rng(6)
    x = rng.uniform(-1, 1, (2, 4, 3))
    r = rng.standard_normal((2, 4, 4))
    lengths = paddle.to_tensor(np.array([4, 2], np.int64))

    def f(xv, grad):
        xt = paddle.to_tensor(xv, stop_gradient=not grad)
        y, _ = net(xt, None, lengths)
        return xt, paddle.sum(y * paddle.to_tensor(r))

    xt, loss = f(x, True)
    loss.backward()
    analytic = xt.grad.numpy()
    eps = 1e-6
    for idx in [(0, 0, 0), (0, 3, 2), (1, 1, 1), (1, 3, 0), (0, 2, 1)]:
        up, down = x.copy(), x.copy()
        up[idx] += eps
        down[idx] -= eps
        num = (f(up, False)[1].item() - f(down, False)[1].item()) / (2 * eps)
        assert abs(num - analytic[idx]) < 1e-6 + 1e-5 * abs(num), (idx, num, analytic[idx])
    assert np.all(analytic[1, 2:] == 0)  # padded steps get no gradient


def test_shapes_and_return_values():
    x = paddle.to_tensor(np.random.rand(4, 7, 5).astype(np.float32))
    y, (h, c) = nn.LSTM(5, 6, num_layers=2, direction="bidirect")(x)
    assert y.shape == [4, 7, 12] and h.shape == [4, 4, 6] and c.shape == [4, 4, 6]
    y, h = nn.GRU(5, 6)(x)
    assert y.shape == [4, 7, 6] and h.shape == [1, 4, 6]
    y, h = nn.SimpleRNN(5, 6, num_layers=3, activation="relu")(x)
    assert y.shape == [4, 7, 6] and h.shape == [3, 4, 6]
    y, h = nn.GRU(5, 6, time_major=True)(paddle.transpose(x, [1, 0, 2]))
    assert y.shape == [7, 4, 6] and h.shape == [1, 4, 6]


def test_parameter_names_and_state_dict_keys():
    net = nn.LSTM(3, 4, num_layers=2, direction="bidirect")
    names = [n for n, _ in net.named_parameters()]
    want = []
    for layer in range(2):
        for sfx in ("", "_reverse"):
            want += [f"{p}_l{layer}{sfx}" for p in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    assert names == want
    assert len(net.parameters()) == 16
    assert net.weight_ih_l0.shape == [16, 3] and net.weight_hh_l0.shape == [16, 4]
    assert net.weight_ih_l1_reverse.shape == [16, 8] and net.bias_ih_l0.shape == [16]
    keys = list(net.state_dict())
    # Paddle's state_dict: the flat names, then the same tensors under the cells.
    assert keys[:16] == want
    assert "0.cell_fw.weight_ih" in keys and "1.cell_bw.bias_hh" in keys and len(keys) == 32
    assert nn.GRU(3, 5).weight_ih_l0.shape == [15, 3]
    assert nn.SimpleRNN(3, 5).weight_hh_l0.shape == [5, 5]
    assert "0.cell.weight_ih" in nn.GRU(3, 5).state_dict()
    # Weights drawn from U(-1/sqrt(H), 1/sqrt(H)).
    w = nn.LSTM(8, 16).weight_hh_l0.numpy()
    assert np.abs(w).max() <= 0.25 and np.abs(w).max() > 0.2
    # A state_dict loads back (both key sets), and without biases there are no bias names.
    other = nn.LSTM(3, 4, num_layers=2, direction="bidirect")
    other.set_state_dict(net.state_dict())
    np.testing.assert_array_equal(other.weight_hh_l1_reverse.numpy(), net.weight_hh_l1_reverse.numpy())
    nb = nn.GRU(3, 4, bias_ih_attr=False, bias_hh_attr=False)
    assert [n for n, _ in nb.named_parameters()] == ["weight_ih_l0", "weight_hh_l0"]
    y, h = nb(paddle.to_tensor(np.random.rand(2, 3, 3).astype(np.float32)))
    assert y.shape == [2, 3, 4]


def test_bad_arguments():
    with pytest.raises(ValueError, match="direction"):
        nn.LSTM(3, 4, direction="backward")
    with pytest.raises(ValueError, match="activation"):
        nn.SimpleRNN(3, 4, activation="sigmoid")
    with pytest.raises(ValueError, match="input_size"):
        nn.LSTM(3, 4)(paddle.to_tensor(np.zeros((2, 5, 6), np.float32)))
    with pytest.raises(ValueError, match="initial state"):
        nn.GRU(3, 4)(paddle.to_tensor(np.zeros((2, 5, 3), np.float32)),
                     paddle.to_tensor(np.zeros((2, 2, 4), np.float32)))


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "tanh"])
def test_cells_match_reference(mode):
    paddle.seed(7)
    rng = np.random.default_rng(8)
    x = rng.uniform(-1, 1, (3, 4)).astype(np.float32)
    h = rng.uniform(-1, 1, (3, 5)).astype(np.float32)
    c = rng.uniform(-1, 1, (3, 5)).astype(np.float32)
    if mode == "LSTM":
        cell = nn.LSTMCell(4, 5)
        out, (h1, c1) = cell(paddle.to_tensor(x), (paddle.to_tensor(h), paddle.to_tensor(c)))
    elif mode == "GRU":
        cell = nn.GRUCell(4, 5)
        out, h1 = cell(paddle.to_tensor(x), paddle.to_tensor(h))
    else:
        cell = nn.SimpleRNNCell(4, 5)
        out, h1 = cell(paddle.to_tensor(x), paddle.to_tensor(h))
    p = {k: v.numpy().astype(np.float64) for k, v in cell.state_dict().items()}
    rh, rc = np_cell(mode, x, h, c, p["weight_ih"], p["weight_hh"], p["bias_ih"], p["bias_hh"])
    np.testing.assert_allclose(out.numpy(), rh, atol=1e-5)
    np.testing.assert_allclose(h1.numpy(), rh, atol=1e-5)
    if mode == "LSTM":
        np.testing.assert_allclose(c1.numpy(), rc, atol=1e-5)
    # Without states the cell starts from zeros.
    out0, _ = cell(paddle.to_tensor(x))
    assert out0.shape == [3, 5]


def test_rnn_and_birnn_wrappers_match_the_layers():
    paddle.seed(9)
    x = paddle.to_tensor(np.random.default_rng(1).uniform(-1, 1, (2, 5, 3)).astype(np.float32))
    lstm = nn.LSTM(3, 4, direction="bidirect")
    bi = nn.BiRNN(lstm[0].cell_fw, lstm[0].cell_bw)
    y1, (h1, c1) = lstm(x)
    y2, ((hf, cf), (hb, cb)) = bi(x)
    np.testing.assert_allclose(y1.numpy(), y2.numpy(), atol=1e-5)
    np.testing.assert_allclose(h1.numpy()[1], hb.numpy(), atol=1e-5)
    np.testing.assert_allclose(c1.numpy()[0], cf.numpy(), atol=1e-5)
    gru = nn.GRU(3, 4)
    rnn = nn.RNN(gru[0].cell, is_reverse=False)
    y1, h1 = gru(x)
    y2, h2 = rnn(x)
    np.testing.assert_allclose(y1.numpy(), y2.numpy(), atol=1e-5)
    np.testing.assert_allclose(h1.numpy()[0], h2.numpy(), atol=1e-5)
    # Paddle's RNN wrapper keeps the state past a sequence's end; the reverse one starts there.
    seq = paddle.to_tensor(np.array([5, 2], np.int64))
    _, h_rev = nn.RNN(gru[0].cell, is_reverse=True)(x, None, seq)
    _, h_short = nn.RNN(gru[0].cell, is_reverse=True)(paddle.slice(x, [0, 1], [1, 0], [2, 2]))
    np.testing.assert_allclose(h_rev.numpy()[1], h_short.numpy()[0], atol=1e-5)


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_matches_torch(mode):
    torch = pytest.importorskip("torch")
    paddle.seed(10)
    net = make(mode, 4, 5, 2, "bidirect")
    tnet = (torch.nn.LSTM if mode == "LSTM" else torch.nn.GRU)(4, 5, 2, batch_first=True, bidirectional=True)
    with torch.no_grad():
        for name, p in tnet.named_parameters():
            p.copy_(torch.from_numpy(getattr(net, name).numpy()))
    x = np.random.default_rng(11).uniform(-1, 1, (3, 6, 4)).astype(np.float32)
    xt = paddle.to_tensor(x, stop_gradient=False)
    y, st = net(xt)
    tx = torch.from_numpy(x).requires_grad_()
    ty, tst = tnet(tx)
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), atol=1e-5)
    h, th = (st[0], tst[0]) if mode == "LSTM" else (st, tst)
    np.testing.assert_allclose(h.numpy(), th.detach().numpy(), atol=1e-5)
    paddle.sum(y * y).backward()
    (ty * ty).sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), tx.grad.numpy(), atol=1e-4)
    for name, p in tnet.named_parameters():
        np.testing.assert_allclose(getattr(net, name).grad.numpy(), p.grad.numpy(), atol=1e-4, err_msg=name)


class TextClassifier(nn.Layer):
    def __init__(self, vocab, classes, layers=1, dropout=0.0):
        super().__init__()
        self.embedding = nn.Embedding(vocab, 16)
        self.lstm = nn.LSTM(16, 32, num_layers=layers, direction="bidirect", dropout=dropout)
        self.fc = nn.Linear(64, classes)

    def forward(self, ids):
        _, (h, _) = self.lstm(self.embedding(ids))
        return self.fc(paddle.concat([h[-2], h[-1]], -1))  # the last layer's two directions


def test_lstm_text_classifier_learns():
    """Class = whether token 1 appears before token 2: needs the order, not a bag of words."""
    paddle.seed(12)
    rng = np.random.default_rng(13)
    ids = rng.integers(3, 20, (64, 10))
    labels = np.zeros(64, np.int64)
    for i in range(64):
        a, b = rng.choice(10, 2, replace=False)
        ids[i, a], ids[i, b] = 1, 2
        labels[i] = int(a < b)
    model = TextClassifier(20, 2)
    opt = paddle.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
    loss_fn = nn.CrossEntropyLoss()
    x, y = paddle.to_tensor(ids), paddle.to_tensor(labels)
    losses = []
    for _ in range(60):
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0], losses


def _classifier_data(batch):
    rng = np.random.default_rng(14)
    return rng.integers(0, 20, (batch, 7)), rng.integers(0, 2, batch)


def _classifier_step(ids, labels):
    """One SGD step of a dropout-free classifier from a fixed start; its parameters after."""
    paddle.seed(15)
    model = TextClassifier(20, 2, layers=2)
    return model, paddle.optimizer.SGD(learning_rate=0.5, parameters=model.parameters())


def lstm_data_parallel(out_dir):
    """Rank r trains on half r of the batch under DataParallel (spawned by the test below)."""
    import crew.distributed as dist
    dist.init_parallel_env()
    rank = dist.get_rank()
    ids, labels = _classifier_data(8)
    model, opt = _classifier_step(ids, labels)
    dp = paddle.DataParallel(model)
    part = slice(4 * rank, 4 * rank + 4)
    loss = nn.CrossEntropyLoss()(dp(paddle.to_tensor(ids[part])), paddle.to_tensor(labels[part]))
    loss.backward()
    opt.step()
    np.savez(f"{out_dir}/rank{rank}.npz", **{k: v.numpy() for k, v in model.named_parameters()})


def test_lstm_classifier_data_parallel_two_ranks_equal_one(tmp_path):
    """2 ranks x B/2 under DataParallel take the step 1 process takes with B (within 1e-5)."""
    import crew.distributed as dist
    dist.spawn(lstm_data_parallel, args=(str(tmp_path),), nprocs=2)
    ids, labels = _classifier_data(8)
    model, opt = _classifier_step(ids, labels)
    before = model.lstm.weight_hh_l0.numpy().copy()
    nn.CrossEntropyLoss()(model(paddle.to_tensor(ids)), paddle.to_tensor(labels)).backward()
    opt.step()
    assert np.abs(model.lstm.weight_hh_l0.numpy() - before).max() > 1e-4  # the step moved it
    for rank in range(2):
        got = np.load(tmp_path / f"rank{rank}.npz")
        for name, p in model.named_parameters():
            np.testing.assert_allclose(got[name], p.numpy(), atol=1e-5, err_msg=f"rank {rank} {name}")

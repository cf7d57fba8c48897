"""crew.amp (Paddle's paddle.amp): auto_cast's white and black lists, gradients' dtypes,
GradScaler's dynamic scale rule, its state_dict, the found-inf flag agreed over 2 ranks,
decorate's level O2 with float32 master weights, and the seed's MyNet trained under auto_cast."""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import crew
import crew.nn.functional as F

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "examples" / "python"))


def t(a, stop_gradient=True):
    return crew.to_tensor(np.asarray(a, dtype=np.float32), stop_gradient=stop_gradient)


def name(x):
    return str(x.dtype).split(".")[-1]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_white_list_ops_run_low_and_black_list_ops_float32(dtype):
    rng = np.random.default_rng(0)
    conv = crew.nn.Conv2D(1, 4, 3)
    lin = crew.nn.Linear(4 * 3 * 3, 5)
    x = t(rng.random((2, 1, 8, 8)))
    with crew.amp.auto_cast(dtype=dtype):
        y = conv(x)
        assert name(y) == dtype
        assert name(F.relu(y)) == dtype
        p = crew.nn.MaxPool2D(2)(y)  # gray, with a 16-bit kernel: keeps the dtype
        assert name(p) == dtype
        assert name(F.dropout(p, 0.5)) == "float32"  # no 16-bit kernel: float32
        logits = lin(crew.flatten(p, 1))
        assert name(logits) == dtype
        assert name(crew.matmul(t(rng.random((2, 3))), t(rng.random((3, 2))))) == dtype
        assert name(F.softmax(logits)) == "float32"
        assert name(F.cross_entropy(logits, crew.to_tensor(np.array([0, 4], dtype=np.int64)))) == "float32"
        assert name(F.layer_norm(logits, 5)) == "float32"
        assert name(crew.mean(logits)) == "float32"
        assert name(logits + t(np.ones((2, 5)))) == "float32"  # mixed operands promote
    assert name(lin(crew.flatten(p.astype("float32"), 1))) == "float32"  # off again outside


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_attention_keeps_its_operands_dtype_at_o1_and_runs_low_at_o2(dtype):
    q = t(np.random.default_rng(5).random((2, 5, 2, 4)) - 0.5)
    q16 = q.astype(dtype)
    with crew.amp.auto_cast(dtype=dtype):
        assert name(F.scaled_dot_product_attention(q, q, q)) == "float32"
        out = F.scaled_dot_product_attention(q16, q16, q16, is_causal=True)
        assert name(out) == dtype
    with crew.amp.auto_cast(dtype=dtype, level="O2"):
        assert name(F.scaled_dot_product_attention(q, q, q)) == dtype
    q32 = q16.astype("float32")
    ref = F.scaled_dot_product_attention(q32, q32, q32, is_causal=True).numpy()
    np.testing.assert_allclose(out.astype("float32").numpy(), ref, atol=2e-2 if dtype == "bfloat16" else 4e-3)


def test_float32_parameters_get_float32_gradients():
    lin = crew.nn.Linear(6, 3)
    x = t(np.random.default_rng(1).random((4, 6)))
    with crew.amp.auto_cast(dtype="bfloat16"):
        loss = F.cross_entropy(lin(x), crew.to_tensor(np.array([0, 1, 2, 0], dtype=np.int64)))
    loss.backward()
    assert name(lin.weight.grad) == "float32" and name(lin.bias.grad) == "float32"


def test_custom_lists_enable_nesting_and_decorator():
    x, w = t(np.ones((2, 3))), t(np.ones((3, 2)))
    with crew.amp.auto_cast(dtype="bfloat16", custom_black_list={"matmul"}, custom_white_list=["softmax"]):
        assert name(crew.matmul(x, w)) == "float32"
        assert name(F.softmax(x)) == "bfloat16"
    with crew.amp.auto_cast(dtype="bfloat16"):
        with crew.amp.auto_cast(enable=False):
            assert name(crew.matmul(x, w)) == "float32"
        assert name(crew.matmul(x, w)) == "bfloat16"

    @crew.amp.auto_cast(dtype="float16")
    def f():
        return crew.matmul(x, w)
    assert name(f()) == "float16"
    assert name(crew.matmul(x, w)) == "float32"


def test_bad_arguments():
    with pytest.raises(ValueError):
        crew.amp.auto_cast(custom_white_list={"linear"}, custom_black_list={"linear"})
    with pytest.raises(ValueError):
        crew.amp.auto_cast(dtype="float32")
    with pytest.raises(ValueError):
        crew.amp.auto_cast(level="O3")
    with pytest.raises(ValueError):
        crew.amp.GradScaler(incr_ratio=0.5)
    assert crew.amp.is_bfloat16_supported() and crew.amp.is_float16_supported()


def _one_param_step(scaler, opt, w, inject_inf):
    loss = crew.sum(w * 3.0)
    scaler.scale(loss).backward()
    if inject_inf:
        w.grad.numpy()[1] = np.inf  # numpy() shares the gradient's memory
    before = w.numpy().copy()
    scaler.step(opt)
    scaler.update()
    opt.clear_grad()
    return before, w.numpy().copy()


def test_grad_scaler_scale_sequence_on_injected_infs():
    w = t(np.ones(3), stop_gradient=False)
    opt = crew.optimizer.SGD(learning_rate=0.01, parameters=[w])
    scaler = crew.amp.GradScaler(init_loss_scaling=1024, incr_every_n_steps=2, decr_every_n_nan_or_inf=2)
    infs = [False, False, True, True, False, True, False, False]
    # Paddle's rule: 2 good steps in a row double the scale, 2 bad steps in a row halve it.
    want = [1024, 2048, 2048, 1024, 1024, 1024, 1024, 2048]
    got = []
    for inf in infs:
        before, after = _one_param_step(scaler, opt, w, inf)
        if inf:
            np.testing.assert_array_equal(before, after)  # skipped
        else:
            np.testing.assert_allclose(after, before - 0.01 * 3.0, rtol=1e-6)  # unscaled gradient 3
        got.append(scaler.get_loss_scaling())
    assert got == want


def test_grad_scaler_call_order_and_disabled():
    w = t(np.ones(2), stop_gradient=False)
    opt = crew.optimizer.SGD(learning_rate=0.5, parameters=[w])
    scaler = crew.amp.GradScaler(init_loss_scaling=4.0)
    scaler.scale(crew.sum(w)).backward()
    scaler.unscale_(opt)
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 1.0])
    with pytest.raises(RuntimeError):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError):
        scaler.step(opt)
    scaler.update()
    np.testing.assert_array_equal(w.numpy(), [0.5, 0.5])
    off = crew.amp.GradScaler(enable=False)
    loss = crew.sum(w)
    assert off.scale(loss) is loss and not off.is_enable() and off.state_dict() == {}


def test_grad_scaler_state_dict_round_trip():
    a = crew.amp.GradScaler(init_loss_scaling=256, incr_ratio=3.0, decr_ratio=0.25, incr_every_n_steps=5,
                            decr_every_n_nan_or_inf=3)
    w = t(np.ones(2), stop_gradient=False)
    opt = crew.optimizer.SGD(learning_rate=0.1, parameters=[w])
    for inf in (False, True, False, False):
        _one_param_step(a, opt, w, inf)
    sd = a.state_dict()
    assert sd["incr_count"] == 2 and sd["decr_count"] == 0 and float(sd["scale"][0]) == 256
    b = crew.amp.GradScaler()
    b.load_state_dict(sd)
    assert b.state_dict().keys() == sd.keys()
    for k in sd:
        np.testing.assert_array_equal(np.asarray(b.state_dict()[k]), np.asarray(sd[k]))
    assert (b.get_incr_ratio(), b.get_decr_ratio(), b.get_incr_every_n_steps(),
            b.get_decr_every_n_nan_or_inf()) == (3.0, 0.25, 5, 3)
    with pytest.raises(RuntimeError):
        crew.amp.GradScaler().load_state_dict({})


def test_grad_scaler_setters_check_and_keep_the_old_value_on_error():
    s = crew.amp.GradScaler()
    s.set_init_loss_scaling(64.0)
    s.set_incr_ratio(3.0)
    s.set_decr_ratio(0.25)
    s.set_incr_every_n_steps(7)
    s.set_decr_every_n_nan_or_inf(4)
    assert (s.get_init_loss_scaling(), s.get_incr_ratio(), s.get_decr_ratio(), s.get_incr_every_n_steps(),
            s.get_decr_every_n_nan_or_inf()) == (64.0, 3.0, 0.25, 7, 4)
    assert float(s.get_loss_scaling()) == 64.0
    for setter, bad in ((s.set_incr_ratio, 0.5), (s.set_decr_ratio, 2.0), (s.set_incr_every_n_steps, 0)):
        with pytest.raises(ValueError):
            setter(bad)
    assert (s.get_incr_ratio(), s.get_decr_ratio(), s.get_incr_every_n_steps()) == (3.0, 0.25, 7)


def test_an_inf_on_one_rank_skips_the_step_on_both(tmp_path):
    runs = _spawn("amp_one_rank_inf", tmp_path)
    for records in runs:
        (scale0, w0), (scale1, w1) = records
        assert scale0 == 4.0  # 8 halved by the skipped step (decr_every_n_nan_or_inf=1)
        assert w0 == [1.0] * 4  # step 0 skipped on both ranks
        assert scale1 == 4.0 and w1 == pytest.approx([0.8] * 4)  # step 1 taken: 1 - 0.1 * 2


def _spawn(program, tmp_path):
    code = ("import sys; sys.path.insert(0, %r); import crew.distributed as dist, dist_programs; "
            "dist.spawn(dist_programs.%s, args=(%r,), nprocs=2)" % (str(HERE), program, str(tmp_path)))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CREW_RANK", "PADDLE_", "CREW_WORLD",
                                                                      "CREW_MASTER"))}
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return [json.loads((tmp_path / f"rank{i}.json").read_text()) for i in range(2)]


def test_auto_cast_under_data_parallel_keeps_the_ranks_equal(tmp_path):
    runs = _spawn("amp_data_parallel", tmp_path)
    for run in runs:
        assert run["dtypes"][0] == ["dtype.bfloat16", "dtype.float32"]
        assert set(run["dtypes"][1]) == {"dtype.float32"}
        assert run["scale"] == 256
    for a, b in zip(runs[0]["params"], runs[1]["params"]):
        np.testing.assert_array_equal(np.array(a), np.array(b))


def test_o2_and_bf16_communication_under_data_parallel(tmp_path):
    runs = _spawn("amp_o2_comm_dtype", tmp_path)
    for run in runs:
        assert run["grad_dtypes"] == ["dtype.bfloat16"] * 4
        for plain, compressed in zip(run["grads"]["None"], run["grads"]["bfloat16"]):
            plain, compressed = np.array(plain), np.array(compressed)
            assert np.linalg.norm(compressed - plain) <= 2 ** -7 * np.linalg.norm(plain)
    for a, b in zip(runs[0]["params"], runs[1]["params"]):
        np.testing.assert_array_equal(np.array(a), np.array(b))  # the O2 ranks stay equal
    for a, b in zip(runs[0]["grads"]["bfloat16"], runs[1]["grads"]["bfloat16"]):
        np.testing.assert_array_equal(np.array(a), np.array(b))


def test_data_parallel_comm_dtype_must_be_16_bit():
    with pytest.raises(ValueError, match="comm_dtype must be 'bfloat16', 'float16' or None"):
        crew.DataParallel(crew.nn.Linear(2, 2), comm_dtype="float64")


def _mynet_losses(steps, amp_dtype=None, level="O1"):
    from train_cnn import MyNet
    crew.seed(7)
    rng = np.random.default_rng(3)
    model = MyNet(num_classes=10, in_channels=1, image_size=28)
    opt = crew.optimizer.Adam(learning_rate=1e-3, parameters=model.parameters())
    scaler = None
    if level == "O2":
        model, opt = crew.amp.decorate(model, opt, level="O2", dtype=amp_dtype)
    if amp_dtype == "float16":
        scaler = crew.amp.GradScaler(init_loss_scaling=1024)
    x = t(rng.random((16, 1, 28, 28)))
    y = crew.to_tensor(rng.integers(0, 10, (16, 1)).astype(np.int64))
    losses = []
    for _ in range(steps):
        with crew.amp.auto_cast(enable=amp_dtype is not None, dtype=amp_dtype or "bfloat16", level=level):
            loss = F.cross_entropy(model(x), y)
        assert name(loss) == "float32"
        if scaler:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
        opt.clear_grad()
        losses.append(float(loss.numpy()))
    return losses, model, opt


def test_mynet_under_auto_cast_bfloat16_tracks_float32():
    ref, _, _ = _mynet_losses(6)
    got, model, _ = _mynet_losses(6, "bfloat16")
    assert all(name(p) == "float32" for p in model.parameters())
    assert ref[-1] < ref[0]
    np.testing.assert_allclose(got, ref, rtol=0.03)


def test_mynet_under_auto_cast_float16_with_grad_scaler_tracks_float32():
    ref, _, _ = _mynet_losses(4)
    got, _, _ = _mynet_losses(4, "float16")
    np.testing.assert_allclose(got, ref, rtol=0.01)


def test_decorate_o2_keeps_norm_layers_float32_and_master_weights():
    model = crew.nn.Sequential(crew.nn.Linear(4, 8), crew.nn.LayerNorm(8), crew.nn.Linear(8, 2))
    opt = crew.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    model, opt = crew.amp.decorate(model, opt, level="O2", dtype="bfloat16")
    assert [name(p) for p in model.parameters()] == ["bfloat16", "bfloat16", "float32", "float32", "bfloat16",
                                                       "bfloat16"]
    assert opt._multi_precision
    x = t(np.random.default_rng(4).random((3, 4)))
    with crew.amp.auto_cast(level="O2", dtype="bfloat16"):
        loss = crew.mean(model(x))
    loss.backward()
    assert name(model.parameters()[0].grad) == "bfloat16"
    opt.step()
    sd = opt.state_dict()
    assert "0.master_weight" in sd and name(sd["0.master_weight"]) == "float32"
    assert "2.master_weight" not in sd  # LayerNorm's weight stays float32


def test_mynet_decorated_o2_bfloat16_tracks_float32():
    ref, _, _ = _mynet_losses(6)
    got, model, opt = _mynet_losses(6, "bfloat16", level="O2")
    assert all(name(p) == "bfloat16" for p in model.parameters())
    np.testing.assert_allclose(got, ref, rtol=0.05)


def test_decorate_save_dtype_and_o1_is_a_no_op():
    model = crew.nn.Linear(2, 2)
    assert crew.amp.decorate(model, level="O1") is model
    assert name(model.weight) == "float32"
    crew.amp.decorate(model, level="O1", save_dtype="float16")
    assert all(name(v) == "float16" for v in model.state_dict().values())
    assert name(model.weight) == "float32"


def _o2_model_and_opt():
    crew.seed(11)
    model = crew.nn.Sequential(crew.nn.Linear(6, 16), crew.nn.ReLU(), crew.nn.LayerNorm(16), crew.nn.Linear(16, 3))
    opt = crew.optimizer.Adam(learning_rate=1e-2, parameters=model.parameters())
    return crew.amp.decorate(model, opt, level="O2", dtype="bfloat16")


def _o2_steps(model, opt, steps, seed):
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        x = t(rng.random((8, 6)))
        y = crew.to_tensor(rng.integers(0, 3, (8,)).astype(np.int64))
        with crew.amp.auto_cast(level="O2", dtype="bfloat16"):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()


def test_an_o2_checkpoint_resumes_exactly(tmp_path):
    model, opt = _o2_model_and_opt()
    _o2_steps(model, opt, 3, seed=5)
    crew.save(model.state_dict(), str(tmp_path / "model.pdparams"))
    crew.save(opt.state_dict(), str(tmp_path / "opt.pdopt"))
    resumed, resumed_opt = _o2_model_and_opt()
    resumed.set_state_dict(crew.load(str(tmp_path / "model.pdparams")))
    resumed_opt.set_state_dict(crew.load(str(tmp_path / "opt.pdopt")))
    _o2_steps(model, opt, 3, seed=6)
    _o2_steps(resumed, resumed_opt, 3, seed=6)
    for a, b in zip(model.parameters(), resumed.parameters()):
        assert name(a) == name(b)
        np.testing.assert_array_equal(a.astype("float32").numpy(), b.astype("float32").numpy())


def test_hapi_model_trains_with_amp_configs():
    rng = np.random.default_rng(2)
    x = rng.random((32, 6)).astype(np.float32)
    y = rng.integers(0, 3, (32, 1)).astype(np.int64)
    data = crew.io.TensorDataset([crew.to_tensor(x), crew.to_tensor(y)])
    for configs in ({"level": "O1", "dtype": "bfloat16", "init_loss_scaling": 128}, "O2"):
        crew.seed(1)
        net = crew.nn.Sequential(crew.nn.Linear(6, 16), crew.nn.ReLU(), crew.nn.Linear(16, 3))
        model = crew.Model(net)
        model.prepare(crew.optimizer.Adam(learning_rate=0.01, parameters=net.parameters()),
                      crew.nn.CrossEntropyLoss(), amp_configs=configs)
        before = model.train_batch([x[:8]], [y[:8]])[0]
        model.fit(data, batch_size=8, epochs=2, verbose=0)
        after = model.train_batch([x[:8]], [y[:8]])[0]
        assert np.isfinite(after).all() and float(after) < float(before)
        want = "float16" if configs == "O2" else "float32"
        assert name(net.parameters()[0]) == want
    with pytest.raises(ValueError, match="unknown keys"):
        crew.Model(crew.nn.Linear(2, 2)).prepare(amp_configs={"level": "O1", "bogus": 1})

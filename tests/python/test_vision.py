"""crew.vision: built-in data sets (both CIFAR-10 archives, Paddle's cache), transforms."""
import io
import os
import pathlib
import pickle
import subprocess
import sys
import tarfile

import numpy as np
import pytest

import crew
from crew.io import DataLoader
from crew.vision import datasets, models, transforms

FASHION = pathlib.Path("/usr/share/datasets/fashion-mnist")


def cifar_images(n, start):
    """n images as CIFAR stores them: uint8 [n, 3072] (R, G, B planes), labels (start+i) % 10."""
    rng = np.random.RandomState(start)
    return rng.randint(0, 256, size=(n, 3072)).astype(np.uint8), [(start + i) % 10 for i in range(n)]


def add_member(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def make_archives(dirpath, per_batch=3):
    """cifar-10-python.tar.gz (pickled dicts with bytes keys, as the real one) and
    cifar-10-binary.tar.gz with the same images."""
    py_path, bin_path = dirpath / "cifar-10-python.tar.gz", dirpath / "cifar-10-binary.tar.gz"
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    with tarfile.open(py_path, "w:gz") as pt, tarfile.open(bin_path, "w:gz") as bt:
        for k, name in enumerate(names):
            data, labels = cifar_images(per_batch, 10 * k)
            d = {b"batch_label": name.encode(), b"labels": labels, b"data": data,
                 b"filenames": [b"x.png"] * per_batch}
            add_member(pt, "cifar-10-batches-py/" + name, pickle.dumps(d, protocol=2))
            records = b"".join(bytes([l]) + row.tobytes() for l, row in zip(labels, data))
            add_member(bt, f"cifar-10-batches-bin/{name}.bin", records)
    return py_path, bin_path


def test_cifar10_reads_the_python_and_the_binary_archive_alike(tmp_path):
    py_path, bin_path = make_archives(tmp_path)
    a = datasets.Cifar10(data_file=str(py_path), mode="train")
    b = datasets.Cifar10(data_file=str(bin_path), mode="train")
    assert len(a) == len(b) == 15
    for i in (0, 7, 14):
        (ia, la), (ib, lb) = a[i], b[i]
        assert ia.shape == [32, 32, 3] and ia.dtype == crew.uint8  # HWC, as Paddle
        np.testing.assert_array_equal(ia.numpy(), ib.numpy())
        assert la.item() == lb.item()
    data, labels = cifar_images(3, 20)  # data_batch_3: train images 6..8
    np.testing.assert_array_equal(a[7][0].numpy(), data[1].reshape(3, 32, 32).transpose(1, 2, 0))
    assert a[7][1].item() == labels[1] and a[7][1].shape == [] and a[7][1].dtype == crew.int64
    t = datasets.Cifar10(data_file=str(py_path), mode="test", transform=transforms.ToTensor())
    assert len(t) == 3 and t[0][0].shape == [3, 32, 32] and t[0][0].dtype == crew.float32


def run_python(code, env_update):
    env = dict(os.environ, **env_update)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)


def test_cifar10_looks_in_paddles_cache_and_says_where_to_put_the_file(tmp_path):
    empty = tmp_path / "nothing"
    empty.mkdir()
    home = tmp_path / "home"
    code = "import crew; print(len(crew.vision.datasets.Cifar10(mode='test')))"
    env = {"HOME": str(home), "CREW_DATA_DIR": str(empty)}
    r = run_python(code, env)
    assert r.returncode != 0
    assert "cifar-10-python.tar.gz" in r.stderr and str(home / ".cache/paddle/dataset/cifar") in r.stderr
    cache = home / ".cache" / "paddle" / "dataset" / "cifar"
    cache.mkdir(parents=True)
    make_archives(cache, per_batch=2)
    (cache / "cifar-10-binary.tar.gz").unlink()
    r = run_python(code, env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "2"


def test_cifar10_bad_arguments(tmp_path):
    with pytest.raises(OSError, match="does not exist"):
        datasets.Cifar10(data_file=str(tmp_path / "missing.tar.gz"))
    with pytest.raises(ValueError, match="mode"):
        datasets.Cifar10(data_file=str(tmp_path), mode="valid")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "data_batch_1").write_bytes(pickle.dumps({b"data": np.zeros((2, 3072), np.uint8), b"labels": [1, 12]}))
    for i in range(2, 6):
        (bad / f"data_batch_{i}").write_bytes((bad / "data_batch_1").read_bytes())
    with pytest.raises(ValueError, match="label 12"):
        datasets.Cifar10(data_file=str(bad))


@pytest.mark.skipif(not FASHION.exists(), reason="dataset-fashion-mnist is not installed")
def test_fashion_mnist_with_transforms_through_a_loader():
    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize(mean=[0.5], std=[0.5])])
    ds = datasets.FashionMNIST(mode="test", transform=tf)
    assert len(ds) == 10000
    x, y = ds[0]
    assert x.shape == [1, 28, 28] and x.dtype == crew.float32 and y.dtype == crew.int64
    assert -1.0 <= float(x.numpy().min()) and float(x.numpy().max()) <= 1.0
    raw = datasets.FashionMNIST(mode="test")[0][0]
    np.testing.assert_allclose(x.numpy()[0], raw.numpy() / 255.0 * 2 - 1, atol=1e-6)
    xb, yb = next(iter(DataLoader(ds, batch_size=64, num_workers=2)))
    assert xb.shape == [64, 1, 28, 28] and yb.shape == [64]
    with pytest.raises(OSError, match="does not download"):
        datasets.MNIST(image_path="/nonexistent/train-images-idx3-ubyte.gz")


@pytest.mark.skipif(not FASHION.exists(), reason="dataset-fashion-mnist is not installed")
def test_a_python_transform_runs_on_a_numpy_image():
    ds = datasets.FashionMNIST(mode="test", transform=transforms.Compose(
        [lambda img: img[2:26, 2:26].copy(), transforms.ToTensor()]))
    assert ds[3][0].shape == [1, 24, 24]


def test_transforms_on_arrays():
    img = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)  # HWC
    t = transforms.ToTensor()(img)
    assert t.shape == [3, 2, 3]
    np.testing.assert_allclose(t.numpy()[1], img[:, :, 1] / 255.0, rtol=1e-6)
    n = transforms.Normalize(mean=[0.5, 0.5, 0.5], std=[0.25, 0.25, 0.25])(t)
    np.testing.assert_allclose(n.numpy(), (t.numpy() - 0.5) / 0.25, rtol=1e-6)
    flipped = transforms.RandomHorizontalFlip(prob=1.0)(img)
    np.testing.assert_array_equal(flipped.numpy(), img[:, ::-1, :])
    assert transforms.RandomCrop(2)(img).shape == [2, 2, 3]
    hwc = transforms.ToTensor(data_format="HWC")(img)
    assert hwc.shape == [2, 3, 3]
    np.testing.assert_allclose(hwc.numpy(), img / 255.0, rtol=1e-6)
    with pytest.raises(ValueError, match="HWC"):
        transforms.ToTensor(data_format="NHWC")


def test_models():
    x = crew.to_tensor(np.random.rand(2, 1, 28, 28).astype(np.float32))
    assert models.LeNet()(x).shape == [2, 10]
    assert models.MyNet()(x).shape == [2, 10]
    assert len(models.LeNet().parameters()) == 10


def make_cifar100_archive(dirpath, n_train=4, n_test=3):
    """cifar-100-python.tar.gz as the real one: pickled dicts 'train', 'test', 'meta' with
    fine and coarse labels."""
    path = dirpath / "cifar-100-python.tar.gz"
    rng = np.random.RandomState(1)
    split = {}
    with tarfile.open(path, "w:gz") as tar:
        for name, n in (("train", n_train), ("test", n_test)):
            data = rng.randint(0, 256, size=(n, 3072)).astype(np.uint8)
            fine = [int(v) for v in rng.randint(0, 100, size=n)]
            d = {b"filenames": [b"x.png"] * n, b"batch_label": name.encode(), b"fine_labels": fine,
                 b"coarse_labels": [v // 5 for v in fine], b"data": data}
            add_member(tar, "cifar-100-python/" + name, pickle.dumps(d, protocol=2))
            split[name] = (data, fine)
        add_member(tar, "cifar-100-python/meta", pickle.dumps({b"fine_label_names": []}, protocol=2))
    return path, split


def test_cifar100_reads_the_python_archive_with_fine_labels(tmp_path):
    path, split = make_cifar100_archive(tmp_path)
    for mode in ("train", "test"):
        ds = datasets.Cifar100(data_file=str(path), mode=mode)
        data, fine = split[mode]
        assert len(ds) == len(fine)
        for i in range(len(ds)):
            img, label = ds[i]
            np.testing.assert_array_equal(img.numpy(), data[i].reshape(3, 32, 32).transpose(1, 2, 0))
            assert int(label.numpy()) == fine[i]
    t = datasets.Cifar100(data_file=str(path), mode="test", transform=transforms.ToTensor())
    assert t[0][0].shape == [3, 32, 32]
    loader = crew.io.DataLoader(t, batch_size=2)
    assert [b[1].shape[0] for b in loader] == [2, 1]
    with pytest.raises(ValueError, match="mode"):
        datasets.Cifar100(data_file=str(path), mode="valid")
    with pytest.raises(OSError, match="does not exist"):
        datasets.Cifar100(data_file=str(tmp_path / "missing.tar.gz"))
    cifar10_py, _ = make_archives(tmp_path)
    with pytest.raises(OSError, match="not the Python version of CIFAR-100"):
        datasets.Cifar100(data_file=str(cifar10_py))

"""crew.vision.transforms' Python transforms (Resize, CenterCrop, RandomResizedCrop, Pad,
ColorJitter, Grayscale, RandomRotation, Transpose) on NumPy arrays, PIL images and tensors,
against NumPy formulas and Pillow; Paddle's documentation examples; Compose mixing them with
the C++ transforms, in a DataLoader and a C++ data set."""
import subprocess
import sys

import numpy as np
import pytest

import crew
from crew.io import DataLoader, Dataset
from crew.vision import transforms as T
from crew.vision.transforms import functional as F

Image = pytest.importorskip("PIL.Image")
RNG = np.random.default_rng(5)


def rgb(h, w):
    return RNG.integers(0, 256, size=(h, w, 3)).astype(np.uint8)


def naive_bilinear(a, oh, ow):
    """cv2's INTER_LINEAR, one output pixel at a time (half-pixel centres, clamped)."""
    h, w = a.shape[:2]
    out = np.zeros((oh, ow) + a.shape[2:])
    for i in range(oh):
        for j in range(ow):
            y = min(max((i + 0.5) * h / oh - 0.5, 0), h - 1)
            x = min(max((j + 0.5) * w / ow - 0.5, 0), w - 1)
            y0, x0 = int(y), int(x)
            y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
            fy, fx = y - y0, x - x0
            out[i, j] = ((a[y0, x0] * (1 - fx) + a[y0, x1] * fx) * (1 - fy) +
                         (a[y1, x0] * (1 - fx) + a[y1, x1] * fx) * fy)
    return out


def test_resize_paddle_example_and_the_bilinear_formula():
    fake_img = Image.fromarray((np.random.rand(256, 300, 3) * 255.).astype(np.uint8))
    assert T.Resize(size=224)(fake_img).size == (262, 224)  # Paddle's doc example
    assert T.Resize(size=(200, 150))(fake_img).size == (150, 200)
    a = RNG.random((5, 7, 3))
    np.testing.assert_allclose(F.resize(a, (9, 4)), naive_bilinear(a, 9, 4), rtol=1e-12)
    img = rgb(6, 8)
    out = T.Resize((12, 16))(img)
    assert isinstance(out, np.ndarray) and out.shape == (12, 16, 3) and out.dtype == np.uint8
    np.testing.assert_array_equal(out, np.clip(np.rint(naive_bilinear(img.astype(float), 12, 16)), 0, 255))
    pil = np.asarray(T.Resize((12, 16))(Image.fromarray(img)))  # Pillow's upsampling agrees within rounding
    assert np.abs(pil.astype(int) - out.astype(int)).max() <= 1
    near = T.Resize((4, 3), interpolation="nearest")(img)
    np.testing.assert_array_equal(near, img[[0, 1, 3, 4]][:, [0, 2, 5]])
    gray = RNG.integers(0, 256, size=(6, 8)).astype(np.uint8)  # HW stays HW
    assert T.Resize(3)(gray).shape == (3, 4)


def test_resize_keeps_a_tensors_layout():
    chw = crew.to_tensor(RNG.random((3, 6, 8)).astype(np.float32))  # floating: CHW
    out = T.Resize((3, 4))(chw)
    assert isinstance(out, crew.Tensor) and out.shape == [3, 3, 4]
    np.testing.assert_allclose(out.numpy(), chw.numpy().reshape(3, 3, 2, 4, 2).mean((2, 4)), rtol=1e-6)
    hwc = crew.to_tensor(rgb(6, 8))  # uint8: HWC, as crew's data sets decode
    assert T.Resize((3, 4))(hwc).shape == [3, 4, 3]
    with pytest.raises(ValueError, match="PIL"):
        T.Resize(4, interpolation="bicubic")(rgb(6, 8))


def test_center_crop_and_random_resized_crop():
    fake_img = Image.fromarray((np.random.rand(300, 320, 3) * 255.).astype(np.uint8))
    assert T.CenterCrop(224)(fake_img).size == (224, 224)  # Paddle's doc example
    img = rgb(7, 10)
    np.testing.assert_array_equal(T.CenterCrop((3, 4))(img), img[2:5, 3:7])
    np.testing.assert_array_equal(np.asarray(T.CenterCrop((3, 4))(Image.fromarray(img))), img[2:5, 3:7])
    with pytest.raises(ValueError, match="larger"):
        T.CenterCrop(8)(img)
    crew.seed(1)
    out = T.RandomResizedCrop(5)(img)
    assert out.shape == (5, 5, 3)
    whole = T.RandomResizedCrop((14, 20), scale=(1.0, 1.0), ratio=(10 / 7, 10 / 7))(img)  # all of it
    np.testing.assert_array_equal(whole, T.Resize((14, 20))(img))
    assert T.RandomResizedCrop(224)(fake_img).size == (224, 224)
    square = T.RandomResizedCrop((7, 7), scale=(1.0, 1.0), ratio=(1.0, 1.0))(img)  # no fit: the centre
    np.testing.assert_array_equal(square, img[:, 1:8])


def test_pad_modes_fill_and_paddles_example():
    fake_img = Image.fromarray((np.random.rand(224, 224, 3) * 255.).astype(np.uint8))
    assert T.Pad(2)(fake_img).size == (228, 228)  # Paddle's doc example
    img = rgb(3, 4)
    out = T.Pad((1, 2, 3, 4), fill=(10, 20, 30))(img)  # left, top, right, bottom
    assert out.shape == (3 + 6, 4 + 4, 3)
    np.testing.assert_array_equal(out[2:5, 1:5], img)
    np.testing.assert_array_equal(out[0, 0], [10, 20, 30])
    np.testing.assert_array_equal(T.Pad((1, 2))(img), np.pad(img, [(2, 2), (1, 1), (0, 0)]))
    for mode in ("edge", "reflect", "symmetric"):
        np.testing.assert_array_equal(T.Pad(2, padding_mode=mode)(img), np.pad(img, [(2, 2), (2, 2), (0, 0)], mode))
    grey = T.Pad(1)(Image.fromarray(img[..., 0]))
    assert grey.mode == "L" and grey.size == (6, 5)
    with pytest.raises(ValueError, match="padding_mode"):
        T.Pad(1, padding_mode="wrap")
    with pytest.raises(ValueError, match="2 or 4"):
        T.Pad((1, 2, 3))


def test_color_adjustments_match_formulas_and_pillow():
    from PIL import ImageEnhance
    img = rgb(8, 9)
    pil = Image.fromarray(img)
    f = img.astype(np.float64)
    gray = f[..., 0] * 0.299 + f[..., 1] * 0.587 + f[..., 2] * 0.114
    np.testing.assert_array_equal(F.adjust_brightness(img, 1.5), np.clip(np.rint(f * 1.5), 0, 255))
    np.testing.assert_array_equal(F.adjust_contrast(img, 0.5), np.clip(np.rint(0.5 * f + 0.5 * gray.mean()), 0, 255))
    np.testing.assert_array_equal(F.adjust_saturation(img, 0.0), np.repeat(np.rint(gray)[..., None], 3, 2))
    for ours, enhancer in ((F.adjust_brightness, ImageEnhance.Brightness), (F.adjust_saturation, ImageEnhance.Color)):
        theirs = np.asarray(enhancer(pil).enhance(1.3)).astype(int)
        assert np.abs(np.asarray(ours(pil, 1.3)).astype(int) - theirs).max() <= 2
    assert np.abs(F.adjust_hue(img, 0.0).astype(int) - img).max() <= 1
    red = np.zeros((1, 1, 3), np.uint8)
    red[..., 0] = 255
    np.testing.assert_array_equal(F.adjust_hue(red, 1 / 3), [[[0, 255, 0]]])
    floats = F.adjust_brightness(crew.to_tensor(np.full((3, 2, 2), 0.8, np.float32)), 2.0)
    np.testing.assert_allclose(floats.numpy(), 1.0)  # floating images are clipped to [0, 1]
    with pytest.raises(ValueError, match=r"\[-0.5, 0.5\]"):
        T.ColorJitter(hue=0.7)


def test_color_jitter_is_seeded_and_keeps_the_image_kind():
    fake_img = Image.fromarray((np.random.rand(224, 224, 3) * 255.).astype(np.uint8))
    assert T.ColorJitter(0.4, 0.4, 0.4, 0.4)(fake_img).size == (224, 224)  # Paddle's doc example
    img = rgb(6, 6)
    jitter = T.ColorJitter(brightness=0.5, contrast=0.5, saturation=0.5, hue=0.1)
    crew.seed(9)
    a = jitter(img)
    crew.seed(9)
    np.testing.assert_array_equal(jitter(img), a)
    assert a.shape == img.shape and a.dtype == np.uint8 and not np.array_equal(a, img)
    np.testing.assert_array_equal(T.ColorJitter()(img), img)


def test_grayscale():
    img = rgb(4, 5)
    g = T.Grayscale()(img)
    f = img.astype(np.float64)
    assert g.shape == (4, 5, 1)
    np.testing.assert_array_equal(g[..., 0], np.rint(f[..., 0] * 0.299 + f[..., 1] * 0.587 + f[..., 2] * 0.114))
    assert T.Grayscale(3)(img).shape == (4, 5, 3)
    pil = T.Grayscale()(Image.fromarray(img))
    assert pil.mode == "L" and np.abs(np.asarray(pil).astype(int) - g[..., 0]).max() <= 1
    assert T.Grayscale(3)(Image.fromarray(img)).mode == "RGB"
    t = T.Grayscale()(crew.to_tensor(f.transpose(2, 0, 1) / 255.0))
    assert t.shape == [1, 4, 5]


def test_random_rotation():
    img = rgb(5, 5)
    np.testing.assert_array_equal(T.RandomRotation((90, 90))(img), np.rot90(img))  # counter-clockwise
    np.testing.assert_array_equal(np.asarray(T.RandomRotation((90, 90))(Image.fromarray(img))), np.rot90(img))
    tall = rgb(4, 6)
    out = T.RandomRotation((90, 90), expand=True)(tall)
    assert out.shape == (6, 4, 3)
    np.testing.assert_array_equal(out, np.rot90(tall))
    same = T.RandomRotation((90, 90), interpolation="bilinear")(img.astype(np.float64))
    np.testing.assert_allclose(same, np.rot90(img).astype(np.float64), atol=1e-9)
    filled = T.RandomRotation((45, 45), fill=7)(np.zeros((9, 9), np.uint8) + 1)
    assert filled[0, 0] == 7 and filled[4, 4] == 1
    crew.seed(2)
    fake_img = Image.fromarray((np.random.rand(200, 150, 3) * 255.).astype(np.uint8))
    assert T.RandomRotation(90)(fake_img).size == (150, 200)  # Paddle's doc example
    chw = crew.to_tensor(img.transpose(2, 0, 1).astype(np.float32))
    np.testing.assert_array_equal(T.RandomRotation((90, 90))(chw).numpy(), np.rot90(img).transpose(2, 0, 1))


def test_transpose_and_base_transform_keys():
    fake_img = Image.fromarray((np.random.rand(224, 224, 3) * 255.).astype(np.uint8))
    assert T.Transpose()(fake_img).shape == (3, 224, 224)  # Paddle's doc example
    assert T.Transpose()(np.zeros((4, 5), np.uint8)).shape == (1, 4, 5)
    assert T.Transpose((1, 2, 0))(crew.to_tensor(np.zeros((3, 4, 5), np.float32))).shape == [4, 5, 3]
    img, label = rgb(6, 6), 3
    out, same = T.CenterCrop(4, keys=("image", "label"))((img, label))
    assert out.shape == (4, 4, 3) and same == 3


def test_pil_images_go_through_the_cpp_transforms_and_compose():
    img = rgb(10, 12)
    pil = Image.fromarray(img)
    t = T.ToTensor()(pil)
    np.testing.assert_allclose(t.numpy(), img.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    flipped = T.RandomHorizontalFlip(1.0)(pil)
    assert flipped.mode == "RGB"
    np.testing.assert_array_equal(np.asarray(flipped), img[:, ::-1])
    hwc = T.Normalize(mean=[0.5] * 3, std=[0.5] * 3, data_format="HWC")(T.ToTensor(data_format="HWC")(pil))
    np.testing.assert_allclose(hwc.numpy(), img / 255.0 * 2 - 1, rtol=1e-5, atol=1e-6)
    bgr = T.Normalize(mean=[0.0] * 3, std=[1.0] * 3, to_rgb=True)(t)
    np.testing.assert_allclose(bgr.numpy(), t.numpy()[::-1], rtol=1e-6)
    tf = T.Compose([T.Resize(8), T.CenterCrop(6), T.ToTensor(), T.Normalize(mean=0.5, std=0.5)])
    out = tf(pil)
    assert out.shape == [3, 6, 6]
    np.testing.assert_allclose(tf(img).numpy(), T.Normalize(0.5, 0.5)(T.ToTensor()(
        T.CenterCrop(6)(T.Resize(8)(img)))).numpy(), rtol=1e-6)
    cpp_only = T.Compose([T.ToTensor(), T.Normalize(mean=0.5, std=0.5)])
    np.testing.assert_allclose(cpp_only(pil).numpy(), t.numpy() * 2 - 1, rtol=1e-5, atol=1e-6)


class PilImages(Dataset):
    def __init__(self, n, transform):
        self.images = [Image.fromarray(rgb(10 + i, 12)) for i in range(n)]
        self.transform = transform

    def __getitem__(self, i):
        return self.transform(self.images[i]), i % 3

    def __len__(self):
        return len(self.images)


def test_compose_in_a_loader_with_workers_and_in_a_cpp_data_set(tmp_path):
    tf = T.Compose([T.Resize((8, 8)), T.ColorJitter(0.2, 0.2), T.RandomRotation(10), T.ToTensor()])
    loader = DataLoader(PilImages(8, tf), batch_size=4, num_workers=2)
    batches = list(loader)
    assert len(batches) == 2 and batches[0][0].shape == [4, 3, 8, 8] and batches[0][0].dtype == crew.float32
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    from test_vision import make_archives
    py_path, _ = make_archives(tmp_path, per_batch=2)
    ds = crew.vision.datasets.Cifar10(data_file=str(py_path), mode="test",
                                      transform=T.Compose([T.CenterCrop(20), T.Resize(10), T.ToTensor()]))
    x, _ = ds[0]
    raw = crew.vision.datasets.Cifar10(data_file=str(py_path), mode="test")[0][0].numpy()
    np.testing.assert_allclose(x.numpy(), T.Resize(10)(raw[6:26, 6:26]).transpose(2, 0, 1) / 255.0, rtol=1e-6)
    xb, _ = next(iter(DataLoader(ds, batch_size=2, num_workers=2)))
    assert xb.shape == [2, 3, 10, 10]


def test_importing_crew_does_not_import_pillow():
    code = "import sys, crew.vision.transforms; print('PIL' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


def test_random_vertical_flip_on_arrays_tensors_and_pil():
    img = rgb(5, 4)
    np.testing.assert_array_equal(np.asarray(T.RandomVerticalFlip(1.0)(img).numpy()), img[::-1])
    np.testing.assert_array_equal(T.RandomVerticalFlip(0.0)(img).numpy(), img)
    chw = T.ToTensor()(img)
    np.testing.assert_array_equal(T.RandomVerticalFlip(prob=1.0)(chw).numpy(), chw.numpy()[:, ::-1])
    flipped = T.RandomVerticalFlip(1.0)(Image.fromarray(img))
    assert flipped.mode == "RGB"
    np.testing.assert_array_equal(np.asarray(flipped), img[::-1])
    out = T.Compose([T.RandomVerticalFlip(1.0), T.ToTensor()])(img)
    np.testing.assert_allclose(out.numpy(), img[::-1].transpose(2, 0, 1) / 255.0, rtol=1e-6)
    with pytest.raises(ValueError, match="RandomVerticalFlip"):
        T.RandomVerticalFlip(2.0)

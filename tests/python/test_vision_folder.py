"""crew.vision.datasets.DatasetFolder / ImageFolder: Paddle's signature and attributes, JPEG
and PNG decoded by Pillow, custom loaders and filters, and batches from a DataLoader with
worker threads."""
import numpy as np
import pytest

import crew
from crew.io import DataLoader
from crew.vision import transforms as T
from crew.vision.datasets import DatasetFolder, ImageFolder

Image = pytest.importorskip("PIL.Image")


def make_tree(root):
    """root/{cat,dog}/ with PNGs (exact pixels), a JPEG, a text file and an empty class; returns
    the PNG pixels by path."""
    rng = np.random.default_rng(0)
    pixels = {}
    for cls, n in (("cat", 3), ("dog", 2)):
        (root / cls).mkdir(parents=True)
        for i in range(n):
            a = rng.integers(0, 256, size=(6, 5, 3)).astype(np.uint8)
            path = root / cls / f"{i}.png"
            Image.fromarray(a).save(path)
            pixels[str(path)] = a
    (root / "dog" / "deep").mkdir()
    Image.fromarray(np.full((6, 5, 3), 128, np.uint8)).save(root / "dog" / "deep" / "x.JPG", quality=95)
    (root / "dog" / "notes.txt").write_text("not an image")
    (root / "empty").mkdir()
    return pixels


def test_dataset_folder_finds_classes_and_samples_like_paddle(tmp_path):
    pixels = make_tree(tmp_path)
    ds = DatasetFolder(str(tmp_path))
    assert ds.classes == ["cat", "dog", "empty"]
    assert ds.class_to_idx == {"cat": 0, "dog": 1, "empty": 2}
    names = [(p[len(str(tmp_path)) + 1:], c) for p, c in ds.samples]
    assert names == [("cat/0.png", 0), ("cat/1.png", 0), ("cat/2.png", 0), ("dog/0.png", 1), ("dog/1.png", 1),
                     ("dog/deep/x.JPG", 1)]
    assert len(ds) == 6 and ds.targets == [0, 0, 0, 1, 1, 1]
    img, label = ds[1]
    assert img.mode == "RGB" and img.size == (5, 6) and label == 0
    np.testing.assert_array_equal(np.asarray(img), pixels[ds.samples[1][0]])
    jpeg = np.asarray(ds[5][0]).astype(int)
    assert np.abs(jpeg - 128).max() <= 2  # lossy, but close


def test_loader_extensions_and_is_valid_file(tmp_path):
    make_tree(tmp_path)
    ds = DatasetFolder(str(tmp_path), loader=lambda p: open(p, "rb").read()[:4], extensions=(".txt", ".png"))
    assert len(ds) == 6 and ds[0][0] == b"\x89PNG"
    assert ds.samples[-1][0].endswith("notes.txt")
    only_deep = DatasetFolder(str(tmp_path), is_valid_file=lambda p: "deep" in p)
    assert [c for _, c in only_deep.samples] == [1]
    with pytest.raises(ValueError, match="not both"):
        DatasetFolder(str(tmp_path), extensions=(".png",), is_valid_file=lambda p: True)
    with pytest.raises(RuntimeError, match="found no files"):
        DatasetFolder(str(tmp_path), extensions=(".gif",))
    with pytest.raises(OSError, match="not a directory"):
        DatasetFolder(str(tmp_path / "missing"))


def test_image_folder_returns_one_element_lists(tmp_path):
    pixels = make_tree(tmp_path)
    ds = ImageFolder(str(tmp_path), transform=T.ToTensor())
    assert len(ds) == 6 and all(isinstance(p, str) for p in ds.samples)
    (x,) = ds[0]
    np.testing.assert_allclose(x.numpy(), pixels[ds.samples[0]].transpose(2, 0, 1) / 255.0, rtol=1e-6)
    crew.vision.set_image_backend("cv2")
    try:
        bgr = ImageFolder(str(tmp_path))[0][0]
    finally:
        crew.vision.set_image_backend("pil")
    np.testing.assert_array_equal(bgr, pixels[ds.samples[0]][..., ::-1])
    assert crew.vision.get_image_backend() == "pil"
    with pytest.raises(ValueError, match="backend"):
        crew.vision.set_image_backend("tensor")


def test_folders_feed_a_loader_with_workers(tmp_path):
    make_tree(tmp_path)
    tf = T.Compose([T.Resize((4, 4)), T.ToTensor(), T.Normalize(mean=0.5, std=0.5)])
    ds = DatasetFolder(str(tmp_path), transform=tf)
    seen = []
    for epoch in range(2):
        for x, y in DataLoader(ds, batch_size=4, num_workers=2, shuffle=False):
            assert x.shape[1:] == [3, 4, 4] and x.dtype == crew.float32 and y.dtype == crew.int64
            seen.extend(y.numpy().tolist())
    assert seen == ds.targets * 2
    batches = list(DataLoader(ImageFolder(str(tmp_path), transform=tf), batch_size=3, num_workers=2))
    assert len(batches) == 2 and batches[0][0].shape == [3, 3, 4, 4]

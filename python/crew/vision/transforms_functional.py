"""Image operations behind crew.vision.transforms' Python transforms (Paddle's
paddle.vision.transforms.functional), on three kinds of image, each returned as it came:

- a PIL image (Pillow is imported only when one is passed): resize and rotate run in PIL
  with its filters, the other operations on its pixels through NumPy;
- a NumPy array: HWC or HW (Paddle's cv2 layout), uint8 or floating;
- a crew.Tensor: floating ones are CHW (as after ToTensor), integer ones HWC (as decoded;
  crew's rule, crew/io/transforms/image_layout.h).

uint8 results are rounded and clipped to [0, 255]; floating ones of the colour operations are
clipped to [0, 1].
"""
import math
import numbers
import sys

import numpy as np

from .. import _C

_FLOATS = (_C.dtype.float32, _C.dtype.float64)


def is_pil(img):
    pil = sys.modules.get("PIL.Image")
    return pil is not None and isinstance(img, pil.Image)


def to_hwc(img):
    """(HWC or HW ndarray, back) where back(array) returns the image in img's kind and layout."""
    if is_pil(img):
        from PIL import Image
        def back(a):
            if a.ndim == 3 and a.shape[2] == 1:
                a = a[..., 0]
            return Image.fromarray(np.ascontiguousarray(a), img.mode if a.ndim == 3 or img.mode in ("L", "P") else "L")
        return np.asarray(img), back
    if isinstance(img, np.ndarray):
        if img.ndim not in (2, 3):
            raise ValueError(f"transforms: expected an HWC or HW image, got shape {list(img.shape)}")
        return img, lambda a: a
    if isinstance(img, _C.Tensor):
        a = img.numpy()
        if img.dtype in _FLOATS and a.ndim == 3:
            return a.transpose(1, 2, 0), lambda r: _C.to_tensor(np.ascontiguousarray(
                (r if r.ndim == 3 else r[..., None]).transpose(2, 0, 1)))
        return a, lambda r: _C.to_tensor(np.ascontiguousarray(r))
    raise TypeError(f"transforms: expected a PIL image, a NumPy array or a crew.Tensor, got {type(img).__name__}")


def image_size(img):
    """(height, width) of any kind of image."""
    if is_pil(img):
        return img.size[1], img.size[0]
    a, _ = to_hwc(img)
    return a.shape[0], a.shape[1]


def _as_dtype(a, dtype):
    if dtype == np.uint8:
        return np.clip(np.rint(a), 0, 255).astype(np.uint8)
    return a.astype(dtype)


def _clip(a, dtype):
    return _as_dtype(np.clip(a, 0, 255 if dtype == np.uint8 else 1.0), dtype)


# ---- geometry ----
def _target_size(h, w, size):
    if isinstance(size, numbers.Integral):
        if (w <= h and w == size) or (h <= w and h == size):
            return h, w
        return (int(size * h / w), size) if w < h else (size, int(size * w / h))
    if len(size) != 2:
        raise ValueError(f"resize: size must be an int or (height, width), got {size}")
    return int(size[0]), int(size[1])


_PIL_FILTERS = {"nearest": 0, "bilinear": 2, "bicubic": 3, "box": 4, "hamming": 5, "lanczos": 1}


def _axis_weights(n_in, n_out):
    """Half-pixel bilinear sampling along one axis (cv2's INTER_LINEAR): indices and weights."""
    src = np.clip((np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5, 0, n_in - 1)
    lo = np.floor(src).astype(np.int64)
    hi = np.minimum(lo + 1, n_in - 1)
    return lo, hi, src - lo


def resize_array(a, oh, ow, interpolation):
    h, w = a.shape[:2]
    if interpolation == "nearest":
        rows = np.minimum((np.arange(oh) * (h / oh)).astype(np.int64), h - 1)
        cols = np.minimum((np.arange(ow) * (w / ow)).astype(np.int64), w - 1)
        return a[rows][:, cols]
    if interpolation != "bilinear":
        raise ValueError(f"resize: interpolation '{interpolation}' needs a PIL image; arrays and tensors "
                         "take 'nearest' or 'bilinear'")
    x = a.astype(np.float64)
    lo, hi, f = _axis_weights(h, oh)
    f = f.reshape((-1,) + (1,) * (x.ndim - 1))
    x = x[lo] * (1 - f) + x[hi] * f
    lo, hi, f = _axis_weights(w, ow)
    f = f.reshape((1, -1) + (1,) * (x.ndim - 2))
    x = x[:, lo] * (1 - f) + x[:, hi] * f
    return _as_dtype(x, a.dtype)


def resize(img, size, interpolation="bilinear"):
    """size: (height, width), or an int that the shorter side becomes (aspect kept)."""
    h, w = image_size(img)
    oh, ow = _target_size(h, w, size)
    if is_pil(img):
        if interpolation not in _PIL_FILTERS:
            raise ValueError(f"resize: interpolation must be one of {sorted(_PIL_FILTERS)}, got '{interpolation}'")
        return img if (oh, ow) == (h, w) else img.resize((ow, oh), _PIL_FILTERS[interpolation])
    a, back = to_hwc(img)
    return back(resize_array(a, oh, ow, interpolation))


def crop(img, top, left, height, width):
    if is_pil(img):
        return img.crop((left, top, left + width, top + height))
    a, back = to_hwc(img)
    return back(a[top:top + height, left:left + width])


def center_crop(img, output_size):
    th, tw = (output_size, output_size) if isinstance(output_size, numbers.Integral) else output_size
    h, w = image_size(img)
    if th > h or tw > w:
        raise ValueError(f"center_crop: crop {th}x{tw} is larger than the image ({h}x{w})")
    return crop(img, int(round((h - th) / 2.0)), int(round((w - tw) / 2.0)), th, tw)


def _padding(padding):
    """Paddle's padding: int, (left/right, top/bottom) or (left, top, right, bottom)."""
    if isinstance(padding, numbers.Integral):
        return (padding,) * 4
    padding = tuple(padding)
    if len(padding) == 2:
        return padding[0], padding[1], padding[0], padding[1]
    if len(padding) == 4:
        return padding
    raise ValueError(f"pad: padding must be an int or have 2 or 4 entries, got {len(padding)}")


def pad(img, padding, fill=0, padding_mode="constant"):
    modes = {"constant": "constant", "edge": "edge", "reflect": "reflect", "symmetric": "symmetric"}
    if padding_mode not in modes:
        raise ValueError(f"pad: padding_mode must be one of {sorted(modes)}, got '{padding_mode}'")
    left, top, right, bottom = _padding(padding)
    a, back = to_hwc(img)
    widths = [(top, bottom), (left, right)] + [(0, 0)] * (a.ndim - 2)
    if padding_mode != "constant":
        return back(np.pad(a, widths, mode=modes[padding_mode]))
    out = np.pad(a, widths, mode="constant")
    inner = out[top:top + a.shape[0], left:left + a.shape[1]].copy()
    out[...] = np.asarray(fill, dtype=a.dtype)
    out[top:top + a.shape[0], left:left + a.shape[1]] = inner
    return back(out)


def _rotation_matrix(angle, cx, cy):
    """cv2.getRotationMatrix2D: source (x, y) -> rotated (x', y'), counter-clockwise on screen."""
    a, b = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    return np.array([[a, b, (1 - a) * cx - b * cy], [-b, a, b * cx + (1 - a) * cy]])


def rotate_array(a, angle, interpolation="nearest", expand=False, center=None, fill=0):
    h, w = a.shape[:2]
    cx, cy = center if center is not None else ((w - 1) * 0.5, (h - 1) * 0.5)
    m = _rotation_matrix(angle, cx, cy)
    oh, ow = h, w
    if expand:
        corners = np.array([[0, 0, 1], [w - 1, 0, 1], [0, h - 1, 1], [w - 1, h - 1, 1]], dtype=np.float64) @ m.T
        lo, hi = corners.min(0), corners.max(0)
        ow, oh = int(np.ceil(hi[0] - lo[0] + 1 - 1e-9)), int(np.ceil(hi[1] - lo[1] + 1 - 1e-9))
        # the input's centre lands on the output's centre
        m[:, 2] += np.array([(ow - 1) / 2, (oh - 1) / 2]) - m @ [(w - 1) / 2, (h - 1) / 2, 1]
    inv = np.linalg.inv(np.vstack([m, [0, 0, 1]]))[:2]
    ys, xs = np.mgrid[0:oh, 0:ow].astype(np.float64)
    sx = inv[0, 0] * xs + inv[0, 1] * ys + inv[0, 2]
    sy = inv[1, 0] * xs + inv[1, 1] * ys + inv[1, 2]
    x = a.astype(np.float64) if a.ndim == 3 else a.astype(np.float64)[..., None]
    fillv = np.broadcast_to(np.asarray(fill, dtype=np.float64), (x.shape[2],))
    out = np.empty((oh, ow, x.shape[2]))
    if interpolation == "nearest":
        ix, iy = np.rint(sx).astype(np.int64), np.rint(sy).astype(np.int64)
        inside = (ix >= 0) & (ix < w) & (iy >= 0) & (iy < h)
        out[:] = fillv
        out[inside] = x[iy[inside], ix[inside]]
    elif interpolation == "bilinear":
        x0, y0 = np.floor(sx).astype(np.int64), np.floor(sy).astype(np.int64)
        fx, fy = (sx - x0)[..., None], (sy - y0)[..., None]

        def at(yy, xx):
            ok = ((xx >= 0) & (xx < w) & (yy >= 0) & (yy < h))[..., None]
            return np.where(ok, x[np.clip(yy, 0, h - 1), np.clip(xx, 0, w - 1)], fillv)
        out = ((at(y0, x0) * (1 - fx) + at(y0, x0 + 1) * fx) * (1 - fy) +
               (at(y0 + 1, x0) * (1 - fx) + at(y0 + 1, x0 + 1) * fx) * fy)
    else:
        raise ValueError(f"rotate: interpolation '{interpolation}' needs a PIL image; arrays and tensors take "
                         "'nearest' or 'bilinear'")
    return _as_dtype(out if a.ndim == 3 else out[..., 0], a.dtype)


def rotate(img, angle, interpolation="nearest", expand=False, center=None, fill=0):
    """Rotates by `angle` degrees counter-clockwise about center (default: the image centre);
    expand grows the output to hold the whole rotated image; outside pixels are `fill`."""
    if is_pil(img):
        if interpolation not in ("nearest", "bilinear", "bicubic"):
            raise ValueError(f"rotate: interpolation must be 'nearest', 'bilinear' or 'bicubic', got '{interpolation}'")
        fillcolor = tuple(fill) if isinstance(fill, (list, tuple)) else fill
        return img.rotate(angle, _PIL_FILTERS[interpolation], expand, center, fillcolor=fillcolor)
    a, back = to_hwc(img)
    return back(rotate_array(a, angle, interpolation, expand, center, fill))


# ---- colour ----
def _gray(a):
    """ITU-R 601-2 luma of an RGB HWC array (float64, HW); a 1-channel/HW image is itself."""
    if a.ndim == 2 or a.shape[2] == 1:
        return a.reshape(a.shape[:2]).astype(np.float64)
    return a[..., 0] * 0.299 + a[..., 1] * 0.587 + a[..., 2] * 0.114


def to_grayscale(img, num_output_channels=1):
    if num_output_channels not in (1, 3):
        raise ValueError(f"to_grayscale: num_output_channels must be 1 or 3, got {num_output_channels}")
    if is_pil(img):
        g = img.convert("L")
        return g if num_output_channels == 1 else g.convert("RGB")
    a, back = to_hwc(img)
    g = _as_dtype(_gray(a), a.dtype)[..., None]
    return back(g if num_output_channels == 1 else np.repeat(g, 3, axis=2))


def _blend(img, factor, other):
    a, back = to_hwc(img)
    return back(_clip(factor * a.astype(np.float64) + (1 - factor) * other(a), a.dtype))


def adjust_brightness(img, brightness_factor):
    return _blend(img, brightness_factor, lambda a: 0.0)


def adjust_contrast(img, contrast_factor):
    return _blend(img, contrast_factor, lambda a: _gray(a).mean())


def adjust_saturation(img, saturation_factor):
    return _blend(img, saturation_factor, lambda a: _gray(a)[..., None] if a.ndim == 3 else _gray(a))


def _rgb_to_hsv(rgb):
    mx, mn = rgb.max(-1), rgb.min(-1)
    d = mx - mn
    safe = np.where(d == 0, 1.0, d)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    hue = np.where(mx == r, (g - b) / safe, np.where(mx == g, 2.0 + (b - r) / safe, 4.0 + (r - g) / safe))
    hue = np.where(d == 0, 0.0, (hue / 6.0) % 1.0)
    return hue, np.where(mx == 0, 0.0, d / np.where(mx == 0, 1.0, mx)), mx


def _hsv_to_rgb(h, s, v):
    i = np.floor(h * 6.0)
    f = h * 6.0 - i
    p, q, t = v * (1 - s), v * (1 - s * f), v * (1 - s * (1 - f))
    i = i.astype(np.int64) % 6
    choices = [(v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q)]
    return np.stack([np.select([i == k for k in range(6)], [c[ch] for c in choices]) for ch in range(3)], -1)


def adjust_hue(img, hue_factor):
    """Shifts the hue by hue_factor (in [-0.5, 0.5], a fraction of the colour circle)."""
    if not -0.5 <= hue_factor <= 0.5:
        raise ValueError(f"adjust_hue: hue_factor must be in [-0.5, 0.5], got {hue_factor}")
    a, back = to_hwc(img)
    if a.ndim == 2 or a.shape[2] == 1:
        return img
    scale = 255.0 if a.dtype == np.uint8 else 1.0
    h, s, v = _rgb_to_hsv(a[..., :3].astype(np.float64) / scale)
    rgb = _hsv_to_rgb((h + hue_factor) % 1.0, s, v) * scale
    out = np.concatenate([rgb, a[..., 3:].astype(np.float64)], -1) if a.shape[2] > 3 else rgb
    return back(_clip(out, a.dtype))


__all__ = ["resize", "crop", "center_crop", "pad", "rotate", "to_grayscale", "adjust_brightness",
           "adjust_contrast", "adjust_saturation", "adjust_hue"]

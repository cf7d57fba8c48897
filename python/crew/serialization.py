"""paddle.save / paddle.load of what users save (issue 30, item 7).

A state dict (a dict of name -> Tensor) is written as a plain safetensors file, as before. Any
other object made of dicts, lists, tuples, tensors, NumPy arrays, numbers, strings, bools and
None (`{'model': sd, 'opt': opt_sd, 'epoch': 3}`, a lone Tensor) is written as a safetensors
file too: every tensor under a key of its own, and the structure with the plain values as JSON
in the file's metadata under "crew.object". Nothing is pickled, so loading a file never runs
code. `save` creates missing directories.
"""
import json
import os

import numpy as np

from . import _C

Tensor = _C.Tensor
_STRUCTURE_KEY = "crew.object"
_PLAIN = (str, bool, int, float, type(None))


def _is_state_dict(obj):
    return isinstance(obj, dict) and all(isinstance(k, str) and isinstance(v, Tensor) for k, v in obj.items())


def _encode(obj, tensors, where):
    """obj as JSON-able data; its tensors appended to `tensors` (replaced by references)."""
    if isinstance(obj, (Tensor, np.ndarray)):
        key = f"t{len(tensors)}"
        tensors[key] = obj if isinstance(obj, Tensor) else _C.to_tensor(obj)
        return {"__tensor__": key, "numpy": isinstance(obj, np.ndarray)}
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not np.isfinite(obj):
        return {"__float__": repr(obj)}
    if isinstance(obj, _PLAIN):
        return obj
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if not isinstance(k, (str, int)):
                raise TypeError(f"save: key {k!r} at {where} is a {type(k).__name__}; keys must be str or int")
            items.append([k, _encode(v, tensors, f"{where}[{k!r}]")])
        return {"__dict__": items}
    if isinstance(obj, (list, tuple)):
        kind = "__list__" if isinstance(obj, list) else "__tuple__"
        return {kind: [_encode(v, tensors, f"{where}[{i}]") for i, v in enumerate(obj)]}
    raise TypeError(f"save: the value at {where} is a {type(obj).__name__}; crew saves tensors, NumPy arrays, "
                    "numbers, strings, bools, None and dicts/lists/tuples of them (never pickle)")


def _decode(data, tensors):
    if isinstance(data, dict):
        if "__tensor__" in data:
            t = tensors[data["__tensor__"]]
            return t.numpy().copy() if data.get("numpy") else t
        if "__float__" in data:
            return float(data["__float__"])
        if "__dict__" in data:
            return {k: _decode(v, tensors) for k, v in data["__dict__"]}
        if "__list__" in data:
            return [_decode(v, tensors) for v in data["__list__"]]
        if "__tuple__" in data:
            return tuple(_decode(v, tensors) for v in data["__tuple__"])
        raise ValueError(f"load: unknown entry {sorted(data)} in the file's structure")
    return data


def save(obj, path, protocol=4, **configs):
    """Paddle's save: writes obj to path (a safetensors file), creating missing directories."""
    path = os.fspath(path)
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    if _is_state_dict(obj):
        _C.save(obj, path)
        return
    tensors = {}
    structure = _encode(obj, tensors, "obj")
    _C.save(tensors, path, {_STRUCTURE_KEY: json.dumps(structure)})


def load(path, **configs):
    """Paddle's load: what save wrote (a state dict comes back as a dict of name -> Tensor)."""
    path = os.fspath(path)
    tensors = _C.load(path)
    structure = _C.load_metadata(path).get(_STRUCTURE_KEY)
    if structure is None:
        return tensors
    return _decode(json.loads(structure), tensors)

"""crew.static: the parts of paddle.static a dynamic-graph program meets (InputSpec).

crew has no static graph; InputSpec describes a model's inputs for paddle.Model and
paddle.summary (shape with None/-1 for any size, dtype, name).
"""


class InputSpec:
    def __init__(self, shape=None, dtype="float32", name=None, stop_gradient=False):
        self.shape = tuple(-1 if d is None else int(d) for d in (shape or ()))
        self.dtype = str(dtype).replace("crew.", "").replace("paddle.", "")
        self.name = name
        self.stop_gradient = stop_gradient

    @classmethod
    def from_tensor(cls, tensor, name=None):
        return cls(tensor.shape, str(tensor.dtype), name)

    @classmethod
    def from_numpy(cls, ndarray, name=None):
        return cls(ndarray.shape, str(ndarray.dtype), name)

    def batch(self, batch_size):
        self.shape = (int(batch_size),) + self.shape
        return self

    def unbatch(self):
        self.shape = self.shape[1:]
        return self

    def __repr__(self):
        return f"InputSpec(shape={self.shape}, dtype={self.dtype}, name={self.name})"

    def __eq__(self, other):
        return (isinstance(other, InputSpec) and self.shape == other.shape and self.dtype == other.dtype
                and self.name == other.name)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.name))


__all__ = ["InputSpec"]

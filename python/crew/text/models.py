"""crew.text.models: the C++ GPT (crew/nn/models/gpt.h) as a crew.nn.Layer."""
import numpy as np

from .. import _C
from ..nn.layer import CppLayer

_models = _C.nn.models


class GPT(CppLayer):
    """A GPT-2 style decoder over bytes: idx int64 [B, T] (T <= block_size) -> logits
    [B, T, vocab_size]. Keys as GPT-2's: wte.weight, wpe.weight, h.0.ln_1.weight,
    h.0.attn.c_attn.weight [n_embd, 3 n_embd], ..., ln_f.bias; the output layer is tied to
    wte.weight."""

    def __init__(self, vocab_size=256, block_size=128, n_layer=4, n_head=4, n_embd=256, dropout=0.0):
        super().__init__(_models.GPT(vocab_size, block_size, n_layer, n_head, n_embd, dropout))

    @property
    def config(self):
        return self._impl.config

    def generate(self, prompt, count, temperature=1.0):
        """`count` new tokens after prompt (a list of ints, or a 1-d int Tensor / array), each
        sampled from softmax(logits / temperature) of the last position, in eval mode without
        gradients (the mode is restored). Returns the new tokens as a list of ints; crew.seed
        makes it repeatable."""
        if isinstance(prompt, _C.Tensor):
            prompt = prompt.numpy()
        tokens = [int(t) for t in np.asarray(prompt).reshape(-1)]
        return self._impl.generate(tokens, int(count), float(temperature))


__all__ = ["GPT"]

"""Paddle's nn.MultiHeadAttention over [batch, seq, embed] tensors.

Without a mask (or with the square causal mask), without attention dropout in training and
without need_weights, attention runs on crew's fused kernel (F.scaled_dot_product_attention,
one autograd node, oneDNN matmuls); otherwise it is composed of matmul, add, softmax and
dropout, as Paddle computes it. Masks follow Paddle: a bool or integer mask keeps the
entries that are 1/True and masks the others (adds -1e9), a floating mask is added to the
scaled scores. Masks broadcast to [batch, num_heads, query_len, key_len].
"""
import copy

import numpy as np

from .. import _C
from ..param_attr import ParamAttr
from .layer import Layer
from .layers import Dropout, Linear

_F = _C.nn.functional
_NP_DTYPE = {_C.dtype.float32: np.float32, _C.dtype.float64: np.float64}


def _mask_array(mask):
    return mask.numpy() if isinstance(mask, _C.Tensor) else np.asarray(mask)


def convert_attention_mask(attn_mask, dtype):
    """Paddle's _convert_attention_mask: None stays None; a bool/integer mask becomes
    (mask - 1) * 1e9 in `dtype` (0 where attended, -1e9 where masked); a floating mask is
    returned as is (converted to `dtype`)."""
    if attn_mask is None:
        return None
    if isinstance(attn_mask, _C.Tensor) and attn_mask.dtype == dtype:
        return attn_mask
    m = _mask_array(attn_mask)
    if not np.issubdtype(m.dtype, np.floating):
        if not (np.issubdtype(m.dtype, np.integer) or m.dtype == np.bool_):
            raise TypeError(f"attention mask: expected a bool, integer or floating mask, got {m.dtype}")
        m = (m.astype(np.float64) - 1.0) * 1e9
    return _C.to_tensor(np.ascontiguousarray(m, dtype=_NP_DTYPE[dtype]))


def is_causal_mask(attn_mask, length):
    """Whether a converted (floating) mask is the square subsequent mask of `length`:
    0 on and below the diagonal, <= -1e9 (or -inf) above, shaped [L, L] or [1, .., 1, L, L]."""
    if attn_mask is None or list(attn_mask.shape)[-2:] != [length, length]:
        return False
    if any(s != 1 for s in attn_mask.shape[:-2]):
        return False
    m = _mask_array(attn_mask).reshape(length, length)
    upper = np.triu(np.ones((length, length), dtype=bool), 1)
    return bool(np.all(m[~upper] == 0) and np.all(m[upper] <= -1e9))


def param_attr_list(param_attr, n):
    """Paddle's _convert_param_attr_to_list: one attribute for each of n parts (a list must
    have n entries; one named attribute gets the suffixes _0, _1, ...)."""
    if isinstance(param_attr, (list, tuple)):
        if len(param_attr) != n:
            raise ValueError(f"expected {n} weight/bias attributes, got {len(param_attr)}")
        return [False if a is False else ParamAttr._to_attr(a) for a in param_attr]
    if isinstance(param_attr, bool):
        return [ParamAttr._to_attr(param_attr) if param_attr else False] * n
    attr = ParamAttr._to_attr(param_attr)
    out = []
    for i in range(n):
        a = copy.deepcopy(attr)
        if attr.name:
            a.name = f"{attr.name}_{i}"
        out.append(a)
    return out


def _no_cache(cache, who):
    if cache is not None:
        raise NotImplementedError(f"{who}: cache (incremental decoding) is not supported by crew; "
                                  "pass cache=None and feed the whole sequence")


class MultiHeadAttention(Layer):
    """MultiHeadAttention(embed_dim, num_heads, dropout=0., kdim=None, vdim=None,
    need_weights=False, weight_attr=None, bias_attr=None).

    forward(query [B, Tq, embed_dim], key [B, Tk, kdim] = query, value [B, Tk, vdim] = query,
    attn_mask=None) -> out [B, Tq, embed_dim], plus the attention weights [B, num_heads, Tq, Tk]
    when need_weights. Parameters: q_proj, k_proj, v_proj, out_proj (Linear, weight [in, out])."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, kdim=None, vdim=None, need_weights=False,
                 weight_attr=None, bias_attr=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"MultiHeadAttention: embed_dim and num_heads must be positive, got "
                             f"{embed_dim} and {num_heads}")
        if embed_dim % num_heads:
            raise ValueError(f"MultiHeadAttention: embed_dim ({embed_dim}) must be divisible by "
                             f"num_heads ({num_heads})")
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self.num_heads = num_heads
        self.dropout = float(dropout)
        self.need_weights = need_weights
        self.head_dim = embed_dim // num_heads
        self.q_proj = Linear(embed_dim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.k_proj = Linear(self.kdim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.v_proj = Linear(self.vdim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.out_proj = Linear(embed_dim, embed_dim, weight_attr, bias_attr=bias_attr)
        # Not a sub-layer (Paddle's has none); its mode follows self.training in forward.
        object.__setattr__(self, "_weights_dropout", Dropout(self.dropout) if self.dropout else None)

    def _heads(self, x, proj, width, what):
        if x.ndim != 3 or x.shape[-1] != width:
            raise ValueError(f"MultiHeadAttention: {what} must be [batch, seq, {width}], got {list(x.shape)}")
        b, t = x.shape[0], x.shape[1]
        return _C.reshape(proj(x), [b, t, self.num_heads, self.head_dim])

    def forward(self, query, key=None, value=None, attn_mask=None, cache=None):
        _no_cache(cache, "MultiHeadAttention")
        key = query if key is None else key
        value = query if value is None else value
        q = self._heads(query, self.q_proj, self.embed_dim, "query")
        k = self._heads(key, self.k_proj, self.kdim, "key")
        v = self._heads(value, self.v_proj, self.vdim, "value")
        if k.shape[0] != q.shape[0] or v.shape[:2] != k.shape[:2]:
            raise ValueError(f"MultiHeadAttention: query {list(query.shape)}, key {list(key.shape)} and "
                             f"value {list(value.shape)} must share the batch; key and value the length")
        mask = convert_attention_mask(attn_mask, q.dtype)
        b, tq = q.shape[0], q.shape[1]
        fused = not self.need_weights and not (self.dropout and self.training)
        if fused and (mask is None or (tq == k.shape[1] and is_causal_mask(mask, tq))):
            out = _F.scaled_dot_product_attention(q, k, v, is_causal=mask is not None)
            weights = None
        else:
            out, weights = self._composed(q, k, v, mask)
        out = self.out_proj(_C.reshape(out, [b, tq, self.embed_dim]))
        return (out, weights) if self.need_weights else out

    def _composed(self, q, k, v, mask):
        """softmax(q k^T / sqrt(head_dim) + mask) v on [B, H, T, D]; returns ([B, Tq, H, D], weights)."""
        qh = _C.transpose(q, [0, 2, 1, 3]) * (self.head_dim ** -0.5)
        kh, vh = _C.transpose(k, [0, 2, 1, 3]), _C.transpose(v, [0, 2, 1, 3])
        scores = _C.matmul(qh, kh, transpose_y=True)
        if mask is not None:
            scores = scores + mask
        weights = _F.softmax(scores, axis=-1)
        if self._weights_dropout is not None:
            self._weights_dropout._set_mode(self.training)
            weights = self._weights_dropout(weights)
        return _C.transpose(_C.matmul(weights, vh), [0, 2, 1, 3]), weights

    def gen_cache(self, key, value=None, type=None):
        _no_cache(True, "MultiHeadAttention.gen_cache")


__all__ = ["MultiHeadAttention"]

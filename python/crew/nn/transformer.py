"""Paddle's Transformer layers: TransformerEncoderLayer/Encoder, TransformerDecoderLayer/
Decoder and Transformer, with Paddle's sub-layer names (self_attn, cross_attn, linear1,
linear2, norm1..3, dropout1..3) so that state_dict keys match Paddle's
(encoder.layers.0.self_attn.q_proj.weight, ...). Post-norm by default, pre-norm with
normalize_before=True. cache (incremental decoding) is refused with NotImplementedError.
"""
import numpy as np

from .. import _C
from . import functional as F
from .attention import MultiHeadAttention, _no_cache, convert_attention_mask, param_attr_list
from .containers import LayerList
from .layer import Layer
from .layers import Dropout, LayerNorm, Linear


def _activation(name):
    fn = getattr(F, name, None) if isinstance(name, str) else None
    if fn is None or not callable(fn):
        raise ValueError(f"Transformer: activation must name a function of crew.nn.functional "
                         f"('relu', 'gelu', ...), got {name!r}")
    return fn


def _mask(mask, x):
    return convert_attention_mask(mask, x.dtype)


class _Configured(Layer):
    """Keeps the constructor's arguments, so that Encoder/Decoder can build fresh copies."""

    def _keep_config(self, config):
        object.__setattr__(self, "_config", {k: v for k, v in config.items() if k not in ("self", "__class__")})


class TransformerEncoderLayer(_Configured):
    """src [B, S, d_model] (+ src_mask broadcastable to [B, nhead, S, S]) -> [B, S, d_model].
    weight_attr/bias_attr: one attribute, or a list of two (self-attention, feed-forward)."""

    def __init__(self, d_model, nhead, dim_feedforward, dropout=0.1, activation="relu",
                 attn_dropout=None, act_dropout=None, normalize_before=False, weight_attr=None,
                 bias_attr=None, layer_norm_eps=1e-5):
        self._keep_config(locals())
        super().__init__()
        attn_dropout = dropout if attn_dropout is None else attn_dropout
        act_dropout = dropout if act_dropout is None else act_dropout
        self.normalize_before = normalize_before
        w, b = param_attr_list(weight_attr, 2), param_attr_list(bias_attr, 2)
        self.self_attn = MultiHeadAttention(d_model, nhead, dropout=attn_dropout, weight_attr=w[0],
                                            bias_attr=b[0])
        self.linear1 = Linear(d_model, dim_feedforward, w[1], bias_attr=b[1])
        self.dropout = Dropout(act_dropout)
        self.linear2 = Linear(dim_feedforward, d_model, w[1], bias_attr=b[1])
        self.norm1 = LayerNorm(d_model, layer_norm_eps)
        self.norm2 = LayerNorm(d_model, layer_norm_eps)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, src, src_mask=None, cache=None):
        _no_cache(cache, "TransformerEncoderLayer")
        src_mask = _mask(src_mask, src)
        residual = src
        if self.normalize_before:
            src = self.norm1(src)
        src = residual + self.dropout1(self.self_attn(src, src, src, src_mask))
        if not self.normalize_before:
            src = self.norm1(src)
        residual = src
        if self.normalize_before:
            src = self.norm2(src)
        src = self.linear2(self.dropout(self.activation(self.linear1(src))))
        src = residual + self.dropout2(src)
        if not self.normalize_before:
            src = self.norm2(src)
        return src


def _clones(layer, num_layers):
    """The given layer first, then num_layers - 1 fresh ones of its configuration (Paddle's rule:
    new parameters, not copies)."""
    if num_layers < 1:
        raise ValueError(f"Transformer: num_layers must be >= 1, got {num_layers}")
    return LayerList([layer if i == 0 else type(layer)(**layer._config) for i in range(num_layers)])


class TransformerEncoder(Layer):
    """num_layers encoder layers (the given one and fresh copies), then `norm` if given."""

    def __init__(self, encoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, src_mask=None, cache=None):
        _no_cache(cache, "TransformerEncoder")
        src_mask = _mask(src_mask, src)
        out = src
        for layer in self.layers:
            out = layer(out, src_mask=src_mask)
        return self.norm(out) if self.norm is not None else out


class TransformerDecoderLayer(_Configured):
    """tgt [B, T, d_model], memory [B, S, d_model] -> [B, T, d_model]: self-attention (tgt_mask,
    broadcastable to [B, nhead, T, T]), cross-attention on memory (memory_mask, [B, nhead, T, S]),
    feed-forward. weight_attr/bias_attr: one attribute, or a list of three (self-attention,
    cross-attention, feed-forward)."""

    def __init__(self, d_model, nhead, dim_feedforward, dropout=0.1, activation="relu",
                 attn_dropout=None, act_dropout=None, normalize_before=False, weight_attr=None,
                 bias_attr=None, layer_norm_eps=1e-5):
        self._keep_config(locals())
        super().__init__()
        attn_dropout = dropout if attn_dropout is None else attn_dropout
        act_dropout = dropout if act_dropout is None else act_dropout
        self.normalize_before = normalize_before
        w, b = param_attr_list(weight_attr, 3), param_attr_list(bias_attr, 3)
        self.self_attn = MultiHeadAttention(d_model, nhead, dropout=attn_dropout, weight_attr=w[0],
                                            bias_attr=b[0])
        self.cross_attn = MultiHeadAttention(d_model, nhead, dropout=attn_dropout, weight_attr=w[1],
                                             bias_attr=b[1])
        self.linear1 = Linear(d_model, dim_feedforward, w[2], bias_attr=b[2])
        self.dropout = Dropout(act_dropout)
        self.linear2 = Linear(dim_feedforward, d_model, w[2], bias_attr=b[2])
        self.norm1 = LayerNorm(d_model, layer_norm_eps)
        self.norm2 = LayerNorm(d_model, layer_norm_eps)
        self.norm3 = LayerNorm(d_model, layer_norm_eps)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)

    def _block(self, x, norm, dropout, fn):
        residual = x
        if self.normalize_before:
            x = norm(x)
        x = residual + dropout(fn(x))
        return x if self.normalize_before else norm(x)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, cache=None):
        _no_cache(cache, "TransformerDecoderLayer")
        tgt_mask, memory_mask = _mask(tgt_mask, tgt), _mask(memory_mask, tgt)
        tgt = self._block(tgt, self.norm1, self.dropout1, lambda x: self.self_attn(x, x, x, tgt_mask))
        tgt = self._block(tgt, self.norm2, self.dropout2,
                          lambda x: self.cross_attn(x, memory, memory, memory_mask))
        return self._block(tgt, self.norm3, self.dropout3,
                           lambda x: self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoder(Layer):
    """num_layers decoder layers (the given one and fresh copies), then `norm` if given."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, cache=None):
        _no_cache(cache, "TransformerDecoder")
        tgt_mask, memory_mask = _mask(tgt_mask, tgt), _mask(memory_mask, tgt)
        out = tgt
        for layer in self.layers:
            out = layer(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask)
        return self.norm(out) if self.norm is not None else out


def _split_attrs(attr):
    """Transformer's weight_attr/bias_attr: a list of 1, 2 or 3 -> (encoder's 2, decoder's 3)."""
    if not isinstance(attr, (list, tuple)):
        return attr, attr
    if len(attr) == 1:
        return [attr[0]] * 2, [attr[0]] * 3
    if len(attr) == 2:
        return [attr[0], attr[1]], [attr[0], attr[0], attr[1]]
    if len(attr) == 3:
        return [attr[0], attr[2]], list(attr)
    raise ValueError(f"Transformer: weight_attr/bias_attr lists have 1, 2 or 3 entries, got {len(attr)}")


class Transformer(Layer):
    """Paddle's nn.Transformer: encoder (num_encoder_layers, final LayerNorm) and decoder
    (num_decoder_layers, final LayerNorm); forward(src [B, S, d_model], tgt [B, T, d_model],
    src_mask, tgt_mask, memory_mask) -> [B, T, d_model]."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation="relu", attn_dropout=None,
                 act_dropout=None, normalize_before=False, weight_attr=None, bias_attr=None,
                 custom_encoder=None, custom_decoder=None):
        super().__init__()
        (enc_w, dec_w), (enc_b, dec_b) = _split_attrs(weight_attr), _split_attrs(bias_attr)
        common = dict(dropout=dropout, activation=activation, attn_dropout=attn_dropout,
                      act_dropout=act_dropout, normalize_before=normalize_before)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, weight_attr=enc_w,
                                            bias_attr=enc_b, **common)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, LayerNorm(d_model))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, weight_attr=dec_w,
                                            bias_attr=dec_b, **common)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, LayerNorm(d_model))
        self.d_model = d_model
        self.nhead = nhead

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None):
        memory = self.encoder(src, src_mask=_mask(src_mask, src))
        return self.decoder(tgt, memory, tgt_mask=_mask(tgt_mask, tgt), memory_mask=_mask(memory_mask, tgt))

    def generate_square_subsequent_mask(self, length):
        """float32 [length, length]: 0 on and below the diagonal, -inf above (Paddle's)."""
        if isinstance(length, _C.Tensor):
            length = int(length.item())
        return _C.to_tensor(np.triu(np.full([length, length], -np.inf, dtype=np.float32), 1))


__all__ = ["TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer",
           "TransformerDecoder", "Transformer"]

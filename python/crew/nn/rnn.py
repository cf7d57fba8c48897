"""Paddle's recurrent layers: the cells SimpleRNNCell, LSTMCell, GRUCell (composed from
crew's ops, any float dtype), the wrappers RNN and BiRNN (a cell over time, Paddle's loop),
and the layers SimpleRNN, LSTM, GRU. The layers run each layer on oneDNN's RNN primitives
(crew._C.nn.functional.rnn_layer, forward and backward in one graph node) for float32 input;
they fall back to the cells' loop for other dtypes and for batches whose sequence_length
leaves padding.

Paddle's math, names and shapes: LSTM gates i, f, g, o; GRU gates r, z, c with the reset
applied after the hidden matmul (c = tanh(W_c x + b_ic + r * (U_c h + b_hc)),
h = z * h_prev + (1 - z) * c); parameters weight_ih [G*H, I], weight_hh [G*H, H], bias_ih,
bias_hh [G*H], all drawn from U(-1/sqrt(H), 1/sqrt(H)); the layers also expose them as
weight_ih_l{k}[_reverse] ... (state_dict has both names, as Paddle's)."""
import math

import numpy as np

from .. import _C
from .._C import Tensor
from . import functional as F
from .initializer import Uniform
from .layer import Layer
from .containers import LayerList

_BIDIRECT = ("bidirect", "bidirectional")


def _zeros_like_state(ref, batch, hidden):
    return _C.to_tensor(np.zeros((batch, hidden), dtype=_np_dtype(ref)))


def _np_dtype(t):
    return np.float64 if str(t.dtype).endswith("float64") else np.float32


def _split_gates(x, n):
    return _C.split(x, n, 1) if n > 1 else [x]


class RNNCellBase(Layer):
    """What the cells share: parameters and get_initial_states."""

    _gates = 1

    def __init__(self, input_size, hidden_size, weight_ih_attr=None, weight_hh_attr=None,
                 bias_ih_attr=None, bias_hh_attr=None):
        super().__init__()
        if hidden_size <= 0:
            raise ValueError(f"{type(self).__name__}: hidden_size must be > 0, got {hidden_size}")
        if input_size <= 0:
            raise ValueError(f"{type(self).__name__}: input_size must be > 0, got {input_size}")
        self.input_size = int(input_size)
        self.hidden_size = int(hidden_size)
        std = 1.0 / math.sqrt(hidden_size)
        g = self._gates * hidden_size
        init = Uniform(-std, std)
        self.weight_ih = self.create_parameter([g, input_size], weight_ih_attr, default_initializer=init)
        self.weight_hh = self.create_parameter([g, hidden_size], weight_hh_attr, default_initializer=init)
        self.bias_ih = self.create_parameter([g], bias_ih_attr, is_bias=True, default_initializer=init)
        self.bias_hh = self.create_parameter([g], bias_hh_attr, is_bias=True, default_initializer=init)

    def _projections(self, inputs, h):
        x = _C.matmul(inputs, self.weight_ih, transpose_y=True)
        if self.bias_ih is not None:
            x = x + self.bias_ih
        hh = _C.matmul(h, self.weight_hh, transpose_y=True)
        if self.bias_hh is not None:
            hh = hh + self.bias_hh
        return x, hh

    def get_initial_states(self, batch_ref, shape=None, dtype=None, init_value=0.0, batch_dim_idx=0):
        """Zeros [batch, hidden] (a pair for LSTM), batch from batch_ref's axis batch_dim_idx."""
        batch = batch_ref.shape[batch_dim_idx]
        npd = _np_dtype(batch_ref) if dtype is None else np.dtype(str(dtype).split(".")[-1])
        make = lambda: _C.to_tensor(np.full((batch, self.hidden_size), init_value, dtype=npd))  # noqa: E731
        return (make(), make()) if self._gates == 4 else make()

    @property
    def state_shape(self):
        return ((self.hidden_size,), (self.hidden_size,)) if self._gates == 4 else (self.hidden_size,)


class SimpleRNNCell(RNNCellBase):
    """h = act(W_ih x + b_ih + W_hh h_prev + b_hh), act 'tanh' or 'relu'. Returns (h, h)."""

    def __init__(self, input_size, hidden_size, activation="tanh", weight_ih_attr=None,
                 weight_hh_attr=None, bias_ih_attr=None, bias_hh_attr=None, name=None):
        if activation not in ("tanh", "relu"):
            raise ValueError(f"SimpleRNNCell: activation must be 'tanh' or 'relu', got '{activation}'")
        super().__init__(input_size, hidden_size, weight_ih_attr, weight_hh_attr, bias_ih_attr,
                         bias_hh_attr)
        self.activation = activation

    def forward(self, inputs, states=None):
        if states is None:
            states = self.get_initial_states(inputs)
        x, hh = self._projections(inputs, states)
        h = (F.tanh if self.activation == "tanh" else F.relu)(x + hh)
        return h, h


class LSTMCell(RNNCellBase):
    """Paddle's LSTM step: gates i, f, g, o; c = f * c_prev + i * tanh(g), h = o * tanh(c).
    states (h, c); returns (h, (h, c))."""

    _gates = 4

    def __init__(self, input_size, hidden_size, weight_ih_attr=None, weight_hh_attr=None,
                 bias_ih_attr=None, bias_hh_attr=None, name=None):
        super().__init__(input_size, hidden_size, weight_ih_attr, weight_hh_attr, bias_ih_attr,
                         bias_hh_attr)

    def forward(self, inputs, states=None):
        if states is None:
            states = self.get_initial_states(inputs)
        h_prev, c_prev = states
        x, hh = self._projections(inputs, h_prev)
        i, f, g, o = _split_gates(x + hh, 4)
        i, f, o = F.sigmoid(i), F.sigmoid(f), F.sigmoid(o)
        c = f * c_prev + i * F.tanh(g)
        h = o * F.tanh(c)
        return h, (h, c)


class GRUCell(RNNCellBase):
    """Paddle's GRU step: r, z = sigmoid(x_r + h_r), sigmoid(x_z + h_z);
    c = tanh(x_c + r * h_c) (h_c includes b_hc); h = (h_prev - c) * z + c. Returns (h, h)."""

    _gates = 3

    def __init__(self, input_size, hidden_size, weight_ih_attr=None, weight_hh_attr=None,
                 bias_ih_attr=None, bias_hh_attr=None, name=None):
        super().__init__(input_size, hidden_size, weight_ih_attr, weight_hh_attr, bias_ih_attr,
                         bias_hh_attr)

    def forward(self, inputs, states=None):
        if states is None:
            states = self.get_initial_states(inputs)
        x, hh = self._projections(inputs, states)
        x_r, x_z, x_c = _split_gates(x, 3)
        h_r, h_z, h_c = _split_gates(hh, 3)
        r = F.sigmoid(x_r + h_r)
        z = F.sigmoid(x_z + h_z)
        c = F.tanh(x_c + r * h_c)
        h = (states - c) * z + c
        return h, h


# ---- running a cell over time (Paddle's _rnn_dynamic_graph) ----

def _map(fn, s):
    if isinstance(s, (list, tuple)):
        return type(s)(_map(fn, x) for x in s)
    return fn(s)


def _map2(fn, a, b):
    if isinstance(a, (list, tuple)):
        return type(a)(_map2(fn, x, y) for x, y in zip(a, b))
    return fn(a, b)


def _step_masks(sequence_length, steps, batch, dtype):
    """[T] masks [N, 1] (1 where step t < length) and their complements, as tensors."""
    lengths = sequence_length.numpy() if isinstance(sequence_length, Tensor) else np.asarray(sequence_length)
    lengths = lengths.reshape(-1).astype(np.int64)
    if lengths.shape[0] != batch:
        raise ValueError(f"RNN: sequence_length has {lengths.shape[0]} entries for a batch of {batch}")
    m = (np.arange(steps)[:, None] < lengths[None, :]).astype(dtype)[:, :, None]
    return [(_C.to_tensor(m[t]), _C.to_tensor(1 - m[t])) for t in range(steps)]


def _run_cell(cell, inputs, states, sequence_length, time_major, is_reverse, zero_padded_outputs=False):
    """Steps `cell` over inputs ([N, T, ...], or [T, N, ...] when time_major). With
    sequence_length, a sequence's state stops changing after its last step (the reverse
    direction starts at it); zero_padded_outputs zeroes the outputs there (Paddle's fused
    layers do, its RNN wrapper does not)."""
    t_axis = 0 if time_major else 1
    steps = inputs.shape[t_axis]
    batch = inputs.shape[1 - t_axis]
    if states is None:
        states = cell.get_initial_states(inputs, batch_dim_idx=1 - t_axis)
    masks = None
    if sequence_length is not None:
        masks = _step_masks(sequence_length, steps, batch, _np_dtype(inputs))
    order = range(steps - 1, -1, -1) if is_reverse else range(steps)
    outputs = [None] * steps
    for t in order:
        x_t = inputs[t] if time_major else inputs[:, t]
        out, new_states = cell(x_t, states)
        if masks is not None:
            keep, drop = masks[t]
            new_states = _map2(lambda old, new: new * keep + old * drop, states, new_states)
            if zero_padded_outputs:
                out = out * keep
        states = new_states
        outputs[t] = out
    return _C.stack(outputs, t_axis), states


class RNN(Layer):
    """Runs a cell over a sequence: forward(inputs, initial_states=None, sequence_length=None)
    -> (outputs [N, T, H] (or [T, N, H] when time_major), final_states)."""

    def __init__(self, cell, is_reverse=False, time_major=False):
        super().__init__()
        self.cell = cell
        self.is_reverse = is_reverse
        self.time_major = time_major

    def forward(self, inputs, initial_states=None, sequence_length=None, **kwargs):
        return _run_cell(self.cell, inputs, initial_states, sequence_length, self.time_major,
                         self.is_reverse)


class BiRNN(Layer):
    """Two cells over a sequence, one each way: outputs concatenated on the last axis
    [forward, backward]; final_states (states_fw, states_bw)."""

    def __init__(self, cell_fw, cell_bw, time_major=False):
        super().__init__()
        self.cell_fw = cell_fw
        self.cell_bw = cell_bw
        if cell_fw.input_size != cell_bw.input_size:
            raise ValueError(f"BiRNN: the cells' input sizes differ: {cell_fw.input_size} and "
                             f"{cell_bw.input_size}")
        self.time_major = time_major

    def forward(self, inputs, initial_states=None, sequence_length=None, **kwargs):
        if isinstance(initial_states, (list, tuple)):
            if len(initial_states) != 2:
                raise ValueError("BiRNN: initial_states must be (states_fw, states_bw)")
            fw0, bw0 = initial_states
        else:
            fw0 = bw0 = None
        out_fw, st_fw = _run_cell(self.cell_fw, inputs, fw0, sequence_length, self.time_major, False)
        out_bw, st_bw = _run_cell(self.cell_bw, inputs, bw0, sequence_length, self.time_major, True)
        return _C.concat([out_fw, out_bw], -1), (st_fw, st_bw)


# ---- the layers ----

class RNNBase(LayerList):
    """A stack of RNN / BiRNN layers (Paddle's RNNBase): forward(inputs, initial_states=None,
    sequence_length=None) -> (outputs, final_states); states [L*D, N, H] ((h, c) for LSTM),
    layer-major with the forward direction first, as Paddle's."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, direction="forward",
                 time_major=False, dropout=0.0, weight_ih_attr=None, weight_hh_attr=None,
                 bias_ih_attr=None, bias_hh_attr=None, activation="tanh"):
        super().__init__()
        name = {"LSTM": "LSTM", "GRU": "GRU"}.get(mode, "SimpleRNN")
        if direction not in ("forward",) + _BIDIRECT:
            raise ValueError(f"{name}: direction should be 'forward' or 'bidirect' (or "
                             f"'bidirectional'), got '{direction}'")
        if num_layers < 1:
            raise ValueError(f"{name}: num_layers must be >= 1, got {num_layers}")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"{name}: dropout must be in [0, 1), got {dropout}")
        self.mode = mode
        self.input_size = int(input_size)
        self.hidden_size = int(hidden_size)
        self.num_layers = int(num_layers)
        self.num_directions = 2 if direction in _BIDIRECT else 1
        self.time_major = time_major
        self.dropout = float(dropout)
        self.state_components = 2 if mode == "LSTM" else 1
        kwargs = dict(weight_ih_attr=weight_ih_attr, weight_hh_attr=weight_hh_attr,
                      bias_ih_attr=bias_ih_attr, bias_hh_attr=bias_hh_attr)
        if mode == "LSTM":
            make = lambda i: LSTMCell(i, hidden_size, **kwargs)  # noqa: E731
        elif mode == "GRU":
            make = lambda i: GRUCell(i, hidden_size, **kwargs)  # noqa: E731
        else:
            make = lambda i: SimpleRNNCell(i, hidden_size, activation, **kwargs)  # noqa: E731
        for layer in range(num_layers):
            in_size = input_size if layer == 0 else hidden_size * self.num_directions
            if self.num_directions == 1:
                self.append(RNN(make(in_size), False, time_major))
            else:
                self.append(BiRNN(make(in_size), make(in_size), time_major))
        # Paddle's flat names, the same tensors as the cells' (state_dict lists both).
        for layer in range(num_layers):
            cells = ([self[layer].cell] if self.num_directions == 1
                     else [self[layer].cell_fw, self[layer].cell_bw])
            for d, cell in enumerate(cells):
                suffix = "_reverse" if d == 1 else ""
                for p in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                    if getattr(cell, p) is not None:
                        setattr(self, f"{p}_l{layer}{suffix}", getattr(cell, p))

    def _cells(self, layer):
        l = self[layer]
        return [l.cell] if self.num_directions == 1 else [l.cell_fw, l.cell_bw]

    def _fused_mode(self):
        if self.mode == "SimpleRNN":
            return "RNN_RELU" if self._cells(0)[0].activation == "relu" else "RNN_TANH"
        return self.mode

    def _dropout(self, x):
        if not self.training or self.dropout == 0.0:
            return x
        keep = (np.random.random_sample(tuple(x.shape)) >= self.dropout).astype(_np_dtype(x))
        return x * _C.to_tensor(keep / (1.0 - self.dropout))

    def _check_input(self, inputs):
        name = {"LSTM": "LSTM", "GRU": "GRU"}.get(self.mode, "SimpleRNN")
        if inputs.ndim != 3:
            raise ValueError(f"{name}: inputs must be 3-d ({'[T, N, I]' if self.time_major else '[N, T, I]'}), "
                             f"got shape {list(inputs.shape)}")
        if inputs.shape[2] != self.input_size:
            raise ValueError(f"{name}: inputs have {inputs.shape[2]} features, input_size is {self.input_size}")
        return name

    def forward(self, inputs, initial_states=None, sequence_length=None):
        name = self._check_input(inputs)
        t_axis = 0 if self.time_major else 1
        steps, batch = inputs.shape[t_axis], inputs.shape[1 - t_axis]
        ld = self.num_layers * self.num_directions
        full = sequence_length is None or bool(
            np.all(np.asarray(sequence_length.numpy() if isinstance(sequence_length, Tensor)
                              else sequence_length) >= steps))
        fused = full and _np_dtype(inputs) == np.float32
        if initial_states is None:
            if fused:  # the kernel starts from zeros itself
                return self._fused(inputs, [None] * self.state_components)
            z = _C.to_tensor(np.zeros((ld, batch, self.hidden_size), dtype=_np_dtype(inputs)))
            initial_states = (z, z) if self.state_components == 2 else z
        elif isinstance(initial_states, Tensor):
            initial_states = initial_states if self.state_components == 1 else (initial_states,)
        comps = [initial_states] if self.state_components == 1 else list(initial_states)
        if len(comps) != self.state_components:
            raise ValueError(f"{name}: initial_states must be (h, c), got {len(comps)} tensors")
        for c in comps:
            if list(c.shape) != [ld, batch, self.hidden_size]:
                raise ValueError(f"{name}: an initial state has shape {list(c.shape)}, expected "
                                 f"[num_layers * num_directions, batch, hidden_size] = "
                                 f"{[ld, batch, self.hidden_size]}")
        if fused:
            return self._fused(inputs, comps)
        return self._composed(inputs, comps, sequence_length)

    def _fused(self, inputs, comps):
        """Each layer on oneDNN (one graph node per layer)."""
        d = self.num_directions
        x = inputs  # batch-major input is read as it lies (oneDNN's ntc layout)
        finals = [[] for _ in comps]
        for layer in range(self.num_layers):
            if layer > 0:
                x = self._dropout(x)
            weights = []
            for cell in self._cells(layer):
                weights += [cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh]
            s = [c if c is None or self.num_layers == 1 else _C.slice(c, [0], [layer * d], [(layer + 1) * d])
                 for c in comps]
            x, h, c = _C.nn.functional.rnn_layer(self._fused_mode(), x, weights, s[0],
                                                 s[1] if len(s) > 1 else None, d == 2,
                                                 batch_major=not self.time_major)
            finals[0].append(h)
            if len(comps) > 1:
                finals[1].append(c)
        out = x
        states = [_C.concat(f, 0) if len(f) > 1 else f[0] for f in finals]
        return out, (states[0] if len(states) == 1 else tuple(states))

    def _composed(self, inputs, comps, sequence_length):
        """The cells' loop (float64, or sequences of several lengths)."""
        d = self.num_directions
        x = inputs
        finals = [[] for _ in comps]
        for layer in range(self.num_layers):
            if layer > 0:
                x = self._dropout(x)
            outs = []
            for k, cell in enumerate(self._cells(layer)):
                i = layer * d + k
                st = [c[i] for c in comps]
                st = st[0] if len(st) == 1 else tuple(st)
                o, st = _run_cell(cell, x, st, sequence_length, self.time_major, k == 1,
                                  zero_padded_outputs=True)
                outs.append(o)
                for j, s in enumerate([st] if len(comps) == 1 else st):
                    finals[j].append(s)
            x = outs[0] if d == 1 else _C.concat(outs, -1)
        states = [_C.stack(f, 0) for f in finals]
        return x, (states[0] if len(states) == 1 else tuple(states))

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.num_directions == 2:
            s += ", direction=bidirect"
        return s


class SimpleRNN(RNNBase):
    """Paddle's nn.SimpleRNN: activation 'tanh' or 'relu'. Returns (outputs, h_n)."""

    def __init__(self, input_size, hidden_size, num_layers=1, direction="forward", time_major=False,
                 dropout=0.0, activation="tanh", weight_ih_attr=None, weight_hh_attr=None,
                 bias_ih_attr=None, bias_hh_attr=None, name=None):
        if activation not in ("tanh", "relu"):
            raise ValueError(f"SimpleRNN: activation must be 'tanh' or 'relu', got '{activation}'")
        super().__init__("SimpleRNN", input_size, hidden_size, num_layers, direction, time_major,
                         dropout, weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr,
                         activation)


class LSTM(RNNBase):
    """Paddle's nn.LSTM. Returns (outputs, (h_n, c_n))."""

    def __init__(self, input_size, hidden_size, num_layers=1, direction="forward", time_major=False,
                 dropout=0.0, weight_ih_attr=None, weight_hh_attr=None, bias_ih_attr=None,
                 bias_hh_attr=None, name=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, direction, time_major, dropout,
                         weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr)


class GRU(RNNBase):
    """Paddle's nn.GRU. Returns (outputs, h_n)."""

    def __init__(self, input_size, hidden_size, num_layers=1, direction="forward", time_major=False,
                 dropout=0.0, weight_ih_attr=None, weight_hh_attr=None, bias_ih_attr=None,
                 bias_hh_attr=None, name=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, direction, time_major, dropout,
                         weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr)

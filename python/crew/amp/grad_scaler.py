"""GradScaler (Paddle 2.4's paddle.amp.GradScaler): dynamic loss scaling.

The inf/NaN check and the unscaling are one C++ kernel pass per gradient
(crew::kernels::unscale_and_check_finite_). Under an initialized process group of more than
one rank the found-inf flag is all-reduced (MAX), so every rank skips the same steps and keeps
the same scale.
"""
import numpy as np

from .. import _C

_INIT, _UNSCALED, _STEPPED = 0, 1, 2


def _params_of(optimizer):
    try:
        return list(optimizer._parameter_list)
    except AttributeError:
        raise TypeError(f"GradScaler: {type(optimizer).__name__} is not a crew optimizer") from None


def _any_rank(found):
    """found on any rank of the default group (MAX all-reduce), or found alone."""
    from .. import distributed as dist
    if not dist.is_initialized() or dist.get_world_size() < 2:
        return found
    flag = _C.to_tensor(np.array([1.0 if found else 0.0], dtype=np.float32))
    dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    return float(flag.numpy()[0]) > 0.0


class GradScaler:
    """GradScaler(enable=True, init_loss_scaling=2.**15, incr_ratio=2.0, decr_ratio=0.5,
    incr_every_n_steps=1000, decr_every_n_nan_or_inf=2, use_dynamic_loss_scaling=True).

        scaler = crew.amp.GradScaler(init_loss_scaling=1024)
        with crew.amp.auto_cast(dtype='bfloat16'):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)       # unscales; skips the step if a gradient holds inf/NaN
        scaler.update()        # the dynamic scale rule
        opt.clear_grad()

    The rule (Paddle's): a step with an inf/NaN gradient counts a bad step and zeroes the good
    count; after decr_every_n_nan_or_inf bad steps in a row the scale is multiplied by
    decr_ratio. A good step zeroes the bad count; after incr_every_n_steps good steps in a row
    the scale is multiplied by incr_ratio."""

    def __init__(self, enable=True, init_loss_scaling=2.**15, incr_ratio=2.0, decr_ratio=0.5,
                 incr_every_n_steps=1000, decr_every_n_nan_or_inf=2, use_dynamic_loss_scaling=True):
        if incr_ratio <= 1.0:
            raise ValueError(f"GradScaler: incr_ratio must be > 1, got {incr_ratio}")
        if not 0.0 < decr_ratio < 1.0:
            raise ValueError(f"GradScaler: decr_ratio must be in (0, 1), got {decr_ratio}")
        if incr_every_n_steps < 1 or decr_every_n_nan_or_inf < 1:
            raise ValueError("GradScaler: incr_every_n_steps and decr_every_n_nan_or_inf must be >= 1, got "
                             f"{incr_every_n_steps} and {decr_every_n_nan_or_inf}")
        self._enable = bool(enable)
        self._init_loss_scaling = float(init_loss_scaling)
        self._scale = float(init_loss_scaling)
        self._incr_ratio = float(incr_ratio)
        self._decr_ratio = float(decr_ratio)
        self._incr_every_n_steps = int(incr_every_n_steps)
        self._decr_every_n_nan_or_inf = int(decr_every_n_nan_or_inf)
        self._use_dynamic_loss_scaling = bool(use_dynamic_loss_scaling)
        self._incr_count = 0
        self._decr_count = 0
        self._found_inf = False
        self._cache_found_inf = False
        self._states = {}  # id(optimizer) -> _INIT / _UNSCALED / _STEPPED

    # ---- the training step ----
    def scale(self, var):
        """var * the current scale (a differentiable multiply); var itself when disabled."""
        if not self._enable:
            return var
        return var * self._scale

    def _unscale(self, optimizer):
        grads = [p.grad for p in _params_of(optimizer) if p.grad is not None]
        found = _C.amp.unscale_and_check_finite_(grads, 1.0 / self._scale)
        self._found_inf = _any_rank(found)

    def unscale_(self, optimizer):
        """Divides the optimizer's gradients by the scale (once per update())."""
        if not self._enable:
            return
        state = self._states.get(id(optimizer), _INIT)
        if state == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        self._unscale(optimizer)
        self._states[id(optimizer)] = _UNSCALED

    def step(self, optimizer):
        """Unscales (unless unscale_ did) and steps the optimizer, unless a gradient held an
        inf or a NaN (on any rank)."""
        if not self._enable:
            return optimizer.step()
        state = self._states.get(id(optimizer), _INIT)
        if state == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state == _INIT:
            self._unscale(optimizer)
        if self._found_inf:
            self._cache_found_inf = True
        else:
            optimizer.step()
            self._cache_found_inf = False
        self._states[id(optimizer)] = _STEPPED

    def update(self):
        """Applies the dynamic scale rule to the last step's outcome."""
        if not self._enable:
            return
        if self._use_dynamic_loss_scaling:
            self._update()
        self._states = {}

    def minimize(self, optimizer, *args, **kwargs):
        """step(optimizer) then update() (Paddle's minimize; args are the optimizer's)."""
        if not self._enable:
            return optimizer.step()
        self.step(optimizer)
        self.update()

    def _update(self):
        if self._cache_found_inf:
            self._incr_count = 0
            self._decr_count += 1
            if self._decr_count == self._decr_every_n_nan_or_inf:
                self._scale *= self._decr_ratio
                self._decr_count = 0
        else:
            self._decr_count = 0
            self._incr_count += 1
            if self._incr_count == self._incr_every_n_steps:
                self._scale *= self._incr_ratio
                self._incr_count = 0

    # ---- settings ----
    def is_enable(self):
        return self._enable

    def is_use_dynamic_loss_scaling(self):
        return self._use_dynamic_loss_scaling

    def get_init_loss_scaling(self):
        return self._init_loss_scaling

    def set_init_loss_scaling(self, new_init_loss_scaling):
        """Sets the initial scale, and the current one to it."""
        self._init_loss_scaling = float(new_init_loss_scaling)
        self._scale = float(new_init_loss_scaling)

    def get_incr_ratio(self):
        return self._incr_ratio

    def set_incr_ratio(self, new_incr_ratio):
        if new_incr_ratio <= 1.0:
            raise ValueError(f"GradScaler: incr_ratio must be > 1, got {new_incr_ratio}")
        self._incr_ratio = float(new_incr_ratio)

    def get_decr_ratio(self):
        return self._decr_ratio

    def set_decr_ratio(self, new_decr_ratio):
        if not 0.0 < new_decr_ratio < 1.0:
            raise ValueError(f"GradScaler: decr_ratio must be in (0, 1), got {new_decr_ratio}")
        self._decr_ratio = float(new_decr_ratio)

    def get_incr_every_n_steps(self):
        return self._incr_every_n_steps

    def set_incr_every_n_steps(self, new_incr_every_n_steps):
        self._incr_every_n_steps = int(new_incr_every_n_steps)

    def get_decr_every_n_nan_or_inf(self):
        return self._decr_every_n_nan_or_inf

    def set_decr_every_n_nan_or_inf(self, new_decr_every_n_nan_or_inf):
        self._decr_every_n_nan_or_inf = int(new_decr_every_n_nan_or_inf)

    def get_loss_scaling(self):
        """The current scale (crew: a float; Paddle returns a Tensor)."""
        return self._scale

    # ---- state ----
    def state_dict(self):
        """Paddle's keys; empty when disabled."""
        if not self._enable:
            return {}
        return {
            "scale": np.array([self._scale], dtype=np.float32),
            "incr_ratio": self._incr_ratio,
            "decr_ratio": self._decr_ratio,
            "incr_every_n_steps": self._incr_every_n_steps,
            "decr_every_n_nan_or_inf": self._decr_every_n_nan_or_inf,
            "incr_count": self._incr_count,
            "decr_count": self._decr_count,
            "use_dynamic_loss_scaling": self._use_dynamic_loss_scaling,
        }

    def load_state_dict(self, state_dict):
        if not self._enable:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The input state dict is empty, possibly because it was saved from a "
                               "disabled instance of GradScaler.")
        scale = state_dict["scale"]
        self._scale = float(np.asarray(scale.numpy() if hasattr(scale, "numpy") else scale).reshape(-1)[0])
        self._incr_ratio = float(state_dict["incr_ratio"])
        self._decr_ratio = float(state_dict["decr_ratio"])
        self._incr_every_n_steps = int(state_dict["incr_every_n_steps"])
        self._decr_every_n_nan_or_inf = int(state_dict["decr_every_n_nan_or_inf"])
        self._incr_count = int(state_dict["incr_count"])
        self._decr_count = int(state_dict["decr_count"])
        self._use_dynamic_loss_scaling = bool(state_dict["use_dynamic_loss_scaling"])

    set_state_dict = load_state_dict


AmpScaler = GradScaler

"""GradScaler (Paddle 2.4's paddle.amp.GradScaler) over crew::optim::GradScaler.

The rule, the call-order checks and the state live in C++ (crew/optim/grad_scaler.h); the
inf/NaN check and the unscaling are one kernel pass per gradient
(crew::kernels::unscale_and_check_finite_). Under an initialized process group of more than
one rank the found-inf flag is all-reduced (MAX, crew::dist::any_rank), so every rank skips
the same steps and keeps the same scale.
"""
import numpy as np

from .. import _C


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
        self._c = _C.amp.GradScaler(bool(enable), float(init_loss_scaling), float(incr_ratio),
                                    float(decr_ratio), int(incr_every_n_steps), int(decr_every_n_nan_or_inf),
                                    bool(use_dynamic_loss_scaling))

    # ---- the training step ----
    def scale(self, var):
        """var * the current scale (a differentiable multiply); var itself when disabled."""
        if not self._c.enable:
            return var
        return var * self._c.scale

    def unscale_(self, optimizer):
        """Divides the optimizer's gradients by the scale (once per update()); RuntimeError
        when called twice, or after step(), before update()."""
        self._c.unscale_(optimizer)

    def step(self, optimizer):
        """Unscales (unless unscale_ did) and runs optimizer.step(), unless a gradient held an
        inf or a NaN (on any rank). RuntimeError when called twice before update()."""
        self._c.step(optimizer)

    def update(self):
        """Applies the dynamic scale rule to the last step's outcome."""
        self._c.update()

    def minimize(self, optimizer, *args, **kwargs):
        """step(optimizer) then update() (Paddle's minimize; args are the optimizer's)."""
        self._c.step(optimizer)
        self._c.update()

    # ---- settings ----
    def is_enable(self):
        return self._c.enable

    def is_use_dynamic_loss_scaling(self):
        return self._c.use_dynamic_loss_scaling

    def get_init_loss_scaling(self):
        return self._c.init_loss_scaling

    def set_init_loss_scaling(self, new_init_loss_scaling):
        """Sets the initial scale, and the current one to it."""
        self._c.init_loss_scaling = float(new_init_loss_scaling)

    def get_incr_ratio(self):
        return self._c.incr_ratio

    def set_incr_ratio(self, new_incr_ratio):
        self._c.incr_ratio = float(new_incr_ratio)

    def get_decr_ratio(self):
        return self._c.decr_ratio

    def set_decr_ratio(self, new_decr_ratio):
        self._c.decr_ratio = float(new_decr_ratio)

    def get_incr_every_n_steps(self):
        return self._c.incr_every_n_steps

    def set_incr_every_n_steps(self, new_incr_every_n_steps):
        self._c.incr_every_n_steps = int(new_incr_every_n_steps)

    def get_decr_every_n_nan_or_inf(self):
        return self._c.decr_every_n_nan_or_inf

    def set_decr_every_n_nan_or_inf(self, new_decr_every_n_nan_or_inf):
        self._c.decr_every_n_nan_or_inf = int(new_decr_every_n_nan_or_inf)

    def get_loss_scaling(self):
        """The current scale (crew: a float; Paddle returns a Tensor)."""
        return self._c.scale

    # ---- state ----
    def state_dict(self):
        """Paddle's keys ('scale' a float32 array of one value); empty when disabled."""
        sd = self._c.state_values()
        if "scale" in sd:
            sd["scale"] = np.array([sd["scale"]], dtype=np.float32)
        return sd

    def load_state_dict(self, state_dict):
        """Restores a state_dict(); RuntimeError when it is empty (saved from a disabled one)."""
        self._c.load_state_values(dict(state_dict))

    set_state_dict = load_state_dict


AmpScaler = GradScaler

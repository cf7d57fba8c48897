"""Paddle's hapi ProgressBar: verbose=1 redraws one line, verbose=2 prints a line per update:

    step  10/938 - loss: 0.4573 - acc: 0.8375 - 12ms/step
"""
import sys
import time

import numpy as np


def _format_values(values):
    info = ""
    for k, val in values:
        info += f" - {k}:"
        for v in (val if isinstance(val, (list, tuple)) else [val]):
            if isinstance(v, np.ndarray) and v.size == 1:
                v = v.item()
            if isinstance(v, (float, np.floating)):
                info += f" {v:.4f}" if abs(v) > 1e-3 else f" {v:.4e}"
            else:
                info += f" {v}"
    return info


def _format_rate(seconds_per_unit, name):
    if seconds_per_unit >= 1 or seconds_per_unit == 0:
        return f" - {seconds_per_unit:.0f}s/{name}"
    if seconds_per_unit >= 1e-3:
        return f" - {seconds_per_unit * 1e3:.0f}ms/{name}"
    return f" - {seconds_per_unit * 1e6:.0f}us/{name}"


class ProgressBar:
    def __init__(self, num=None, width=30, verbose=1, start=True, file=None, name="step"):
        self._num = num
        self._width = width
        self._verbose = verbose
        self._file = file
        self.name = name
        self._last_update = 0
        self._start = time.time() if start else None

    def start(self):
        self._start = time.time()

    def _out(self):
        return self._file or sys.stdout

    def update(self, current_num, values=()):
        now = time.time()
        if self._start is None:
            self._start = now
        per_unit = (now - self._start) / current_num if current_num else 0
        info = _format_values(values) + _format_rate(per_unit, self.name)
        if self._num:
            digits = int(np.log10(self._num)) + 1
            count = f"step {current_num:{digits}d}/{self._num}"
        else:
            count = f"step {current_num:3d}"
        if self._verbose == 1:
            bar = ""
            if self._num:
                done = int(self._width * min(current_num, self._num) / self._num)
                bar = " [" + "=" * max(done - 1, 0) + (">" if done < self._width else "=") + \
                      "." * (self._width - done - (0 if done == self._width else 1)) + "]"
            end = "\n" if self._num and current_num >= self._num else ""
            self._out().write("\r" + count + bar + info + end)
        else:
            self._out().write(count + info + "\n")
        self._out().flush()
        self._last_update = now

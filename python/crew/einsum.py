"""Paddle's einsum(equation, *operands) over crew's differentiable ops (issue 30).

Labels that appear in one operand only and not in the output are summed out first; the
operands are then folded left to right, each pair as one batched matmul ([batch, m, k] @
[batch, k, n], labels grouped by where they occur), and the result is permuted to the
output's order. `...` stands for broadcast dimensions (aligned from the right); without
`->` the output is the broadcast dimensions, then the labels that occur once, alphabetical.
A label repeated within one operand (a diagonal or trace) is a ValueError, as in Paddle 2.4.
"""
import math

from . import _C

Tensor = _C.Tensor
_ELLIPSIS_BASE = 0x100  # private label characters for `...` dimensions


def _expand_ellipsis(term, ndim, n_broadcast, op_index):
    letters = term.replace("...", "")
    if not all(c.isascii() and c.isalpha() for c in letters):
        raise ValueError(f"einsum: operand {op_index}'s labels '{term}' must be letters and at most one '...'")
    if "..." not in term:
        if len(letters) != ndim:
            raise ValueError(f"einsum: operand {op_index} has {ndim} dimensions but '{term}' names {len(letters)}")
        return letters
    k = ndim - len(letters)
    if k < 0 or term.count("...") > 1:
        raise ValueError(f"einsum: operand {op_index}'s labels '{term}' do not fit its {ndim} dimensions")
    dots = "".join(chr(_ELLIPSIS_BASE + i) for i in range(n_broadcast - k, n_broadcast))
    return term.replace("...", dots)


def _parse(equation, operands):
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum: '{equation}' names {len(terms)} operands, {len(operands)} given")
    n_broadcast = max((op.ndim - len(t.replace("...", "")) for t, op in zip(terms, operands) if "..." in t),
                      default=0)
    labels = [_expand_ellipsis(t, op.ndim, n_broadcast, i) for i, (t, op) in enumerate(zip(terms, operands))]
    for i, lab in enumerate(labels):
        if len(set(lab)) != len(lab):
            raise ValueError(f"einsum: operand {i} repeats a label in '{terms[i]}' (diagonals are not supported)")
    dots = "".join(chr(_ELLIPSIS_BASE + i) for i in range(n_broadcast))
    if arrow:
        out = rhs.replace("...", dots)
        if "..." not in rhs and n_broadcast and any("..." in t for t in terms):
            raise ValueError(f"einsum: '{equation}' drops the '...' dimensions from its output")
    else:
        every = "".join(labels)
        out = dots + "".join(sorted(c for c in set(every) if every.count(c) == 1 and ord(c) < _ELLIPSIS_BASE))
    for c in out:
        if out.count(c) > 1 or not any(c in lab for lab in labels):
            raise ValueError(f"einsum: output label '{c}' of '{equation}' is repeated or names no input dimension")
    return labels, out


def _sizes(labels, operands):
    """Each label's extent (broadcast: 1 gives way); ValueError for a mismatch."""
    size = {}
    for lab, op in zip(labels, operands):
        for c, n in zip(lab, op.shape):
            if size.get(c, 1) != 1 and n not in (1, size[c]):
                raise ValueError(f"einsum: label '{c}' has extent {size[c]} in one operand and {n} in another")
            size[c] = max(size.get(c, 1), n)
    return size


def _sum_out(t, lab, keep):
    """t with its labels not in keep summed away."""
    drop = [i for i, c in enumerate(lab) if c not in keep]
    if not drop:
        return t, lab
    return _C.sum(t, drop, False), "".join(c for c in lab if c in keep)


def _permute(t, lab, order):
    if lab == order:
        return t
    return _C.transpose(t, [lab.index(c) for c in order])


def _contract(a, la, b, lb, keep, size):
    """a and b as one tensor: shared labels in keep are batch, the other shared ones summed."""
    batch = [c for c in la if c in lb and c in keep]
    summed = [c for c in la if c in lb and c not in keep]
    a_only = [c for c in la if c not in lb]
    b_only = [c for c in lb if c not in la]
    nb, nm, nk, nn = (math.prod(size[c] for c in g) for g in (batch, a_only, summed, b_only))
    a = _C.reshape(_permute(a, la, "".join(batch + a_only + summed)), [nb, nm, nk])
    b = _C.reshape(_permute(b, lb, "".join(batch + summed + b_only)), [nb, nk, nn])
    out = _C.matmul(a, b)
    labels = batch + a_only + b_only
    return _C.reshape(out, [size[c] for c in labels]), "".join(labels)


def einsum(equation, *operands):
    """Paddle's einsum: e.g. einsum('bij,bjk->bik', x, y), einsum('i,i', x, y) (shape [1])."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands or not all(isinstance(o, Tensor) for o in operands):
        raise TypeError("einsum(): operands must be one or more crew.Tensor")
    labels, out = _parse(equation, operands)
    size = _sizes(labels, operands)
    ops = []
    for op, lab in zip(operands, labels):
        want = [size[c] for c in lab]
        ops.append(_C.expand(op, want) if list(op.shape) != want else op)
    t, lab = None, ""
    for i, (op, ol) in enumerate(zip(ops, labels)):
        keep = set(out).union(*labels[i + 1:])
        op, ol = _sum_out(op, ol, keep | set(lab))
        if t is None:
            t, lab = op, ol
            continue
        t, lab = _sum_out(t, lab, keep | set(ol))
        t, lab = _contract(t, lab, op, ol, keep, size)
    t, lab = _sum_out(t, lab, set(out))
    t = _permute(t, lab, out)
    return _C.reshape(t, [1]) if t.ndim == 0 else t


__all__ = ["einsum"]

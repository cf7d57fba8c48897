"""Readable TypeErrors for calls into crew._C with arguments it does not accept.

pybind11 answers such a call with "incompatible function arguments" and a dump of C++
signatures. crew wraps the functions, constructors, static methods and named methods of
crew._C (not Tensor's operators, see below) once, at import, and turns that dump into one
line naming the argument and what it accepts:

    crew.reshape(x, "ab")
    TypeError: reshape(): argument 'shape' must be a list of int (64-bit), got str ('ab')

Python subclasses (of Layer, Dataset, ...) override by plain attribute lookup; crew's
bindings use no pybind11 trampolines (get_override), which would read a wrapper as a Python
override.
"""
import functools
import numbers
import re

_MARKERS = ("incompatible function arguments", "incompatible constructor arguments")
_WRAPPED_DUNDERS = {"__init__", "__call__", "__getitem__", "__setitem__"}


class _Param:
    def __init__(self, name, annotation, has_default):
        self.name, self.annotation, self.has_default = name, annotation, has_default


def _split_top(text):
    """Splits at commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "[(<{":
            depth += 1
        elif ch in "])>}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if text[start:].strip():
        parts.append(text[start:].strip())
    return parts


def _signatures(message):
    """The parameter lists of the overloads pybind11's message lists."""
    out = []
    for line in message.splitlines():
        m = re.match(r"\s*\d+\.\s(.*)$", line)
        if not m:
            continue
        text = m.group(1)
        open_at = text.find("(")
        if open_at < 0:
            continue
        depth, close_at = 0, -1
        for i in range(open_at, len(text)):
            depth += text[i] in "[(<{"
            depth -= text[i] in "])>}"
            if depth == 0:
                close_at = i
                break
        params = []
        for part in _split_top(text[open_at + 1:close_at]):
            name, _, rest = part.partition(":")
            annotation, eq, _ = rest.partition("=")
            params.append(_Param(name.strip(), annotation.strip() or "object", bool(eq)))
        out.append(params)
    return out


def _inner(annotation):
    return annotation[annotation.index("[") + 1:annotation.rindex("]")]


def _resolve(dotted):
    import crew
    obj = crew
    for part in dotted.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj if isinstance(obj, type) else None


def _accepts(annotation, value):
    a = annotation
    if a.startswith("Optional["):
        return value is None or _accepts(_inner(a), value)
    if a.startswith(("List[", "Sequence[", "Tuple[", "Iterable[")):
        if not isinstance(value, (list, tuple)):
            return a.startswith("Iterable[") and not isinstance(value, (str, bytes))
        items = _split_top(_inner(a))
        return all(_accepts(items[0] if len(items) == 1 else items[min(i, len(items) - 1)], v)
                   for i, v in enumerate(value))
    if a.startswith("Dict["):
        return isinstance(value, dict)
    if a == "int":
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            return hasattr(type(value), "__index__") and not isinstance(value, bool)
        return -(1 << 63) <= int(value) < (1 << 64)
    if a == "float":
        return isinstance(value, numbers.Real) and not isinstance(value, bool) or hasattr(value, "__float__")
    if a == "bool":
        return isinstance(value, bool) or type(value).__name__ == "bool_"
    if a == "str":
        return isinstance(value, str)
    if a == "bytes":
        return isinstance(value, bytes)
    if a.startswith("numpy.ndarray"):
        return hasattr(value, "__array__") or isinstance(value, (list, tuple, numbers.Number))
    if a.startswith("crew."):
        cls = _resolve(a)
        return cls is None or isinstance(value, cls)
    return True  # object, handle, Callable, ...: anything


def _words(annotation):
    a = annotation
    if a.startswith("Optional["):
        return _words(_inner(a)) + " or None"
    if a.startswith(("List[", "Sequence[", "Tuple[", "Iterable[")):
        return "a list of " + " or ".join(sorted({_words(x) for x in _split_top(_inner(a))}))
    if a.startswith("Dict["):
        return "a dict"
    if a.startswith("numpy.ndarray"):
        return "a NumPy array"
    if a.startswith("crew."):
        return a.rsplit(".", 1)[-1]
    return {"float": "float", "int": "int (64-bit)"}.get(a, a)


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _reason(params, args, kwargs):
    """Why one overload refuses args/kwargs: (kind, detail), or None when it would accept."""
    positional = [p for p in params if not p.name.startswith("*")]
    star_args = any(p.name.startswith("*") and not p.name.startswith("**") for p in params)
    star_kwargs = any(p.name.startswith("**") for p in params)
    bound = {}
    if len(args) > len(positional) and not star_args:
        return ("count", f"takes at most {len(positional)} arguments ({len(args)} given)")
    for p, v in zip(positional, args):
        bound[p.name] = v
    names = {p.name for p in positional}
    for k, v in kwargs.items():
        if k in bound:
            return ("count", f"got argument '{k}' twice")
        if k not in names and not star_kwargs:
            return ("count", f"got an unexpected keyword argument '{k}'")
        bound[k] = v
    for p in positional:
        if p.name not in bound and not p.has_default:
            return ("count", f"missing argument '{p.name}'")
    for p in positional:
        if p.name in bound and not _accepts(p.annotation, bound[p.name]):
            return ("type", p)
    return None


def explain(name, message, args, kwargs, constructor=False):
    """The one-line message for pybind11's `message` about a call name(*args, **kwargs)."""
    if constructor:
        args = args[1:]  # self: constructor signatures leave it out
    by_arg, other = {}, []
    for params in _signatures(message):
        reason = _reason(params, args, kwargs)
        if reason is None:
            continue
        if reason[0] == "type":
            p = reason[1]
            by_arg.setdefault(p.name, []).append(p.annotation)
        else:
            other.append(reason[1])
    bound = dict(kwargs)
    if by_arg:
        arg, annotations = next(iter(by_arg.items()))
        for params in _signatures(message):
            positional = [p for p in params if not p.name.startswith("*")]
            for p, v in zip(positional, args):
                bound.setdefault(p.name, v)
        value = bound.get(arg)
        accepted = " or ".join(dict.fromkeys(_words(a) for a in annotations))
        unnamed = re.fullmatch(r"arg(\d+)", arg)  # a binding without py::arg names
        label = f"argument {int(unnamed.group(1)) + 1}" if unnamed else f"argument '{arg}'"
        return f"{name}(): {label} must be {accepted}, got {type(value).__name__} ({_short(value)})"
    if other:
        return f"{name}(): " + "; or ".join(dict.fromkeys(other))
    got = ", ".join([type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
    forms = " | ".join("(" + ", ".join(f"{p.name}: {_words(p.annotation)}" for p in params) + ")"
                       for params in _signatures(message))
    return f"{name}(): these arguments ({got}) are not accepted; it takes {forms}"


def _wrap(fn, name, constructor=False):
    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TypeError as e:
            message = str(e)
            if not any(m in message for m in _MARKERS):
                raise
            raise TypeError(explain(name, message, args, kwargs, constructor)) from None
    call._crew_arguments = True
    return call


def _is_pybind_function(obj):
    return type(obj).__name__ == "builtin_function_or_method" and "(" in (obj.__doc__ or "")


def install(module, _seen=None):
    """Wraps, in place, the functions of `module` and its submodules and the constructors,
    static methods and methods of its classes."""
    seen = set() if _seen is None else _seen
    if id(module) in seen:
        return
    seen.add(id(module))
    for attr, obj in list(vars(module).items()):
        if type(obj).__name__ == "module" and obj.__name__.startswith(module.__name__.split(".")[0]):
            install(obj, seen)
        elif _is_pybind_function(obj) and not getattr(obj, "_crew_arguments", False):
            setattr(module, attr, _wrap(obj, attr))
        elif isinstance(obj, type) and id(obj) not in seen:
            seen.add(id(obj))
            _install_class(obj)


def _install_class(cls):
    for attr, member in list(vars(cls).items()):
        if isinstance(member, staticmethod):
            if _is_pybind_function(member.__func__):
                setattr(cls, attr, staticmethod(_wrap(member.__func__, f"{cls.__name__}.{attr}")))
            continue
        if type(member).__name__ != "instancemethod":
            continue
        if attr == "__init__":
            setattr(cls, attr, _wrap(member.__func__, cls.__name__, constructor=True))
        elif attr in _WRAPPED_DUNDERS or not attr.startswith("__"):
            setattr(cls, attr, _wrap(member.__func__, f"{cls.__name__}.{attr}"))
        # Tensor's arithmetic operators are bound with py::is_operator(): pybind11 returns
        # NotImplemented itself, and they stay unwrapped (no Python frame per + or *).

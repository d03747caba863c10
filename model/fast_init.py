"""A cheaper ``__init__`` for frozen dataclasses that are made by the hundred thousand.

``@dataclass(frozen=True)`` generates an ``__init__`` that sets each field through
``object.__setattr__`` (its own ``__setattr__`` refuses): about 1 µs per field on the machines
this project runs on, three times what storing into the instance's ``__dict__`` costs. Events,
messages and operations are created two or three times per generated event (traces.generate), so
that cost was a sixth of a corpus worker's simulation.

``fast_frozen_init(cls)`` replaces the generated ``__init__`` of a frozen dataclass by one that
stores the same values, in the same field order, directly into the instance's ``__dict__``.
Guarantees: the same signature (parameters, defaults, keyword-only marker, annotations), the same
instance afterwards (equal, same ``__dict__`` and its order, same hash and repr), a default
factory called exactly when the generated ``__init__`` calls it; ``__setattr__`` and
``__delattr__`` still refuse (the class stays frozen). A class it cannot reproduce exactly (not a
frozen dataclass, ``__slots__``, ``__post_init__``, ``InitVar`` fields) is a TypeError from
``fast_frozen_init`` and is skipped by ``fast_frozen_inits`` (it keeps the generated ``__init__``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeVar

T = TypeVar("T", bound=type)

_FILENAME = "<fast_frozen_init>"
"""The file name of every ``__init__`` made here (``has_fast_init``)."""

_FACTORY: Any = getattr(dataclasses, "_HAS_DEFAULT_FACTORY", object())
"""The default of a parameter whose field has a default factory: the generated ``__init__``'s own
marker (so signatures print alike)."""


def fast_frozen_init(cls: T) -> T:
    """Give the frozen dataclass ``cls`` the cheaper ``__init__`` (see the module); returns ``cls``.
    TypeError for a class it cannot reproduce exactly (``unsupported``)."""
    why = unsupported(cls)
    if why:
        raise TypeError(f"{cls.__name__}: {why}")
    fields = dataclasses.fields(cls)
    env: dict[str, Any] = {"_fast_factory": _FACTORY}
    positional: list[str] = []
    keyword: list[str] = []
    body = ["    _fast_d = self.__dict__"]
    for i, f in enumerate(fields):
        factory = f.default_factory is not dataclasses.MISSING
        if factory:
            env[f"_fast_f{i}"] = f.default_factory
        if not f.init:
            if factory:
                body.append(f"    _fast_d[{f.name!r}] = _fast_f{i}()")
            # A field without __init__ and with a plain default is read from the class, as the
            # generated __init__ leaves it.
            continue
        if factory:
            param = f"{f.name}=_fast_factory"
            body.append(f"    _fast_d[{f.name!r}] = _fast_f{i}() if {f.name} is _fast_factory else {f.name}")
        else:
            if f.default is dataclasses.MISSING:
                param = f.name
            else:
                env[f"_fast_v{i}"] = f.default
                param = f"{f.name}=_fast_v{i}"
            body.append(f"    _fast_d[{f.name!r}] = {f.name}")
        (keyword if f.kw_only else positional).append(param)
    signature = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
    source = f"def __init__({signature}) -> None:\n" + "\n".join(body) + "\n"
    exec(compile(source, _FILENAME, "exec"), env)  # from the field names only, as dataclasses does
    init = env["__init__"]
    generated = vars(cls)["__init__"]
    init.__annotations__ = dict(generated.__annotations__)
    init.__qualname__ = generated.__qualname__
    init.__module__ = generated.__module__
    init.__doc__ = generated.__doc__
    setattr(cls, "__init__", init)  # noqa: B010 (mypy refuses assigning __init__ on a type)
    return cls


def fast_frozen_inits(namespace: Mapping[str, Any], module: str) -> list[type]:
    """``fast_frozen_init`` on every frozen dataclass defined in ``module`` among the values of
    ``namespace`` (a module's ``vars()``) that it can take; returns those. Classes imported from
    elsewhere are left to their own module, the others (``unsupported``) keep the generated
    ``__init__``: the same instances, made more slowly."""
    return [
        fast_frozen_init(value)
        for value in list(namespace.values())
        if isinstance(value, type) and value.__module__ == module and not unsupported(value)
    ]


def unsupported(cls: type) -> str:
    """Why ``fast_frozen_init`` cannot take ``cls`` ("" when it can)."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or not params.init or "__init__" not in vars(cls):
        return "not a frozen dataclass with a generated __init__"
    if "__slots__" in vars(cls) or hasattr(cls, "__post_init__"):
        return "__slots__ or __post_init__ is not supported"
    initvar = getattr(dataclasses, "_FIELD_INITVAR", None)
    declared = getattr(cls, "__dataclass_fields__")  # noqa: B009 (an attribute mypy does not know)
    if any(getattr(f, "_field_type", initvar) is initvar for f in declared.values()):
        return "InitVar fields are not supported"
    if any(f.name.startswith("_fast_") for f in dataclasses.fields(cls)):
        return "a field named _fast_* (the names of the generated __init__)"
    return ""


def has_fast_init(cls: type) -> bool:
    """Whether ``cls`` has its own ``__init__`` made by ``fast_frozen_init``."""
    init = vars(cls).get("__init__")
    return init is not None and getattr(init, "__code__", None) is not None and init.__code__.co_filename == _FILENAME

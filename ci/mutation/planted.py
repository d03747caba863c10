"""Hand-planted bugs: a function of the reference with one source change, compiled in its module's
namespace and put in place of the real one (issue 17: "unseen bugs will be planted in the reference
implementation to check the gate's power").

Unlike ``ci.mutation.operators`` (mechanical ast changes), a plant is a bug a Kafka developer
makes: an off-by-one at an HW or log-start bound, a check in the wrong order, state not reset on a
leader change. ``plant`` applies one until ``unplant``; ``ci.benchmarks.hand_planted`` and
``ci.benchmarks.hand_planted_txn`` run the gate against each (``ci.mutation.census``: the gate child
with the plant in place, its verdict, the score), and the tests show a zoo scenario catching the
ones the gate missed.
"""

from __future__ import annotations

import importlib
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Plant:
    """One hand-made bug: in ``owner`` (``module`` or ``module:Class``) the function ``function``
    with ``old`` replaced by ``new`` (each once in its source)."""

    name: str
    slice: str
    """The gate slice that must catch it (``replication``, ``fetch`` or ``txn``)."""
    owner: str
    function: str
    old: str
    new: str
    what: str
    """The bug in Kafka's words, with the Kafka class or KIP whose rule it breaks."""
    equivalent: str = ""
    """When no run of the reference can show it: the written argument why (then it is not counted)."""


def owner_of(path: str) -> Any:
    """The module, or the class in it, that ``module:Class`` names."""
    module, _, attr = path.partition(":")
    target = importlib.import_module(module)
    return getattr(target, attr) if attr else target


def planted_function(owner: Any, name: str, old: str, new: str) -> Callable[..., Any]:
    """``owner.name`` with ``old`` replaced by ``new`` once in its source, compiled with its module's
    globals (indentation of ``new`` is that of the dedented function)."""
    module = importlib.import_module(owner.__module__ if inspect.isclass(owner) else owner.__name__)
    function = getattr(owner, name)
    source = textwrap.dedent(inspect.getsource(function))
    if source.count(old) != 1:
        raise ValueError(f"{name}: {old!r} occurs {source.count(old)} times in its source, not once")
    namespace: dict[str, Any] = {}
    path = inspect.getsourcefile(function) or name
    exec(compile(source.replace(old, new), path, "exec"), vars(module), namespace)
    replaced: Callable[..., Any] = namespace[name]
    return replaced


def plant(p: Plant) -> Callable[[], None]:
    """Put ``p``'s planted copy in place; the function returned puts the real one back."""
    owner = owner_of(p.owner)
    original = getattr(owner, p.function)
    setattr(owner, p.function, planted_function(owner, p.function, p.old, p.new))

    def unplant() -> None:
        setattr(owner, p.function, original)

    return unplant

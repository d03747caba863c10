"""What travels on the simulated network, whatever the slice: a message, the base of its payload,
and how a node finds the handler of a payload.

Guarantees: a message is immutable and its id is unique across the whole run (impl.network hands
them out); each slice defines its payloads (``impl/<slice>/messages.py``) as frozen dataclasses
deriving from ``Payload``, so a duplicated message is delivered twice with identical content; a
``Handlers`` node runs exactly the handler marked for the payload's class, and a payload it has no
handler for is a bug of the simulation (AssertionError), never silently dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from kconform.model.fast_init import fast_frozen_init


class Payload:
    """The base of every wire payload: a request, a response or a metadata update of some slice."""

    __slots__ = ()


@fast_frozen_init
@dataclass(frozen=True)
class Message:
    """One message in flight: unique id (global send counter), source, destination, payload."""

    msg_id: int
    src: int
    dst: int
    payload: Payload


F = TypeVar("F", bound=Callable[..., None])


def handles(*payload_types: type[Payload]) -> Callable[[F], F]:
    """Mark a method ``(self, msg, payload)`` of a ``Handlers`` node as the handler of ``payload_types``."""

    def mark(method: F) -> F:
        setattr(method, "_handles", payload_types)  # noqa: B010 (a function attribute mypy does not know)
        return method

    return mark


class Handlers:
    """A node whose methods marked ``@handles(...)`` handle the payloads delivered to it."""

    _handlers: ClassVar[dict[type[Payload], str]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        table: dict[type[Payload], str] = {}
        for klass in reversed(cls.__mro__):
            for name, member in vars(klass).items():
                for payload_type in getattr(member, "_handles", ()):
                    table[payload_type] = name
        cls._handlers = table

    def dispatch(self, msg: Message) -> None:
        """Run the handler of ``msg``'s payload class; AssertionError when there is none."""
        name = self._handlers.get(type(msg.payload))
        if name is None:
            raise AssertionError(f"{type(self).__name__} cannot handle {type(msg.payload).__name__}")
        getattr(self, name)(msg, msg.payload)

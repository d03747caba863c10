"""What travels on the simulated network, whatever the slice: a message and the base of its payload.

Guarantees: a message is immutable and its id is unique across the whole run (impl.network hands
them out); each slice defines its payloads (``impl/<slice>/messages.py``) as frozen dataclasses
deriving from ``Payload``, so a duplicated message is delivered twice with identical content.
"""

from __future__ import annotations

from dataclasses import dataclass


class Payload:
    """The base of every wire payload: a request, a response or a metadata update of some slice."""

    __slots__ = ()


@dataclass(frozen=True)
class Message:
    """One message in flight: unique id (global send counter), source, destination, payload."""

    msg_id: int
    src: int
    dst: int
    payload: Payload

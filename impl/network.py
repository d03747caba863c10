"""The simulated network: one queue of in-flight messages ordered by send sequence.

Guarantees: message ids are unique across the whole cluster (one counter for every send of any
kind); nothing is delivered unless an operation picks it; a message sent to a node that is down
is lost at once (connection refused), and a message whose endpoints are cut apart by an isolation
when it is picked is lost without running any handler.
"""

from __future__ import annotations

from .messages import Message, Payload

CONTROLLER_NODE = -1
"""Network address of the controller (also ``node`` of controller events)."""
PRODUCER_NODE = -2
CONSUMER_NODE = -3


class Network:
    """In-flight messages, node liveness as the network sees it, and isolation cuts."""

    def __init__(self) -> None:
        self.queue: list[Message] = []
        self._next_msg_id = 0
        self._down: set[int] = set()
        self._isolated: set[int] = set()

    def send(self, src: int, dst: int, payload: Payload) -> int:
        """Queue ``payload`` from ``src`` to ``dst``; returns the new message id."""
        msg_id = self._next_msg_id
        self._next_msg_id += 1
        if dst not in self._down:
            self.queue.append(Message(msg_id, src, dst, payload))
        return msg_id

    def take(self, index: int) -> Message | None:
        """Remove and return the message at ``index`` modulo the queue length (None if empty)."""
        if not self.queue:
            return None
        return self.queue.pop(index % len(self.queue))

    def peek(self, index: int) -> Message | None:
        """The message at ``index`` modulo the queue length, left in place (None if empty)."""
        if not self.queue:
            return None
        return self.queue[index % len(self.queue)]

    def can_deliver(self, msg: Message) -> bool:
        """Whether ``msg`` reaches its destination now: destination up and no cut between them."""
        if msg.dst in self._down:
            return False
        return msg.src not in self._isolated and msg.dst not in self._isolated

    def set_down(self, node: int) -> None:
        """``node`` crashed: every message to or from it is lost."""
        self._down.add(node)
        self.queue = [m for m in self.queue if m.src != node and m.dst != node]

    def set_up(self, node: int) -> None:
        self._down.discard(node)

    def isolate(self, node: int) -> None:
        """Cut ``node`` from every other node until ``heal``."""
        self._isolated.add(node)

    def heal(self) -> None:
        self._isolated.clear()

    def is_isolated(self, node: int) -> bool:
        return node in self._isolated

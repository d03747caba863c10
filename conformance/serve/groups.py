"""A simple classic-protocol group coordinator for the served cluster (JoinGroup, SyncGroup,
Heartbeat, LeaveGroup): the reference cluster has no group membership, so this is the serving
layer's own, **not judged by the model** (the model judges the groups' offsets only).

It follows Kafka's classic GroupCoordinator (kafka.coordinator.group.GroupCoordinator, KIP-345/394
for member ids) in what a subscribing client relies on:

- a JoinGroup without a member id (v4+) is answered MEMBER_ID_REQUIRED with a new id (KIP-394);
- a join starts a rebalance; the generation completes when every member rejoined, or when the
  rebalance timeout passed (members that did not rejoin are removed); the first member to join
  leads and gets every member's metadata; the protocol is the leader's first one all members support;
- SyncGroup from the leader stores the assignments and answers every waiting member; a follower's
  SyncGroup waits for it (bounded by the session timeout);
- Heartbeat: UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS, else NONE;
- a member silent for its session timeout is removed (``expire``), which starts a rebalance.

Guarantees: every wait is bounded (a future times out with REBALANCE_IN_PROGRESS); all state changes
run on the event loop's thread.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field
from typing import Any

NONE = 0
ILLEGAL_GENERATION = 22
INCONSISTENT_GROUP_PROTOCOL = 23
UNKNOWN_MEMBER_ID = 25
REBALANCE_IN_PROGRESS = 27
MEMBER_ID_REQUIRED = 79

_ids = itertools.count(1)


@dataclass
class Member:
    member_id: str
    protocols: list[tuple[str, bytes]]
    session_ms: int
    rebalance_ms: int
    last_seen: float
    join: asyncio.Future[dict[str, Any]] | None = None


@dataclass
class Group:
    name: str
    protocol_type: str = ""
    generation: int = 0
    members: dict[str, Member] = field(default_factory=dict)
    leader: str = ""
    protocol: str | None = None
    rebalancing: bool = False
    rebalance_deadline: float = 0.0
    assignments: dict[str, bytes] | None = None
    syncs: list[tuple[str, asyncio.Future[dict[str, Any]]]] = field(default_factory=list)
    pending: set[str] = field(default_factory=set)
    """Member ids handed out with MEMBER_ID_REQUIRED, not joined yet (GroupMetadata.pendingMembers)."""


class GroupCoordinator:
    """Every group's membership, on the event loop of the server."""

    def __init__(self, now: Any) -> None:
        self.groups: dict[str, Group] = {}
        self._now = now

    def _group(self, name: str) -> Group:
        return self.groups.setdefault(name, Group(name))

    def join(
        self,
        name: str,
        member_id: str,
        protocol_type: str,
        protocols: list[tuple[str, bytes]],
        session_ms: int,
        rebalance_ms: int,
        version: int,
    ) -> asyncio.Future[dict[str, Any]]:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[dict[str, Any]] = loop.create_future()
        g = self._group(name)
        if g.members and protocol_type != g.protocol_type:
            fut.set_result(_join_error(INCONSISTENT_GROUP_PROTOCOL, member_id))
            return fut
        if not member_id:
            new_id = f"{name}-member-{next(_ids)}"
            if version >= 4:
                g.pending.add(new_id)
                fut.set_result(_join_error(MEMBER_ID_REQUIRED, new_id))
                return fut
            member_id = new_id
        elif member_id not in g.members and member_id not in g.pending:
            fut.set_result(_join_error(UNKNOWN_MEMBER_ID, member_id))
            return fut
        g.protocol_type = protocol_type
        g.pending.discard(member_id)
        member = g.members.get(member_id)
        if member is None:
            member = Member(member_id, protocols, session_ms, rebalance_ms, self._now())
            g.members[member_id] = member
        member.protocols, member.last_seen = protocols, self._now()
        if member.join is not None and not member.join.done():
            member.join.set_result(_join_error(UNKNOWN_MEMBER_ID, member_id))
        member.join = fut
        if not g.rebalancing:
            self._start_rebalance(g, rebalance_ms)
        self._maybe_complete(g)
        return fut

    def _start_rebalance(self, g: Group, rebalance_ms: int) -> None:
        g.rebalancing = True
        g.assignments = None
        g.rebalance_deadline = self._now() + max(rebalance_ms, 0) / 1000
        for _mid, fut in g.syncs:
            if not fut.done():
                fut.set_result({"error_code": REBALANCE_IN_PROGRESS, "assignment": b""})
        g.syncs.clear()

    def _maybe_complete(self, g: Group, force: bool = False) -> None:
        if not g.rebalancing:
            return
        waiting = [m for m in g.members.values() if m.join is None or m.join.done()]
        if waiting and not force:
            return
        for m in waiting:
            del g.members[m.member_id]
        if not g.members:
            g.rebalancing, g.generation = False, g.generation + 1
            return
        g.generation += 1
        g.rebalancing = False
        if g.leader not in g.members:
            g.leader = next(iter(g.members))
        leader = g.members[g.leader]
        common = [p for p, _ in leader.protocols if all(p in dict(m.protocols) for m in g.members.values())]
        g.protocol = common[0] if common else None
        all_members = [
            {"member_id": m.member_id, "metadata": dict(m.protocols).get(g.protocol or "", b"")}
            for m in g.members.values()
        ]
        for m in g.members.values():
            assert m.join is not None
            m.join.set_result(
                {
                    "error_code": NONE if g.protocol is not None else INCONSISTENT_GROUP_PROTOCOL,
                    "generation_id": g.generation,
                    "protocol_type": g.protocol_type,
                    "protocol_name": g.protocol,
                    "leader": g.leader,
                    "member_id": m.member_id,
                    "members": all_members if m.member_id == g.leader else [],
                }
            )
            m.join = None

    def sync(
        self, name: str, member_id: str, generation: int, assignments: dict[str, bytes]
    ) -> asyncio.Future[dict[str, Any]]:
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        g = self._group(name)
        member = g.members.get(member_id)
        if member is None:
            fut.set_result({"error_code": UNKNOWN_MEMBER_ID, "assignment": b""})
            return fut
        member.last_seen = self._now()
        if g.rebalancing:
            fut.set_result({"error_code": REBALANCE_IN_PROGRESS, "assignment": b""})
            return fut
        if generation != g.generation:
            fut.set_result({"error_code": ILLEGAL_GENERATION, "assignment": b""})
            return fut
        if member_id == g.leader:
            g.assignments = dict(assignments)
            for mid, waiting in g.syncs:
                if not waiting.done():
                    waiting.set_result(self._assignment(g, mid))
            g.syncs.clear()
        if g.assignments is not None:
            fut.set_result(self._assignment(g, member_id))
        else:
            g.syncs.append((member_id, fut))
        return fut

    def _assignment(self, g: Group, member_id: str) -> dict[str, Any]:
        assert g.assignments is not None
        return {
            "error_code": NONE,
            "protocol_type": g.protocol_type,
            "protocol_name": g.protocol,
            "assignment": g.assignments.get(member_id, b""),
        }

    def heartbeat(self, name: str, member_id: str, generation: int) -> int:
        g = self.groups.get(name)
        member = g.members.get(member_id) if g is not None else None
        if g is None or member is None:
            return UNKNOWN_MEMBER_ID
        member.last_seen = self._now()
        if g.rebalancing:
            return REBALANCE_IN_PROGRESS
        if generation != g.generation:
            return ILLEGAL_GENERATION
        return NONE

    def leave(self, name: str, member_ids: list[str]) -> list[int]:
        g = self.groups.get(name)
        out: list[int] = []
        for mid in member_ids:
            if g is None or mid not in g.members:
                out.append(UNKNOWN_MEMBER_ID)
                continue
            member = g.members.pop(mid)
            if member.join is not None and not member.join.done():
                member.join.set_result(_join_error(UNKNOWN_MEMBER_ID, mid))
            out.append(NONE)
        if g is not None and g.members and any(e == NONE for e in out):
            self._start_rebalance(g, max(m.rebalance_ms for m in g.members.values()))
            self._maybe_complete(g)
        return out

    def check_generation(self, name: str, member_id: str, generation: int) -> int:
        """OffsetCommit's membership check (GroupCoordinator.handleCommitOffsets): a commit with a
        generation (>= 0) must come from a member of that generation."""
        if generation < 0:
            return NONE
        g = self.groups.get(name)
        if g is None or member_id not in g.members:
            return UNKNOWN_MEMBER_ID
        if g.rebalancing:
            return REBALANCE_IN_PROGRESS
        return NONE if generation == g.generation else ILLEGAL_GENERATION

    def expire(self) -> None:
        """Remove members silent past their session timeout; finish rebalances past their deadline."""
        now = self._now()
        for g in self.groups.values():
            gone = [m for m in g.members.values() if m.join is None and now - m.last_seen > m.session_ms / 1000]
            for m in gone:
                del g.members[m.member_id]
            if gone and g.members and not g.rebalancing:
                self._start_rebalance(g, max(m.rebalance_ms for m in g.members.values()))
            if g.rebalancing and now >= g.rebalance_deadline:
                self._maybe_complete(g, force=True)
            else:
                self._maybe_complete(g)
        for g in self.groups.values():
            g.syncs = [(mid, f) for mid, f in g.syncs if not f.done()]


def _join_error(code: int, member_id: str) -> dict[str, Any]:
    return {
        "error_code": code,
        "generation_id": -1,
        "protocol_name": None,
        "leader": "",
        "member_id": member_id,
        "members": [],
    }

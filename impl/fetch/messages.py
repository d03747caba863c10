"""The fetch-session slice's wire payloads (frozen, so a duplicated message is identical)."""

from __future__ import annotations

from dataclasses import dataclass

from kconform.model.fast_init import fast_frozen_inits
from kconform.model.records import AbortedTxn, Record

from ..messages import Payload


@dataclass(frozen=True)
class SessionFetchRequest(Payload):
    """FetchRequest: FetchMetadata, toSend (name, fetch offset) in order, toForget, and whether a
    follower sent it (replica id ≥ 0: isFromFollower)."""

    session_id: int
    epoch: int
    to_send: tuple[tuple[str, int], ...]
    forgotten: tuple[str, ...]
    from_follower: bool


@dataclass(frozen=True)
class PartitionAnswer:
    """FetchResponseData.PartitionData (the fields the slice uses)."""

    name: str
    error: int
    hw: int
    lso: int
    log_start: int
    records: tuple[Record, ...]
    aborted: tuple[AbortedTxn, ...]


@dataclass(frozen=True)
class SessionFetchResponse(Payload):
    """FetchResponse to request ``req``: top-level error, session id, partitions in order."""

    req: int
    error: int
    session_id: int
    partitions: tuple[PartitionAnswer, ...]


fast_frozen_inits(vars(), __name__)  # each frozen dataclass here gets a cheaper, identical __init__ (model.fast_init)

"""Every event kind of the schema survives a JSON round trip, and ill-typed fields are refused."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kconform.traces import events as ev

_SAMPLES: dict[str, Any] = {
    "int": 7,
    "bool": True,
    "str": "t-1",
    "tuple[int, ...]": (1, 2),
    "tuple[str, ...]": ("t-0", "t-1"),
    "tuple[Entry, ...]": (ev.Entry(0, 1, 2),),
    "tuple[Record, ...]": (ev.Record(0, 1000, 0, 0, 3, 1, ev.NO_CONTROL), ev.Record(1, 1000, 0, -1, -1, 1, 1)),
    "tuple[AbortedTxn, ...]": (ev.AbortedTxn(1000, 0),),
    "tuple[TopicOffset, ...]": (ev.TopicOffset("t-0", 4),),
}


def _sample(cls: type[ev.Event]) -> ev.Event:
    return cls(**{f.name: _SAMPLES[str(f.type)] for f in dataclasses.fields(cls)})


@pytest.mark.parametrize("kind", sorted(ev.EVENT_TYPES))
def test_every_kind_round_trips(kind: str) -> None:
    event = _sample(ev.EVENT_TYPES[kind])
    assert ev.event_from_json(event.to_json()) == event


@pytest.mark.parametrize(
    ("field", "bad"),
    [("records", [[0, 1, 2]]), ("aborted", [["x", 0]]), ("partition", 3), ("read_committed", 1)],
)
def test_ill_typed_txn_fields_are_refused(field: str, bad: Any) -> None:
    obj = _sample(ev.TxnConsumerFetchHandled).to_json()
    obj[field] = bad
    with pytest.raises(ev.EventDecodeError, match=field):
        ev.event_from_json(obj)


def test_config_json_picks_the_slice() -> None:
    from kconform.model.config import ConfigError, ReplicationConfig
    from kconform.model.configs import config_from_json, slice_of
    from kconform.model.txn_config import TxnConfig

    assert config_from_json({"replicas": 2}) == ReplicationConfig(replicas=2)
    txn = config_from_json({"slice": "txn", "transaction_version": 2})
    assert txn == TxnConfig(transaction_version=2) and slice_of(txn) == "txn"
    assert config_from_json(TxnConfig().to_json()) == TxnConfig()
    with pytest.raises(ConfigError, match="unknown slice"):
        config_from_json({"slice": "raft"})

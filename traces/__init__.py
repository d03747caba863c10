"""What flows between the layers and onto disk.

``events`` (the versioned event vocabulary), ``operations`` (the inputs), ``counterexample``
(JSON Lines counterexample files, written atomically) and ``replay``.

The names below are loaded on first use (PEP 562): importing a light submodule (the miner's
``mine.tasks`` and ``mine.state``, which every Spark Python worker imports) does not import the
event vocabulary and the model behind it (about a CPU-second).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kconform.traces.events import SCHEMA_VERSION, Entry, Event, event_from_json
    from kconform.traces.operations import Operation, operation_from_json

__all__ = ["SCHEMA_VERSION", "Entry", "Event", "Operation", "event_from_json", "operation_from_json"]

_HOME = {
    "SCHEMA_VERSION": "events",
    "Entry": "events",
    "Event": "events",
    "event_from_json": "events",
    "Operation": "operations",
    "operation_from_json": "operations",
}


def __getattr__(name: str) -> Any:
    if name in ("events", "operations"):  # submodules the package used to import eagerly
        return importlib.import_module(f"{__name__}.{name}")
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)

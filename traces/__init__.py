"""What flows between the layers and onto disk.

``events`` (the versioned event vocabulary), ``operations`` (the inputs), ``counterexample``
(JSON Lines counterexample files, written atomically) and ``replay``.
"""

from kconform.traces.events import SCHEMA_VERSION, Entry, Event, event_from_json
from kconform.traces.operations import Operation, operation_from_json

__all__ = ["SCHEMA_VERSION", "Entry", "Event", "Operation", "event_from_json", "operation_from_json"]

"""The world of one replication cluster run: impl.runtime.World over a ReplicationConfig.

Guarantee: it adds nothing to the shared world; the partition's state lives in the controller and
the brokers (impl/replication/controller.py, broker.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from kconform.model.config import ReplicationConfig

from ..runtime import World


@dataclass
class Runtime(World[ReplicationConfig]):
    """The shared world of one replication cluster run."""

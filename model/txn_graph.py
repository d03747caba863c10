"""The transaction coordinator's states and their valid transitions, as one networkx DiGraph.

This is the single source of Kafka's valid-previous-state table (kafka-facts §1.1,
``TransactionState.validPreviousStates``): the coordinator model (model.coordinator) moves only
along its edges, the ValidTxnTransitions invariant checks recorded transitions against it, and the
coverage report counts which edges a run exercised. Transactions V2 (KIP-890 part 2, later trunk
``TransactionMetadata.scala``) adds edges into PrepareAbort from Empty, CompleteCommit and
CompleteAbort (an EndTxn(abort) when the client is unsure a transaction exists).
"""

from __future__ import annotations

from functools import cache

import networkx as nx

EMPTY = "Empty"
ONGOING = "Ongoing"
PREPARE_COMMIT = "PrepareCommit"
PREPARE_ABORT = "PrepareAbort"
COMPLETE_COMMIT = "CompleteCommit"
COMPLETE_ABORT = "CompleteAbort"
DEAD = "Dead"
PREPARE_EPOCH_FENCE = "PrepareEpochFence"
NO_STATE = ""
"""No metadata for the transactional id (never seen, or expired)."""

STATES: tuple[str, ...] = (
    EMPTY,
    ONGOING,
    PREPARE_COMMIT,
    PREPARE_ABORT,
    COMPLETE_COMMIT,
    COMPLETE_ABORT,
    DEAD,
    PREPARE_EPOCH_FENCE,
)
"""Kafka's states in the order of their ids 0..7."""

VALID_PREVIOUS: dict[str, tuple[str, ...]] = {
    EMPTY: (EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT),
    ONGOING: (ONGOING, EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT),
    PREPARE_COMMIT: (ONGOING,),
    PREPARE_ABORT: (ONGOING, PREPARE_EPOCH_FENCE),
    COMPLETE_COMMIT: (PREPARE_COMMIT,),
    COMPLETE_ABORT: (PREPARE_ABORT,),
    DEAD: (EMPTY, COMPLETE_ABORT, COMPLETE_COMMIT),
    PREPARE_EPOCH_FENCE: (ONGOING,),
}
"""kafka-facts §1.1: state → the states it may be entered from (unchanged since Kafka 1.1.0)."""

TV2_EXTRA_PREVIOUS: dict[str, tuple[str, ...]] = {
    PREPARE_ABORT: (EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT),
}
"""kafka-facts §1.1 [later trunk]: with Transactions V2, PrepareAbort is also entered from these."""

EXPIRATION_ALLOWED: frozenset[str] = frozenset({EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT})
"""States from which a transactional id may expire (kafka-facts §1.1, §1.7)."""

PREPARED: frozenset[str] = frozenset({PREPARE_COMMIT, PREPARE_ABORT})
COMPLETED: frozenset[str] = frozenset({COMPLETE_COMMIT, COMPLETE_ABORT})


@cache
def transition_graph(transaction_version: int = 0) -> nx.DiGraph[str]:
    """The DiGraph of valid transitions for ``transaction_version`` (0: production, 2: KIP-890 part 2).

    An edge ``a → b`` means ``a`` is in ``b``'s valid previous states. Callers must not mutate it.
    """
    g: nx.DiGraph[str] = nx.DiGraph()
    g.add_nodes_from(STATES)
    for target, previous in VALID_PREVIOUS.items():
        g.add_edges_from((p, target) for p in previous)
    if transaction_version >= 2:
        for target, previous in TV2_EXTRA_PREVIOUS.items():
            g.add_edges_from((p, target) for p in previous)
    return g


def edges(transaction_version: int = 0) -> list[tuple[str, str]]:
    """Every valid transition ``(from, to)``, sorted (the coverage report's universe)."""
    return sorted(transition_graph(transaction_version).edges)


def is_valid_transition(src: str, dst: str, transaction_version: int = 0) -> bool:
    """Whether the coordinator may move a transactional id from ``src`` to ``dst``."""
    return bool(transition_graph(transaction_version).has_edge(src, dst))

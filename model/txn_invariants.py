"""Named guarantees of the exactly-once slice, each a function over TxnState (or over one step).

Every invariant has a one-sentence docstring stating the guarantee and a citation (Jepsen's
anomaly names where they exist). An anomaly the configuration permits is reported with
``allowed=True`` and the reason, like Elle's allowed anomalies:

- transaction protocol version 0 lets a late EndTxn or a late produce of one client transaction
  act on the next transaction of the same producer epoch (KAFKA-17754, found by Jepsen): split
  outcomes caused by a decision of another client transaction are allowed under TV0;
- a producer whose state expired (producer.id.expiration.ms) is an unknown producer whose next
  sequence is accepted, so ordering and dedup across the expiry are allowed (KIP-360, KIP-854).

Without KIP-890 part 1 verification a late produce can open a transaction no coordinator knows:
that hanging transaction is a real pre-KIP-890 violation, reported as such, never allowed.
"""

from __future__ import annotations

import dataclasses
import itertools
import operator
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

from kconform.model import delayed, guarantees, timer_bounds
from kconform.model import producer_state as P
from kconform.model import txn_delayed_fetch as D
from kconform.model import txn_graph as G
from kconform.model import txn_partition as T
from kconform.model.guarantees import Violation as Violation
from kconform.model.txn_config import TxnConfig
from kconform.model.txn_state import Fate, TxnState

KAFKA_17754 = (
    "transaction version 0 reuses the producer epoch across transactions, so a late request of one "
    "client transaction acts on the next one (KAFKA-17754; fixed by KIP-890 part 2)"
)


_REGISTRY = guarantees.Registry[TxnState, TxnConfig](same=guarantees.same_inputs)
"""The exactly-once invariants; a state check's inputs are compared as objects (large persistent
maps a step replaces, never edits: identity is exact and costs nothing)."""
INVARIANTS: dict[str, guarantees.Invariant[TxnState, TxnConfig]] = _REGISTRY.invariants
_register, _register_step = _REGISTRY.state, _REGISTRY.step


class Reads:
    """The inputs of a state invariant, declared as the parts of the state it reads: ``paths`` are
    field names of TxnState (``"partitions"``) or of its ghost (``"ghost.fates"``). Called on a
    state it returns those parts in order (the registry's ``inputs``); ``check_state`` with a memo
    also uses the paths themselves, to find which invariants read a part that changed."""

    __slots__ = ("_get", "paths")

    def __init__(self, *paths: str) -> None:
        if not paths:
            raise ValueError("an invariant reads at least one part of the state")
        self.paths = paths
        self._get = operator.attrgetter(*paths)

    def __call__(self, s: TxnState) -> guarantees.Inputs:
        got = self._get(s)
        return got if len(self.paths) > 1 else (got,)


_reads = Reads


def _data_records(p: T.Partition) -> Iterator[tuple[int, int, int, int, int]]:
    """(offset, pid, epoch, seq, rid) of the data records produced by clients."""
    for r in p.log:
        if r.control < 0 and r.rid >= 0:
            yield r.offset, r.pid, r.epoch, r.seq, r.rid


def _expired_between(s: TxnState, partition: str, pid: int, lo: int, hi: int) -> bool:
    return any(part == partition and q == pid and lo < leo <= hi for part, q, leo in s.ghost.expired)


EXPIRY = (
    "the producer's state expired in between (producer.id.expiration.ms, KIP-854): "
    "an unknown producer's sequence is accepted (KIP-360)"
)


# ---------------------------------------------------------------------------------------------


@_register(
    "NoDuplicateAppends",
    "KIP-98 idempotent producer; kafka-facts §2.2",
    _reads("partitions", "ghost.expired"),
)
def no_duplicate_appends(s: TxnState, cfg: TxnConfig) -> Iterator[Violation]:
    """No client record is appended twice to a partition: retries of an idempotent producer are deduplicated."""
    for name, p in s.partitions.items():
        first: dict[int, tuple[int, int]] = {}
        for offset, pid, _e, _seq, rid in _data_records(p):
            if rid not in first:
                first[rid] = (offset, pid)
                continue
            o1, pid1 = first[rid]
            why = EXPIRY if pid == pid1 and _expired_between(s, name, pid, o1, offset) else ""
            yield Violation(
                "NoDuplicateAppends",
                f"{name}: record {rid} appended at offsets {o1} and {offset}",
                allowed=bool(why),
                allowed_because=why,
            )


@_register(
    "PerProducerOrder",
    "KIP-98 sequence numbers; kafka-facts §2.2",
    _reads("partitions", "ghost.expired"),
)
def per_producer_order(s: TxnState, cfg: TxnConfig) -> Iterator[Violation]:
    """On each partition a producer's records appear in sequence order without gaps within an epoch, and its epochs
    never go back."""
    for name, p in s.partitions.items():
        last: dict[int, tuple[int, int, int]] = {}
        for offset, pid, epoch, seq, _rid in _data_records(p):
            if pid < 0:
                continue
            prev = last.get(pid)
            last[pid] = (offset, epoch, seq)
            if prev is None:
                continue
            o0, e0, s0 = prev
            if epoch == e0 and seq == P.increment_sequence(s0):
                continue
            if epoch > e0:
                continue
            why = EXPIRY if _expired_between(s, name, pid, o0, offset) else ""
            yield Violation(
                "PerProducerOrder",
                f"{name}: producer {pid} wrote (epoch {e0}, seq {s0}) at {o0} then (epoch {epoch}, seq {seq}) at "
                f"{offset}",
                allowed=bool(why),
                allowed_because=why,
            )


def _client_txns(s: TxnState) -> dict[tuple[str, int], list[tuple[tuple[str, int], Fate | None]]]:
    out: dict[tuple[str, int], list[tuple[tuple[str, int], Fate | None]]] = defaultdict(list)
    for key, owner in s.ghost.owners.items():
        if owner.ctxn >= 0 and owner.txn_id:
            out[(owner.txn_id, owner.ctxn)].append((key, s.ghost.fates.get(key)))
    return out


def _aborted(fate: Fate | None) -> bool:
    return fate is not None and not fate.commit


def _tv0_split(cfg: TxnConfig, ctxn: int, fates: list[Fate]) -> str:
    if cfg.transaction_version == 0 and any(f.by_ctxn != ctxn for f in fates):
        return KAFKA_17754
    return ""


@_register(
    "TxnAtomicity",
    "KIP-98 atomic multi-partition writes; Jepsen (Kafka 3.x) lost/aborted writes",
    _reads("ghost.owners", "ghost.fates"),
)
def txn_atomicity(s: TxnState, cfg: TxnConfig) -> Iterator[Violation]:
    """The records and offset commits of one client transaction all commit or all abort, on every partition."""
    for (txn_id, ctxn), items in sorted(_client_txns(s).items()):
        fates = [f for _k, f in items if f is not None]
        outcomes = {f.commit for f in fates}
        if len(outcomes) > 1:
            committed = sorted(k for k, f in items if f is not None and f.commit)
            aborted = sorted(k for k, f in items if f is not None and not f.commit)
            why = _tv0_split(cfg, ctxn, fates)
            yield Violation(
                "TxnAtomicity",
                f"client transaction {ctxn} of {txn_id!r}: committed {committed}, aborted {aborted}",
                allowed=bool(why),
                allowed_because=why,
            )


@_register(
    "NoAbortedRead",
    "Jepsen/Adya G1a (aborted read); KIP-98 read_committed; kafka-facts §4",
    _reads("ghost.reads", "ghost.fates"),
)
def no_aborted_read(s: TxnState, cfg: TxnConfig) -> Iterator[Violation]:
    """A read_committed consumer never receives a record of an aborted transaction (G1a)."""
    fates = s.ghost.fates
    for r in sorted(r for r in s.ghost.reads if r.read_committed and _aborted(fates.get((r.partition, r.offset)))):
        yield Violation("NoAbortedRead", f"read_committed consumer read aborted record at {r.partition}@{r.offset}")


@_register(
    "NoUncommittedRead",
    "KIP-98 read_committed (LSO); kafka-facts §4; Redpanda #3036",
    _reads("ghost.reads"),
)
def no_uncommitted_read(s: TxnState, cfg: TxnConfig) -> Iterator[Violation]:
    """A read_committed consumer only receives transactional records whose transaction had committed when the fetch was
    served."""
    for r in sorted(r for r in s.ghost.reads if r.read_committed and not r.stable_when_served):
        yield Violation(
            "NoUncommittedRead", f"read_committed consumer read {r.partition}@{r.offset} before it committed"
        )


@_register(
    "LsoBounds",
    "KIP-98 last stable offset; UnifiedLog.lastStableOffset; kafka-facts §2.4, §4",
    _reads("partitions", "ghost.served"),
)
def lso_bounds(s: TxnState, cfg: TxnConfig) -> Iterator[Violation]:
    """Every partition's HW is at most its LEO, and every LSO served is at most the HW and never past an unstable
    transaction's first offset."""
    for name, p in s.partitions.items():
        if p.hw > p.leo:
            yield Violation("LsoBounds", f"{name}: HW {p.hw} > LEO {p.leo}")
    for sv in sorted(
        sv for sv in s.ghost.served if sv.lso > sv.hw or sv.hw > sv.leo or 0 <= sv.first_unstable < sv.lso
    ):
        yield Violation(
            "LsoBounds",
            f"{sv.partition}: LSO {sv.lso} served with HW {sv.hw}, LEO {sv.leo}, first unstable {sv.first_unstable}",
        )


@_register(
    "NoZombieCommit",
    "KIP-98 producer fencing; KAFKA-6119; kafka-facts §1.11",
    _reads("ghost.owners", "ghost.fates"),
)
def no_zombie_commit(s: TxnState, cfg: TxnConfig) -> Iterator[Violation]:
    """A write by a fenced producer epoch (the coordinator had moved past it when it was appended) never commits."""
    for key, owner in s.ghost.owners.items():
        fate = s.ghost.fates.get(key)
        if owner.zombie and fate is not None and fate.commit:
            yield Violation(
                "NoZombieCommit", f"{key[0]}@{key[1]} written by a fenced epoch of {owner.txn_id!r} committed"
            )


@_register(
    "ValidTxnTransitions",
    "kafka-facts §1.1 TransactionState.validPreviousStates; KIP-890 part 2",
    _reads("ghost.transitions"),
)
def valid_txn_transitions(s: TxnState, cfg: TxnConfig) -> Iterator[Violation]:
    """The coordinator moves a transactional id only along Kafka's valid-previous-state table."""
    tv = cfg.transaction_version
    for src, dst in sorted(t for t in s.ghost.transitions if not G.is_valid_transition(t[0], t[1], tv)):
        yield Violation("ValidTxnTransitions", f"{src} → {dst} is not in the valid-previous table")


@_register(
    "NoHangingTransaction",
    "KIP-890 part 1 (hanging transactions); KAFKA-14402; KIP-98 timeouts",
    _reads("ghost.open_at_quiescence", "partitions", "txns"),
)
def no_hanging_transaction(s: TxnState, cfg: TxnConfig) -> Iterator[Violation]:
    """Every transaction open on a partition belongs to a coordinator transaction (Ongoing or Prepare*) that includes
    the partition, and none is left open once the world has quiesced (delivered everything, fired every timer)."""
    for what in sorted(s.ghost.open_at_quiescence):
        yield Violation("NoHangingTransaction", f"after quiescence {what}")
    for name, p in s.partitions.items():
        if not p.producers:
            continue  # no producer state, no open transaction
        for first, pid in p.open_txns():
            known = any(
                meta.pid == pid and meta.state in (G.ONGOING, *G.PREPARED) and name in meta.partitions
                for meta in s.txns.values()
            )
            if not known:
                yield Violation(
                    "NoHangingTransaction",
                    f"{name}: producer {pid}'s transaction from offset {first} is unknown to every coordinator",
                )


@_register(
    "OneOutcomePerTransaction",
    "KIP-98; Jepsen (Kafka 3.x) lost writes; KAFKA-17754",
    _reads("ghost.fates", "ghost.owners", "ghost.end_answers"),
)
def one_outcome_per_transaction(s: TxnState, cfg: TxnConfig) -> Iterator[Violation]:
    """Each coordinator transaction has one outcome on every partition, and a client told its transaction committed (or
    aborted) sees its records end so."""
    by_decision: dict[tuple[str, int], set[bool]] = defaultdict(set)
    for fate in s.ghost.fates.values():
        by_decision[(fate.txn_id, fate.number)].add(fate.commit)
    for (txn_id, number), outcomes in sorted(by_decision.items()):
        if len(outcomes) > 1:
            yield Violation(
                "OneOutcomePerTransaction", f"coordinator transaction {number} of {txn_id!r} both committed and aborted"
            )
    txns = _client_txns(s)
    for a in sorted(s.ghost.end_answers):
        fates = [f for _k, f in txns.get((a.txn_id, a.ctxn), []) if f is not None]
        wrong = [f for f in fates if f.commit != a.commit]
        if wrong:
            why = _tv0_split(cfg, a.ctxn, wrong)
            yield Violation(
                "OneOutcomePerTransaction",
                f"client transaction {a.ctxn} of {a.txn_id!r} was answered {'commit' if a.commit else 'abort'} "
                f"but {len(wrong)} of its records ended the other way",
                allowed=bool(why),
                allowed_because=why,
            )


@_register(
    "NoUncommittedOffsetRead",
    "KIP-98 transactional offset commits; KIP-447; kafka-facts §1.10",
    _reads("ghost.offset_reads", "partitions", "ghost.fates"),
)
def no_uncommitted_offset_read(s: TxnState, cfg: TxnConfig) -> Iterator[Violation]:
    """OffsetFetch returns only offsets of plain commits or of committed transactions."""
    for r in sorted(s.ghost.offset_reads):
        p = s.partitions.get(r.offsets_partition)
        record = p.log[r.record_offset] if p is not None and 0 <= r.record_offset < p.leo else None
        fate = s.ghost.fates.get((r.offsets_partition, r.record_offset))
        if record is None or (record.txn and (fate is None or not fate.commit)):
            yield Violation(
                "NoUncommittedOffsetRead",
                f"group {r.group!r} read offset {r.offset} of {r.partition} from an uncommitted record "
                f"{r.record_offset}",
            )


@_register(
    "DelayedFetchDeadlines",
    "DelayedOperation (timing-wheel expiry); DelayedFetch; ReplicaManager.fetchMessages",
    _reads("parked", "now_ms"),
)
def purgatory_deadlines(s: TxnState, cfg: TxnConfig) -> Iterator[Violation]:
    """No parked consumer fetch outlives its fetch.max.wait.ms (the replication slice's PurgatoryDeadlines)."""
    for df in s.parked:
        if s.now_ms > df.deadline_ms:
            where = f"broker {df.node}"
            yield Violation(
                "DelayedFetchDeadlines", delayed.past_deadline_message(where, D.describe(df), s.now_ms, df.deadline_ms)
            )


@_register(
    "DelayedFetchTriggersHonoured",
    "DelayedOperationPurgatory.checkAndComplete; Partition.tryCompleteDelayedRequests (LeaderHwChange.INCREASED)",
    _reads("ghost.overdue"),
)
def delayed_triggers_honoured(s: TxnState, cfg: TxnConfig) -> Iterator[Violation]:
    """Every completion trigger is honoured: a parked fetch that an HW (and LSO) advance or its deadline
    made completable is completed before time moves on (the replication slice's DelayedTriggersHonoured)."""
    for message in s.ghost.overdue:
        yield Violation("DelayedFetchTriggersHonoured", message)


@_register(
    "DelayedFetchIsolation",
    "DelayedFetch.onComplete reads at the request's FetchIsolation (TXN_COMMITTED: the LSO); KAFKA-5355; KIP-98",
    _reads("ghost.delayed_reads"),
)
def delayed_fetch_isolation(s: TxnState, cfg: TxnConfig) -> Iterator[Violation]:
    """A parked fetch never returns data above what its isolation level allows at completion time (the
    LSO for read_committed, the HW otherwise)."""
    for r in sorted(dr for dr in s.ghost.delayed_reads if dr.end > dr.bound):
        bound = "LSO" if r.read_committed else "HW"
        yield Violation(
            "DelayedFetchIsolation",
            f"{r.partition}: delayed fetch {r.req} returned records up to offset {r.end - 1}, "
            f"at or above its {bound} {r.bound} at completion",
        )


@timer_bounds.reports(
    _REGISTRY,
    "TxnTimeoutAbortBounded",
    "TransactionCoordinator.startup (transaction-abort every "
    "transaction.abort.timed.out.transaction.cleanup.interval.ms), abortTimedOutTransactions; "
    "TransactionStateManager.timedOutTransactions; TransactionMetadata.prepareFenceProducerEpoch; KAFKA-6119",
)
def txn_timeout_abort_bounded(s: TxnState) -> tuple[str, ...]:
    """A loaded coordinator rolls a transaction back within one abort-check interval after it
    outlived its transaction.timeout.ms (or after the coordinator loaded it, if later).

    Judged where time passes timer by timer (``TxnState.tracks_timeouts``: the lockstep judge);
    the bound and its window are model.txn_timeout's."""
    return s.ghost.late_aborts


@timer_bounds.reports(
    _REGISTRY,
    "ProducerExpiryBounded",
    "UnifiedLog (PeriodicProducerExpirationCheck every producer.id.expiration.check.interval.ms); "
    "ProducerStateManager.removeExpiredProducers, isProducerExpired; KIP-854",
)
def producer_expiry_bounded(s: TxnState) -> tuple[str, ...]:
    """A partition leader drops the state of a producer with no open transaction within one
    expiration-check interval after it was idle for producer.id.expiration.ms.

    Judged where time passes timer by timer (``TxnState.tracks_timeouts``: the lockstep judge);
    the bound is model.txn_timeout's."""
    return s.ghost.late_expiries


@timer_bounds.reports(
    _REGISTRY,
    "BrokerAnswersBounded",
    "KafkaApis.handleWriteTxnMarkersRequest (a response once the markers are appended); "
    "TransactionMarkerChannelManager, TransactionMarkerRequestCompletionHandler (request.timeout.ms, re-sent "
    "for ever); AddPartitionsToTxnManager, TransactionCoordinator.handleVerifyPartitionsInTransaction (KIP-890)",
)
def broker_answers_bounded(s: TxnState) -> tuple[str, ...]:
    """On a healthy network, every WriteTxnMarkers request a coordinator sends and every KIP-890
    verification a partition leader sends is answered, and the answer handled by its sender,
    within request.timeout.ms.

    Judged where the harness says when the network delivers (``TxnGhost.network_healthy``: the
    lockstep judge, told each operation); the bound is model.txn_answers'."""
    return s.ghost.late_answers


@_register_step("ProducerEpochMonotonic", "KIP-98 epochs; KIP-360; kafka-facts §1.3, §2.1")
def producer_epoch_monotonic(pre: TxnState, post: TxnState, cfg: TxnConfig) -> Iterator[Violation]:
    """Neither the coordinator's epoch of a producer id nor a partition's stored epoch of a producer ever decreases."""
    if post.txns is not pre.txns:  # the very same map (or partition, producer map) holds the same epochs
        for txn_id, meta in post.txns.items():
            old = pre.txns.get(txn_id)
            if old is not None and old.pid == meta.pid and meta.epoch < old.epoch:
                yield Violation(
                    "ProducerEpochMonotonic", f"{txn_id!r}: producer {meta.pid} epoch {old.epoch} → {meta.epoch}"
                )
    if post.partitions is pre.partitions:
        return
    for name, p in post.partitions.items():
        before = pre.partitions.get(name)
        if before is None or before.producers is p.producers:
            continue
        for pid, entry in p.producers.items():
            old_entry = before.producers.get(pid)
            if old_entry is not None and entry.epoch < old_entry.epoch:
                yield Violation(
                    "ProducerEpochMonotonic", f"{name}: producer {pid} epoch {old_entry.epoch} → {entry.epoch}"
                )


for _name, _path in (
    ("TxnTimeoutAbortBounded", "ghost.late_aborts"),
    ("ProducerExpiryBounded", "ghost.late_expiries"),
    ("BrokerAnswersBounded", "ghost.late_answers"),
):
    # The timer bounds' inputs, declared as the ghost field their messages are (the very tuple
    # model.timer_bounds.reports' inputs hold), so that check_state's memo finds them by part.
    INVARIANTS[_name] = dataclasses.replace(INVARIANTS[_name], inputs=Reads(_path))


Memo = dict[str, Any]
"""What ``check_state`` remembers between the states of one sequence (one judge's): the
registry's per-invariant entries (model.guarantees.Memo) or this module's, under ``_LAST``."""

_LAST = ""
"""The memo key of the last check's parts and verdicts (no invariant has an empty name)."""


@dataclasses.dataclass(frozen=True)
class _Plan:
    """The state invariants one ``check_state`` call runs (those named, in registration order),
    each with its check; the parts of the state they read (``parts``: one attrgetter over every
    path any of them declares); and for each part, which of them read it (``readers``)."""

    names: tuple[str, ...]
    checks: tuple[Callable[[TxnState, TxnConfig], Iterator[Violation]], ...]
    parts: Callable[[TxnState], tuple[object, ...]]
    readers: tuple[tuple[int, ...], ...]


@dataclasses.dataclass(frozen=True)
class _Last:
    """The last check through a memo: its config and plan, the parts of the state it saw, each
    invariant's verdict and all of them in order."""

    cfg: TxnConfig
    plan: _Plan
    parts: tuple[object, ...]
    verdicts: tuple[list[Violation], ...]
    found: list[Violation]


_PLANS: dict[frozenset[str] | None, _Plan | None] = {}
_PLANS_VERSION = [-1]


def _plan(names: frozenset[str] | None) -> _Plan | None:
    """The plan for ``names`` (None: every invariant); None when some state invariant it runs does
    not declare its inputs as ``Reads`` (then the registry's own memo serves). Rebuilt after any
    registration, replacement or removal of an invariant (the registry's version)."""
    version = _REGISTRY.invariants.version
    if _PLANS_VERSION[0] != version:
        _PLANS.clear()
        _PLANS_VERSION[0] = version
    if names in _PLANS:
        return _PLANS[names]
    entries = [
        inv for inv in INVARIANTS.values() if inv.state_check is not None and (names is None or inv.name in names)
    ]
    plan: _Plan | None = None
    if entries and all(isinstance(inv.inputs, Reads) for inv in entries):
        paths = sorted({path for inv in entries for path in inv.inputs.paths})  # type: ignore[union-attr]
        get = operator.attrgetter(*paths)
        parts = get if len(paths) > 1 else (lambda s: (get(s),))
        readers = tuple(
            tuple(i for i, inv in enumerate(entries) if path in inv.inputs.paths)  # type: ignore[union-attr]
            for path in paths
        )
        checks = tuple(inv.state_check for inv in entries if inv.state_check is not None)
        plan = _Plan(tuple(inv.name for inv in entries), checks, parts, readers)
    _PLANS[names] = plan
    return plan


def check_state(
    s: TxnState, cfg: TxnConfig, names: frozenset[str] | None = None, memo: Memo | None = None
) -> list[Violation]:
    """Every state invariant (or the named ones) over ``s``, in registration order. With a ``memo``
    (one per sequence of states, e.g. one judge's), an invariant is re-run only when a part of the
    state it reads (its ``Reads``) is another object than at the previous check through that memo
    with the same config and names; otherwise its verdict then is returned again. States are
    immutable, so the verdicts are those of running every check (model.guarantees.Registry
    .check_state's guarantee; here the parts are compared once per check, not once per
    invariant)."""
    if memo is None:
        return _REGISTRY.check_state(s, cfg, names)
    plan = _plan(names)
    if plan is None:
        return _REGISTRY.check_state(s, cfg, names, memo)
    parts = plan.parts(s)
    last = memo.get(_LAST)
    if last is not None and last.cfg is cfg and last.plan is plan:
        changed = list(itertools.compress(plan.readers, map(operator.is_not, parts, last.parts)))
        if not changed:
            return list(last.found)
        rerun = set(itertools.chain.from_iterable(changed))
        verdicts = list(last.verdicts)
    else:
        rerun = set(range(len(plan.checks)))
        verdicts = [[] for _ in plan.checks]
    for i in rerun:
        verdicts[i] = list(plan.checks[i](s, cfg))
    found = list(itertools.chain.from_iterable(verdicts))
    memo[_LAST] = _Last(cfg, plan, parts, tuple(verdicts), found)
    return list(found)


def check_step(pre: TxnState, post: TxnState, cfg: TxnConfig, names: frozenset[str] | None = None) -> list[Violation]:
    """Every step invariant (or the named ones) over the step ``pre`` → ``post``."""
    return _REGISTRY.check_step(pre, post, cfg, names)

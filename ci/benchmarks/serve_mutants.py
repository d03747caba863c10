"""Which of the exactly-once slice's mutants real clients expose through ``kconform serve`` (issue 16).

For each mutant of impl/txn/mutants.py, one run: an in-process served cluster (3 brokers) with the
mutant switched on, driven by ``kconform probe``'s seeded workload (real client processes:
confluent-kafka by default; plain, idempotent and transactional producers, zombie fencing,
consume-transform-produce, read_committed and read_uncommitted consumers, a subscribing group) for
``--seconds`` of main phase. Printed per mutant: whether the **model**, judging every request the
served brokers handled in lockstep, found a non-conformance or invariant violation (and which), and
whether the **probe's black-box checker**, judging only what the client applications saw, found a
forbidden anomaly (and which). The lockstep gate's own verdict on each mutant is its self-check
(``kconform gate --slice txn --self-check``: every mutant caught). Run:
``python -m kconform.ci.benchmarks.serve_mutants [--seconds 8] [--mutant NAME ...] [--client kafka-python]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kconform.conformance.probe.checker import check_history
from kconform.conformance.probe.runner import ProbeError, ProbeOptions, run_probe
from kconform.conformance.serve.cluster import ServedCluster, served_config
from kconform.conformance.serve.faults import load_schedule
from kconform.conformance.serve.server import Server, ServerThread
from kconform.impl.mutants import mutants_of


def one(mutant: str | None, seconds: float, client: str, out: Path, faults: Path | None) -> tuple[str, str, float]:
    """(model verdict, probe verdict, wall seconds) of one served run with ``mutant``."""
    t = time.monotonic()
    cluster = ServedCluster(served_config(3), frozenset({mutant}) if mutant else frozenset())
    schedule = load_schedule(faults, 3) if faults is not None else []
    with ServerThread(Server(cluster, schedule)) as served:
        bs = served.start()
        try:
            run = run_probe(
                ProbeOptions(bootstrap_server=bs, client=client, seconds=seconds, out_dir=out, nemesis=False)
            )
            result = check_history(run.history)
            forbidden = sorted({name for (name, allowed), n in result.findings.counts.items() if n and not allowed})
            probe = result.verdict + (f" ({', '.join(forbidden)})" if forbidden else "")
        except ProbeError as e:
            probe = f"error: {str(e).splitlines()[0][:80]}"
        failure = served.call(lambda: cluster.failure)
    model = "pass" if failure is None else f"{failure.verdict} ({failure.name})"
    return model, probe, time.monotonic() - t


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="serve_mutants", description=__doc__)
    parser.add_argument("--seconds", type=float, default=8.0, help="probe main phase per mutant (default 8)")
    parser.add_argument("--mutant", action="append", help="mutants (default: every txn mutant, and none)")
    parser.add_argument("--client", default="confluent-kafka", choices=("confluent-kafka", "kafka-python"))
    parser.add_argument("--faults", type=Path, help="a fault schedule for every served run (docs/serve.md)")
    args = parser.parse_args(argv)
    console = Console()
    console.print(
        f"served mutants: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, {platform.python_implementation()} "
        f"{platform.python_version()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}, "
        f"{args.client}, {args.seconds:g} s main phase per run, faults: {args.faults or 'none'}"
    )
    names: list[str | None] = [None, *sorted(mutants_of("txn"))] if not args.mutant else list(args.mutant)
    table = Table("mutant", "model (lockstep, served)", "probe (black box)", "wall s")
    with tempfile.TemporaryDirectory(prefix="kconform-serve-mutants-") as tmp:
        for name in names:
            model, probe, wall = one(name, args.seconds, args.client, Path(tmp) / (name or "none"), args.faults)
            table.add_row(name or "(none: the correct reference)", model, probe, f"{wall:.0f}")
    console.print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

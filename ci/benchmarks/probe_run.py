"""Operations per second the probe's workload drives, per target and client (issue 12).

Each run starts the target from its shipped target file, runs the seeded workload for ``--seconds`` of
main phase (faults on, as ``kconform probe`` runs it), drains, and tears down. Printed per run: client
operations invoked in the main phase, ok / fail / info completions, faults injected, the main phase's
operations per second (ops / --seconds), and the whole run's wall time including start-up, drain and
teardown. Runs go one after the other, so they see the same machine load as nearly as a shared machine
allows. Run: ``python -m kconform.ci.benchmarks.probe_run [--seconds 20] [--target tansu ...]
[--client confluent-kafka ...] [--no-nemesis]``.
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

from kconform.conformance.probe.runner import ProbeError, ProbeOptions, run_probe

TARGETS = ("librdkafka-mock", "tansu")
CLIENTS = ("confluent-kafka", "kafka-python")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="probe_run", description=__doc__)
    parser.add_argument("--seconds", type=float, default=20.0, help="main-phase seconds per run (default 20)")
    parser.add_argument("--target", action="append", choices=TARGETS, help="targets (default: all)")
    parser.add_argument("--client", action="append", choices=CLIENTS, help="clients (default: all)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-nemesis", action="store_true", help="run without faults")
    args = parser.parse_args(argv)
    console = Console()
    console.print(
        f"probe workload throughput: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, "
        f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}, {args.seconds:g} s main phase per run"
    )
    table = Table("target", "client", "ops", "ok", "fail", "info", "faults", "ops/s", "run wall s")
    with tempfile.TemporaryDirectory(prefix="kconform-probe-bench-") as tmp:
        for target in args.target or TARGETS:
            for client in args.client or CLIENTS:
                t = time.monotonic()
                try:
                    run = run_probe(
                        ProbeOptions(
                            target=target,
                            client=client,
                            seconds=args.seconds,
                            seed=args.seed,
                            out_dir=Path(tmp) / f"{target}-{client}",
                            nemesis=not args.no_nemesis,
                        )
                    )
                except ProbeError as e:  # e.g. kafka-python cannot bootstrap from the mock (docs/probe.md)
                    table.add_row(target, client, "-", "-", "-", "-", "-", "n/a", f"{time.monotonic() - t:.1f}")
                    console.print(f"{target} / {client}: {str(e).splitlines()[0][:200]}")
                    continue
                wall = time.monotonic() - t
                faults = sum(n for f, n in run.faults.items() if f not in ("resume", "heal"))
                table.add_row(
                    target,
                    client,
                    str(run.ops),
                    str(run.completed["ok"]),
                    str(run.completed["fail"]),
                    str(run.completed["info"]),
                    str(faults),
                    f"{run.ops / args.seconds:,.0f}",
                    f"{wall:.1f}",
                )
    console.print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

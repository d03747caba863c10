"""A slice's gate with and without delayed fetches, side by side in one run.

Run: ``python -m kconform.ci.benchmarks.gate_delayed_fetch [--slice replication|txn] [--examples 300]
[--rounds 2] [--seed 7]``. Each round runs ``kconform gate`` on the reference twice in child
processes, once with the slice's default configuration (every fetch answered at once) and once with
its ``--slice all`` gate configuration (replication: Kafka's 500 ms fetch waits, waiting consumer
fetches drawn, conformance/replication/slice.py ``GATE_CONFIG``; txn: TV2 with consumers waiting up
to 5000 ms at the LSO, conformance/txn/slice.py ``GATE_CONFIGS``, against TV2 without waits),
alternating which goes first, and prints wall and CPU seconds of each child and the state-machine
runs and events the gate reports. Read the CPU columns on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from kconform.conformance.replication.slice import GATE_CONFIG
from kconform.conformance.txn.slice import GATE_CONFIGS
from kconform.model.config import ReplicationConfig
from kconform.model.txn_config import TxnConfig

_FIGURES = re.compile(r"(\d+) state-machine runs, (\d+) steps, (\d+) events judged")


def _child_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _gate(config: ReplicationConfig | TxnConfig, examples: int, seed: int, tmp: Path) -> tuple[float, float, str]:
    path = tmp / "config.json"
    path.write_text(json.dumps(config.to_json()))
    argv = [sys.executable, "-m", "kconform.ci.cli", "gate", "--config", str(path), "--examples", str(examples)]
    argv += ["--seed", str(seed), "--no-progress", "--out", str(tmp / "out")]
    cpu0, wall0 = _child_cpu_s(), time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=3600, check=False)
    wall, cpu = time.perf_counter() - wall0, _child_cpu_s() - cpu0
    found = _FIGURES.search(done.stdout)
    figures = "runs {} / steps {} / events {}".format(*found.groups()) if found else f"exit {done.returncode}"
    if done.returncode != 0:
        figures += f" (exit {done.returncode})"
    return wall, cpu, figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--examples", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--slice", choices=("replication", "txn"), default="replication")
    args = parser.parse_args(argv)
    configs: dict[str, ReplicationConfig | TxnConfig] = (
        {"default (no waits)": ReplicationConfig(), "gate (500 ms waits)": GATE_CONFIG}
        if args.slice == "replication"
        else {"TV2 (no waits)": TxnConfig(transaction_version=2), "gate (5000 ms waits)": dict(GATE_CONFIGS)["txn-tv2"]}
    )
    side_by_side(configs, args.examples, args.rounds, args.seed)
    return 0


def side_by_side(configs: Mapping[str, ReplicationConfig | TxnConfig], examples: int, rounds: int, seed: int) -> None:
    """Print machine and date, then one row per gate run: ``rounds`` rounds over ``configs``,
    alternating the order."""
    print(f"{platform.machine()} {platform.python_version()} {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC")
    print(f"{'round':>5}  {'configuration':<20} {'wall s':>8} {'CPU s':>8}  figures")
    for n in range(rounds):
        items = list(configs.items())
        order = items if n % 2 == 0 else items[::-1]
        for name, cfg in order:
            with tempfile.TemporaryDirectory() as tmp:
                wall, cpu, figures = _gate(cfg, examples, seed, Path(tmp))
            print(f"{n + 1:>5}  {name:<20} {wall:>8.1f} {cpu:>8.1f}  {figures}", flush=True)


if __name__ == "__main__":
    sys.exit(main())

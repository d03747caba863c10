"""The replication gate with and without KIP-966 ELR, side by side in one run.

Run: ``python -m kconform.ci.benchmarks.gate_elr [--examples 200] [--rounds 2] [--seed 7]``. Each
round runs ``kconform gate --slice replication`` on the reference in child processes with four
configurations, alternating the order: the default, the default on the ELR rung
(``eligible.leader.replicas.version=1``, docs/elr.md), the ``--slice all`` configuration
(conformance/replication/slice.py ``GATE_CONFIG``) and the latter on the ELR rung. It prints the
wall and CPU seconds of each child and the runs, steps and events the gate reports (the ELR
configurations also run the ELR zoo scenarios). Read the CPU columns on a shared machine.
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from kconform.ci.benchmarks.gate_delayed_fetch import _gate
from kconform.conformance.replication.slice import GATE_CONFIG
from kconform.model.config import ReplicationConfig


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    plain = ReplicationConfig()
    configs = {
        "default": plain,
        "default + ELR": replace(plain, eligible_leader_replicas_version=1),
        "--slice all's": GATE_CONFIG,
        "--slice all's + ELR": replace(GATE_CONFIG, eligible_leader_replicas_version=1),
    }
    print(f"{platform.machine()} {platform.python_version()} {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC")
    print(f"{'round':>5}  {'configuration':<20} {'wall s':>8} {'CPU s':>8}  figures")
    for n in range(args.rounds):
        order = list(configs.items()) if n % 2 == 0 else list(reversed(configs.items()))
        for name, cfg in order:
            with tempfile.TemporaryDirectory() as tmp:
                wall, cpu, figures = _gate(cfg, args.examples, args.seed, Path(tmp))
            print(f"{n + 1:>5}  {name:<20} {wall:>8.1f} {cpu:>8.1f}  {figures}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The replication gate with and without KIP-966 ELR, side by side in one run.

Run: ``python -m kconform.ci.benchmarks.gate_elr [--examples 200] [--rounds 2] [--seed 7]``. Each
round runs ``kconform gate --slice replication`` on the reference in child processes with four
configurations, alternating the order: the default, the default on the ELR rung
(``eligible.leader.replicas.version=1``, docs/elr.md), the ``--slice all`` configuration
(conformance/replication/slice.py ``GATE_CONFIG``, which is on the ELR rung) and the latter without ELR. It prints the
wall and CPU seconds of each child and the runs, steps and events the gate reports (the ELR
configurations also run the ELR zoo scenarios). Read the CPU columns on a shared machine.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from kconform.ci.benchmarks.gate_delayed_fetch import side_by_side
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
        "--slice all's - ELR": replace(GATE_CONFIG, eligible_leader_replicas_version=0),
        "--slice all's": GATE_CONFIG,
    }
    side_by_side(configs, args.examples, args.rounds, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())

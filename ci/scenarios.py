"""``kconform scenarios``: the table of Kafka's own test scenarios run on the model and the reference.

Prints one line per ported Kafka test (scenario, Kafka version, model verdict, reference verdict),
the reasons of scenarios out of scope and the resolutions of disagreements found while porting
(conformance/yardstick, docs/yardstick.md). Exit 0 when every scenario in scope agrees on the
model and on the reference, 1 when one disagrees, 2 when a scenario cannot be expressed.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kconform.ci.exitcodes import EXIT_ERROR, EXIT_PASS, EXIT_VIOLATION


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "scenarios",
        help="run Kafka's own test scenarios on the model and the reference (docs/yardstick.md)",
        description="Run the ported scenarios of Kafka's unit tests on the model and on the reference "
        "implementation and print the table: scenario, Kafka version, model verdict, reference verdict.",
    )
    parser.add_argument(
        "--class", dest="kafka_class", metavar="NAME", help="only the scenarios of this Kafka test class"
    )
    parser.add_argument("--disagreements", action="store_true", help="print only scenarios that disagree")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from kconform.conformance.yardstick.dsl import ScenarioError
    from kconform.conformance.yardstick.table import render, rows, scenarios

    try:
        chosen = [s for s in scenarios() if args.kafka_class in (None, s.kafka_class)]
        if not chosen:
            print(f"kconform: error: no scenario of Kafka test class {args.kafka_class!r}", file=sys.stderr)
            return EXIT_ERROR
        table = rows(chosen)
    except ScenarioError as e:
        print(f"kconform: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    shown = [r for r in table if r.model.disagrees or r.reference.disagrees] if args.disagreements else table
    print(render(shown) if shown else "no scenario disagrees")
    failed = any(r.model.disagrees or r.reference.disagrees for r in table)
    return EXIT_VIOLATION if failed else EXIT_PASS

"""Requests per second ``kconform serve`` answers, per request kind, with the judge on and off (issue 16).

One run per mode on the same machine, one after the other: an in-process server (3 brokers) driven by
confluent-kafka: an idempotent acks=all producer writes ``--records`` records, a transactional
producer commits ``--txns`` transactions of 10 records each (every third one aborted), and a
read_committed consumer in a group reads everything back. Printed per request kind: requests
served, the server's CPU-side handling time (wall time inside the handler: the server is one thread)
and requests per handling-second, judge on next to judge off, with the ratio. Run:
``python -m kconform.ci.benchmarks.serve [--records 2000] [--txns 30]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import time

from confluent_kafka import Consumer, Producer
from rich.console import Console
from rich.table import Table

from kconform.conformance.serve.cluster import ServedCluster, served_config
from kconform.conformance.serve.server import Server, ServerThread, Stats

QUIET = {"log_level": 3}


def drive(records: int, txns: int, judged: bool) -> tuple[Stats, float, int]:
    """One served run; (server stats, wall seconds, judged steps)."""
    cluster = ServedCluster(served_config(3), judged=judged)
    with ServerThread(Server(cluster)) as served:
        bs = served.start()
        t0 = time.monotonic()
        p = Producer({"bootstrap.servers": bs, "enable.idempotence": True, "acks": "all", "linger.ms": 1, **QUIET})
        for i in range(records):
            p.produce("bench", value=b"r%d" % i)
            if i % 100 == 0:
                p.poll(0)
        p.flush(60)
        tp = Producer({"bootstrap.servers": bs, "transactional.id": "bench-tx", "linger.ms": 1, **QUIET})
        tp.init_transactions(30)
        committed = 0
        for t in range(txns):
            tp.begin_transaction()
            for i in range(10):
                tp.produce("bench", value=b"t%d.%d" % (t, i))
            if t % 3 == 2:
                tp.flush(30)
                tp.abort_transaction(30)
            else:
                tp.commit_transaction(30)
                committed += 10
        c = Consumer(
            {
                "bootstrap.servers": bs,
                "group.id": "bench-g",
                "isolation.level": "read_committed",
                "auto.offset.reset": "earliest",
                **QUIET,
            }
        )
        c.subscribe(["bench"])
        want, got = records + committed, 0
        deadline = time.monotonic() + 120
        while got < want and time.monotonic() < deadline:
            for m in c.consume(500, 0.5):
                if m.error() is None:
                    got += 1
        c.close()
        wall = time.monotonic() - t0
        stats = served.call(lambda: served.server.stats)
        steps = served.call(lambda: len(cluster.run.steps))
    if got != want:
        raise SystemExit(f"read {got} of {want} committed records")
    return stats, wall, steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="serve", description=__doc__)
    parser.add_argument("--records", type=int, default=5000)
    parser.add_argument("--txns", type=int, default=30)
    args = parser.parse_args(argv)
    console = Console()
    console.print(
        f"kconform serve throughput: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, "
        f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}; {args.records} idempotent records, {args.txns} transactions"
    )
    on, wall_on, steps = drive(args.records, args.txns, True)
    off, wall_off, _ = drive(args.records, args.txns, False)
    table = Table("request kind", "served (on)", "req/s judged", "req/s unjudged", "judged / unjudged")
    for kind in sorted(on.requests):
        rate_on = on.requests[kind] / max(on.seconds.get(kind, 0.0), 1e-9)
        rate_off = off.requests.get(kind, 0) / max(off.seconds.get(kind, 0.0), 1e-9)
        table.add_row(kind, str(on.requests[kind]), f"{rate_on:,.0f}", f"{rate_off:,.0f}", f"{rate_on / rate_off:.2f}")
    console.print(table)
    console.print(
        f"judge on: {sum(on.requests.values())} requests, {steps} judged steps, wall {wall_on:.1f} s; "
        f"judge off: {sum(off.requests.values())} requests, wall {wall_off:.1f} s "
        "(req/s = requests / seconds handling them on the server's one thread; long-poll and group waits excluded)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""librdkafka's mock cluster as a stand-alone process: ``python -m kconform.conformance.probe.mock_cluster``.

librdkafka (through confluent-kafka) starts an in-process mock cluster of ``--brokers`` brokers when a
client is configured with ``test.mock.num.brokers`` (librdkafka's CONFIGURATION.md; the mock lives in
src/rdkafka_mock.c). This helper creates such a client, prints one line
``bootstrap: HOST:PORT[,HOST:PORT...]`` on stdout (flushed) once the mock answers Metadata, and then
stays up, serving the mock's listeners, until it is killed or sent SIGTERM/SIGINT. The mock listens on
127.0.0.1 only. Exit codes: 0 after a signal, 2 if the mock did not come up within ``--timeout``.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mock_cluster", description=__doc__)
    parser.add_argument("--brokers", type=int, default=3, help="number of mock brokers (default 3)")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds to wait for the mock to answer")
    args = parser.parse_args(argv)
    if not 1 <= args.brokers <= 16:
        print("mock_cluster: error: --brokers must be between 1 and 16", file=sys.stderr)
        return 2

    import confluent_kafka
    from confluent_kafka.admin import AdminClient

    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    # The admin client owns the mock cluster: it lives as long as this object does.
    admin = AdminClient({"test.mock.num.brokers": args.brokers, "bootstrap.servers": "", "log_level": 3})
    try:
        metadata = admin.list_topics(timeout=args.timeout)
    except confluent_kafka.KafkaException as e:
        print(f"mock_cluster: error: the mock cluster did not answer Metadata: {e}", file=sys.stderr)
        return 2
    brokers = sorted(metadata.brokers.values(), key=lambda b: b.id)
    bootstrap = ",".join(f"{b.host}:{b.port}" for b in brokers)
    print(f"bootstrap: {bootstrap}", flush=True)
    while not stop.wait(0.5):
        pass
    del admin
    return 0


if __name__ == "__main__":
    sys.exit(main())

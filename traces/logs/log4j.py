"""Log record headers of Kafka's broker and client logs, whatever the layout.

Kafka ships ``[%d] %p %m (%c)%n`` (config/log4j.properties since 0.8, log4j2.yaml in 4.x; its own
test resources print ``(%c:%L)``), but
deployments use their own patterns (``%d{ISO8601} %p [%t] %c: %m``, Spark's ``%d{yy/MM/dd HH:mm:ss} %p
%c{1}: %m``, ``%d - %p [%t] - %m``, logback's
``HH:mm:ss.SSS [thread] LEVEL logger - msg``, Spring Boot's ``ts LEVEL pid --- [thread] logger : msg``,
level-first ``%p %d %c - %m``, thread-first ``[%t] %d %F (line %L) %m`` (no level), JSON-less container
layouts) and tools add prefixes (``docker compose`` service names, ``grep -H`` file names, ``>>>``
console prompts). The header is found by shape, not by
a configured pattern: a timestamp, a level word, and the logger either in trailing parentheses or
before the message. Facts are then read from the message text (kconform.traces.logs.broker /
client), which does not depend on the layout.

Lines that do not start a record (stack traces, messages a viewer wrapped) are continuation lines:
:class:`RecordJoiner` appends up to :data:`MAX_CONTINUATION` of them (bounded) to the record.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LEVELS = ("TRACE", "DEBUG", "INFO", "WARN", "WARNING", "ERROR", "FATAL")
MAX_CONTINUATION = 20
MAX_MESSAGE = 32 * 1024

_PREFIX = re.compile(r"^(?:[\w.\-]+\s+\|\s|[\w.\-/]+\.log(?:\.[\w\-]+)?:(?=\[|\d)|\S+\s+\|\s|>{1,3}\s+)")
_TS = (
    r"(?:\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[,.]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?|\d\d:\d\d:\d\d[,.]\d{3}"
    r"|\d\d/\d\d/\d\d \d\d:\d\d:\d\d(?:[,.]\d{3})?)"
)
_LEVEL = r"(?P<level>TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL)"
# [2019-01-18 10:00:00,123] INFO msg (logger): the head only; the message is the rest of the line
_KAFKA = re.compile(r"^\[(?P<ts>" + _TS + r")\]\s+" + _LEVEL + r"\s+")
# 2019-01-18 10:00:00,123 INFO [thread] logger: msg | 10:00:00.123 [thread] DEBUG logger - msg |
# Spark's 20/10/20 12:11:50 INFO cluster.Partition: msg (embedded brokers in Spark tests) | "%d - %p [%t] - %m" |
# "%d %p [%t] %C{1}:%L - %m" (Strimzi): 2025-07-03 10:52:41 INFO  [thread] NetworkClient:1072 - msg
_OTHER = re.compile(
    r"^(?P<ts>" + _TS + r")\s+(?:-\s+)?(?:\[(?P<t1>[^\]]*)\]\s+)?" + _LEVEL + r"\s+(?:\[(?P<t2>[^\]]*)\]\s+)?"
    r"(?:(?P<logger>[a-zA-Z_][\w.$]*\.[\w.$]+|[A-Z][\w$]+)(?::\d+)?\s*(?::|\s-)(?:\s|$))?"
)
# Spring Boot's default console layout: 2026-05-14T12:26:53.270Z  INFO 2530 --- [thread] logger : msg (with
# an optional [application] column since Spring Boot 3.2, Sleuth's [app,trace,span,export] column before the
# pid); the logger column is padded and may be cut
_SPRING = re.compile(
    r"^(?P<ts>"
    + _TS
    + r")\s+"
    + _LEVEL
    + r"\s+(?:\[[^\]]*\]\s+)?\d+\s+---\s+(?:\[[^\]]*\]\s*)+(?P<logger>[\w.$\-]+)\s*:(?:\s|$)"
)
# level first, e.g. log4j "%p %d{...} %c - %m": INFO 2020-12-17 16:32:15,053 org.apache.kafka.clients.X - msg
# (text glued to the timestamp, such as the '(yyyy-MM-dd HH:mm:ss}' a mistyped date pattern prints, is skipped)
_LEVEL_FIRST = re.compile(
    r"^" + _LEVEL + r"\s+(?P<ts>" + _TS + r")(?:\([^)}]{0,40}[)}]|\S*)\s+(?:\[(?P<t1>[^\]]*)\]\s+)?"
    r"(?P<logger>[a-zA-Z_][\w.$]*)\s*(?::|\s-)(?:\s|$)"
)
# thread first with file and line, e.g. log4j "[%t] %d %F (line %L) %m": [pool-1-thread-1] 2019-12-18
# 09:45:19,994 FetchSessionHandler.java (line 383) msg; the layout prints no level
_THREAD_FIRST = re.compile(
    r"^\[(?P<t1>[^\]]*)\]\s+(?:"
    + _LEVEL
    + r"\s+)?(?P<ts>"
    + _TS
    + r")\s+(?:"
    + _LEVEL.replace("level", "level2")
    + r"\s+)?(?P<logger>[\w$]+)\.(?:java|scala)(?::\d+| \(line \d+\))\s+(?:-\s+)?"
)
_TRAILING_LOGGER = re.compile(r"[\w.$\-]+(?::\d+)?")


def _split_trailing_logger(rest: str) -> tuple[str, str]:
    """(message, logger) of ``msg (logger)``; linear time whatever the line's length."""
    body = rest.rstrip()
    if body.endswith(")"):
        i = body.rfind(" (")
        if i >= 0 and _TRAILING_LOGGER.fullmatch(body[i + 2 : -1]):
            return body[:i].rstrip(), body[i + 2 : -1].split(":", 1)[0]  # (%c:%L): the logger without its line
    return body, ""


@dataclass(slots=True)
class Record:
    """One log record: where it starts, its header fields and its (joined) message."""

    line: int
    text: str
    ts: str
    level: str
    logger: str
    message: str
    continuation: int = 0


def strip_prefix(text: str) -> str:
    """``text`` without a docker-compose service column or a ``grep -H`` file name."""
    m = _PREFIX.match(text)
    return text[m.end() :] if m else text


def parse_header(number: int, text: str) -> Record | None:
    """The record a line starts, or None when the line does not start one."""
    body = strip_prefix(text).strip()
    if not body:
        return None
    first = body[0]
    m = _KAFKA.match(body) if first == "[" else None
    if m is None and first == "[":
        m = _THREAD_FIRST.match(body)
    if m is None and first.isdigit():
        m = _SPRING.match(body) if "---" in body[:80] else None
        if m is None:
            m = _OTHER.match(body)
    if m is None and first in "TDIWEF":
        m = _LEVEL_FIRST.match(body)
    if m is None:
        return None
    groups = m.groupdict()
    message, trailing = _split_trailing_logger(body[m.end() :])
    logger = groups.get("logger") or trailing
    level = groups.get("level") or groups.get("level2") or ""
    return Record(
        line=number,
        text=text,
        ts=groups["ts"],
        level="WARN" if level == "WARNING" else level,
        logger=logger,
        message=message,
    )


class RecordJoiner:
    """Groups lines into records: a header line starts one, continuation lines extend it."""

    def __init__(self) -> None:
        self.pending: Record | None = None

    def feed(self, number: int, text: str) -> tuple[Record | None, bool]:
        """(the record completed by this line or None, whether the line was consumed as a
        continuation)."""
        rec = parse_header(number, text)
        if rec is not None:
            done, self.pending = self.pending, rec
            return done, True
        pending = self.pending
        if pending is not None and pending.continuation < MAX_CONTINUATION and text.strip():
            stripped = text.strip()
            if stripped.startswith(("at ", "Caused by", "...")) or pending.continuation >= 3:
                pending.continuation += 1  # stack traces: counted, not joined
                return None, True
            if len(pending.message) + len(stripped) < MAX_MESSAGE:
                pending.message = f"{pending.message} {stripped}".strip()
            pending.continuation += 1
            return None, True
        done, self.pending = self.pending, None
        return done, False

    def flush(self) -> Record | None:
        done, self.pending = self.pending, None
        return done

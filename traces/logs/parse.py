"""One pass over the inputs: every line to the parser of its format, observations out, in bounded
memory.

Per file: a checkpoint file (by name) goes to kconform.traces.logs.checkpoints; any other text file
is read line by line, and each line is offered to the DumpLogSegments parser, then to the
librdkafka parser, then grouped into log records (kconform.traces.logs.log4j) whose messages the
broker and Java-client parsers read. A line nobody knows is counted under its logger (or under
``(no log record)``), never fatal. A known line that does not parse is a :class:`Problem` naming
file:line: with ``lenient`` it is counted as a warning, otherwise the caller exits 2.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kconform.traces.logs import broker, client
from kconform.traces.logs.checkpoints import CheckpointParseError, checkpoint_kind, parse_checkpoint
from kconform.traces.logs.dumplog import DumpParseError, DumpParser
from kconform.traces.logs.log4j import Record, RecordJoiner
from kconform.traces.logs.observations import Obs, cut
from kconform.traces.logs.reader import InputError, ReadStats, expand, lines

MAX_LOGGERS = 500
"""Distinct loggers counted by name; the rest are counted together under ``(other loggers)``."""
MAX_PROBLEMS = 200
"""Problems kept with their text (all are counted)."""
NO_RECORD = "(no log record)"


@dataclass(frozen=True)
class Problem:
    """A known line that does not parse."""

    file: str
    line: int
    message: str
    text: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}: {self.text}"


@dataclass
class ParseStats:
    """What the parse saw: lines read, observations per kind, unknown lines per logger, problems."""

    read: ReadStats = field(default_factory=ReadStats)
    observations: Counter[str] = field(default_factory=Counter)
    known_records: int = 0
    unknown: Counter[str] = field(default_factory=Counter)
    problems: list[Problem] = field(default_factory=list)
    problem_count: int = 0
    unreadable: list[str] = field(default_factory=list)
    """Files that could not be read to their end (the error names the file and line): their lines
    before the error are kept; the run gives no verdict (exit 2) whatever ``--lenient`` says."""

    def count_unknown(self, logger: str) -> None:
        key = logger or NO_RECORD
        if key not in self.unknown and len(self.unknown) >= MAX_LOGGERS:
            key = "(other loggers)"
        self.unknown[key] += 1

    def add_problem(self, problem: Problem) -> None:
        self.problem_count += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(problem)


def parse_paths(paths: Sequence[str | os.PathLike[str]], stats: ParseStats) -> Iterator[Obs]:
    """Observations of every file under ``paths``, file by file, in line order. A file that cannot
    be read to its end (a damaged .gz, a read error) is recorded in ``stats.unreadable`` and the
    other files are still read: nothing already read is lost."""
    for path in expand(paths):
        try:
            yield from parse_file(path, stats)
        except InputError as e:
            stats.unreadable.append(str(e))


def parse_file(path: Path, stats: ParseStats) -> Iterator[Obs]:
    name = str(path)
    kind = checkpoint_kind(name)
    if kind is not None:
        yield from _checkpoint(path, name, kind, stats)
        return
    dump = DumpParser(name)
    joiner = RecordJoiner()
    topics: dict[str, str] = {}  # topic id -> name, learned from Fetch requests (responses name only ids)
    for number, text in lines(path, stats.read):
        try:
            out = dump.feed(number, text)
        except DumpParseError as e:
            stats.add_problem(Problem(name, number, str(e), cut(text)))
            dump.break_chain()
            continue
        if out is not None:
            done = joiner.flush()
            if done is not None:
                yield from _record(done, name, stats, topics)
            yield from _counted(out, stats)
            continue
        if "MessageSet size " in text:
            try:
                rdk = client.parse_librdkafka(number, text, name)
            except broker.LineParseError as e:
                stats.add_problem(Problem(name, number, str(e), cut(text)))
                continue
            if rdk is not None:
                done = joiner.flush()
                if done is not None:
                    yield from _record(done, name, stats, topics)
                stats.known_records += 1
                yield from _counted(rdk, stats)
                continue
        done, consumed = joiner.feed(number, text)
        if done is not None:
            yield from _record(done, name, stats, topics)
        if not consumed and text.strip():
            stats.count_unknown(NO_RECORD)
    done = joiner.flush()
    if done is not None:
        yield from _record(done, name, stats, topics)
    yield from _counted(dump.flush(), stats)


def _counted(out: list[Obs], stats: ParseStats) -> Iterator[Obs]:
    for obs in out:
        stats.observations[obs.kind] += 1
        yield obs


def _record(rec: Record, name: str, stats: ParseStats, topics: dict[str, str]) -> Iterator[Obs]:
    try:
        out = broker.parse_record(rec, name)
        if out is None:
            out = client.parse_record(rec, name, topics)
    except broker.LineParseError as e:
        stats.add_problem(Problem(name, rec.line, str(e), cut(rec.text)))
        return
    if out is None:
        stats.count_unknown(rec.logger)
        return
    stats.known_records += 1
    yield from _counted(out, stats)


def _checkpoint(path: Path, name: str, kind: str, stats: ParseStats) -> Iterator[Obs]:
    try:
        for obs in parse_checkpoint(name, kind, lines(path, stats.read)):
            stats.observations[obs.kind] += 1
            yield obs
    except CheckpointParseError as e:
        msg = str(e)
        number = int(msg.split()[1].rstrip(":")) if msg.startswith("line ") else 0
        stats.add_problem(Problem(name, number, f"{kind}: {msg}", ""))

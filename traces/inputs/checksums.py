"""A corpus's checksums: what the writer (traces.corpus.write_manifest) records in the manifest and
the reader (traces.inputs.corpus) verifies. A module of their own, so that writing a corpus does not
import the reader's checks (pyarrow.compute among them)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any


def file_digest(path: Path) -> dict[str, Any]:
    """``{"bytes": size, "sha256": hex}`` of one file."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            digest.update(chunk)
            size += len(chunk)
    return {"bytes": size, "sha256": digest.hexdigest()}


def manifest_checksum(obj: dict[str, Any]) -> str:
    """SHA-256 of the manifest's canonical JSON (sorted keys, no spaces) without ``checksum``: a
    re-encoding that keeps every value passes, any changed value does not."""
    body = {k: v for k, v in obj.items() if k != "checksum"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def part_files(buckets: tuple[int, ...]) -> list[str]:
    """The relative paths of every part file of ``buckets`` (events and steps)."""
    from kconform.traces.corpus import EVENTS_DIR, STEPS_DIR

    return [f"{table}/bucket={b}/part-0.parquet" for b in buckets for table in (EVENTS_DIR, STEPS_DIR)]


def sealed(root: str | os.PathLike[str], obj: dict[str, Any], buckets: tuple[int, ...]) -> dict[str, Any]:
    """``obj`` (a manifest's JSON) with the ``files`` digests of its part files and its checksum."""
    out = dict(obj)
    out["files"] = {name: file_digest(Path(root) / name) for name in part_files(buckets)}
    out["checksum"] = manifest_checksum(out)
    return out

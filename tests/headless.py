"""Headless Chromium rendering for the HTML report tests: a page must render to a picture that is
not blank. Under CI (the CI variable set) a missing browser fails instead of skipping."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _png_pixels(data: bytes) -> tuple[int, int, int, list[bytes]]:
    """Decode a non-interlaced 8-bit PNG: (width, height, bytes per pixel, unfiltered rows)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    width = height = bpp = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _c, _f, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and interlace == 0, f"unsupported PNG: depth {depth}, interlace {interlace}"
            bpp = {0: 1, 2: 3, 4: 2, 6: 4}[colour]
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        ftype, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 0xFF
            elif ftype == 2:
                line[i] = (line[i] + b) & 0xFF
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def assert_renders_non_blank(page: Path, tmp_path: Path) -> None:
    """Render ``page`` headless at 1200x900 and require at least two colours and 2 % non-white."""
    browser = _chromium()
    if browser is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not on PATH under CI: .ci/run installs it; the rendering check cannot be skipped")
        pytest.skip("chromium (or chromium-browser) is not on PATH")
    png = tmp_path / "report.png"
    profile = tmp_path / "profile"
    profile.mkdir()
    command = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        f"--screenshot={png}",
        "--window-size=1200,900",
        page.resolve().as_uri(),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert png.exists(), f"no screenshot (exit {done.returncode}): {done.stderr[-2000:]}"
    width, height, bpp, rows = _png_pixels(png.read_bytes())
    assert (width, height) == (1200, 900)
    colours: set[bytes] = set()
    non_white = 0
    for row in rows[::3]:
        for x in range(0, width * bpp, bpp * 3):
            pixel = row[x : x + min(bpp, 3)]
            colours.add(pixel)
            non_white += any(v < 240 for v in pixel)
    sampled = len(rows[::3]) * len(range(0, width * bpp, bpp * 3))
    assert len(colours) >= 2, "the picture is one colour"
    assert non_white / sampled >= 0.02, f"only {non_white} of {sampled} sampled pixels are not white"

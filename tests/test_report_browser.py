"""The HTML review report renders in a real headless Chromium (Debian's ``chromium`` package):
no console message (errors, blocked loads, script failures), and a screenshot that shows the
message sequence chart.

The console is read from Chromium's own log (``--enable-logging=stderr``), where every console
message of the page is a ``CONSOLE`` line; a page with a script error shows that the check sees
them. The screenshot is decoded here (PNG: zlib and the five scanline filters) and the chart's
own colours are counted: the lane headers' fill, the message arrows' blue, the red of lost
messages and faults. The same report with its charts removed must fail that count, so the test
fails when the chart is missing.

Needs ``chromium`` on the PATH (``.ci/run`` installs it); deselect with ``-m "not browser"``.
"""

from __future__ import annotations

import os
import shutil
import signal
import struct
import subprocess
import zlib
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from eoscheck.checker.cli import main

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[1]
REORDER = str(REPO / "specs" / "first-write-reorder-duplicate-shipped.toml")

LANE_FILL = (0xE3, 0xEC, 0xF9)
ARROW_BLUE = (0x1F, 0x5F, 0xBF)
LOSS_RED = (0xC6, 0x28, 0x28)
WINDOW = (1200, 2400)


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.fail("chromium is not installed (apt-get install -y chromium; .ci/run does); "
                "deselect these tests with -m 'not browser'")


def render(page: Path, shot: Path, profile: Path) -> str:
    """Load ``page`` headless, write a screenshot; returns Chromium's log (stderr)."""
    argv = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-extensions", "--hide-scrollbars", f"--user-data-dir={profile}",
            "--enable-logging=stderr", "--v=0", f"--window-size={WINDOW[0]},{WINDOW[1]}",
            f"--screenshot={shot}", page.as_uri()]
    env = {**os.environ, "HOME": str(profile)}
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env=env)
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # its renderer and GPU processes too
        proc.communicate()
        pytest.fail("chromium did not finish within 120 s")
    assert proc.returncode == 0, err[-2000:]
    assert shot.is_file(), err[-2000:]
    return out + err


def console_lines(log: str) -> list[str]:
    return [line for line in log.splitlines() if ":CONSOLE" in line]


def decode_png(path: Path) -> tuple[int, int, np.ndarray]:
    """Width, height and the RGB pixels (height x width x 3) of an 8-bit truecolour PNG (what
    Chromium writes). Up and Sub rows are undone with numpy; Average and Paeth, whose bytes
    depend on the byte just decoded, byte by byte."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
    bpp = 3 if colour == 2 else 4
    stride = width * bpp
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(height, stride + 1)
    out = np.zeros((height, stride), dtype=np.uint8)
    prev = np.zeros(stride, dtype=np.uint8)
    for y in range(height):
        kind, line = raw[y, 0], raw[y, 1:]
        if kind == 0:
            row = line.copy()
        elif kind == 2:
            row = line + prev  # uint8 arithmetic wraps, as PNG's does
        elif kind == 1:
            row = (np.cumsum(line.reshape(width, bpp).astype(np.int64), axis=0) % 256).astype(
                np.uint8).reshape(stride)
        else:
            cur = bytearray(line.tobytes())
            up = prev.tobytes()
            for i in range(stride):
                a = cur[i - bpp] if i >= bpp else 0
                b = up[i]
                if kind == 3:
                    cur[i] = (cur[i] + (a + b) // 2) & 0xFF
                else:
                    c = up[i - bpp] if i >= bpp else 0
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    cur[i] = (cur[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
            row = np.frombuffer(bytes(cur), dtype=np.uint8)
        out[y] = row
        prev = row
    return width, height, out.reshape(height, width, bpp)[:, :, :3]


def colours(pixels: np.ndarray) -> Counter[tuple[int, int, int]]:
    rgb = pixels.reshape(-1, 3).astype(np.int64)
    values, counts = np.unique(rgb[:, 0] << 16 | rgb[:, 1] << 8 | rgb[:, 2], return_counts=True)
    return Counter({(int(v) >> 16, int(v) >> 8 & 0xFF, int(v) & 0xFF): int(n)
                    for v, n in zip(values, counts)})


def shows_chart(counts: Counter[tuple[int, int, int]]) -> bool:
    # two lane headers of 190 x 30 px, ten arrows and their heads, two crosses and a fault box
    return counts[LANE_FILL] >= 2 * 4000 and counts[ARROW_BLUE] >= 1500 and counts[LOSS_RED] >= 300


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report") / "review.html"
    assert main(["compare", REORDER, "--variants", "kafka-shipped,kip360-designed", "--no-progress",
                 "--report", str(path)]) == 0
    return path


def test_the_compare_report_loads_without_console_messages_and_shows_the_chart(
        report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    log = render(report, shot, tmp_path / "profile")
    assert console_lines(log) == []
    width, height, pixels = decode_png(shot)
    assert (width, height) == WINDOW
    counts = colours(pixels)
    assert len(counts) > 50, "a blank page"
    assert shows_chart(counts), {c: counts[c] for c in (LANE_FILL, ARROW_BLUE, LOSS_RED)}


def test_the_checks_fail_without_the_chart_and_on_console_errors(report: Path, tmp_path: Path) -> None:
    html = report.read_text()
    start, end = html.index('<div class="chart">'), html.index("</svg>") + len("</svg>")
    stripped = tmp_path / "no-chart.html"
    stripped.write_text(html[:start] + html[end:] + "")
    shot = tmp_path / "no-chart.png"
    render(stripped, shot, tmp_path / "profile")
    assert not shows_chart(colours(decode_png(shot)[2]))
    # a page that logs an error, and one whose load the report's policy blocks
    broken = tmp_path / "broken.html"
    broken.write_text(html.replace("</body>", '<img src="http://example.invalid/x.png"></body>'))
    log = render(broken, tmp_path / "broken.png", tmp_path / "profile")
    assert any("example.invalid" in line for line in console_lines(log)), log[-2000:]

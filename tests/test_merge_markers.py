"""No tracked text file keeps a merge conflict's markers (session 16 left two in docs/)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"^(<{7} |={7}$|>{7} )", re.MULTILINE)
TEXT = {".md", ".py", ".toml", ".json", ".txt", ".cfg", ".yml", ".yaml"}


def _tracked() -> list[Path]:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / name for name in out.decode().split("\0") if name and Path(name).suffix in TEXT]


def test_no_conflict_markers_in_tracked_files() -> None:
    found = [f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}"
             for path in _tracked() if path.is_file()
             for text in [path.read_text(errors="replace")]
             for m in MARKER.finditer(text)]
    assert not found, "merge conflict markers: " + ", ".join(found)


def test_the_pattern_sees_a_marker() -> None:
    assert MARKER.search("a\n<<<<<<< HEAD\nb\n=======\nc\n>>>>>>> branch\n")
    assert not MARKER.search("a table rule\n=======x\n")

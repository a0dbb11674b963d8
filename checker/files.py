"""Kept for callers that predate ``checker.outfile`` (the prover's reports): the same safe write."""

from __future__ import annotations

from pathlib import Path

from .outfile import write_output


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` through ``checker.outfile.write_output``."""
    write_output(path, text)

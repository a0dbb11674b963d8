"""Device nodes and stream links of the tests' own, under tmp_path.

Tests of how outputs treat /dev/null, /dev/full and /dev/stdout use private copies: a writer that
renames over its target (the bug these tests catch) would otherwise replace the machine's own
/dev/null when the tests run as root."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

NULL = (1, 3)
FULL = (1, 7)


def device(directory: Path, name: str, numbers: tuple[int, int]) -> Path:
    path = directory / name
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(*numbers))
    except PermissionError:
        pytest.skip("cannot create device nodes here (needs root)")
    return path


def stdout_link(directory: Path) -> Path:
    """What /dev/stdout is on Linux: a link to this process's descriptor 1."""
    link = directory / "stdout"
    link.symlink_to("/proc/self/fd/1")
    return link

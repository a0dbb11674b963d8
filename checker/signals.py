"""SIGTERM and SIGHUP end a run the way Ctrl-C does: by unwinding.

Python's default for SIGTERM is to die on the spot, so no ``finally`` runs: the parallel
engine's workers were left running (blocked on a pipe) and its exchange directory in /dev/shm
stayed. While ``handle_termination`` is active these signals raise ``Terminated`` instead, every
engine's cleanup runs on the way out, and the CLI prints one line and exits 128 + the signal
number (143 for SIGTERM), as a shell reports a process killed by it.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Terminated(BaseException):
    """A termination signal arrived; BaseException so that ``except Exception`` lets it pass."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


def _raise(signum: int, frame: Any) -> None:
    raise Terminated(signum)


@contextlib.contextmanager
def handle_termination() -> Iterator[None]:
    """Turn SIGTERM/SIGHUP into ``Terminated`` for the duration (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _raise) for sig in SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

"""Stable 64-bit fingerprints: the same value in every process, run and Spark executor.

Python's ``hash`` of a tuple of ints and bools is deterministic (only ``str``/``bytes`` hashing is
salted by PYTHONHASHSEED, and ``None``'s hash is its address before 3.12), and it is the fastest
digest available from Python: a C-level xxHash-style mix over the elements. That is why states are
restricted to ints, bools and tuples. ``check_state`` enforces the restriction on sample states so
a model that breaks it fails loudly instead of silently losing determinism.

Known weakness: ``hash(-1) == hash(-2)`` in CPython. Models should not use both -1 and -2 as
distinct values of one field; -1 alone as a sentinel is fine.
"""

from __future__ import annotations

from typing import Any

MASK64 = (1 << 64) - 1


def fingerprint(state: Any) -> int:
    """Unsigned 64-bit fingerprint of a state."""
    return hash(state) & MASK64


class UnstableStateError(TypeError):
    """A state holds a value whose hash is not the same in every process."""


def check_state(state: Any, path: str = "state") -> None:
    """Raise ``UnstableStateError`` naming the first leaf that is not an int, bool or tuple."""
    if isinstance(state, tuple):
        names = getattr(state, "_fields", None)
        for i, item in enumerate(state):
            label = names[i] if names else str(i)
            check_state(item, f"{path}.{label}")
        return
    if isinstance(state, (bool, int)):
        return
    raise UnstableStateError(
        f"{path} is a {type(state).__name__}; states may hold only int, bool and tuple "
        "(other types hash differently in each process)"
    )


def collision_probability(distinct: int, generated: int) -> float:
    """TLC's optimistic estimate of a fingerprint collision: distinct * (generated - distinct) / 2^64."""
    return distinct * max(generated - distinct, 0) / float(1 << 64)

"""Helpers for writing a rule as an ordered list of guarded cases over ``ops``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from eoscheck.checker.ops import Ops, Term


def first_case(ops: Ops, cases: Sequence[tuple[Term, tuple[Any, ...]]], default: tuple[Any, ...]) -> tuple[Any, ...]:
    """The outcome of the first case whose guard holds (``default`` if none), built with ``ite``
    field by field so the same code yields Python ints or Z3 terms."""
    result = tuple(default)
    for cond, outcome in reversed(cases):
        result = tuple(ops.ite(cond, new, old) for new, old in zip(outcome, result))
    return result

"""Memoised calls of pure protocol rules, for machines whose states repeat the same few parts.

A rule such as ``append_marker(entry, marker)`` or ``end_txn(meta, pid, epoch, result)`` depends
only on its arguments, and the same (metadata, entry, marker) recur in thousands of global states.
``PureRule`` computes each distinct call once. The rule itself stays where it is written (and
keeps serving the Z3 proofs, which call it with symbolic terms, uncached).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

_MISS = object()


class PureRule:
    """``rule(*args, **fixed)``, memoised on ``args`` (hashable values: NamedTuples, ints, bools).

    A class in an importable module, not a closure, so that Spark ships it by reference; its memo
    is not shipped (it would be sent to every executor)."""

    __slots__ = ("fixed", "memo", "rule")

    def __init__(self, rule: Callable[..., Any], **fixed: Any) -> None:
        self.rule = rule
        self.fixed = fixed
        self.memo: dict[tuple[Hashable, ...], Any] = {}

    def __call__(self, *args: Hashable) -> Any:
        result = self.memo.get(args, _MISS)
        if result is _MISS:
            result = self.memo[args] = self.rule(*args, **self.fixed)
        return result

    def __getstate__(self) -> tuple[Callable[..., Any], dict[str, Any]]:
        return self.rule, self.fixed

    def __setstate__(self, state: tuple[Callable[..., Any], dict[str, Any]]) -> None:
        self.rule, self.fixed = state
        self.memo = {}

"""Operations a shared rule is written over, so one definition runs on ints and on Z3 terms.

A rule that a proof covers is a function ``rule(ops, *args)`` that never branches with Python's
``if`` on its arguments; it uses ``ops.ite`` and the comparisons below. The explorer calls it with
``CONCRETE`` on Python ints; the prover (``checker.smt.ops``) calls it with Z3 bit-vector terms of
the real widths. Multi-valued results are tuples of terms; an error code is an int term.

Comparisons are signed: Kafka's epochs (int16), sequences (int32) and producer ids (int64) are
Java signed integers, and -1 is their "none" sentinel. ``wrap_add`` is addition modulo the width
(Java's overflow), ``add`` is mathematical addition for values known not to overflow.
"""

from __future__ import annotations

from typing import Any, Protocol

Term = Any


class Ops(Protocol):
    def const(self, value: int, width: int) -> Term: ...
    def ite(self, cond: Term, then: Term, other: Term) -> Term: ...
    def and_(self, *conds: Term) -> Term: ...
    def or_(self, *conds: Term) -> Term: ...
    def not_(self, cond: Term) -> Term: ...
    def eq(self, a: Term, b: Term) -> Term: ...
    def ne(self, a: Term, b: Term) -> Term: ...
    def lt(self, a: Term, b: Term) -> Term: ...
    def le(self, a: Term, b: Term) -> Term: ...
    def gt(self, a: Term, b: Term) -> Term: ...
    def ge(self, a: Term, b: Term) -> Term: ...
    def add(self, a: Term, b: Term) -> Term: ...
    def sub(self, a: Term, b: Term) -> Term: ...
    def wrap_add(self, a: Term, b: Term, width: int) -> Term: ...


class ConcreteOps:
    """Python ints and bools. ``ite`` evaluates both branches, so rules must be total (no
    exceptions in the branch not taken)."""

    def const(self, value: int, width: int) -> int:
        return value

    def ite(self, cond: bool, then: Any, other: Any) -> Any:
        return then if cond else other

    def and_(self, *conds: bool) -> bool:
        return all(conds)

    def or_(self, *conds: bool) -> bool:
        return any(conds)

    def not_(self, cond: bool) -> bool:
        return not cond

    def eq(self, a: int, b: int) -> bool:
        return a == b

    def ne(self, a: int, b: int) -> bool:
        return a != b

    def lt(self, a: int, b: int) -> bool:
        return a < b

    def le(self, a: int, b: int) -> bool:
        return a <= b

    def gt(self, a: int, b: int) -> bool:
        return a > b

    def ge(self, a: int, b: int) -> bool:
        return a >= b

    def add(self, a: int, b: int) -> int:
        return a + b

    def sub(self, a: int, b: int) -> int:
        return a - b

    def wrap_add(self, a: int, b: int, width: int) -> int:
        """Two's-complement addition at ``width`` bits, as Java's int/short arithmetic."""
        mask = (1 << width) - 1
        r = (a + b) & mask
        return r - (1 << width) if r >> (width - 1) else r


CONCRETE = ConcreteOps()

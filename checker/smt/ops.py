"""The ``Ops`` protocol on Z3 bit-vectors: the same rule text the explorer runs, as a Z3 term.

Java's ints are signed, so every comparison is signed (``bvslt`` and friends; Z3's Python ``<`` on
bit-vectors is already signed). The concrete ops use unbounded Python ints, so to agree with them
on every input ``add``/``sub`` widen their result by one bit: ``epoch + 1`` at epoch 32767 is the
17-bit value 32768, and a claim "the new epoch is at most 32767" sees the overflow instead of a
silently wrapped -32768. ``wrap_add`` is the one operation that wraps, modulo its width, as Java's
``short``/``int`` arithmetic does.

Operands of different widths (a 16-bit epoch compared with a 17-bit sum, or with a constant that
needs more bits) are sign-extended to the wider one first; Python ints and bools are accepted
wherever a term is and get the width they need.
"""

from __future__ import annotations

from typing import Any

import z3

Term = Any


def signed_bits(value: int) -> int:
    """Bits needed to hold ``value`` in two's complement (at least 1)."""
    return (value.bit_length() if value >= 0 else (-value - 1).bit_length()) + 1


def to_bool(x: Term) -> z3.BoolRef:
    if isinstance(x, bool):
        return z3.BoolVal(x)
    if isinstance(x, z3.BoolRef):
        return x
    raise TypeError(f"expected a condition, got {x!r}")


def to_bv(x: Term, width: int | None = None) -> z3.BitVecRef:
    """A bit-vector term for ``x``; a Python int gets ``width`` bits, or as many as it needs."""
    if isinstance(x, (bool, z3.BoolRef)):
        raise TypeError(f"expected an integer term, got the condition {x!r}")
    if isinstance(x, int):
        bits = signed_bits(int(x))
        return z3.BitVecVal(int(x), max(bits, width or 0))
    if isinstance(x, z3.BitVecRef):
        return x
    raise TypeError(f"expected an integer term, got {x!r}")


def sext_to(x: z3.BitVecRef, width: int) -> z3.BitVecRef:
    return x if x.size() >= width else z3.SignExt(width - x.size(), x)


def narrow(x: Term, width: int) -> z3.BitVecRef:
    """Java's narrowing cast, ``(short) x``: keep the low ``width`` bits (sign-extend if shorter)."""
    bv = to_bv(x, width)
    if bv.size() > width:
        return z3.Extract(width - 1, 0, bv)
    return sext_to(bv, width)


def _is_int(x: Term) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def unify(a: Term, b: Term) -> tuple[Term, Term]:
    """Two operands made comparable: both conditions, or both bit-vectors of one width."""
    if isinstance(a, (bool, z3.BoolRef)) or isinstance(b, (bool, z3.BoolRef)):
        return to_bool(a), to_bool(b)
    if _is_int(a) and _is_int(b):
        width = max(signed_bits(int(a)), signed_bits(int(b)))
        return z3.BitVecVal(int(a), width), z3.BitVecVal(int(b), width)
    if _is_int(a):
        b = to_bv(b)
        a = to_bv(a, b.size())
    elif _is_int(b):
        a = to_bv(a)
        b = to_bv(b, a.size())
    else:
        a, b = to_bv(a), to_bv(b)
    width = max(a.size(), b.size())
    return sext_to(a, width), sext_to(b, width)


class Z3Ops:
    """Signed bit-vector semantics for the rules in ``checker.ops``' protocol."""

    def const(self, value: int, width: int) -> Term:
        if isinstance(value, bool):
            return z3.BoolVal(value)
        # A constant that does not fit its nominal width keeps its value (the concrete ops never
        # wrap a constant); it simply gets the bits it needs.
        return z3.BitVecVal(int(value), max(width, signed_bits(int(value))))

    def ite(self, cond: Term, then: Term, other: Term) -> Term:
        if isinstance(then, tuple):
            if not isinstance(other, tuple) or len(then) != len(other):
                raise TypeError("ite branches must be tuples of the same length")
            items = [self.ite(cond, t, o) for t, o in zip(then, other)]
            return type(then)(*items) if hasattr(then, "_fields") else tuple(items)
        c = to_bool(cond)
        if isinstance(c, z3.BoolRef) and z3.is_true(c):
            return then
        if isinstance(c, z3.BoolRef) and z3.is_false(c):
            return other
        t, o = unify(then, other)
        return z3.If(c, t, o)

    def and_(self, *conds: Term) -> Term:
        return z3.And(*[to_bool(c) for c in conds]) if conds else z3.BoolVal(True)

    def or_(self, *conds: Term) -> Term:
        return z3.Or(*[to_bool(c) for c in conds]) if conds else z3.BoolVal(False)

    def not_(self, cond: Term) -> Term:
        return z3.Not(to_bool(cond))

    def eq(self, a: Term, b: Term) -> Term:
        x, y = unify(a, b)
        return x == y

    def ne(self, a: Term, b: Term) -> Term:
        x, y = unify(a, b)
        return x != y

    def lt(self, a: Term, b: Term) -> Term:
        x, y = unify(a, b)
        return x < y

    def le(self, a: Term, b: Term) -> Term:
        x, y = unify(a, b)
        return x <= y

    def gt(self, a: Term, b: Term) -> Term:
        x, y = unify(a, b)
        return x > y

    def ge(self, a: Term, b: Term) -> Term:
        x, y = unify(a, b)
        return x >= y

    def add(self, a: Term, b: Term) -> Term:
        x, y = unify(a, b)
        width = x.size() + 1
        return sext_to(x, width) + sext_to(y, width)

    def sub(self, a: Term, b: Term) -> Term:
        x, y = unify(a, b)
        width = x.size() + 1
        return sext_to(x, width) - sext_to(y, width)

    def wrap_add(self, a: Term, b: Term, width: int) -> Term:
        # (a + b) mod 2^width equals the sum of the operands' low bits mod 2^width.
        return narrow(a, width) + narrow(b, width)


Z3OPS = Z3Ops()


def value_of(model: z3.ModelRef, term: Term) -> int | bool:
    """The concrete value of ``term`` in a solver model (signed for bit-vectors)."""
    if isinstance(term, (bool, str)) or _is_int(term):
        return term
    v = model.eval(term, model_completion=True)
    if isinstance(v, z3.BoolRef):
        return z3.is_true(v)
    return v.as_signed_long()


def evaluate(term: Term, assignment: dict[Any, int | bool]) -> Any:
    """Evaluate a term (or tuple of terms) by substituting concrete values for its variables.

    ``assignment`` maps Z3 constants to Python values; used by the agreement test to compare the
    symbolic reading of a rule with its concrete execution.
    """
    if isinstance(term, tuple):
        items = [evaluate(t, assignment) for t in term]
        return type(term)(*items) if hasattr(term, "_fields") else tuple(items)
    if isinstance(term, bool) or _is_int(term):
        return term
    pairs = []
    for var, val in assignment.items():
        if isinstance(var, z3.BoolRef):
            pairs.append((var, z3.BoolVal(bool(val))))
        else:
            pairs.append((var, z3.BitVecVal(int(val), var.size())))
    v = z3.simplify(z3.substitute(term, *pairs)) if pairs else z3.simplify(term)
    if z3.is_true(v):
        return True
    if z3.is_false(v):
        return False
    if z3.is_bv_value(v):
        return v.as_signed_long()
    raise ValueError(f"term did not reduce to a value: {v}")

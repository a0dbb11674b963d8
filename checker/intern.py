"""Hash-consing for models whose states are made of large, often repeated parts.

A model can keep its state as a flat tuple of small values and *ids* of interned parts (a client,
a log, the requests in flight), instead of nesting the parts themselves. Hashing a flat tuple costs
a tenth of hashing the nested one, and a rule applied to a part can be memoised on the part's id:
the same client state recurs in thousands of global states, so its successors are computed once.

An id is the part's own content hash (``hash`` of an int/bool/tuple value) reduced modulo
``ID_MODULUS``, not a counter: it is the same in every process, run and Spark executor, so
fingerprints of states that hold ids still agree across processes. The reduction puts every id in
the range where CPython's int hash is the identity, so a flat state of small ints and ids can use
the fast ``hash`` fingerprint soundly (``checker.fingerprint``: two ids 2**61-1 apart would
otherwise hash alike). ``ID_MODULUS`` is the largest prime below ``2**60`` rather than ``2**61 - 1``
itself, so that every id is a two-digit CPython int (30-bit digits): the ids are hashed in every
successor's fingerprint and every memo key, and a three-digit int (half of the ids below
``2**61 - 1``) costs ``long_hash`` one more turn of its loop. Two different parts with one id would merge silently, so
``Interner.intern`` compares with the value already stored under that id and raises
``InternCollision`` naming the first field where they differ (rare for unrelated values, but
CPython's ``hash(-1) == hash(-2)`` makes a part holding -2 where another holds -1 collide).

A table lives as long as its process and holds every value interned into it; states that hold ids
can only be read back in a process that interned their parts. Such a state must therefore pickle
to its unpacked form (``__reduce__``), so engines that move states between processes need not know.
Code shipped to Spark executors must reach a table through an importable module or class, never
through a closure or lambda: cloudpickle pickles those by value, with a *copy* of the tables they
read as they were on the driver.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, Generic, TypeVar

T = TypeVar("T", bound=Hashable)

#: ids lie in ``[0, ID_MODULUS)``: below ``P`` (the hash domain) and below ``2**60`` (two digits)
ID_MODULUS = (1 << 60) - 93


class InternCollision(RuntimeError):
    """Two different values with the same content hash were interned in one table."""


class Interner(Generic[T]):
    """One table of interned values of one kind: ``intern(value) -> id`` and ``table[id]``."""

    __slots__ = ("ids", "kind", "values")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        #: id -> value; read directly on hot paths (``values[id]``)
        self.values: dict[int, T] = {}
        #: id -> the one int object that stands for it
        self.ids: dict[int, int] = {}

    def intern(self, value: T) -> int:
        h = hash(value) % ID_MODULUS
        old = self.values.setdefault(h, value)
        if old is not value and old != value:
            raise InternCollision(f"two different {self.kind} values share the id {h}: they differ at "
                                  f"{_first_difference(old, value, self.kind)}")
        # One int object per id: states and memo keys then hold the same object for the same part,
        # so comparing a memo's stored key with a state's (on every hit) stops at identity instead
        # of reading two ints' digits from wherever each was allocated.
        return self.ids.setdefault(h, h)

    def adopt(self, values: Mapping[int, T]) -> None:
        """Take parts another process interned, by their ids (a batch of moved states): a new value
        is interned here and must land on the same id (ids are content hashes, equal in every
        process); a known id must hold an equal value."""
        known = self.values
        for ident, value in values.items():
            old = known.get(ident)
            if old is None:
                if self.intern(value) != ident:
                    raise InternCollision(f"{self.kind} part {value!r} hashes differently in this process")
            elif old != value:
                raise InternCollision(f"two different {self.kind} values share the id {ident}: "
                                      f"{old!r} and {value!r}")

    def __getitem__(self, ident: int) -> T:
        return self.values[ident]

    def __len__(self) -> int:
        return len(self.values)


def _first_difference(a: Any, b: Any, path: str) -> str:
    """The dotted path of the first leaf where ``a`` and ``b`` differ, with both values."""
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        names = getattr(a, "_fields", None)
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y or type(x) is not type(y):
                return _first_difference(x, y, f"{path}.{names[i] if names else i}")
    return f"{path} ({a!r} and {b!r})"

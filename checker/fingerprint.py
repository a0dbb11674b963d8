"""Fingerprints: one 64-bit value per state, equal for equal states in every process, run, hash seed
and Spark executor, and different for different states except with the stated probability.

**Why not ``hash(state)`` alone.** CPython's ``hash`` of an int/bool/tuple value is deterministic
(only ``str``/``bytes`` hashing is salted), and it is the fastest digest Python has, but it is not
injective per element: ``hash(-1) == hash(-2)``, ints are reduced modulo ``2**61 - 1`` (so ``1`` and
``2**61`` hash alike), and ``hash(True) == hash(1)``. Two states that differ only in such leaves
share a fingerprint *by construction*, whatever the collision estimate says.

**Two kinds** (``Machine.fingerprint_kind``):

* ``"encoded"`` (the default): a 64-bit BLAKE2b digest of an injective encoding (``encoder``):
  ``marshal`` format 2, which writes ints of any size exactly, tags bools apart from ints and
  prefixes tuples with their length, and has no back-references (so the bytes do not depend on
  which objects happen to be shared), with each sub-tuple replaced by its own digest, remembered
  by identity because successors share most parts with their parent. Sound for every state.
* ``"hash"``: ``hash(state)``, for a machine that vouches that every leaf lies in the domain
  where that is injective: an int ``x`` with ``-P < x < P`` and ``x != -2`` (``P = 2**61 - 1``),
  or a bool in a position that never holds an int. There the per-leaf hash is the identity
  (``-1`` maps to the unused ``-2``), so only CPython's xxHash-style tuple mixing can collide, as
  any 64-bit digest can. Several times cheaper than ``encoded`` on nested states (see
  bench/results/fingerprint.md). The engines check the promise on a sample of every level's
  states *and successors* (``Expander.check_sample``; a successor outside the domain may share
  its hash with a visited state and never be new); ``check_domain`` refuses a state outside it
  with one line naming the field.

``fingerprint_fn`` composes the state constraint's companions: symmetry (``machine.canonical``)
then the view (``checker.state_view``), then the kind. It is the only place that spells a fingerprint;
engines, trace rebuilding and the internal walks all take it from here. Values are *signed* 64-bit
ints (what ``hash`` gives; ``& MASK64`` makes them unsigned for numpy stores).
"""

from __future__ import annotations

import marshal
from collections.abc import Callable
from dataclasses import dataclass
from hashlib import blake2b
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .machine import Machine

MASK64 = (1 << 64) - 1
#: CPython's int hash modulus (sys.hash_info.modulus on 64-bit builds)
P = (1 << 61) - 1
KINDS = ("encoded", "hash")

Fingerprint = Callable[[Any], int]


class UnstableStateError(TypeError):
    """A state holds a value whose fingerprint would not be the same in every process, or (for
    the ``hash`` kind) a value outside the domain on which ``hash`` is injective."""


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


def check_domain(state: Any, path: str = "state") -> None:
    """For the ``hash`` kind: raise ``UnstableStateError`` naming the first leaf outside ``DOMAIN``
    (where ``hash`` would map two values to one fingerprint)."""
    check_state(state, path)
    _check_domain(state, path)


def _check_domain(value: Any, path: str) -> None:
    if isinstance(value, tuple):
        names = getattr(value, "_fields", None)
        for i, item in enumerate(value):
            _check_domain(item, f"{path}.{names[i] if names else i}")
        return
    if type(value) is bool:
        return
    if not -P < value < P or value == -2:
        raise UnstableStateError(
            f"{path} = {value} is outside the fingerprint domain of this machine's 'hash' "
            f"fingerprints (ints x with |x| < 2**61-1 and x != -2: hash({value}) == "
            f"hash({_twin(value)})); use fingerprint_kind = 'encoded'")


def _twin(value: int) -> int:
    """A different int with the same CPython hash (for the error message)."""
    return -1 if value == -2 else hash(value)


#: sub-tuples whose digest ``encoder`` remembers (by identity) before it starts afresh
MEMO_ENTRIES = 1 << 18


def encoder(memo_entries: int = MEMO_ENTRIES) -> Fingerprint:
    """A fresh ``encoded`` fingerprint function (signed 64-bit).

    A tuple's digest is BLAKE2b-64 of ``marshal`` format 2 of the tuple of its elements, where an
    int or bool stands for itself (marshal tags them apart and writes ints of any size exactly)
    and a sub-tuple stands for its own 8-byte digest (marshal tags ``bytes`` apart from both).
    The encoding is injective, so two states share a fingerprint only if BLAKE2b-64 collides.

    Successor states share most of their parts with their parent (a NamedTuple ``_replace``
    keeps the untouched fields' objects), so a sub-tuple's digest is remembered by *identity*:
    ``memo[id(t)] = (t, digest)`` keeps ``t`` alive, so its id cannot be reused while remembered,
    and an equal but different object is never taken for it (``==`` would take ``True`` for
    ``1``). The memo starts afresh when it reaches ``memo_entries``.
    """
    memo: dict[int, tuple[Any, bytes]] = {}
    dumps = marshal.dumps
    digest = blake2b
    from_bytes = int.from_bytes
    memo_get = memo.get

    def sub(t: tuple) -> bytes:
        entry = memo_get(id(t))
        if entry is not None and entry[0] is t:
            return entry[1]
        d = digest(dumps(tuple([x if type(x) is int or type(x) is bool else leaf(x) for x in t]), 2),
                   digest_size=8).digest()
        if len(memo) >= memo_entries:
            memo.clear()
        memo[id(t)] = (t, d)
        return d

    def leaf(x: Any) -> bytes:
        if isinstance(x, tuple):
            return sub(x)
        raise UnstableStateError(f"a {type(x).__name__} in a state; states may hold only int, bool and tuple")

    def fp(state: Any) -> int:
        if not isinstance(state, tuple):
            if type(state) is int or type(state) is bool:
                return from_bytes(digest(dumps(state, 2), digest_size=8).digest(), "little", signed=True)
            leaf(state)
        # the state itself is not remembered: it is usually a fresh object, seen once
        data = dumps(tuple([x if type(x) is int or type(x) is bool else leaf(x) for x in state]), 2)
        return from_bytes(digest(data, digest_size=8).digest(), "little", signed=True)
    return fp


def encoded(value: Any) -> int:
    """The ``encoded`` fingerprint of one value (signed 64-bit), without a memo."""
    return encoder(0)(value)


@dataclass(frozen=True)
class Fingerprinter:
    """How one run fingerprints: ``fn(state)`` is the signed fingerprint. ``canonical`` and
    ``project`` are the symmetry and view applied first (None when off) and ``fast`` says that the
    last step is plain ``hash``: the hot loops inline ``hash(canonical(s))`` from these parts instead
    of paying a call through ``fn``."""

    fn: Fingerprint
    kind: str
    canonical: Callable[[Any], Any] | None
    project: Callable[[Any], Any] | None
    view: str | None

    @property
    def fast(self) -> bool:
        return self.kind == "hash" and self.project is None

    def check(self, state: Any) -> None:
        """The per-sample check the engines run on early states (types, and the domain for
        ``hash``; for a view, on the projected value)."""
        if self.kind == "hash":
            key = self.canonical(state) if self.canonical is not None else state
            if self.project is not None:
                key = self.project(key)
            if _in_domain(state) and (key is state or _in_domain(key)):
                return  # the usual case; the paths below name the first bad leaf
            check_state(state)
            check_domain(key)
        elif not _plain(state):
            check_state(state)


def _plain(value: Any) -> bool:
    """True when every leaf of ``value`` is an int or bool (exact types) in tuples: the quick
    form of ``check_state`` for the engines' samples (False also for an int subclass, which
    ``check_state`` then accepts)."""
    if type(value) is int or type(value) is bool:
        return True
    if not isinstance(value, tuple):
        return False
    for x in value:
        t = type(x)
        if t is not int and t is not bool and not _plain(x):
            return False
    return True


def _in_domain(value: Any) -> bool:
    """``_plain`` and, for ``hash`` fingerprints, every int leaf in ``DOMAIN`` (see ``check_domain``)."""
    t = type(value)
    if t is bool:
        return True
    if t is int:
        return -P < value < P and value != -2
    if not isinstance(value, tuple):
        return False
    for x in value:
        t = type(x)
        if t is int:
            if not -P < x < P or x == -2:
                return False
        elif t is not bool and not _in_domain(x):
            return False
    return True

    def unsigned(self, state: Any) -> int:
        return self.fn(state) & MASK64


def fingerprint_fn(machine: Machine, symmetry: bool, view: str | None = None) -> Fingerprinter:
    """The one spelling of a run's fingerprint: ``kind(view(canonical(state)))``.

    ``symmetry`` applies ``machine.canonical`` (only when the machine has a symmetry); ``view`` names
    one of ``machine.views()`` (see ``checker.state_view``), independent of symmetry. A view's value is
    fingerprinted with the ``encoded`` kind: it is whatever the projection returns.
    """
    from .state_view import resolve_view

    kind = getattr(machine, "fingerprint_kind", "encoded")
    if kind not in KINDS:
        raise ValueError(f"fingerprint_kind must be one of {', '.join(KINDS)}, got {kind!r}")
    canonical = machine.canonical if symmetry and machine.has_symmetry() else None
    chosen = resolve_view(machine, view)
    project = chosen.project if chosen is not None else None
    name = chosen.describe() if chosen is not None else None
    if project is not None:
        kind = "encoded"
    base: Fingerprint = hash if kind == "hash" else encoder()
    fn: Fingerprint
    if canonical is None and project is None:
        fn = base
    elif project is None:
        assert canonical is not None
        fn = lambda s: base(canonical(s))
    elif canonical is None:
        fn = lambda s: base(project(s))
    else:
        fn = lambda s: base(project(canonical(s)))
    return Fingerprinter(fn, kind, canonical, project, name)


def fingerprint(state: Any) -> int:
    """Unsigned ``encoded`` fingerprint of a value (no symmetry, no view): for tests and tools."""
    return encoded(state) & MASK64


def collision_probability(distinct: int, generated: int) -> float:
    """TLC's optimistic estimate of a fingerprint collision: distinct * (generated - distinct) / 2^64."""
    return distinct * max(generated - distinct, 0) / float(1 << 64)


def observed_collision_probability(fps: np.ndarray | list[int]) -> float | None:
    """TLC's second estimate, "based on the actual fingerprints": 1 / the smallest distance
    between two fingerprints seen. Uniform fingerprints put ``n`` values about ``2^64 / n^2`` apart
    at the closest, so this agrees with the optimistic estimate when the digest spreads states
    well and grows when it clusters them. None with fewer than two fingerprints."""
    values = np.asarray(fps)
    if values.dtype != np.uint64:
        values = np.array([int(v) & MASK64 for v in values.tolist()], dtype=np.uint64) \
            if values.dtype == object else values.astype(np.int64).view(np.uint64)
    if values.size < 2:
        return None
    ordered = np.sort(values)
    gap = int(np.diff(ordered).min())
    return 1.0 if gap == 0 else min(1.0, 1.0 / gap)

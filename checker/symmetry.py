"""Symmetry reduction: canonical forms by sorting per-identity bundles and renaming.

Murphi's scalarsets: when identities of one kind (producers, brokers, resource managers) are
interchangeable, any permutation of them maps reachable states to reachable states and keeps
every property's verdict. Exploring one representative per orbit is then enough.

Trying all n! permutations and keeping the least image (TLC's way) is exact but costs n! per
state. Sorting is far cheaper: gather everything the state says about identity ``i`` into a
*bundle* whose content does not mention identity numbers (or mentions them only through other
identities' positions, renamed alike), sort the bundles, and rename every reference with the
permutation the sort produced. The result is canonical (one representative per orbit) when the
sort key is invariant under renaming; bundles that tie are broken exactly by trying only the
permutations *within* tie groups (``canonicalize``), which is usually one. When a model can only
normalise (some orbit keeps several representatives), the reduction is still sound; the
representatives just over-count, and ``check_symmetry`` reports it.

A machine opts in by overriding ``Machine.canonical`` (the engine calls it before fingerprinting)
and, to let ``check_symmetry`` verify it by orbit counting, by exposing ``symmetry`` — a
``Symmetry`` that can apply any permutation to a state. The engines only hash what ``canonical``
returns, so it may return an orbit *key* (any int/bool/tuple value equal exactly for states of the
same orbit) instead of a state, which is cheaper when rebuilding a state would cost more than the
sort (``examples/symmetric.py``'s ``OrbitTwoPhase``); traces always follow concrete states.

Where it pays: the sort costs about 1 us per generated state on TwoPhase (whose successor function
is nearly free, so that is the worst ratio: about 1.9x per generated state) and against
n! fewer states it wins by orders of magnitude; see ``bench/bench_scale.py``.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

from .machine import Machine, State

if TYPE_CHECKING:
    from .explore.options import ExploreOptions
    from .result import Result

#: perm[old_identity] = new_identity
Permutation = tuple[int, ...]


def identity(n: int) -> Permutation:
    return tuple(range(n))


def sorting_permutation(keys: Sequence[Any]) -> Permutation:
    """The permutation that moves identity ``i`` to the rank of ``keys[i]`` (stable on ties)."""
    order = sorted(range(len(keys)), key=keys.__getitem__)
    perm = [0] * len(keys)
    for rank, old in enumerate(order):
        perm[old] = rank
    return tuple(perm)


def inverse(perm: Permutation) -> Permutation:
    inv = [0] * len(perm)
    for old, new in enumerate(perm):
        inv[new] = old
    return tuple(inv)


def compose(first: Permutation, then: Permutation) -> Permutation:
    """Apply ``first``, then ``then``."""
    return tuple(then[p] for p in first)


def permute_slots(values: Sequence[Any], perm: Permutation) -> tuple:
    """Reorder a per-identity tuple: the entry of identity ``i`` moves to position ``perm[i]``."""
    out: list[Any] = [None] * len(values)
    for old, value in enumerate(values):
        out[perm[old]] = value
    return tuple(out)


def rename(ident: int, perm: Permutation) -> int:
    """Rename one reference to an identity; negative values are sentinels ("none") and stay."""
    return perm[ident] if ident >= 0 else ident


def rename_all(idents: Sequence[int], perm: Permutation) -> tuple[int, ...]:
    return tuple(perm[i] if i >= 0 else i for i in idents)


def rename_mask(mask: int, perm: Permutation) -> int:
    """Rename a set of identities held as a bitmask (bit ``i`` = identity ``i``)."""
    out = 0
    i = 0
    while mask:
        if mask & 1:
            out |= 1 << perm[i]
        mask >>= 1
        i += 1
    return out


def sort_bundles(*columns: Sequence[Any]) -> tuple[tuple, ...]:
    """Sort per-identity columns together and return them reordered.

    ``columns[j][i]`` is field ``j`` of identity ``i``. This is the whole canonical form when
    nothing else in the state refers to an identity by number: bundles that tie are equal, so
    their order does not matter and sorting is exact.
    """
    if not columns or not columns[0]:
        return tuple(tuple(c) for c in columns)
    return tuple(zip(*sorted(zip(*columns))))


def tie_groups(sorted_keys: Sequence[Any]) -> list[range]:
    """Runs of equal keys (length > 1) in an already sorted sequence."""
    groups: list[range] = []
    start = 0
    for i in range(1, len(sorted_keys) + 1):
        if i == len(sorted_keys) or sorted_keys[i] != sorted_keys[start]:
            if i - start > 1:
                groups.append(range(start, i))
            start = i
    return groups


_SWAP: Permutation = (1, 0)


def canonicalize(state: State, keys: Sequence[Any], apply: Callable[[State, Permutation], State],
                 *, keys_complete: bool = False, exact: bool = True) -> State:
    """Sort identities by ``keys`` (one rename-invariant key per identity), apply that
    permutation, and break ties exactly by the least image over permutations within tie groups.

    ``apply(state, perm)`` must move identity ``i`` to ``perm[i]`` everywhere (slots and
    references). ``keys_complete`` says that identities with equal keys are indistinguishable
    in the whole state (nothing else refers to them), so their order cannot matter and the sort
    alone is canonical: the tie search is skipped. With ``exact=False`` ties are left in sort
    order even when they matter: a normal form, not canonical.
    """
    # The common cases without a sort (this is on the hot path: once per generated state): two
    # identities (one comparison, at most one swap), and keys already in strictly increasing order
    # (the state is its own form: the identity acts trivially).
    if len(keys) == 2:
        first, second = keys
        if first < second:
            return state
        swapped = apply(state, _SWAP)
        if first > second or keys_complete or not exact:
            return swapped if first > second else state
        return min(state, swapped)
    if all(a < b for a, b in itertools.pairwise(keys)):
        return state
    perm = sorting_permutation(keys)
    base = apply(state, perm)
    if keys_complete or not exact:
        return base
    groups = tie_groups(sorted(keys))
    if not groups:
        return base
    best = base
    n = len(keys)
    choices = itertools.product(*(itertools.permutations(g) for g in groups))
    next(choices)  # every group in its own order: ``base`` itself, no copy to build
    for choice in choices:
        within = list(range(n))
        for group, image in zip(groups, choice):
            for src, dst in zip(group, image):
                within[src] = dst
        candidate = apply(base, tuple(within))
        best = min(best, candidate)
    return best


@dataclass(frozen=True)
class Scalarset:
    """A kind of interchangeable identity, numbered 0..size-1."""

    name: str
    size: int


@dataclass(frozen=True)
class Symmetry:
    """How a machine's states transform under permutations of its scalarsets.

    ``apply(state, perms)`` takes one permutation per scalarset, in ``scalarsets`` order.
    ``exact`` says whether the machine's ``canonical`` picks one representative per orbit
    (True) or only normalises (False).
    """

    scalarsets: tuple[Scalarset, ...]
    apply: Callable[[State, tuple[Permutation, ...]], State]
    exact: bool = True

    @property
    def group_order(self) -> int:
        return math.prod(math.factorial(s.size) for s in self.scalarsets)

    def group(self) -> list[tuple[Permutation, ...]]:
        """Every element of the symmetry group (product of the scalarsets' permutations)."""
        return self._elements

    @cached_property
    def _elements(self) -> list[tuple[Permutation, ...]]:
        # cached_property writes the instance dict directly, which a frozen dataclass allows
        return list(itertools.product(*(itertools.permutations(range(s.size))
                                        for s in self.scalarsets)))

    def orbit(self, state: State) -> set[State]:
        return {self.apply(state, g) for g in self._elements}

    def orbit_size(self, state: State) -> int:
        return len(self.orbit(state))

    def least_image(self, state: State) -> State:
        """TLC-style canonical form (all permutations); for tests of a faster ``canonical``."""
        return min(self.orbit(state))


def machine_symmetry(machine: Machine) -> Symmetry | None:
    sym = getattr(machine, "symmetry", None)
    return sym if isinstance(sym, Symmetry) else None


def describe(machine: Machine) -> str:
    """What a reduced run's counts are representatives of, for the user: e.g. "2 interchangeable
    clients" (from the declared ``Symmetry``), or the bare fact for a machine that only overrides
    ``canonical``."""
    sym = machine_symmetry(machine)
    if sym is None:
        return "the machine's canonical form"
    # a kind with fewer than two identities renames nothing: not worth a mention
    kinds = [s for s in sym.scalarsets if s.size > 1] or list(sym.scalarsets)
    return ", ".join(f"{s.size} interchangeable {s.name.replace('_', ' ')}{'s' if s.size != 1 else ''}"
                     for s in kinds)


@dataclass
class SymmetryReport:
    """What ``check_symmetry`` found; ``ok`` is the one-line answer."""

    full: Result
    reduced: Result
    #: equal verdicts; a run cut short by a limit ("incomplete") agrees with any verdict except
    #: that it cannot contradict a violation it found
    verdicts_agree: bool
    #: same violated properties with the same shortest lengths (when a limit was met: the same
    #: lengths for the properties both runs found violated)
    same_violations: bool
    reduction: float  # full distinct / reduced distinct
    exact: bool | None  # the machine's own claim (None: it does not declare a Symmetry)
    orbit_sum: int | None = None  # sum of orbit sizes over the representatives
    orbit_check: bool | None = None  # orbit_sum == full distinct (None: not computable)
    full_seconds: float = 0.0
    reduced_seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.verdicts_agree and self.same_violations and self.orbit_check is not False

    def summary(self) -> str:
        parts = [(f"full {self.full.stats.distinct} states, reduced {self.reduced.stats.distinct}"
                  f" ({self.reduction:.2f}x fewer)"),
                 "verdicts agree" if self.verdicts_agree else
                 f"VERDICTS DIFFER ({self.full.verdict} vs {self.reduced.verdict})"]
        if not self.same_violations:
            parts.append("VIOLATIONS DIFFER")
        if self.orbit_check is not None:
            parts.append(f"orbit sizes sum to {self.orbit_sum}"
                         + (" = full count" if self.orbit_check else " != full count"))
        return "; ".join(parts + self.notes)


def _violation_lengths(result: Result) -> dict[str, int]:
    return {v.property: v.length for v in result.violations}


def _verdicts_agree(a: Result, b: Result) -> bool:
    if a.verdict == b.verdict:
        return True
    # holds vs violated is a contradiction; incomplete vs violated is not when the cut-short run
    # simply stopped before reaching the violation
    return "incomplete" in (a.verdict, b.verdict)


def _same_violations(a: Result, b: Result) -> bool:
    la, lb = _violation_lengths(a), _violation_lengths(b)
    if a.limit_hit or b.limit_hit:
        return all(la[p] == lb[p] for p in la.keys() & lb.keys())
    return la == lb


def representatives(machine: Machine, options: ExploreOptions) -> list[State] | None:
    """One concrete state per canonical form the reduced exploration visits (the first reached,
    as the engines keep it), by a plain BFS on the expansion core that keeps states, for orbit
    counting; meant for small models. None when ``max_states`` or ``max_depth`` stops it before
    the end."""
    from .explore.expand import Expander, bfs_walk

    walker = Expander(machine, symmetry=True, view=options.view, check_deadlock=False,
                      no_properties=True)
    reps: list[State] = []
    limit = options.max_states
    for level, _parent, _step, state, _h, new in bfs_walk(walker):
        if not new:
            continue
        if options.max_depth is not None and level > options.max_depth:
            return None
        reps.append(state)
        if limit is not None and len(reps) > limit and level > 1:
            return None
    return reps


def check_symmetry(machine: Machine, options: ExploreOptions) -> SymmetryReport:
    """Run ``machine`` with and without symmetry reduction and compare.

    Both runs use ``--continue`` semantics (every property, each with its own shortest trace),
    so counts are of the whole reachable space when no limit is met. Verdicts and each violated
    property's shortest trace length must agree (a permutation maps shortest paths to shortest
    paths). When the machine declares a ``Symmetry`` and both runs completed, the orbit sizes of
    the representatives must sum to the full count.
    """
    from .explore import explore

    base = replace(options, stop_at_first=False, record_graph=False)
    t0 = time.perf_counter()
    full = explore(machine, replace(base, symmetry=False))
    t1 = time.perf_counter()
    reduced = explore(machine, replace(base, symmetry=True))
    t2 = time.perf_counter()
    sym = machine_symmetry(machine)
    report = SymmetryReport(
        full=full, reduced=reduced,
        verdicts_agree=_verdicts_agree(full, reduced),
        same_violations=_same_violations(full, reduced),
        reduction=full.stats.distinct / max(reduced.stats.distinct, 1),
        exact=None if sym is None else sym.exact,
        full_seconds=t1 - t0, reduced_seconds=t2 - t1)
    if full.limit_hit or reduced.limit_hit:
        report.notes.append(f"a limit was met ({full.limit_hit or reduced.limit_hit}): counts are partial")
        return report
    if sym is None:
        report.notes.append("the machine declares no Symmetry: orbit sizes not computed")
        return report
    reps = representatives(machine, options)
    if reps is None:
        report.notes.append("representatives not enumerated (limit met)")
        return report
    report.orbit_sum = sum(sym.orbit_size(r) for r in reps)
    if len(reps) != reduced.stats.distinct:
        report.notes.append(f"engine kept {reduced.stats.distinct} representatives, "
                            f"direct enumeration {len(reps)}")
    if sym.exact:
        report.orbit_check = report.orbit_sum == full.stats.distinct and len(reps) == reduced.stats.distinct
    else:
        # A normal form may keep several representatives per orbit: they over-count.
        report.orbit_check = report.orbit_sum >= full.stats.distinct
        report.notes.append("canonical form only normalises: orbit sum may exceed the full count")
    return report

"""Symmetry reduction: canonical forms are orbit invariants, and reduced runs agree with full ones."""

from __future__ import annotations

import itertools
import random
from dataclasses import replace

import pytest
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.symmetry import (
    Scalarset,
    Symmetry,
    canonicalize,
    check_symmetry,
    compose,
    inverse,
    permute_slots,
    rename_all,
    rename_mask,
    sort_bundles,
    sorting_permutation,
    tie_groups,
)
from eoscheck.checker.trace import trace_is_valid
from eoscheck.examples.symmetric import MODELS, FifoMutex, OrbitTwoPhase


def reachable(machine) -> list[tuple]:
    """Every reachable state, by a plain BFS without reduction (small models only)."""
    seen = set(machine.init_states())
    frontier = list(seen)
    while frontier:
        nxt = []
        for s in frontier:
            for _step, t in machine.successors(s):
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    return sorted(seen)


# ---- permutation helpers

def test_permutation_helpers_round_trip():
    rng = random.Random(1)
    for _ in range(50):
        n = rng.randint(1, 7)
        perm = tuple(rng.sample(range(n), n))
        other = tuple(rng.sample(range(n), n))
        values = tuple(rng.randrange(100) for _ in range(n))
        assert permute_slots(permute_slots(values, perm), inverse(perm)) == values
        assert permute_slots(values, compose(perm, other)) == \
            permute_slots(permute_slots(values, perm), other)
        mask = rng.getrandbits(n)
        assert rename_mask(mask, perm) == sum(1 << perm[i] for i in range(n) if mask >> i & 1)
        assert rename_all((-1, *range(n)), perm) == (-1, *perm)


def test_sorting_permutation_sorts():
    keys = [3, 1, 2, 1]
    perm = sorting_permutation(keys)
    assert permute_slots(keys, perm) == (1, 1, 2, 3)
    assert perm == (3, 0, 2, 1)  # stable: the first 1 (identity 1) gets rank 0
    assert tie_groups([1, 1, 2, 3, 3, 3]) == [range(2), range(3, 6)]
    assert sort_bundles((2, 0, 1), ("c", "a", "b")) == ((0, 1, 2), ("a", "b", "c"))


# ---- canonicalize on a toy with references whose keys do not tell tied identities apart

N = 4


def apply_pointers(state: tuple, perm: tuple) -> tuple:
    """state[i] is the identity that i points to (-1: none); renaming moves slots and values."""
    return permute_slots(rename_all(state, perm), perm)


def pointer_keys(state: tuple) -> list:
    indegree = [state.count(i) for i in range(N)]
    return [(state[i] == -1, indegree[i]) for i in range(N)]  # rename-invariant, not complete


def orbit(state: tuple) -> set:
    return {apply_pointers(state, p) for p in itertools.permutations(range(N))}


def test_canonicalize_is_exact_even_when_keys_tie():
    rng = random.Random(3)
    states = {tuple(rng.randrange(-1, N) for _ in range(N)) for _ in range(300)}
    for state in states:
        canon = canonicalize(state, pointer_keys(state), apply_pointers)
        assert canon in orbit(state)
        for image in orbit(state):
            assert canonicalize(image, pointer_keys(image), apply_pointers) == canon


def test_without_the_tie_search_the_form_only_normalises():
    # Guards the test above: on this toy, ties do matter, so skipping them breaks canonicity.
    broken = 0
    for state in itertools.product(range(-1, N), repeat=N):
        forms = {canonicalize(image, pointer_keys(image), apply_pointers, exact=False)
                 for image in orbit(state)}
        broken += len(forms) > 1
    assert broken > 0


# ---- the symmetric textbook models

def test_twophase_canonical_is_an_orbit_invariant_that_separates_orbits():
    machine = OrbitTwoPhase(4)
    sym = machine.symmetry
    by_key: dict = {}
    for state in reachable(machine):
        key = machine.canonical(state)
        for g in sym.group():
            assert machine.canonical(sym.apply(state, g)) == key
        assert machine.representative(state) in sym.orbit(state)
        by_key.setdefault(key, set()).add(sym.least_image(state))
    # one key per orbit: states with the same key have the same least image (TLC's canonical form)
    assert all(len(images) == 1 for images in by_key.values())


def test_twophase_canonical_is_the_same_with_either_lookup_table():
    joint, split = OrbitTwoPhase(4, joint_table=True), OrbitTwoPhase(4, joint_table=False)
    states = reachable(joint)
    assert all(joint.canonical(s) == split.canonical(s) for s in states)
    assert len({joint.canonical(s) for s in states}) < len(states)  # it does merge states


@pytest.mark.parametrize("machine", [OrbitTwoPhase(3), OrbitTwoPhase(4), OrbitTwoPhase(5),
                                     FifoMutex(3), FifoMutex(4)],
                         ids=["twophase3", "twophase4", "twophase5", "mutex3", "mutex4"])
def test_check_symmetry_agrees_and_orbits_sum_to_the_full_count(machine):
    report = check_symmetry(machine, ExploreOptions())
    assert report.ok, report.summary()
    assert report.full.verdict == report.reduced.verdict == "holds"
    assert report.orbit_sum == report.full.stats.distinct
    assert report.reduced.stats.distinct < report.full.stats.distinct
    assert report.reduction == pytest.approx(report.full.stats.distinct / report.reduced.stats.distinct)


def test_twophase_full_count_is_tlcs_and_reduction_is_large():
    report = check_symmetry(OrbitTwoPhase(5), ExploreOptions())
    assert report.full.stats.distinct == 8_832  # TLC's count for TwoPhase with 5 RMs
    assert report.reduction > 20  # close to 5! = 120 for the states where RMs differ


@pytest.mark.parametrize("machine, prop", [(OrbitTwoPhase(4, seeded_bug=True), "TCConsistent"),
                                           (FifoMutex(3, seeded_bug=True), "MutualExclusion")],
                         ids=["twophase-bug", "mutex-bug"])
def test_seeded_symmetric_bug_found_with_the_same_shortest_length(machine, prop):
    report = check_symmetry(machine, ExploreOptions())
    assert report.ok, report.summary()
    assert report.full.verdict == report.reduced.verdict == "violated"
    full = {v.property: v for v in report.full.violations}
    reduced = {v.property: v for v in report.reduced.violations}
    assert prop in full and full[prop].length == reduced[prop].length
    assert trace_is_valid(machine, reduced[prop].trace)  # the reduced run's trace is concrete
    assert report.orbit_sum == report.full.stats.distinct


def test_a_wrong_canonical_form_is_caught():
    class Merging(OrbitTwoPhase):
        """Forgets which RMs sent Prepared: merges states that are not symmetric images."""

        def canonical(self, s):
            n = self.n
            return (*sorted(s[:n]), s[n], s[n + 1].bit_count(), s[n + 3], s[n + 4])

    report = check_symmetry(Merging(4), ExploreOptions())
    assert not report.ok
    assert report.orbit_sum != report.full.stats.distinct


def test_parallel_engine_reduces_the_same_way():
    machine = OrbitTwoPhase(6)
    bfs = explore(machine, ExploreOptions())
    par = explore(machine, ExploreOptions(strategy="parallel", workers=2))
    assert (par.stats.distinct, par.stats.generated, par.stats.depth) == \
        (bfs.stats.distinct, bfs.stats.generated, bfs.stats.depth)


def test_limits_make_the_orbit_check_inapplicable_not_wrong():
    report = check_symmetry(OrbitTwoPhase(5), ExploreOptions(max_states=500))
    # the full run stops at 500 states, the reduced one (314) completes: no contradiction
    assert (report.full.verdict, report.reduced.verdict) == ("incomplete", "holds")
    assert report.orbit_check is None and report.ok
    assert any("limit" in note for note in report.notes)


def test_symmetric_models_are_published_with_matching_properties():
    for model in MODELS:
        machine = model.machine()
        assert set(machine.properties()) == set(model.properties)
        assert isinstance(machine.symmetry, Symmetry)
        assert machine.symmetry.scalarsets[0] == Scalarset(machine.symmetry.scalarsets[0].name,
                                                           model.bounds[next(iter(model.bounds))].default)


def test_machines_without_a_declared_symmetry_get_verdicts_only():
    from eoscheck.examples.twophase import SymmetricTwoPhase

    report = check_symmetry(SymmetricTwoPhase(4), ExploreOptions())
    assert report.ok and report.exact is None and report.orbit_check is None
    options = replace(ExploreOptions(), strategy="parallel")
    assert check_symmetry(SymmetricTwoPhase(4), options).verdicts_agree


@pytest.mark.parametrize("machine", [OrbitTwoPhase(4, seeded_bug=True), FifoMutex(4, seeded_bug=True)],
                         ids=["twophase-bug", "mutex-bug"])
def test_check_symmetry_with_the_parallel_engine(machine):
    report = check_symmetry(machine, ExploreOptions(strategy="parallel", workers=2))
    assert report.ok, report.summary()
    assert report.full.strategy == report.reduced.strategy == "parallel"
    assert report.orbit_sum == report.full.stats.distinct
    for v in report.reduced.violations:
        assert trace_is_valid(machine, v.trace)

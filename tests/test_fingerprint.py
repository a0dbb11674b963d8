"""Sound fingerprints: structural collisions of CPython's hash are gone (encoded kind) or refused
(hash kind), on every engine, in every process."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.explore.expand import Expander, bfs_walk
from eoscheck.checker.fingerprint import (
    P,
    UnstableStateError,
    check_domain,
    encoded,
    encoder,
    observed_collision_probability,
)
from eoscheck.checker.intern import InternCollision, Interner
from eoscheck.checker.machine import Machine, Property
from eoscheck.checker.spec import build_machine, load_spec

ROOT = Path(__file__).resolve().parent.parent

#: pairs of distinct values CPython's hash maps to one value
STRUCTURAL = [
    (-1, -2),
    (1, 1 << 61),
    (0, (1 << 61) - 1),
    (5, 5 + 3 * ((1 << 61) - 1)),
    (-7, -7 - ((1 << 61) - 1)),
    (True, 1),
    (False, 0),
    (1 << 64, 1 << 3),
]


def _distinct_states() -> list:
    """States that differ only where hash() cannot tell them apart, in flat and nested positions."""
    states = []
    for a, b in STRUCTURAL:
        states += [(0, a), (0, b), ((a,), 3), ((b,), 3), (((a, 1),), (2,)), (((b, 1),), (2,))]
    # nesting and lengths
    states += [((1, 2), 3), (1, (2, 3)), (1, 2, 3), ((), ()), ((),), (), ((((),),),), (0,), (0, 0)]
    return list(dict.fromkeys(repr(s) for s in states))


def test_hash_really_collides_on_these_pairs():
    # the premise: without care, each pair is one fingerprint
    for a, b in STRUCTURAL:
        assert hash((0, a)) == hash((0, b))


def test_known_structural_collisions_get_distinct_fingerprints():
    values = [eval(r) for r in _distinct_states()]
    for fn in (encoded, encoder()):
        fps = {}
        for v in values:
            fp = fn(v)
            assert fp not in fps or fps[fp] == repr(v), f"{v!r} and {fps[fp]} share a fingerprint"
            fps[fp] = repr(v)
        assert len(fps) == len(values)


def test_memo_does_not_confuse_equal_objects_of_other_types():
    fn = encoder()
    inner_bool, inner_int = (True, 2), (1, 2)
    assert inner_bool == inner_int  # Python equality says these are one value
    first = fn(((inner_bool,), 0))
    assert fn(((inner_int,), 0)) != first
    assert fn(((inner_bool,), 0)) == first  # and the memo answers the same object the same way


def test_encoded_is_the_same_in_every_process_and_hash_seed():
    values = [(0, -1), (1 << 70, (True, False, ())), ((3, 4), -2)]
    here = [encoded(v) for v in values]
    code = ("from eoscheck.checker.fingerprint import encoded; "
            f"print([encoded(v) for v in {values!r}])")
    for seed in ("1", "12345"):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONHASHSEED": seed}).stdout
        assert out.strip() == repr(here)


def test_hash_kind_refuses_values_outside_its_domain_naming_the_field():
    for bad in (-2, 1 << 61, -(1 << 62)):
        with pytest.raises(UnstableStateError, match=r"state\.1\.0 = "):
            check_domain((0, (bad,)))
    check_domain((0, (-1, True, (P - 1,))))  # -1, bools and |x| < P are fine


def test_sample_check_accepts_plain_states_and_names_the_first_bad_leaf():
    from enum import IntEnum

    from eoscheck.checker.fingerprint import Fingerprinter

    class Phase(IntEnum):
        READY = 1

    hashed = Fingerprinter(hash, "hash", None, None, None)
    encoded_fp = Fingerprinter(encoded, "encoded", None, None, None)
    for fp in (hashed, encoded_fp):
        fp.check((0, (-1, True, (P - 1,)), ()))
        fp.check((Phase.READY, (Phase.READY,)))  # an int subclass: the slow path accepts it
        with pytest.raises(UnstableStateError, match=r"state\.1\.0 is a float"):
            fp.check((0, (1.5,)))
    # the domain is the hash kind's alone, and refused where the representative holds the bad leaf
    encoded_fp.check((0, (1 << 61,)))
    with pytest.raises(UnstableStateError, match=r"state\.1\.0 = -2 "):
        hashed.check((0, (-2,)))
    swapped = Fingerprinter(hash, "hash", lambda s: (s[1], s[0]), None, None)
    swapped.check((1, 2))
    with pytest.raises(UnstableStateError, match=r"state\.0 = 2305843009213693952 "):
        swapped.check((0, 1 << 61))


# ---------------------------------------------------------------- the model


class Colliding(Machine):
    """44 states: a counter 0..10 times a field taking -1, -2, 1 and 2**61, which hash() maps to
    two values, so a hash() fingerprint keeps 22."""

    VALUES = (-1, -2, 1, 1 << 61)
    actions: Mapping[str, tuple[str, ...]] = {"Inc": (), "Flip": ()}

    def init_states(self):
        yield (0, -1)

    def successors(self, s):
        yield ("Inc",), ((s[0] + 1) % 11, s[1])
        yield ("Flip",), (s[0], self.VALUES[(self.VALUES.index(s[1]) + 1) % 4])

    def properties(self):
        return {"Any": Property("Any", "always true", "invariant", lambda s: True)}

    def fields(self, s):
        return {"i": s[0], "v": s[1]}


class CollidingHashKind(Colliding):
    fingerprint_kind = "hash"


@pytest.mark.parametrize("strategy", ["bfs", "dfs", "parallel"])
def test_colliding_model_has_44_states_on_every_engine(strategy):
    result = explore(Colliding(), ExploreOptions(strategy=strategy, workers=2))
    assert result.verdict == "holds"
    assert result.stats.distinct == 44
    assert result.stats.generated == 1 + 2 * 44


def test_colliding_model_simulated_reaches_all_44():
    result = explore(Colliding(), ExploreOptions(strategy="simulate", walks=200, walk_depth=60))
    assert result.stats.distinct == 44


@pytest.mark.spark
def test_colliding_model_has_44_states_on_spark():
    result = explore(Colliding(), ExploreOptions(strategy="spark", spark_master="local[2]"))
    assert result.stats.distinct == 44
    assert result.stats.observed_collision is not None and result.stats.observed_collision < 1e-6


@pytest.mark.parametrize("strategy", ["bfs", "dfs", "simulate", "parallel"])
def test_hash_kind_machine_with_colliding_values_is_refused(strategy):
    # (0, -2) is a successor of the initial state that hash() would merge with it: never new,
    # so the engines sample successors, not only new states
    with pytest.raises(UnstableStateError, match=r"state\.1 = -2"):
        explore(CollidingHashKind(), ExploreOptions(strategy=strategy))


def test_observed_collision_estimate():
    result = explore(Colliding(), ExploreOptions())
    est = result.stats.observed_collision
    assert est is not None and 0 < est < 1e-6
    assert observed_collision_probability([5, 9, 7]) == 0.5
    assert observed_collision_probability([3, 3]) == 1.0
    assert observed_collision_probability([1]) is None


def test_interned_ids_lie_in_the_hash_domain_and_collisions_name_the_field():
    table: Interner[tuple] = Interner("part")
    ids = [table.intern((i, -i, (1 << 62) + i)) for i in range(200)]
    assert all(0 <= i < P for i in ids)
    # below 2**60 as well: a two-digit int, which long_hash reads in one turn less than a three-digit one
    assert all(i < 1 << 60 for i in ids) and any(i >= 1 << 59 for i in ids)
    with pytest.raises(InternCollision, match=r"part\.1 \(-1 and -2\)"):
        table.intern((7, -1))
        table.intern((7, -2))


def test_an_id_is_one_int_object_whatever_interns_it():
    # memo keys built from different states then compare equal ids by identity (no digit compare)
    table: Interner[tuple] = Interner("part")
    value = (1 << 40, ("x", 2))
    first = table.intern(value)
    again = table.intern((1 << 40, ("x", 2)))
    assert again == first and again is first
    assert table.intern((2,)) is not first
    table.adopt({first: value})
    assert table.intern(value) is first


# ---------------------------------------------------------------- machines that vouch for "hash"

#: small specs of each machine that sets fingerprint_kind = "hash": their whole reachable space
#: is walked and every state checked against the domain, with each NamedTuple field holding
#: either bools or ints, never both
HASH_KIND_SPECS = ["spurious-oos-broker-0.11", "kip890-tv2", "zombie-reinit-pre-kip360",
                   "late-produce-kip447", "examples/twophase-3rm-consistent",
                   "eos-ctp-timeout-abort-kafka-0.11.0.2", "eos-zombie-instance-expired-state-kafka-3.0",
                   "eos-stale-marker-two-partitions-kafka-3.0"]


def _leaf_types(state, where, types):
    if isinstance(state, tuple):
        cls = type(state)
        for i, x in enumerate(state):
            _leaf_types(x, (cls.__name__, i) if cls is not tuple else where, types)
    else:
        types.setdefault(where, set()).add(type(state))


@pytest.mark.parametrize("name", HASH_KIND_SPECS)
def test_machines_that_use_hash_stay_in_its_domain(name):
    machine = build_machine(load_spec(ROOT / "specs" / f"{name}.toml"))
    assert machine.fingerprint_kind == "hash"
    walker = Expander(machine, symmetry=False, check_deadlock=False, no_properties=True)
    types: dict = {}
    count = 0
    for _level, _parent, _step, state, _h, new in itertools.islice(bfs_walk(walker), 400_000):
        if not new:
            continue
        count += 1
        check_domain(state)
        if count <= 3000:
            _leaf_types(state, ("top", 0), types)
    assert count > 10
    mixed = {k: v for k, v in types.items() if {bool, int} <= v}
    assert not mixed, f"fields holding both bools and ints: {mixed}"

"""The compact visited set and parent store against plain Python references."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest
from eoscheck.checker.explore.compact import FingerprintSet, ParentStore


def _random_batches(seed: int, batches: int, size: int, universe: int) -> list[np.ndarray]:
    rng = random.Random(seed)
    # A small universe forces duplicates inside batches and across them.
    pool = [rng.getrandbits(64) for _ in range(universe)] + [0, 1, (1 << 64) - 1]
    return [np.array([rng.choice(pool) for _ in range(size)], dtype=np.uint64) for _ in range(batches)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_add_batch_matches_python_set(seed):
    fpset = FingerprintSet(capacity=16)  # tiny start: the table must grow many times
    reference: set[int] = set()
    for batch in _random_batches(seed, batches=40, size=500, universe=6000):
        got = fpset.add_batch(batch).tolist()
        expected = []
        for value in batch.tolist():
            expected.append(value not in reference)
            reference.add(value)
        assert got == expected
        assert len(fpset) == len(reference)
    assert sorted(fpset.values().tolist()) == sorted(reference)
    assert fpset.capacity * 0.7 >= len(reference) - 1  # the load bound holds (zero is off-table)


def test_contains_batch_and_membership():
    fpset = FingerprintSet()
    present = np.array([5, 0, 2**63, 17, 2**64 - 1], dtype=np.uint64)
    fpset.add_batch(present)
    absent = np.array([6, 2**63 + 1, 18], dtype=np.uint64)
    assert fpset.contains_batch(present).all()
    assert not fpset.contains_batch(absent).any()
    assert 0 in fpset and 2**64 - 1 in fpset and 6 not in fpset
    assert fpset.add_batch(present).sum() == 0  # nothing new the second time


def test_colliding_home_slots_probe_correctly():
    # A small table filled to 90% makes long probe runs that wrap around the table's end.
    fpset = FingerprintSet(capacity=16, max_load=0.9)
    values = np.arange(1, 15, dtype=np.uint64) << np.uint64(40)
    assert fpset.add_batch(values).all()
    assert fpset.contains_batch(values).all()
    assert not fpset.contains_batch(values + np.uint64(1)).any()


def _fill(store: ParentStore, seed: int, levels: int) -> tuple[list[int], list[int]]:
    """Random BFS-shaped levels; returns the reference fingerprints and parents by index."""
    rng = random.Random(seed)
    fps: list[int] = []
    parents: list[int] = []
    prev = (0, 0)
    for level in range(levels):
        count = rng.randint(1, 300)
        lvl_fps = [rng.getrandbits(64) for _ in range(count)]
        if level == 0:
            lvl_parents = [-1] * count
        else:
            lvl_parents = [rng.randrange(prev[0], prev[0] + prev[1]) for _ in range(count)]
        start = store.append_level(np.array(lvl_fps, dtype=np.uint64), np.array(lvl_parents))
        assert start == len(fps)
        prev = (start, count)
        fps += lvl_fps
        parents += lvl_parents
    return fps, parents


def _check_store(store: ParentStore, fps: list[int], parents: list[int]) -> None:
    assert len(store) == len(fps)
    rng = random.Random(7)
    for index in rng.sample(range(len(fps)), 200) + [0, len(fps) - 1]:
        assert store.fingerprint(index) == fps[index]
        assert store.parent(index) == (None if parents[index] < 0 else parents[index])
        chain = store.chain(index)
        expected = []
        current = index
        while current >= 0:
            expected.append(fps[current])
            current = parents[current]
        assert chain == expected[::-1]


def test_parent_store_in_memory_round_trip():
    store = ParentStore()
    fps, parents = _fill(store, seed=3, levels=25)
    _check_store(store, fps, parents)
    assert store.spilled == 0
    assert store.nbytes == 12 * len(fps)  # uint64 fingerprint + uint32 parent


def test_parent_store_spills_to_disk(tmp_path):
    store = ParentStore(spill_dir=str(tmp_path))
    fps, parents = _fill(store, seed=4, levels=25)
    assert store.spilled == len(fps) and store.nbytes == 0
    assert len(os.listdir(tmp_path)) == 2
    _check_store(store, fps, parents)
    store.close()
    assert os.listdir(tmp_path) == []


def test_parent_store_spills_past_a_memory_threshold():
    store = ParentStore(spill_bytes=12 * 1000)
    fps, parents = _fill(store, seed=5, levels=30)
    assert 0 < store.spilled <= len(fps)
    assert store.nbytes <= 12 * 1000 + 12 * 300  # at most one level above the threshold
    _check_store(store, fps, parents)
    store.close()


def test_parent_store_rejects_bad_input():
    store = ParentStore()
    with pytest.raises(ValueError):
        store.append_level(np.array([1, 2], dtype=np.uint64), np.array([-1]))
    store.append_level(np.array([1], dtype=np.uint64), np.array([-1]))
    with pytest.raises(ValueError):
        store.append_level(np.array([2], dtype=np.uint64), np.array([5]))  # no state 5 yet
    with pytest.raises(IndexError):
        store.fingerprint(1)


def _bfs_like_run(visited, seed: int, distinct: bool = False) -> list:
    """Drive a visited store the way the BFS does: levels of candidate batches whose parents are
    the previous level's new fingerprints; record every answer. ``distinct``: each batch holds a
    fingerprint once (as a chunk's candidates do) and says so."""
    rng = random.Random(seed)
    universe = [rng.getrandbits(64) - (1 << 63) for _ in range(3000)]  # signed, like hash()
    answers: list = []
    init = universe[:3]
    answers.append(visited.insert_batch(init, init, None))
    visited.end_level()
    previous = init
    levels = [init]
    for level in range(2, 12):
        current: list[int] = []
        for _ in range(rng.randint(1, 4)):
            fps = [rng.choice(universe) for _ in range(rng.randint(0, 300))]
            if distinct:
                fps = list(dict.fromkeys(fps))
            parents = [rng.choice(previous) for _ in fps]
            room = rng.choice([None, None, None, rng.randint(0, 50), rng.randint(0, 400)])
            new, overflow = visited.insert_batch(fps, parents, room, distinct=distinct)
            answers.append((new, overflow))
            current += [fps[i] for i in new]
        visited.end_level()
        if not current:
            break
        levels.append(current)
        previous = current
    answers.append(len(visited))
    # a chain for a few states of each level, masked like the BFS masks them
    for level, fps in enumerate(levels, start=1):
        for fp in fps[:3]:
            answers.append([h & ((1 << 64) - 1) for h in visited.chain(fp, level)])
    return answers


@pytest.mark.parametrize("distinct", [False, True])
@pytest.mark.parametrize("seed", range(5))
def test_compact_visited_answers_exactly_like_the_python_set_version(seed, distinct):
    from eoscheck.checker.explore.compact import CompactVisited
    from eoscheck.checker.explore.visited import VisitedSet

    # distinct batches that fit take the one-pass insert, the others test then insert
    assert _bfs_like_run(CompactVisited(), seed, distinct) == _bfs_like_run(VisitedSet(), seed, distinct)


@pytest.mark.parametrize("seed", range(4))
def test_parents_named_by_index_give_the_chains_of_parents_named_by_fingerprint(seed):
    """The BFS's way (``name_by_index``): the same answers and the same chains as a store told the
    parents' fingerprints, with every level's links stored as they come."""
    from eoscheck.checker.explore.compact import CompactVisited

    rng = random.Random(seed)
    universe = [rng.getrandbits(64) - (1 << 63) for _ in range(3000)]
    by_fp, by_index = CompactVisited(), CompactVisited()
    assert by_index.name_by_index()
    init = universe[:3]
    assert by_index.next_index() == 0
    assert by_fp.insert_batch(init, init) == by_index.insert_batch(init, [-1] * 3)
    by_fp.end_level()
    by_index.end_level()
    previous = [(fp, i) for i, fp in enumerate(init)]  # (fingerprint, discovery index)
    named: list[tuple[int, int, int]] = []  # (fingerprint, its level, its index)
    for level in range(2, 10):
        current: list[tuple[int, int]] = []
        for _ in range(rng.randint(1, 3)):
            fps = list(dict.fromkeys(rng.choice(universe) for _ in range(rng.randint(0, 200))))
            parents = [rng.choice(previous) for _ in fps]
            room = rng.choice([None, None, rng.randint(0, 60)])
            base = by_index.next_index()
            assert base == len(by_fp)
            answer = by_fp.insert_batch(fps, [p for p, _ in parents], room, distinct=True)
            assert by_index.insert_batch(fps, [i for _, i in parents], room, distinct=True) == answer
            current += [(fps[i], base + j) for j, i in enumerate(answer[0])]
        by_fp.end_level()
        by_index.end_level()
        if not current:
            break
        named += [(fp, level, i) for fp, i in current[:4]]
        previous = current
    assert len(named) > 8 and len(by_fp) == len(by_index)
    for fp, level, index in named:
        assert by_index.chain_index(index) == by_fp.chain(fp, level) == by_index.chain(fp, level)
        assert by_index.chain_index(index)[-1] == fp & ((1 << 64) - 1)
    with pytest.raises(RuntimeError):
        by_fp.name_by_index()  # only before the first insert


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_add_distinct_tests_and_inserts_in_one_pass(seed):
    fpset = FingerprintSet(capacity=16)
    reference: set[int] = set()
    for batch in _random_batches(seed, batches=25, size=600, universe=5000):
        distinct = np.array(list(dict.fromkeys(batch.tolist())), dtype=np.uint64)  # zero included when drawn
        is_new = fpset.add_distinct(distinct)
        assert is_new.tolist() == [v not in reference for v in distinct.tolist()]
        reference.update(distinct.tolist())
        assert len(fpset) == len(reference)
    assert fpset.contains_batch(np.array(sorted(reference), dtype=np.uint64)).all()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_insert_distinct_answers_and_grows_as_contains_then_add_new(seed):
    """One pass (the parallel engine's settle) against the two it replaces: the same answers,
    the same set, and a table of the same size after every batch (it grows by what was new)."""
    one, two = FingerprintSet(capacity=16), FingerprintSet(capacity=16)
    reference: set[int] = set()
    sizes = set()
    for batch in _random_batches(seed, batches=40, size=900, universe=6000):
        distinct = np.array(list(dict.fromkeys(batch.tolist())), dtype=np.uint64)
        is_new = one.insert_distinct(distinct)
        expected = ~two.contains_batch(distinct)
        two.add_new(distinct[expected]) if expected.any() else None
        assert is_new.tolist() == expected.tolist() == [v not in reference for v in distinct.tolist()]
        reference.update(distinct.tolist())
        assert len(one) == len(two) == len(reference)
        assert one.capacity == two.capacity
        sizes.add(one.capacity)
    assert len(sizes) > 2  # the table grew several times on the way
    assert one.contains_batch(np.array(sorted(reference), dtype=np.uint64)).all()


def test_compact_visited_known_holds_only_recent_levels():
    from eoscheck.checker.explore.compact import CompactVisited

    visited = CompactVisited(recent_levels=2)
    visited.insert_batch([1], [1])
    visited.end_level()
    for level in range(2, 6):
        visited.insert_batch([level], [level - 1])
        visited.end_level()
    assert visited.known() == {4, 5}
    assert len(visited) == 5
    # old states are still deduplicated exactly, by the table
    assert visited.insert_batch([1, 2, 6], [5, 5, 5]) == ([2], False)


@pytest.mark.parametrize("tail", [0, 64, 1 << 20])
def test_vector_rounds_and_the_one_by_one_tail_agree(tail, monkeypatch):
    # tail 0: every probe round vectorised; 1 << 20: every value probed one by one in Python
    from eoscheck.checker.explore import compact
    monkeypatch.setattr(compact, "_TAIL", tail)
    fpset = FingerprintSet(capacity=16, max_load=0.9)
    reference: set[int] = set()
    for batch in _random_batches(3, batches=30, size=700, universe=9000):
        absent = batch[~fpset.contains_batch(batch)]
        assert set(absent.tolist()).isdisjoint(reference)
        fresh = np.unique(absent)
        fpset.add_new(fresh)  # distinct and absent, zero included when drawn
        reference.update(batch.tolist())
        assert len(fpset) == len(reference)
    assert fpset.contains_batch(np.array(sorted(reference), dtype=np.uint64)).all()
    assert 0 in fpset and sorted(fpset.values().tolist()) == sorted(reference)


@pytest.mark.parametrize("tail", [0, 32, 1 << 20])
def test_one_pass_insertion_finds_present_values_in_vector_rounds_and_in_the_tail(tail, monkeypatch):
    # add_distinct's single pass meets values already present, values absent, and several values
    # claiming one empty slot in the same round; tail 0 keeps every value in the vector rounds
    from eoscheck.checker.explore import compact
    monkeypatch.setattr(compact, "_TAIL", tail)
    fpset = FingerprintSet(capacity=16, max_load=0.9)
    reference: set[int] = set()
    for batch in _random_batches(5, batches=30, size=700, universe=9000):
        batch = np.unique(batch)  # distinct, as add_distinct requires
        expected = np.array([v not in reference for v in batch.tolist()], dtype=bool)
        assert np.array_equal(fpset.add_distinct(batch), expected)
        reference.update(batch.tolist())
        assert len(fpset) == len(reference)
    assert sorted(fpset.values().tolist()) == sorted(reference)

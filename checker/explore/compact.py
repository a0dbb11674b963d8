"""Compact visited set and parent links: flat numpy buffers instead of Python objects.

A Python ``set`` of fingerprints costs about 60-100 bytes per state (int object plus set slot),
and a dict of parent links about as much again. Here a distinct state costs:

* ``FingerprintSet``: one uint64 slot in an open-addressing table kept at most ``max_load`` full,
  i.e. 8 / load bytes (11.4-22.9 bytes at the default 0.7 load);
* ``ParentStore``: its fingerprint (uint64) and its parent's index (uint32) in discovery order,
  12 bytes, optionally spilled to disk level by level so that RAM holds only the current level.

Both are filled a BFS level at a time (``add_batch`` / ``append_level``): numpy does the hashing
and probing for a whole batch in C, so the per-state Python cost stays in the engine's loop.
States themselves are not stored: they live only in the frontier, and traces are rebuilt by
re-executing the machine along the fingerprint chain (``checker.trace.rebuild_trace``).

Measured with ``bench/bench_scale.py --store`` (tracemalloc, levels of 50,000 new states): at 5
million states 25.4 bytes per state held (13.4 table + 12 parent links), 28.4 at the traced peak;
13.4 / 21.4 with parent links spilled. At 1 million states the table has just doubled (load 0.48),
so 28.8 held but 39.9 at the traced peak (old and new table side by side); 31.5 spilled.
"""

from __future__ import annotations

import os
import tempfile
from array import array
from collections.abc import Iterable

import numpy as np

MASK = (1 << 64) - 1
_EMPTY = np.uint64(0)
#: Fibonacci hashing multiplier: spreads fingerprints whose low bits are poorly mixed
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
#: values probed at once: bounds the temporaries (about 50 bytes per value) of one batch
_BLOCK = 1 << 16
#: a batch's last values still probing are finished one by one in Python (see ``_insert_distinct``)
_TAIL = 32


class FingerprintSet:
    """A set of uint64 fingerprints in one flat numpy array (linear probing, batch operations).

    Zero marks an empty slot, so the fingerprint 0 is tracked by a separate flag.
    """

    def __init__(self, capacity: int = 1 << 16, max_load: float = 0.7) -> None:
        if not 0.1 <= max_load <= 0.9:
            raise ValueError("max_load must be between 0.1 and 0.9")
        size = 1 << max(4, (max(capacity, 16) - 1).bit_length())
        self._max_load = max_load
        self._table = np.zeros(size, dtype=np.uint64)
        self._shift = np.uint64(64 - (size.bit_length() - 1))
        self._count = 0
        self._has_zero = False

    def __len__(self) -> int:
        return self._count + int(self._has_zero)

    @property
    def capacity(self) -> int:
        return int(self._table.size)

    @property
    def nbytes(self) -> int:
        return int(self._table.nbytes)

    def _home(self, fps: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return ((fps * _GOLDEN) >> self._shift).astype(np.int64)

    def _grow_for(self, extra: int) -> None:
        needed = self._count + extra
        if needed <= self._max_load * self._table.size:
            return
        size = self._table.size
        while needed > self._max_load * size:
            size *= 2
        old = self._table
        self._table = np.zeros(size, dtype=np.uint64)
        self._shift = np.uint64(64 - (size.bit_length() - 1))
        self._count = 0
        # Re-insert block by block: the peak stays near old + new table, not several
        # temporaries the size of the whole set.
        for start in range(0, old.size, _BLOCK):
            block = old[start:start + _BLOCK]
            self._insert_distinct(block[block != _EMPTY])
        del old

    def _insert_distinct(self, values: np.ndarray) -> np.ndarray:
        """Insert distinct nonzero values; True where a value was not present before."""
        if values.size > _BLOCK:
            return np.concatenate([self._insert_distinct(values[i:i + _BLOCK])
                                   for i in range(0, values.size, _BLOCK)])
        table = self._table
        mask = table.size - 1
        is_new = np.zeros(values.size, dtype=bool)
        # the values still probing, kept compact (their positions in ``values``, themselves, their
        # slots) rather than indexed through a list of pending positions: about half the numpy
        # calls per round (perf26b: -16-18% of this function's instructions on chunks of 2,200)
        idx = np.arange(values.size)
        vals = values
        slots = self._home(values)
        while idx.size > _TAIL:
            current = table[slots]
            # Several values may want the same empty slot: all are written and one stays (the one a
            # read-back finds). Cheaper than choosing a winner with np.unique first.
            empty_at = np.flatnonzero(current == _EMPTY)
            claim_slots, claims = slots[empty_at], vals[empty_at]
            table[claim_slots] = claims
            won = empty_at[table[claim_slots] == claims]
            is_new[idx[won]] = True
            # on to the next slot: neither present there nor placed now (a lost claim's slot holds
            # another value: the batch's values are distinct)
            go = current != vals
            go[won] = False
            idx, vals = idx[go], vals[go]
            slots = (slots[go] + 1) & mask
        # Linear probing leaves a long tail of rounds with a handful of values each, and a round
        # costs a dozen numpy calls whatever its size: the last few values are probed one by one.
        item = table.item
        for i, value, slot in zip(idx.tolist(), vals.tolist(), slots.tolist()):
            while True:
                current = item(slot)
                if current == value:
                    break
                if current == 0:
                    table[slot] = value
                    is_new[i] = True
                    break
                slot = (slot + 1) & mask
        self._count += int(is_new.sum())
        return is_new

    def add_batch(self, fps: np.ndarray) -> np.ndarray:
        """Add a batch; True at the first occurrence of each fingerprint that was not present."""
        fps = np.asarray(fps, dtype=np.uint64)
        result = np.zeros(fps.size, dtype=bool)
        if fps.size == 0:
            return result
        unique, first = np.unique(fps, return_index=True)
        if unique[0] == _EMPTY:
            if not self._has_zero:
                self._has_zero = True
                result[first[0]] = True
            unique, first = unique[1:], first[1:]
        self._grow_for(unique.size)
        is_new = self._insert_distinct(unique)
        result[first[is_new]] = True
        return result

    def add_new(self, fps: np.ndarray) -> None:
        """Add fingerprints known to be distinct and absent (what ``contains_batch`` and a
        de-duplication just established): ``add_batch`` without its sort."""
        if not fps.all():  # the fingerprint 0 is a flag, not a slot
            self.add_batch(fps)
            return
        self._grow_for(fps.size)
        self._insert_distinct(fps)

    def add_distinct(self, fps: np.ndarray) -> np.ndarray:
        """Add fingerprints known to be distinct (present or not); True where one was not
        present. One probing pass, where ``contains_batch`` then ``add_new`` make two."""
        if not fps.all():  # the fingerprint 0 is a flag, not a slot
            return self.add_batch(fps)
        self._grow_for(fps.size)
        return self._insert_distinct(fps)

    def insert_distinct(self, fps: np.ndarray) -> np.ndarray:
        """``add_distinct`` whose table grows after the insertion, by the count of values that
        were new (as ``add_new`` grows, which is told only new ones), not before it by the count
        offered: a batch that is mostly present does not double the table early, and the table's
        size follows the set's. The load may pass ``max_load`` during the one pass; a batch that
        could take it past 0.9 grows the table first."""
        if not fps.all():  # the fingerprint 0 is a flag, not a slot
            is_new = np.zeros(fps.size, dtype=bool)
            zero = fps == _EMPTY
            is_new[zero] = not self._has_zero
            self._has_zero = True
            rest = np.flatnonzero(~zero)
            is_new[rest] = self.insert_distinct(fps[rest])
            return is_new
        if self._count + fps.size > 0.9 * self._table.size:
            self._grow_for(fps.size)
        is_new = self._insert_distinct(fps)
        self._grow_for(0)
        return is_new

    def contains_batch(self, fps: np.ndarray) -> np.ndarray:
        fps = np.asarray(fps, dtype=np.uint64)
        table = self._table
        mask = table.size - 1
        present = np.zeros(fps.size, dtype=bool)
        zero = fps == _EMPTY
        present[zero] = self._has_zero
        pending = np.flatnonzero(~zero)
        slots = self._home(fps)
        while pending.size > _TAIL:
            s = slots[pending]
            current = table[s]
            hit = current == fps[pending]
            present[pending[hit]] = True
            moving = ~hit & (current != _EMPTY)
            slots[pending[moving]] = (s[moving] + 1) & mask
            pending = pending[moving]
        item = table.item
        for i in pending.tolist():  # the tail, as in ``_insert_distinct``
            value = fps.item(i)
            slot = slots.item(i)
            while True:
                current = item(slot)
                if current == value:
                    present[i] = True
                    break
                if current == 0:
                    break
                slot = (slot + 1) & mask
        return present

    def __contains__(self, fp: int) -> bool:
        return bool(self.contains_batch(np.array([fp], dtype=np.uint64))[0])

    def values(self) -> np.ndarray:
        """Every fingerprint in the set (unordered)."""
        stored = self._table[self._table != _EMPTY]
        if self._has_zero:
            stored = np.concatenate([stored, np.zeros(1, dtype=np.uint64)])
        return stored


class ParentStore:
    """Fingerprints and parent indices of every distinct state, numbered in discovery order.

    A state's index is its position in discovery order; ``NO_PARENT`` marks an initial state.
    Levels are appended whole. With ``spill_dir`` set (or once the in-memory part exceeds
    ``spill_bytes``), each completed level is appended to two files and dropped from RAM;
    lookups then read through a memory map, which the OS pages in only along a trace's chain.
    """

    NO_PARENT = np.uint32(0xFFFFFFFF)

    def __init__(self, spill_dir: str | None = None, spill_bytes: int | None = None) -> None:
        self._levels: list[tuple[int, np.ndarray, np.ndarray]] = []  # (start, fps, parents) in RAM
        self._count = 0
        self._spill_bytes = spill_bytes
        self._spill_dir = spill_dir
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._spilled = 0  # states [0, _spilled) live on disk
        self._fp_file: str | None = None
        self._parent_file: str | None = None
        self._maps: tuple[np.ndarray, np.ndarray] | None = None

    def __len__(self) -> int:
        return self._count

    @property
    def spilled(self) -> int:
        """How many states' links are on disk rather than in RAM."""
        return self._spilled

    @property
    def nbytes(self) -> int:
        """Bytes held in RAM (the spilled part is in the page cache at most)."""
        return sum(f.nbytes + p.nbytes for _, f, p in self._levels)

    def append_level(self, fps: np.ndarray | array | Iterable[int],
                     parents: np.ndarray | array | Iterable[int], *, external: bool = False) -> int:
        """Append one level; returns the index of its first state. ``parents`` uses
        ``NO_PARENT`` (or -1) for initial states. With ``external`` the parents are references
        into some other numbering (the parallel engine's cross-worker references) and are not
        range-checked against this store."""
        f = _as_array(fps, np.uint64)
        p = _as_array(parents, np.int64)
        if f.size != p.size:
            raise ValueError("fingerprints and parents differ in length")
        if not external and p.size and int(p.max()) >= self._count:
            raise ValueError("parent index out of range")
        if self._count + f.size >= int(self.NO_PARENT) or (p.size and int(p.max()) >= int(self.NO_PARENT)):
            raise OverflowError("more than 2^32-1 states: parent indices no longer fit")
        p32 = p.astype(np.uint32)  # -1 wraps to NO_PARENT
        start = self._count
        self._levels.append((start, f, p32))
        self._count += f.size
        if self._spill_dir is not None or (self._spill_bytes is not None
                                            and self.nbytes > self._spill_bytes):
            self._spill()
        return start

    def _spill(self) -> None:
        if self._fp_file is None:
            if self._spill_dir is None:
                self._tmp = tempfile.TemporaryDirectory(prefix="eoscheck-parents-")
                self._spill_dir = self._tmp.name
            os.makedirs(self._spill_dir, exist_ok=True)
            self._fp_file = os.path.join(self._spill_dir, f"fps-{os.getpid()}-{id(self)}.u64")
            self._parent_file = os.path.join(self._spill_dir, f"parents-{os.getpid()}-{id(self)}.u32")
        assert self._parent_file is not None
        with open(self._fp_file, "ab") as ff, open(self._parent_file, "ab") as pf:
            for _, f, p in self._levels:
                ff.write(f.tobytes())
                pf.write(p.tobytes())
        self._spilled = self._count
        self._levels = []
        self._maps = None

    def _disk(self) -> tuple[np.ndarray, np.ndarray]:
        if self._maps is None:
            assert self._fp_file is not None and self._parent_file is not None
            self._maps = (np.memmap(self._fp_file, dtype=np.uint64, mode="r", shape=(self._spilled,)),
                          np.memmap(self._parent_file, dtype=np.uint32, mode="r", shape=(self._spilled,)))
        return self._maps

    def _lookup(self, index: int) -> tuple[int, int]:
        if not 0 <= index < self._count:
            raise IndexError(index)
        if index < self._spilled:
            fps, parents = self._disk()
            return int(fps[index]), int(parents[index])
        for start, f, p in reversed(self._levels):
            if index >= start:
                return int(f[index - start]), int(p[index - start])
        raise IndexError(index)  # unreachable: the levels cover [spilled, count)

    def link(self, index: int) -> tuple[int, int]:
        """(fingerprint, raw parent value; ``NO_PARENT`` for an initial state)."""
        return self._lookup(index)

    def fingerprint(self, index: int) -> int:
        return self._lookup(index)[0]

    def parent(self, index: int) -> int | None:
        """The parent's index, or None for an initial state."""
        parent = self._lookup(index)[1]
        return None if parent == int(self.NO_PARENT) else parent

    def chain(self, index: int) -> list[int]:
        """Fingerprints from an initial state down to ``index`` (what ``rebuild_trace`` takes)."""
        out: list[int] = []
        current: int | None = index
        while current is not None:
            fp, parent = self._lookup(current)
            out.append(fp)
            current = None if parent == int(self.NO_PARENT) else parent
        out.reverse()
        return out

    def close(self) -> None:
        self._maps = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
        elif self._fp_file is not None and self._parent_file is not None:
            for path in (self._fp_file, self._parent_file):
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass
        self._fp_file = self._parent_file = None


def _as_array(values: np.ndarray | array | Iterable[int], dtype: type) -> np.ndarray:
    if isinstance(values, np.ndarray):
        return values.astype(dtype, copy=False)
    if isinstance(values, array):
        return np.frombuffer(values, dtype=np.dtype(values.typecode)).astype(dtype, copy=False)
    return np.fromiter(values, dtype=dtype)


class CompactVisited:
    """The BFS's visited set in flat buffers; a drop-in for ``visited.VisitedSet``.

    Same interface and contract (``known``, ``insert_batch``, ``end_level``, ``chain``, ``len``,
    ``nbytes``; fingerprints are signed 64-bit ints; new candidates reported in candidate
    order, first occurrence wins), but a distinct state costs a ``FingerprintSet`` slot plus 12
    bytes of parent link (its fingerprint and its parent's index) instead of a Python set entry.

    ``known()`` is a Python set of the fingerprints of the last ``recent_levels`` levels only:
    most duplicate successors lead to states of the current or the previous level, so a caller
    still drops them before buffering, while older states cost nothing there and are caught by
    ``insert_batch``'s exact check. With ``recent_levels=0`` it stays empty and costs nothing (the
    BFS keeps its own filter: ``bfs.explore_bfs``).

    Parents are named by fingerprint by default (as ``VisitedSet`` names them) or, after
    ``name_by_index``, by discovery index (``next_index``, ``chain_index``): the BFS's way.
    """

    def __init__(self, recent_levels: int = 2, spill_bytes: int | None = None) -> None:
        self._set = FingerprintSet()
        self._parents = ParentStore(spill_bytes=spill_bytes)
        self._recent_levels = recent_levels
        self._known: set[int] = set()
        self._recent: list[list[int]] = []  # signed fingerprints of the levels in _known
        self._child: list[np.ndarray] = []  # pending level: new fingerprints (uint64) ...
        self._parent_fp: list[np.ndarray] = []  # ... and their parents' fingerprints
        self._level_starts: list[int] = []
        self._prev_sorted: np.ndarray | None = None  # previous level's fingerprints, sorted
        self._prev_index: np.ndarray | None = None  # their global indices
        #: parents named by discovery index (``name_by_index``) rather than by fingerprint
        self.by_index = False
        self._pending = 0  # states inserted into the level not closed yet

    def __len__(self) -> int:
        return len(self._set)

    def __contains__(self, fp: int) -> bool:
        return (fp & MASK) in self._set

    def known(self) -> set[int]:
        return self._known

    def name_by_index(self) -> bool:
        """From now on (before the first insert) ``insert_batch`` takes each parent's discovery
        index (``next_index`` gave it; -1 for an initial state) instead of its fingerprint, and
        ``chain_index`` names a state by its index. The BFS knows the indices of the states it
        expands, and ``end_level`` then stores the links as they come: no sort of the level and
        no search of the parents among the previous one (~0.3 us per state)."""
        if len(self._parents) or self._child:
            raise RuntimeError("name_by_index after the first insert")
        self.by_index = True
        return True

    def next_index(self) -> int:
        """The discovery index the next new state will get."""
        return len(self._parents) + self._pending

    def chain_index(self, index: int) -> list[int]:
        """Fingerprints (unsigned) from an initial state to the state of discovery ``index``."""
        if index >= len(self._parents):
            self.end_level()
        return self._parents.chain(index)

    def insert_batch(self, fps: list[int], parents: list[int], room: int | None = None, *,
                     distinct: bool = False) -> tuple[list[int], bool]:
        if not fps:
            return [], False
        # np.fromiter, not np.array: no dtype discovery pass over the list (perf25b: about 250
        # instructions per candidate on kafka.eos; the parallel workers convert this way since par24)
        batch = np.fromiter(fps, dtype=np.int64, count=len(fps)).view(np.uint64)
        if distinct and (room is None or room >= batch.size):
            # the caller de-duplicated the batch (the BFS's chunk candidates) and all of it fits:
            # test and insert in one probing pass, no sort
            new = np.flatnonzero(self._set.add_distinct(batch))
            overflow = False
            if new.size == 0:
                return [], False
            fresh = batch[new]
        else:
            if distinct:
                new = np.flatnonzero(~self._set.contains_batch(batch))
            else:
                first = np.zeros(batch.size, dtype=bool)
                first[np.unique(batch, return_index=True)[1]] = True
                new = np.flatnonzero(first & ~self._set.contains_batch(batch))
            overflow = room is not None and new.size > room
            if overflow:
                new = new[:room]
            if new.size == 0:
                return [], bool(overflow)
            fresh = batch[new]
            self._set.add_new(fresh)
        self._child.append(fresh)
        self._pending += fresh.size
        picked = new.tolist()
        track = self._recent_levels > 0
        if len(picked) == len(fps):  # the usual case: every candidate is new
            self._parent_fp.append(np.fromiter(parents, dtype=np.int64, count=len(parents)).view(np.uint64))
            if track:
                self._known.update(fps)
        else:
            self._parent_fp.append(np.fromiter(map(parents.__getitem__, picked), dtype=np.int64,
                                               count=len(picked)).view(np.uint64))
            if track:
                self._known.update(map(fps.__getitem__, picked))
        return picked, bool(overflow)

    def end_level(self) -> None:
        child = np.concatenate(self._child) if self._child else np.zeros(0, dtype=np.uint64)
        parent_fp = np.concatenate(self._parent_fp) if self._parent_fp else np.zeros(0, dtype=np.uint64)
        self._child, self._parent_fp = [], []
        self._pending = 0
        if self.by_index:  # the parents are named by their index already
            parent_index = parent_fp.view(np.int64) if self._level_starts else np.full(child.size, -1, dtype=np.int64)
            start = self._parents.append_level(child, parent_index)
            self._level_starts.append(start)
            self._forget_old(child)
            return
        if self._prev_sorted is None:  # the initial states: no parents
            parent_index = np.full(child.size, -1, dtype=np.int64)
        else:
            pos = np.searchsorted(self._prev_sorted, parent_fp)
            pos = np.minimum(pos, max(self._prev_sorted.size - 1, 0))
            if parent_fp.size and not np.array_equal(self._prev_sorted[pos], parent_fp):
                raise KeyError("a parent fingerprint is not in the previous BFS level")
            assert self._prev_index is not None  # set together with _prev_sorted
            parent_index = self._prev_index[pos]
        start = self._parents.append_level(child, parent_index)
        self._level_starts.append(start)
        if child.size or self._prev_sorted is None:
            # (an empty level, e.g. closed twice on a stop, keeps the last parents resolvable)
            order = np.argsort(child, kind="stable")
            self._prev_sorted = child[order]
            self._prev_index = order.astype(np.int64) + start
        self._forget_old(child)

    def _forget_old(self, child: np.ndarray) -> None:
        """Keep ``known()`` to the last ``recent_levels`` levels (nothing at all for 0)."""
        if not self._recent_levels:
            return
        self._recent.append(child.view(np.int64).tolist())
        if len(self._recent) > self._recent_levels:
            self._known.difference_update(self._recent.pop(0))

    @property
    def levels(self) -> int:
        return len(self._level_starts)

    def chain(self, fp: int, level: int) -> list[int]:
        """Fingerprints (unsigned) from an initial state to ``fp``, added at ``level`` (1 = initial)."""
        if level > len(self._level_starts):
            self.end_level()
        start = self._level_starts[level - 1]
        end = self._level_starts[level] if level < len(self._level_starts) else len(self._parents)
        target = fp & MASK
        for index in range(start, end):
            if self._parents.fingerprint(index) == target:
                return self._parents.chain(index)
        raise KeyError(f"fingerprint {target:#x} not found at BFS level {level}")

    def observed_collision(self) -> float | None:
        """TLC's estimate "based on the actual fingerprints" (``fingerprint``) over this set."""
        from ..fingerprint import observed_collision_probability

        return observed_collision_probability(self._set.values())

    def nbytes(self) -> int:
        """Bytes held in RAM by the fingerprint table and the parent links."""
        return self._set.nbytes + self._parents.nbytes

    def close(self) -> None:
        self._parents.close()

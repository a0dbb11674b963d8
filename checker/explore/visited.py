"""The BFS's memory: which fingerprints were seen, and each one's parent for rebuilding traces.

Keys are signed 64-bit fingerprints (``checker.fingerprint.fingerprint_fn``, what the BFS
computes; masked to unsigned 64 bits only when a trace is rebuilt). Parent links
are kept per BFS level as two parallel int64 arrays (child, parent) sorted by child after the level
ends, so a chain is rebuilt with one ``searchsorted`` per level and costs 16 bytes per state
instead of a dict entry (~100 bytes).

The interface is batch-shaped (``insert_batch`` over a chunk of candidates) so that a compact
implementation (e.g. a numpy hash table or sorted array) can replace ``VisitedSet`` without
touching the BFS loop. What the BFS uses: ``known()``, ``insert_batch(fps, parents, room)``,
``end_level()``, ``chain(fp, level)``, ``len()``. Fingerprints arrive as signed Python ints
(``np.array(fps, dtype=np.int64).view(np.uint64)`` converts a batch). Any
replacement must keep ``insert_batch``'s order contract: the new candidates are reported in
candidate order, first occurrence wins, which keeps runs deterministic.

The BFS runs on ``compact.CompactVisited`` (same interface and answers, a fraction of the
memory); this plain-Python version stays as the reference that ``tests/test_compact.py`` compares
it with.
"""

from __future__ import annotations

from array import array

import numpy as np


class VisitedSet:
    """Seen fingerprints as a Python set of ints, parent links per level as numpy arrays."""

    def __init__(self) -> None:
        self._seen: set[int] = set()
        self._levels: list[tuple[np.ndarray, np.ndarray]] = []  # (sorted children, their parents)
        self._child = array("q")
        self._parent = array("q")

    def __len__(self) -> int:
        return len(self._seen)

    def __contains__(self, fp: int) -> bool:
        return fp in self._seen

    def known(self):
        """A container whose ``in`` is True only for fingerprints already inserted.

        The BFS tests each successor against it to drop old states before buffering them. It may
        miss some (a compact implementation can return an empty frozenset, or a set of recent
        levels); ``insert_batch`` still deduplicates exactly. Here it is the live set itself.
        """
        return self._seen

    def insert_batch(self, fps: list[int], parents: list[int], room: int | None = None, *,
                     distinct: bool = False) -> tuple[list[int], bool]:
        """Add the candidates not seen before (first occurrence wins), recording their parents.

        Returns (indices into ``fps`` of the new ones, in order; ``True`` if more new ones existed
        than ``room`` allowed — those were not added).
        """
        # All C-level: first occurrence of each fingerprint in the batch (a dict built from the
        # reversed batch keeps the smallest index), minus the seen set, back in candidate order.
        seen = self._seen
        first = dict(zip(reversed(fps), range(len(fps) - 1, -1, -1)))
        # set.difference iterates the smaller operand; dict_keys - set would walk all of seen
        fresh = set(first).difference(seen)
        if not fresh:
            return [], False
        new = sorted(map(first.__getitem__, fresh))
        overflow = room is not None and len(new) > room
        if overflow:
            new = new[:room]
            seen.update([fps[i] for i in new])
        else:
            seen |= fresh
        if new:
            self._child.extend([fps[i] for i in new])
            self._parent.extend([parents[i] for i in new])
        return new, overflow

    def end_level(self) -> None:
        """Close the current BFS level: its parent links become a sorted, searchable block."""
        child = np.frombuffer(self._child, dtype=np.int64).copy()
        parent = np.frombuffer(self._parent, dtype=np.int64).copy()
        order = np.argsort(child, kind="stable")
        self._levels.append((child[order], parent[order]))
        self._child = array("q")
        self._parent = array("q")

    @property
    def levels(self) -> int:
        return len(self._levels)

    def chain(self, fp: int, level: int) -> list[int]:
        """Fingerprints from an initial state to ``fp``, which was added at ``level`` (1 = initial).

        Closes the pending level first if ``fp`` is in it.
        """
        if level > len(self._levels):
            self.end_level()
        out = [fp]
        current = fp
        for lvl in range(level - 1, 0, -1):
            children, parents = self._levels[lvl]
            i = int(np.searchsorted(children, current))
            if i >= len(children) or int(children[i]) != current:
                raise KeyError(f"fingerprint {current:#x} not found at BFS level {lvl + 1}")
            current = int(parents[i])
            out.append(current)
        out.reverse()
        return out

    def nbytes(self) -> int:
        """Bytes held by parent links (the set's own size is not counted; see bench for RSS)."""
        return sum(c.nbytes + p.nbytes for c, p in self._levels) + 8 * (len(self._child) + len(self._parent))

    def observed_collision(self) -> float | None:
        from ..fingerprint import observed_collision_probability

        return observed_collision_probability(list(self._seen))

    def close(self) -> None:
        """Nothing to release (the compact store removes its spill files here)."""

"""The small interfaces behind which the engines keep what they remember, one implementation per
kind, so that a store can be swapped without touching a loop:

* ``LevelStore``: a BFS's visited set *and* parent links, filled a level at a time
  (``compact.CompactVisited``; ``visited.VisitedSet`` is the plain-Python reference it is tested
  against and can replace it);
* ``FingerprintStore``: a visited set alone, batch-shaped (``compact.FingerprintSet``, the parallel
  engine's per-owner set);
* ``ParentLinks``: parent links by discovery index, spilled to disk level by level
  (``compact.ParentStore``, the parallel engine's per-keeper links);
* ``Frontier``: the BFS queue of one level and the next (``LevelQueue``).

Fingerprints cross these interfaces as the signed 64-bit ints ``checker.fingerprint`` produces
(``& MASK64`` gives the unsigned value numpy stores hold).
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from typing import Any, Protocol

import numpy as np


class LevelStore(Protocol):
    def __len__(self) -> int: ...

    def known(self) -> Container[int]:
        """Fingerprints certainly visited (may miss some): the expansion core's early filter."""

    def insert_batch(self, fps: list[int], parents: list[int], room: int | None = None, *,
                     distinct: bool = False) -> tuple[list[int], bool]:
        """Add the new ones (first occurrence wins, in candidate order, at most ``room``);
        (their indices, whether some did not fit). ``distinct``: the caller vouches that ``fps``
        holds no fingerprint twice (a store may then skip its own de-duplication)."""

    def end_level(self) -> None: ...

    def chain(self, fp: int, level: int) -> list[int]:
        """Fingerprints from an initial state to ``fp``, found at ``level``."""

    def observed_collision(self) -> float | None: ...

    def close(self) -> None: ...


class FingerprintStore(Protocol):
    def __len__(self) -> int: ...

    def add_batch(self, fps: np.ndarray) -> np.ndarray: ...

    def add_new(self, fps: np.ndarray) -> None: ...

    def contains_batch(self, fps: np.ndarray) -> np.ndarray: ...

    def values(self) -> np.ndarray: ...


class ParentLinks(Protocol):
    def __len__(self) -> int: ...

    def append_level(self, fps: Any, parents: Any, *, external: bool = False) -> int: ...

    def link(self, index: int) -> tuple[int, int]: ...

    def chain(self, index: int) -> list[int]: ...

    def close(self) -> None: ...


class LevelQueue:
    """The BFS frontier: the current level's states with their references, and the next level
    being filled. Expanded states are released chunk by chunk (traces are rebuilt from
    fingerprints), which lowers the peak of two levels' states held at once."""

    __slots__ = ("expanded", "next_refs", "next_states", "refs", "states")

    def __init__(self, states: list[Any], refs: list[int]) -> None:
        self.states, self.refs = states, refs
        self.next_states: list[Any] = []
        self.next_refs: list[int] = []
        self.expanded = 0  # states[:expanded] have been expanded

    def chunks(self, size: int) -> Any:
        """(start, end) of successive chunks of the current level."""
        for start in range(0, len(self.states), size):
            yield start, min(start + size, len(self.states))

    def take(self, start: int, end: int) -> tuple[Sequence[Any], Sequence[int]]:
        self.expanded = end
        return self.states[start:end], self.refs[start:end]

    def release(self, start: int, end: int) -> None:
        self.states[start:end] = [None] * (end - start)

    def push(self, states: list[Any], refs: list[int]) -> None:
        self.next_states.extend(states)
        self.next_refs.extend(refs)

    def left(self) -> int:
        """States not expanded yet, this level's and the next's (TLC's queue figure)."""
        return len(self.states) - self.expanded + len(self.next_states)

    def advance(self) -> bool:
        """Make the next level current; False when it is empty."""
        self.states, self.refs = self.next_states, self.next_refs
        self.next_states, self.next_refs = [], []
        self.expanded = 0
        return bool(self.states)


class EdgeStore:
    """The explored graph's edges in flat arrays, for analyses that need the whole graph
    (liveness: strongly connected components): parent and child fingerprints (signed 64-bit) and
    the action's index in ``actions`` (its name; a step's parameters are not kept). 18 bytes per
    edge, every successor inside the constraint counted, duplicates and self-loops included."""

    def __init__(self) -> None:
        from array import array

        self.parents = array("q")
        self.children = array("q")
        self.actions = array("h")
        self.names: list[str] = []
        self._index: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.parents)

    def add(self, edges: list[tuple[int, int, Any]]) -> None:
        """Append (parent fingerprint, child fingerprint, step) triples, as ``expand_chunk`` gives."""
        index = self._index
        for parent, child, step in edges:
            action = step[0]
            i = index.get(action)
            if i is None:
                i = index[action] = len(self.names)
                self.names.append(action)
            self.parents.append(parent)
            self.children.append(child)
            self.actions.append(i)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(parents, children) as uint64 and action indices, sharing the buffers."""
        return (np.frombuffer(self.parents, dtype=np.int64).view(np.uint64),
                np.frombuffer(self.children, dtype=np.int64).view(np.uint64),
                np.frombuffer(self.actions, dtype=np.int16))

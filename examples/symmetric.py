"""Symmetric textbook models for symmetry tests and benchmarks.

``OrbitTwoPhase`` is ``TwoPhase`` (TwoPhase.tla) with the resource managers interchangeable, a
fast canonical form and a declared ``Symmetry`` so ``check_symmetry`` can count orbits.
``seeded_bug=True`` lets the TM commit once *any* RM has prepared: a symmetric bug, so both the
full and the reduced space violate ``TCConsistent`` with the same shortest trace.

``FifoMutex`` is a lock handed out in request order: clients wait in a FIFO queue that holds
client *numbers*, so its canonical form must rename references, not just sort slots (what
``checker.symmetry.canonicalize`` is for). ``seeded_bug=True`` lets the head of the queue enter
while another client is critical.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from operator import add

from eoscheck.checker.machine import Machine, Property
from eoscheck.checker.registry import Bound, ModelDef, Switch, SwitchValue, Variant
from eoscheck.checker.symmetry import (
    Permutation,
    Scalarset,
    Symmetry,
    canonicalize,
    permute_slots,
    rename_all,
    rename_mask,
)

from .twophase import PROPERTY_DOCS as TWOPHASE_PROPERTIES
from .twophase import RMS_BOUND, TM_COMMITTED, TM_INIT, TwoPhase

#: bundle code of an RM = 4 * rmState + 2 * (in tmPrepared) + (sent Prepared)
_RM_CODE = (0, 4, 8, 12)


class OrbitTwoPhase(TwoPhase):
    """TwoPhase with interchangeable RMs.

    The canonical form is the sorted tuple of per-RM bundle codes plus the RM-independent
    variables: a *key* that identifies the orbit (equal exactly for states one permutation apart),
    not a state. The engines only hash it, and building it costs two C-level ``map``s and a sort
    (about 3x faster than rebuilding a sorted state). ``representative`` gives the state itself.
    """

    def __init__(self, rms: int = 3, seeded_bug: bool = False, joint_table: bool | None = None):
        super().__init__(rms)
        self.seeded_bug = seeded_bug
        n = rms
        # Each RM's bit contribution to its bundle code, per (tmPrepared, preparedMsgs) pair:
        # one table lookup instead of two when the table is small (4^n entries; 8 MB at n = 8).
        self._joint = n <= 8 if joint_table is None else joint_table
        if self._joint:
            self._bit_code = [tuple(2 * (t >> i & 1) + (m >> i & 1) for i in range(n))
                              for t in range(1 << n) for m in range(1 << n)]
        else:
            self._prep_code = [tuple(2 * (m >> i & 1) for i in range(n)) for m in range(1 << n)]
            self._msg_code = [tuple(m >> i & 1 for i in range(n)) for m in range(1 << n)]
        self.symmetry = Symmetry((Scalarset("rm", n),), self._apply)

    def successors(self, s: tuple) -> Iterator[tuple[tuple, tuple]]:
        if self.seeded_bug:
            n = self.n
            tm, tmp, msgp, abort = s[n], s[n + 1], s[n + 2], s[n + 4]
            if tm == TM_INIT and tmp and tmp != self.all_mask:
                yield ("TMCommit",), s[:n] + (TM_COMMITTED, tmp, msgp, 1, abort)
        yield from super().successors(s)

    def canonical(self, s: tuple) -> tuple:
        n = self.n
        if self._joint:
            codes = sorted(map(add, map(_RM_CODE.__getitem__, s[:n]), self._bit_code[s[n + 1] << n | s[n + 2]]))
        else:
            codes = sorted(map(add, map(add, map(_RM_CODE.__getitem__, s[:n]), self._prep_code[s[n + 1]]),
                               self._msg_code[s[n + 2]]))
        # tmState (0..2), commit and abort flags packed in one element: one tuple slot, not three
        codes.append(s[n] << 2 | s[n + 3] << 1 | s[n + 4])
        return tuple(codes)

    def representative(self, s: tuple) -> tuple:
        """The least state of the orbit under the sort (a state, unlike ``canonical``)."""
        n = self.n
        bundles = sorted((s[i], s[n + 1] >> i & 1, s[n + 2] >> i & 1) for i in range(n))
        return (tuple(b[0] for b in bundles) + (s[n], sum(b[1] << i for i, b in enumerate(bundles)),
                                                 sum(b[2] << i for i, b in enumerate(bundles)),
                                                 s[n + 3], s[n + 4]))

    def _apply(self, s: tuple, perms: tuple[Permutation, ...]) -> tuple:
        (perm,) = perms
        n = self.n
        return (permute_slots(s[:n], perm) + (s[n], rename_mask(s[n + 1], perm),
                                               rename_mask(s[n + 2], perm), s[n + 3], s[n + 4]))


IDLE, WAITING, CRITICAL = range(3)
CLIENT_NAMES = ("idle", "waiting", "critical")


class FifoMutex(Machine):
    """A lock granted in request order. State: (client states, queue of waiting client numbers)."""

    actions: Mapping[str, tuple[str, ...]] = {"Request": ("client",), "Enter": ("client",), "Exit": ("client",)}

    def __init__(self, clients: int = 3, seeded_bug: bool = False):
        self.n = clients
        self.seeded_bug = seeded_bug
        self.symmetry = Symmetry((Scalarset("client", clients),), self._apply)

    def init_states(self) -> Iterator[tuple]:
        yield ((IDLE,) * self.n, ())

    def successors(self, s: tuple) -> Iterator[tuple[tuple, tuple]]:
        clients, queue = s
        free = self.seeded_bug or CRITICAL not in clients
        for c, st in enumerate(clients):
            if st == IDLE:
                yield ("Request", c), (clients[:c] + (WAITING,) + clients[c + 1:], queue + (c,))
            elif st == WAITING and free and queue[0] == c:
                yield ("Enter", c), (clients[:c] + (CRITICAL,) + clients[c + 1:], queue[1:])
            elif st == CRITICAL:
                yield ("Exit", c), (clients[:c] + (IDLE,) + clients[c + 1:], queue)

    def properties(self) -> Mapping[str, Property]:
        return {
            "MutualExclusion": Property("MutualExclusion", "at most one client is critical",
                                        "invariant", lambda s: s[0].count(CRITICAL) <= 1),
            "QueueIsWaiting": Property("QueueIsWaiting", "the queue holds exactly the waiting clients",
                                       "invariant", lambda s: sorted(s[1]) ==
                                       [c for c, st in enumerate(s[0]) if st == WAITING]),
        }

    def _apply(self, s: tuple, perms: tuple[Permutation, ...]) -> tuple:
        (perm,) = perms
        return (permute_slots(s[0], perm), rename_all(s[1], perm))

    def canonical(self, s: tuple) -> tuple:
        clients, queue = s
        # A client's rename-invariant description: its state and its place in the queue. Clients
        # that tie are not queued and nothing else names them, so the sort alone is canonical.
        position = {c: i for i, c in enumerate(queue)}
        keys = [(st, position.get(c, -1)) for c, st in enumerate(clients)]
        return canonicalize(s, keys, lambda state, perm: self._apply(state, (perm,)),
                            keys_complete=True)

    def fields(self, s: tuple) -> dict:
        out: dict = {f"client[{c}].state": CLIENT_NAMES[st] for c, st in enumerate(s[0])}
        out["lock.queue"] = list(s[1])
        return out


def _build_twophase(switches: Mapping[str, SwitchValue], bounds: Mapping[str, int]) -> Machine:
    return OrbitTwoPhase(bounds["rms"], seeded_bug=bool(switches["seeded_bug"]))


def _build_mutex(switches: Mapping[str, SwitchValue], bounds: Mapping[str, int]) -> Machine:
    return FifoMutex(bounds["clients"], seeded_bug=bool(switches["seeded_bug"]))


MODELS: list[ModelDef] = [
    ModelDef(
        name="examples.twophase-sym",
        doc="Two-phase commit with interchangeable RMs: fast canonical form, orbit-checkable",
        variants={"tla": Variant("as in TwoPhase.tla"),
                  "seeded-bug": Variant("the TM commits once any RM has prepared", {"seeded_bug": True})},
        default_variant="tla",
        switches={"seeded_bug": Switch("let the TM commit before every RM has prepared", False)},
        bounds={"rms": RMS_BOUND},
        properties=TWOPHASE_PROPERTIES,
        build=_build_twophase,
    ),
    ModelDef(
        name="examples.fifo-mutex",
        doc="A lock granted in FIFO request order; clients interchangeable (queue renamed)",
        variants={"fifo": Variant("only the head of the queue may enter"),
                  "seeded-bug": Variant("the head of the queue ignores the lock", {"seeded_bug": True})},
        default_variant="fifo",
        switches={"seeded_bug": Switch("let the head of the queue enter while another is critical", False)},
        bounds={"clients": Bound("number of clients", 3, 1, 7)},
        properties={"MutualExclusion": "at most one client is critical",
                    "QueueIsWaiting": "the queue holds exactly the waiting clients"},
        build=_build_mutex,
    ),
]

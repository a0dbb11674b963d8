"""The transaction commit spec (``TCommit.tla``, Lamport), the abstract spec TwoPhase refines.

Only ``rmState`` exists. TLC finds 34 distinct states with 3 RMs. ``Decide(rm)`` has two
disjuncts (commit when every RM is prepared or committed, abort when none has committed); they are
separate actions here so coverage says which one fired. A state in which every RM has committed
or aborted has no successors by design, so it is terminal, not a deadlock.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from eoscheck.checker.machine import Machine, Property

WORKING, PREPARED, COMMITTED, ABORTED = range(4)
RM_NAMES = ("working", "prepared", "committed", "aborted")


class TCommit(Machine):
    actions: Mapping[str, tuple[str, ...]] = {"Prepare": ("rm",), "DecideCommit": ("rm",), "DecideAbort": ("rm",)}

    def __init__(self, rms: int = 3):
        self.n = rms

    def init_states(self) -> Iterator[tuple]:
        yield (WORKING,) * self.n

    def successors(self, s: tuple) -> Iterator[tuple[tuple, tuple]]:
        can_commit = all(x in (PREPARED, COMMITTED) for x in s)
        not_committed = COMMITTED not in s
        for rm, x in enumerate(s):
            if x == WORKING:
                yield ("Prepare", rm), s[:rm] + (PREPARED,) + s[rm + 1:]
            if x == PREPARED and can_commit:
                yield ("DecideCommit", rm), s[:rm] + (COMMITTED,) + s[rm + 1:]
            if x in (WORKING, PREPARED) and not_committed:
                yield ("DecideAbort", rm), s[:rm] + (ABORTED,) + s[rm + 1:]

    def is_terminal(self, s: tuple) -> bool:
        return all(x in (COMMITTED, ABORTED) for x in s)

    def properties(self) -> Mapping[str, Property]:
        return {
            "TCTypeOK": Property("TCTypeOK", "every RM is in one of the four states", "invariant",
                                 lambda s: all(0 <= x <= ABORTED for x in s)),
            "TCConsistent": Property("TCConsistent", "no RM has committed while another has aborted",
                                     "invariant", lambda s: not (COMMITTED in s and ABORTED in s)),
        }

    def fields(self, s: tuple) -> dict:
        return {f"rm[{i}].state": RM_NAMES[x] for i, x in enumerate(s)}

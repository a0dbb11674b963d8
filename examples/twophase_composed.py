"""Two-phase commit (``TwoPhase.tla``) declared with ``checker.compose``: the same spec as
``examples/twophase.py``, written as parts and guarded rules instead of slot arithmetic.

TLA+'s ``msgs`` is a set that only grows: a message, once sent, can be received any number of
times. That is exactly a ``DUPLICATING`` channel, so the TLA+ actions that test ``m \\in msgs``
are receive rules on it. TLC's counts (288 states at 3 RMs; 8,832 distinct, 58,146 generated,
depth 17 at 5) come out unchanged (``tests/test_compose_examples.py``). Under other network
semantics the same declarations give other protocols (``network=`` below): with ``UNORDERED`` a
message is consumed by the one action that receives it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, NamedTuple

from eoscheck.checker.compose import (
    DUPLICATING,
    Actors,
    Channel,
    Composed,
    Network,
    Scalar,
    invariant,
    precondition,
    rule,
)
from eoscheck.checker.symmetry import rename_mask

from .twophase import (
    ABORTED,
    COMMITTED,
    PREPARED,
    RM_NAMES,
    TM_ABORTED,
    TM_COMMITTED,
    TM_INIT,
    TM_NAMES,
    WORKING,
)

#: message kinds (the first field, so any two messages compare)
PREPARED_MSG, COMMIT_MSG, ABORT_MSG = range(3)


class Msg(NamedTuple):
    kind: int
    rm: int  # the sender of a Prepared message; 0 for the broadcasts


COMMIT, ABORT = Msg(COMMIT_MSG, 0), Msg(ABORT_MSG, 0)
_KINDS = ("Prepared", "Commit", "Abort")


class ComposedTwoPhase(Composed):
    #: the chart's lanes: the transaction manager and each resource manager
    chart_parts: ClassVar[Mapping[str, str]] = {"tm_state": "tm", "tm_prepared": "tm", "rm_state": "rm[]"}

    rm_state = Actors(count="rms", init=WORKING, interned=False, show=RM_NAMES.__getitem__,
                      doc="each resource manager's state")
    tm_state = Scalar(init=TM_INIT, doc="the transaction manager's state")
    tm_prepared = Scalar(init=0, doc="the RMs the TM knows to be prepared (a bit set)")
    msgs = Channel(network="network", show=lambda ms: [_KINDS[m.kind] + (f"({m.rm})" if m.kind == PREPARED_MSG
                                                                         else "") for m in ms])

    def __init__(self, rms: int = 3, network: Network = DUPLICATING, seeded_bug: bool = False,
                 memoize: bool = True) -> None:
        self.n = rms
        self.all_mask = (1 << rms) - 1
        #: the TM commits once any RM has prepared (a bug: another may still abort)
        self.seeded_bug = seeded_bug
        super().__init__({"rms": rms, "network": network}, memoize=memoize)

    # --- the transaction manager

    @precondition(lambda self, tm_state, tm_prepared: tm_state == TM_INIT
                  and (tm_prepared != 0 if self.seeded_bug else tm_prepared == self.all_mask))
    @rule("TMCommit", reads=("tm_state", "tm_prepared"), writes=("tm_state",), sends=("msgs",))
    def tm_commit(self) -> dict[str, Any]:
        return {"tm_state": TM_COMMITTED, "msgs": COMMIT}

    @precondition(lambda self, tm_state: tm_state == TM_INIT)
    @rule("TMAbort", reads=("tm_state",), writes=("tm_state",), sends=("msgs",))
    def tm_abort(self) -> dict[str, Any]:
        return {"tm_state": TM_ABORTED, "msgs": ABORT}

    @precondition(lambda self, tm_state: tm_state == TM_INIT)
    @rule("TMRcvPrepared", receive="msgs", match=lambda m: m.kind == PREPARED_MSG, params=("rm",),
          reads=("tm_state", "tm_prepared"), writes=("tm_prepared",))
    def tm_rcv_prepared(self, rm: int, tm_prepared: int) -> dict[str, Any]:
        return {"tm_prepared": tm_prepared | 1 << rm}

    # --- the resource managers

    @precondition(lambda self, rm_state: rm_state == WORKING)
    @rule("RMPrepare", params={"rm": "rm_state"}, reads=("rm_state[rm]",), writes=("rm_state[rm]",),
          sends=("msgs",))
    def rm_prepare(self, rm: int) -> dict[str, Any]:
        return {"rm_state": PREPARED, "msgs": Msg(PREPARED_MSG, rm)}

    @precondition(lambda self, rm_state: rm_state == WORKING)
    @rule("RMChooseToAbort", params={"rm": "rm_state"}, reads=("rm_state[rm]",), writes=("rm_state[rm]",))
    def rm_choose_to_abort(self) -> dict[str, Any]:
        return {"rm_state": ABORTED}

    @rule("RMRcvCommitMsg", receive="msgs", match=lambda m: m.kind == COMMIT_MSG, params={"rm": "rm_state"},
          writes=("rm_state[rm]",))
    def rm_rcv_commit(self) -> dict[str, Any]:
        return {"rm_state": COMMITTED}

    @rule("RMRcvAbortMsg", receive="msgs", match=lambda m: m.kind == ABORT_MSG, params={"rm": "rm_state"},
          writes=("rm_state[rm]",))
    def rm_rcv_abort(self) -> dict[str, Any]:
        return {"rm_state": ABORTED}

    # --- properties

    @invariant("TPTypeOK", reads=("rm_state", "tm_state", "tm_prepared"))
    def type_ok(self, rm_state: tuple[int, ...], tm_state: int, tm_prepared: int) -> bool:
        """every variable holds a value of its type"""
        return (all(WORKING <= x <= ABORTED for x in rm_state) and TM_INIT <= tm_state <= TM_ABORTED
                and 0 <= tm_prepared <= self.all_mask)

    @invariant("TCConsistent", reads=("rm_state",))
    def consistent(self, rm_state: tuple[int, ...]) -> bool:
        """no RM has committed while another has aborted"""
        return not (COMMITTED in rm_state and ABORTED in rm_state)

    def fields(self, state: tuple) -> dict[str, Any]:
        out = super().fields(state)
        out["tm_state"] = TM_NAMES[out["tm_state"]]
        return out


def _rename_prepared(msgs: tuple[Msg, ...], perm: tuple[int, ...]) -> tuple[Msg, ...]:
    return tuple(m._replace(rm=perm[m.rm]) if m.kind == PREPARED_MSG else m for m in msgs)


class SymmetricComposedTwoPhase(ComposedTwoPhase):
    """The RMs interchangeable (TLC's ``SYMMETRY Permutations(RM)``), declared: the RM actors form
    the scalarset ``rm``, and the two other parts that mention RMs say how to rename them."""

    rm_state = Actors(count="rms", init=WORKING, interned=False, show=RM_NAMES.__getitem__, symmetric="rm",
                      doc="each resource manager's state")
    tm_prepared = Scalar(init=0, rename={"rm": rename_mask}, doc="the RMs the TM knows to be prepared (a bit set)")
    msgs = Channel(network="network", rename={"rm": _rename_prepared},
                   show=lambda ms: [_KINDS[m.kind] + (f"({m.rm})" if m.kind == PREPARED_MSG else "") for m in ms])

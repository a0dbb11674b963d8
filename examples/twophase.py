"""Two-phase commit, transcribed from the TLA+ examples' ``TwoPhase.tla`` (Lamport), as an oracle.

TLC's published counts for this spec (no symmetry) are what ``tests/test_oracles.py`` reproduces:
288 distinct states with 3 resource managers, 8,832 distinct / 58,146 generated / depth 17 with 5,
296,448 distinct / 2,744,706 generated / depth 23 with 7.

The TLA+ variables map to one flat tuple of ints (flat tuples are cheap to hash and are not walked
by the cyclic GC):

    (rmState[0], ..., rmState[n-1], tmState, tmPrepared, preparedMsgs, commitMsg, abortMsg)

``tmPrepared`` and ``preparedMsgs`` are bit sets over RMs; the message set ``msgs`` is split into
the per-RM "Prepared" messages and the two broadcast messages, which is all the spec can hold.
Every disjunct of ``TPNext`` yields a successor even when it changes nothing (e.g. an RM receiving
a Commit it already acted on), because TLC counts those among the generated states.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from eoscheck.checker.machine import Machine, Property
from eoscheck.checker.registry import Bound

WORKING, PREPARED, COMMITTED, ABORTED = range(4)
RM_NAMES = ("working", "prepared", "committed", "aborted")
TM_INIT, TM_COMMITTED, TM_ABORTED = range(3)
TM_NAMES = ("init", "committed", "aborted")


class TwoPhase(Machine):
    actions: Mapping[str, tuple[str, ...]] = {
        "TMCommit": (), "TMAbort": (),
        "TMRcvPrepared": ("rm",), "RMPrepare": ("rm",), "RMChooseToAbort": ("rm",),
        "RMRcvCommitMsg": ("rm",), "RMRcvAbortMsg": ("rm",),
    }
    # small non-negative ints only (states, bit sets over at most a few dozen RMs, flags): the
    # domain where ``hash`` is injective (``checker.fingerprint``)
    fingerprint_kind = "hash"

    def __init__(self, rms: int = 3):
        self.n = rms
        self.all_mask = (1 << rms) - 1
        # Indices into the flat state tuple.
        self.TM, self.TMP, self.MSGP, self.COMMIT, self.ABORT = rms, rms + 1, rms + 2, rms + 3, rms + 4

    def init_states(self) -> Iterator[tuple]:
        yield (WORKING,) * self.n + (TM_INIT, 0, 0, 0, 0)

    def successors(self, s: tuple) -> Iterator[tuple[tuple, tuple]]:
        n = self.n
        tm, tmp, msgp, commit, abort = s[n], s[n + 1], s[n + 2], s[n + 3], s[n + 4]
        if tm == TM_INIT:
            if tmp == self.all_mask:
                yield ("TMCommit",), s[:n] + (TM_COMMITTED, tmp, msgp, 1, abort)
            yield ("TMAbort",), s[:n] + (TM_ABORTED, tmp, msgp, commit, 1)
        for rm in range(n):
            bit = 1 << rm
            if tm == TM_INIT and msgp & bit:
                yield ("TMRcvPrepared", rm), s[:n] + (tm, tmp | bit, msgp, commit, abort)
            if s[rm] == WORKING:
                yield ("RMPrepare", rm), s[:rm] + (PREPARED,) + s[rm + 1:n] + (tm, tmp, msgp | bit, commit, abort)
                yield ("RMChooseToAbort", rm), s[:rm] + (ABORTED,) + s[rm + 1:]
            if commit:
                yield ("RMRcvCommitMsg", rm), s[:rm] + (COMMITTED,) + s[rm + 1:]
            if abort:
                yield ("RMRcvAbortMsg", rm), s[:rm] + (ABORTED,) + s[rm + 1:]

    def properties(self) -> Mapping[str, Property]:
        n = self.n

        def type_ok(s: tuple) -> bool:
            return (all(0 <= x <= ABORTED for x in s[:n]) and 0 <= s[n] <= TM_ABORTED
                    and 0 <= s[n + 1] <= self.all_mask and 0 <= s[n + 2] <= self.all_mask
                    and s[n + 3] in (0, 1) and s[n + 4] in (0, 1))

        def consistent(s: tuple) -> bool:
            rms = s[:n]
            return not (COMMITTED in rms and ABORTED in rms)

        return {
            "TPTypeOK": Property("TPTypeOK", "every variable holds a value of its type", "invariant", type_ok),
            "TCConsistent": Property("TCConsistent", "no RM has committed while another has aborted",
                                     "invariant", consistent),
        }

    def fields(self, s: tuple) -> dict:
        n = self.n
        out: dict = {f"rm[{i}].state": RM_NAMES[s[i]] for i in range(n)}
        out["tm.state"] = TM_NAMES[s[n]]
        out["tm.prepared"] = [i for i in range(n) if s[n + 1] >> i & 1]
        msgs = [f"Prepared(rm={i})" for i in range(n) if s[n + 2] >> i & 1]
        if s[n + 3]:
            msgs.append("Commit")
        if s[n + 4]:
            msgs.append("Abort")
        out["msgs"] = msgs
        return out


class SymmetricTwoPhase(TwoPhase):
    """TwoPhase with the RMs declared interchangeable (TLC's SYMMETRY Permutations(RM)).

    The representative sorts the RMs' (rmState, in tmPrepared, sent Prepared) bundles, which is
    the whole of what distinguishes one RM from another in this spec.
    """

    def canonical(self, s: tuple) -> tuple:
        n = self.n
        tmp, msgp = s[n + 1], s[n + 2]
        bundles = sorted((s[i], tmp >> i & 1, msgp >> i & 1) for i in range(n))
        new_tmp = sum(b[1] << i for i, b in enumerate(bundles))
        new_msgp = sum(b[2] << i for i, b in enumerate(bundles))
        return tuple(b[0] for b in bundles) + (s[n], new_tmp, new_msgp, s[n + 3], s[n + 4])


#: what every registered TwoPhase model declares (TwoPhase.tla's size parameter and invariants)
RMS_BOUND = Bound("number of resource managers", 3, 1, 10)
PROPERTY_DOCS = {"TPTypeOK": "every variable holds a value of its type",
                 "TCConsistent": "no RM has committed while another has aborted"}

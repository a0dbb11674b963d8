"""kafka.eos's scheduled completion of a marker's offsets (``delayed_offset_completions``,
``eos_offsets_completion``): the group coordinator's rule, the per-version switch (KAFKA-6917 made it
asynchronous in 2.0.0, KAFKA-17507 made WriteTxnMarkers wait for it in 4.0.0) and what exploration
reaches."""

from __future__ import annotations

from typing import Any

import pytest
from eoscheck.checker.explore import explore
from eoscheck.checker.explore.options import ExploreOptions
from eoscheck.model.group.metadata import NO_COMMIT, CommittedOffset, new_group
from eoscheck.model.group.pending_offsets import (
    defer_txn_offset_completion,
    on_txn_offset_commit_append,
    prepare_txn_offset_commit,
    run_txn_offset_completion,
)
from eoscheck.model.machines.eos import EosMachine, machine
from eoscheck.model.protocol import VARIANTS, decision_doc

PAIR = {"input_records": 2, "transactions": 2, "delayed_offset_completions": 1}


def _commit(group: Any, pid: int, offset: int, at: int) -> Any:
    return on_txn_offset_commit_append(prepare_txn_offset_commit(group, pid, ((0, offset),)), pid, 0, offset, at)


def test_the_scheduled_completion_takes_the_offset_the_producer_id_has_pending_when_it_runs() -> None:
    """The old marker's COMMIT is scheduled; the next transaction's TxnOffsetCommit replaces the pending
    entry; the task commits the new offset (pendingTransactionalOffsetCommits is keyed by producer id)."""
    g = _commit(new_group(1), pid=7, offset=1, at=0)
    g = defer_txn_offset_completion(g, 7, True)
    assert g.offsets == (NO_COMMIT,) and g.completing == ((7, 1),)
    g = _commit(g, pid=7, offset=2, at=2)
    done = run_txn_offset_completion(g, 0)
    assert done.offsets == (CommittedOffset(2, 2),) and done.pending == () and done.completing == ()
    # a scheduled ABORT drops the new transaction's offset instead
    aborted = run_txn_offset_completion(defer_txn_offset_completion(_commit(new_group(1), 7, 2, 2), 7, False), 0)
    assert aborted.offsets == (NO_COMMIT,) and aborted.pending == ()


def test_the_switch_is_on_from_2_0_until_4_0() -> None:
    on = {name for name, v in VARIANTS.items() if v.protocol.txn_offsets_completion_async}
    releases_on = {"kafka-1.0.2-2.3", "kafka-2.4", "kafka-2.4.1", "kafka-2.6", "kafka-2.7-2.8", "kafka-3.0-3.2",
                   "kafka-3.3-3.5", "kafka-3.6-3.7", "kafka-3.8-3.9"}
    assert releases_on <= on
    assert not on & {"kafka-0.11.0.0", "kafka-0.11.0.2", "kafka-1.0.0", "kafka-4.0", "kafka-4.0-leader-add",
                     "kafka-trunk-2026"}
    doc = decision_doc("txn_offsets_completion_async")
    assert "KAFKA-17507" in doc and "KAFKA-6917" in doc


def test_without_the_bound_or_the_switch_the_rules_are_neither_listed_nor_shown() -> None:
    off = machine("kafka-3.8-3.9", input_records=2, transactions=2)
    assert not {"WriteOffsetsMarkerAsync", "CompleteTxnOffsets"} & set(off.actions)
    assert "faults.delayed_offset_completions" not in off.fields(next(iter(off.init_states())))
    fixed = machine("kafka-4.0", **PAIR)
    assert not {"WriteOffsetsMarkerAsync", "CompleteTxnOffsets"} & set(fixed.actions)
    on = machine("kafka-3.8-3.9", **PAIR)
    assert {"WriteOffsetsMarkerAsync", "CompleteTxnOffsets"} <= set(on.actions)


@pytest.mark.parametrize(("variant", "switches", "verdict"),
                         [("kafka-3.8-3.9", {}, {"ExactlyOnce": 22}),
                          ("kafka-2.4.1", {}, {"ExactlyOnce": 22}),
                          ("kafka-3.8-3.9", {"txn_offsets_completion_async": False}, {}),
                          ("kafka-4.0", {}, {})])
def test_kafka_17507_is_the_switch_that_removes_the_early_commit(variant: str, switches: dict[str, Any],
                                                                 verdict: dict[str, int]) -> None:
    """The spec pair's exploration, an older pre-fix release, and 3.9 with the switch alone turned off."""
    base = machine(variant, **PAIR)
    m = EosMachine(VARIANTS[variant].protocol.with_(**switches), base.bounds)
    r = explore(m, ExploreOptions(properties=("ExactlyOnce",)))
    assert {v.property: len(v.trace) for v in r.violations} == verdict
    if verdict:  # the next transaction's offset commit comes between the marker and its completion
        actions = [t.step[0] for t in r.violations[0].trace if t.step is not None]
        marker = actions.index("WriteOffsetsMarkerAsync")
        assert actions.index("CompleteTxnOffsets") == len(actions) - 1
        assert "TxnOffsetCommit" in actions[marker:]
        assert actions[marker:].count("BeginTransaction") == 1


def test_the_scheduled_completion_is_weakly_fair_only_with_the_mechanism() -> None:
    """The scheduler runs every task eventually; the fairness of other configurations is unchanged."""
    def names(m: EosMachine) -> set[str]:
        return {repr(f) for f in m.fairness()}
    on, off = machine("kafka-3.8-3.9", **PAIR), machine("kafka-3.8-3.9", input_records=2, transactions=2)
    assert names(on) - names(off) == {repr(f) for f in on.offsets_completion_fairness()}
    assert len(on.offsets_completion_fairness()) == 1 and off.offsets_completion_fairness() == ()
    r = explore(on, ExploreOptions(properties=(), temporal=("MarkersComplete", "TransactionsComplete"),
                                   check_deadlock=False))
    assert r.verdict == "holds"

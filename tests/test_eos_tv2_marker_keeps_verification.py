"""KAFKA-18654 [1/2] (PR 18720, 4.0.0): a TV2 client's verification entry (``supportsEpochBump``) survives a
marker written at the entry's epoch (``UnifiedLog.updateProducers``' ``isV2NextTransactionStarted``), switch
``Protocol.tv2_marker_keeps_verification``; ``verification.marker_keeps_verification``,
``txn_produce.write_marker``."""

from __future__ import annotations

from typing import Any

import pytest
from eoscheck.checker.compose.testing import reachable_steps
from eoscheck.model import protocol as P
from eoscheck.model.errors import Errors
from eoscheck.model.machines.eos import EosMachine
from eoscheck.model.machines.eos_model import BOUNDS
from eoscheck.model.partition.txn_produce import begin_verified_produce, handle_txn_produce, write_marker
from eoscheck.model.partition.verification import GUARDED, STALE, start_verification
from eoscheck.model.state import ProduceRequest, TxnPartitionState
from eoscheck.model.transactions.codes import TxnResult, TxnState
from eoscheck.model.transactions.markers import TxnMarker
from spec_pairs import check_spec_pair_member

PID = 7
EMPTY = TxnPartitionState((), 0, ())


def _open_then_verify_next(supports_epoch_bump: bool) -> TxnPartitionState:
    """A leader with the producer's transaction open at epoch 0 and a verification started for its next
    transaction's batch at epoch 1 (the TV2 EndTxn bumped it), the request held with its guard."""
    opened = handle_txn_produce(EMPTY, producer_id=PID, epoch=0, seq=0, value=1, timestamp=0, max_seq=2**31 - 1,
                                cache_size=5, unknown_producer="accept", old_duplicate_error=False).partition
    assert opened.log and not opened.verifications
    req = ProduceRequest(client=0, connection=0, record=1, producer_id=PID, epoch=1, seq=0, created=0)
    return begin_verified_produce(opened, req, int(Errors.NONE), 0, supports_epoch_bump=supports_epoch_bump)


def _commit(leader: TxnPartitionState, epoch: int) -> TxnPartitionState:
    error, written = write_marker(leader, TxnMarker(0, PID, epoch, TxnResult.COMMIT, 0), timestamp=0,
                                  check_coordinator_epoch=True)
    assert error == Errors.NONE and written.log[-1].kind != leader.log[-1].kind
    return written


@pytest.mark.parametrize(("supports", "marker_epoch", "kept"), [
    (True, 1, True),  # the next TV2 transaction's entry: 4.0.0 keeps it (testNextTransactionVerificationGuardNotCleared)
    (True, 2, False),  # a marker above the entry's epoch (testEmptyTransactionStillClearsVerificationGuard, TV2)
    (False, 1, False),  # no epoch-bump support (a verify-only entry, or before PR 18720): every marker clears
])
def test_a_marker_keeps_only_a_tv2_entry_at_its_own_epoch(supports: bool, marker_epoch: int, kept: bool) -> None:
    leader = _open_then_verify_next(supports)
    after = _commit(leader, marker_epoch)
    assert bool(after.verifications) == kept
    assert [p.guard for p in after.pending] == [GUARDED if kept else STALE]
    # the held batch is appended after the commit only with its entry kept; otherwise INVALID_TXN_STATE
    item = after.pending[0]
    out = handle_txn_produce(after._replace(pending=()), producer_id=PID, epoch=1, seq=0, value=2, timestamp=0,
                             max_seq=2**31 - 1, cache_size=5, unknown_producer="accept", old_duplicate_error=False,
                             guard=item.guard, ongoing_at_epoch=True)
    assert out.error == (Errors.NONE if kept else Errors.INVALID_TXN_STATE)
    if kept:  # the data batch it guarded clears it, as every transactional batch does
        assert not out.partition.verifications


def test_the_flag_is_taken_at_creation_only() -> None:
    # computeIfAbsent: an update (a higher epoch here) keeps the flag the entry was created with
    created = start_verification((), PID, 3, 0, 0, supports_epoch_bump=False)
    updated = start_verification(created, PID, 0, 1, 0, supports_epoch_bump=True)
    assert [(v.epoch, v.lowest_sequence, v.supports_epoch_bump) for v in updated] == [(1, 0, False)]
    fresh = start_verification((), PID, 0, 1, 0, supports_epoch_bump=True)
    assert fresh[0].supports_epoch_bump


def test_the_switch_is_on_from_4_0_0_and_off_before() -> None:
    on = {name for name, v in P.VARIANTS.items() if v.protocol.tv2_marker_keeps_verification}
    assert {"kafka-4.0", "kafka-4.0-leader-add", "kafka-java-coordinator", "kafka-trunk-2026"} <= on
    assert not on & {"kafka-4.0-dev-2025-01", "kafka-4.0-dev-2024-12", "kafka-4.0-dev-2025-01-28",
                     "kafka-4.0-dev-2025-01-28-leader-add", "kafka-4.0-dev-2025-01-09", "kafka-3.8-3.9",
                     "kafka-3.6-3.7"}


def _machine(variant: str, **switches: Any) -> EosMachine:
    values = {name: b.default for name, b in BOUNDS.items()} | {
        "transactions": 2, "verification_steps": 1, "verification_answers": 1}
    return EosMachine(P.VARIANTS[variant].protocol.with_(**switches), values)


def _spurious_refusal(m: EosMachine) -> bool:
    """A leader refuses a batch INVALID_TXN_STATE while the coordinator has the batch's transaction
    ongoing with the partition in it (what NoSpuriousTxnStateRefusal judges)."""
    for s, step, _ in reachable_steps(m):
        if step[0] == "AppendVerifiedProduce" and step[-1] == Errors.INVALID_TXN_STATE:
            meta = m.view(s).txn[step[2]]
            if meta.state == TxnState.ONGOING and step[1] in meta.partitions:
                return True
    return False


@pytest.mark.parametrize(("variant", "switches", "refused"), [
    ("kafka-4.0-leader-add", {}, False),
    ("kafka-4.0-leader-add", {"tv2_marker_keeps_verification": False}, True),
    # the 4.0 trunk before KAFKA-18575 (KAFKA-14563's epoch-aware leader check, every marker clears): the same
    # refusal
    ("kafka-4.0-dev-2025-01", {}, True),
    # KAFKA-18575's trunk: every marker still clears, but the leader answers CONCURRENT_TRANSACTIONS instead of
    # starting an entry the marker would clear; without that early answer, the refusal again
    ("kafka-4.0-dev-2025-01-28-leader-add", {}, False),
    ("kafka-4.0-dev-2025-01-28-leader-add", {"tv2_leader_concurrent_below_epoch": False}, True),
])
def test_the_keep_or_kafka_18575s_early_answer_removes_the_after_marker_refusal(variant: str, switches: dict[str, Any],
                                                                                refused: bool) -> None:
    assert _spurious_refusal(_machine(variant, **switches)) == refused


@pytest.mark.parametrize(("name", "length"), [
    ("eos-verification-answer-after-marker-tv2-leader-add-clear-on-marker", 21),
    ("eos-verification-answer-after-marker-tv2-leader-add-kafka-4.0", None),
])
def test_the_after_marker_spec_pair(name: str, length: int | None) -> None:
    check_spec_pair_member(name, "NoSpuriousTxnStateRefusal", length)

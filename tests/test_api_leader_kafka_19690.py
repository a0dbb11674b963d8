"""KAFKA-19690 on the partition leader's rules (``model.api.leader``): a Kafka Streams thread stalls past
its transaction timeout; the coordinator aborts with a bumped epoch. When the thread's produce request
reaches the leader while its transaction is still open there, ``maybeStartTransactionVerification``
answers the SENTINEL guard (nothing to verify); the ABORT marker at the bumped epoch lands before the
append, which then sees a transactional batch with no transaction ongoing and no guard. Before the fix
that is INVALID_TXN_STATE (fatal for Streams); after it (``stale_epoch_before_verification``: PRs
20534 / 20577 / 20607 / 20618) the stale epoch is reported first, INVALID_PRODUCER_EPOCH, which the
client aborts on and recovers from.

Observable here only as the produce answer's error code: ``kafka.eos`` makes verify-then-append one
step, so the race (a marker between the leader's check and its append) is not reachable there, and
the Java producer takes both answers as abortable; Streams' fatal handling of INVALID_TXN_STATE, the
bug's symptom, is outside the model. No spec pair, rule tests instead."""

from __future__ import annotations

import pytest
from eoscheck.model.api.leader import (
    APPENDED,
    REJECTED,
    LeaderState,
    MarkerRequest,
    ProduceBatch,
    append_batch,
    append_marker,
    start_replica_append,
    start_verification,
)
from eoscheck.model.api.protocol import PROFILE_TABLE, Protocol, with_eos
from eoscheck.model.errors import Errors
from eoscheck.model.partition.validation import AppendOrigin
from eoscheck.model.transactions.codes import TxnResult

PID = 7


def _open_transaction(protocol: Protocol) -> LeaderState:
    """The producer's first batch at epoch 1 was verified and appended: its transaction is open here."""
    state = start_verification(LeaderState((), 0, verification_enabled=True), PID, 0, 1)
    first = ProduceBatch(PID, 1, 0, 0, transactional=True, verified=True)
    result, state = append_batch(state, first, protocol)
    assert result.result == APPENDED
    return state


def _race(protocol: Protocol) -> tuple[int, LeaderState]:
    """Check (SENTINEL: the transaction is open), then the timeout abort's marker at epoch 2, then the
    append of the stalled producer's next batch at epoch 1 without a guard."""
    state = _open_transaction(protocol)
    assert start_verification(state, PID, 1, 1) == state  # nothing to verify: the SENTINEL guard
    marker = MarkerRequest(PID, 2, int(TxnResult.ABORT), coordinator_epoch=0)
    written, state = append_marker(state, marker, protocol)
    assert written.result == APPENDED
    late = ProduceBatch(PID, 1, 1, 1, origin=AppendOrigin.CLIENT, transactional=True, verified=False)
    result, after = append_batch(state, late, protocol)
    assert result.result == REJECTED and after == state  # refused either way; the log does not move
    return result.error, after


@pytest.mark.parametrize(("fixed", "error"), [(False, Errors.INVALID_TXN_STATE),
                                              (True, Errors.INVALID_PRODUCER_EPOCH)])
def test_a_stale_batch_after_the_abort_marker_is_told_its_epoch_only_with_the_fix(fixed: bool, error: int) -> None:
    protocol = with_eos(PROFILE_TABLE["kafka-3.8-3.9"].protocol, stale_epoch_before_verification=fixed)
    assert _race(protocol)[0] == error


def test_the_fix_leaves_a_batch_of_the_current_epoch_without_a_guard_invalid_txn_state() -> None:
    """The epoch check comes first only for an epoch below the entry's: a batch of the entry's own epoch
    with no transaction ongoing and no guard is still INVALID_TXN_STATE (BRK-UL-11's case)."""
    protocol = PROFILE_TABLE["kafka-later-trunk"].protocol
    assert protocol.eos.stale_epoch_before_verification
    state = _open_transaction(protocol)
    marker = MarkerRequest(PID, 2, int(TxnResult.ABORT), coordinator_epoch=0)
    state = append_marker(state, marker, protocol)[1]
    current = ProduceBatch(PID, 2, 0, 0, transactional=True, verified=False)
    assert append_batch(state, current, protocol)[0].error == Errors.INVALID_TXN_STATE
    # and with a verification's guard it is appended (the usual path after the client's bump)
    verified = start_verification(state, PID, 0, 2)
    assert append_batch(verified, current._replace(verified=True), protocol)[0].result == APPENDED


def test_without_the_race_the_leader_verifies_and_never_reaches_the_check() -> None:
    """The stalled producer's request arriving after the marker starts a verification (no transaction
    open): the coordinator's answer decides, not the append's check, in either version."""
    for fixed in (False, True):
        protocol = with_eos(PROFILE_TABLE["kafka-3.8-3.9"].protocol, stale_epoch_before_verification=fixed)
        state = _open_transaction(protocol)
        state = append_marker(state, MarkerRequest(PID, 2, int(TxnResult.ABORT), coordinator_epoch=0), protocol)[1]
        late = ProduceBatch(PID, 1, 1, 1, transactional=True)
        pending, _ = start_replica_append(state, late, protocol, transactional_id=True)
        assert pending.pending and pending.result is None


def test_only_the_profiles_from_4_1_1_have_the_fix() -> None:
    """KAFKA-19690: PR 20618 (a10c1f3ea1, first tag 4.1.1), PR 20534 (0a483618b9, first tag 4.2.0-rc1); 4.0.1 and
    4.1.0 lack it, and the 3.9 releases after September 2025 (PR 20577) have no profile of their own."""
    on = {name for name, p in PROFILE_TABLE.items() if p.protocol.eos.stale_epoch_before_verification}
    assert on == {"kafka-later-trunk", "kafka-4.2", "kafka-4.1.1"}

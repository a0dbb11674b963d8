"""Conformance of the coordinator's InitProducerId request handling around the shared rule
(kafka-semantics.md §1.2-1.4: pending / PrepareX / Ongoing, validPid before the state switch) and of
the transaction-log persistence on failover (§1.6)."""

from __future__ import annotations

import pytest
from eoscheck.model.coordinator.handler import CoordinatorConfig, handle_init_producer_id
from eoscheck.model.coordinator.txn_log import load_metadata, to_log_value
from eoscheck.model.errors import Errors
from eoscheck.model.state import TxnMetadata
from eoscheck.model.transactions.codes import TxnState

S = TxnState
MAX = 32767
P, PP, N = 41, 17, 900
SHIPPED = CoordinatorConfig(kip360=True, shipped=True, max_epoch=MAX, persist_last_epoch=False,
                            persist_prev_producer_id=False)
PRE_KIP360 = SHIPPED._replace(kip360=False, shipped=False)


def meta(state: S = S.EMPTY, pid: int = P, prev: int = P, epoch: int = 5, last: int = -1,
         failed_fence: bool = False) -> TxnMetadata:
    return TxnMetadata(True, pid, prev, epoch, last, int(state), failed_fence)


def handle(m: TxnMetadata, req: tuple[int, int] = (-1, -1), *, pending: bool = False, cfg=SHIPPED):
    return handle_init_producer_id(m, pending, req[0], req[1], N, cfg)


@pytest.mark.parametrize("state", [S.EMPTY, S.ONGOING, S.COMPLETE_COMMIT])
def test_pending_state_concurrent(state: S) -> None:
    out = handle(meta(state), (P, 5), pending=True)
    assert out.error == Errors.CONCURRENT_TRANSACTIONS and out.transit is None and out.fenced is None


@pytest.mark.parametrize("state", [S.PREPARE_COMMIT, S.PREPARE_ABORT])
def test_prepare_concurrent(state: S) -> None:
    out = handle(meta(state), (P, 5))
    assert out.error == Errors.CONCURRENT_TRANSACTIONS and out.fenced is None


def test_prepare_with_foreign_pid_fenced_first() -> None:
    assert handle(meta(S.PREPARE_COMMIT), (999, 5)).error == Errors.PRODUCER_FENCED


def test_ongoing_new_instance_fences_and_aborts() -> None:
    out = handle(meta(S.ONGOING, epoch=5, last=4))
    assert out.error == Errors.CONCURRENT_TRANSACTIONS and out.transit is None
    f = out.fenced
    assert (f.producer_id, f.epoch, f.last_epoch, f.state) == (P, 6, -1, S.PREPARE_ABORT)
    assert not out.used_new_producer_id


def test_ongoing_same_pid_stale_epoch_still_fences() -> None:
    # validPid only compares the producer id; on Ongoing the coordinator fences whatever the epoch
    out = handle(meta(S.ONGOING, epoch=5), (P, 2))
    assert out.error == Errors.CONCURRENT_TRANSACTIONS and out.fenced.epoch == 6


def test_ongoing_foreign_pid_is_fenced_without_abort() -> None:
    out = handle(meta(S.ONGOING, epoch=5), (999, 5))
    assert out.error == Errors.PRODUCER_FENCED and out.fenced is None


def test_ongoing_previous_pid_with_small_epoch_is_fenced_without_abort() -> None:
    # after a rotation (N, prev P): a zombie of the old id P with epoch 3 must not abort N's transaction
    out = handle(meta(S.ONGOING, pid=N, prev=P, epoch=2), (P, 3))
    assert out.error == Errors.PRODUCER_FENCED and out.fenced is None


def test_ongoing_previous_pid_with_exhausted_epoch_fences() -> None:
    out = handle(meta(S.ONGOING, pid=N, prev=P, epoch=0), (P, MAX - 1))
    assert out.error == Errors.CONCURRENT_TRANSACTIONS and out.fenced.epoch == 1


def test_ongoing_after_failed_fence_does_not_bump_again() -> None:
    out = handle(meta(S.ONGOING, epoch=6, failed_fence=True))
    assert out.fenced.epoch == 6


def test_empty_success_is_an_append_not_an_answer() -> None:
    out = handle(meta(S.COMPLETE_ABORT, epoch=5), (P, 5))
    assert out.error == Errors.NONE and out.fenced is None
    t = out.transit
    assert (t.producer_id, t.epoch, t.last_epoch, t.state) == (P, 6, 5, S.EMPTY)


def test_unknown_tid_uses_a_new_producer_id() -> None:
    missing = TxnMetadata(False, -1, -1, -1, -1, int(S.EMPTY), False)
    out = handle(missing, (P, 5))
    assert out.error == Errors.NONE and out.used_new_producer_id
    assert (out.transit.producer_id, out.transit.epoch) == (N, 0)


def test_pre_kip360_request_fields_ignored() -> None:
    out = handle(meta(S.EMPTY, epoch=5), (P, 1), cfg=PRE_KIP360)
    assert out.error == Errors.NONE and out.transit.epoch == 6


# --- §1.6 persistence ----------------------------------------------------------------------------------

def test_shipped_log_loses_last_epoch_and_previous_pid() -> None:
    m = meta(S.EMPTY, pid=N, prev=P, epoch=0, last=MAX - 1)
    loaded = load_metadata(to_log_value(m, persist_last_epoch=False, persist_prev_producer_id=False))
    assert (loaded.producer_id, loaded.epoch, loaded.state) == (N, 0, S.EMPTY)
    assert (loaded.last_epoch, loaded.prev_producer_id) == (-1, -1)
    assert loaded.has_failed_epoch_fence is False


def test_later_trunk_persists_previous_pid_only() -> None:
    m = meta(S.EMPTY, pid=N, prev=P, epoch=0, last=MAX - 1)
    loaded = load_metadata(to_log_value(m, persist_last_epoch=False, persist_prev_producer_id=True))
    assert (loaded.last_epoch, loaded.prev_producer_id) == (-1, P)


def test_retry_across_failover_is_fenced_as_shipped() -> None:
    # testInitProducerIdWithNoLastProducerData: the bump (P,5) -> (P,6) was written, the answer lost,
    # the coordinator reloaded; the retry (P,5) no longer matches lastProducerEpoch
    m = meta(S.EMPTY, epoch=6, last=5)
    loaded = load_metadata(to_log_value(m, persist_last_epoch=False, persist_prev_producer_id=False))
    assert handle(loaded, (P, 5)).error == Errors.PRODUCER_FENCED
    assert handle(m, (P, 5)).transit.epoch == 6  # without the failover the retry succeeds


def test_retry_after_rotation_across_failover_needs_persisted_previous_pid() -> None:
    m = meta(S.EMPTY, pid=N, prev=P, epoch=0, last=MAX - 1)
    snapshot = load_metadata(to_log_value(m, persist_last_epoch=False, persist_prev_producer_id=False))
    assert handle(snapshot, (P, MAX - 1)).error == Errors.PRODUCER_FENCED
    later = load_metadata(to_log_value(m, persist_last_epoch=False, persist_prev_producer_id=True))
    # validPid passes (previous pid, exhausted epoch) but lastProducerEpoch is -1 after the load
    assert handle(later, (P, MAX - 1)).error == Errors.PRODUCER_FENCED
    designed = load_metadata(to_log_value(m, persist_last_epoch=True, persist_prev_producer_id=True))
    assert handle(designed, (P, MAX - 1)).transit.producer_id == N

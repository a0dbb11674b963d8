"""The coordinator's InitProducerId handling around the shared rule (kafka-semantics.md §1.3, §1.4
rows handled by the caller, §1.6 persistence, §6.1), and the transactional client's reactions."""

from __future__ import annotations

from eoscheck.model.coordinator.handler import CoordinatorConfig, complete_transaction, handle_init_producer_id
from eoscheck.model.coordinator.txn_log import NO_LOG_VALUE, load_metadata, to_log_value
from eoscheck.model.errors import Errors
from eoscheck.model.producer import txn_client as tc
from eoscheck.model.state import INIT_FATAL, INIT_FENCED, INIT_READY, TxnClient, TxnMetadata
from eoscheck.model.transactions.codes import TxnState

SHIPPED = CoordinatorConfig(kip360=True, shipped=True, max_epoch=32767, persist_last_epoch=False,
                            persist_prev_producer_id=False)
DESIGNED = CoordinatorConfig(kip360=True, shipped=False, max_epoch=32767, persist_last_epoch=True,
                             persist_prev_producer_id=True)


def meta(state: TxnState = TxnState.EMPTY, epoch: int = 4, last: int = 3) -> TxnMetadata:
    return TxnMetadata(True, 7, 7, epoch, last, int(state), False)


def test_pending_transition_gets_concurrent_transactions() -> None:
    r = handle_init_producer_id(meta(), True, 7, 4, 100, SHIPPED)
    assert (r.error, r.transit, r.fenced) == (Errors.CONCURRENT_TRANSACTIONS, None, None)


def test_prepare_states_get_concurrent_transactions() -> None:
    for state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
        assert handle_init_producer_id(meta(state), False, -1, -1, 100, SHIPPED).error == Errors.CONCURRENT_TRANSACTIONS


def test_ongoing_transaction_is_fenced_and_aborted() -> None:
    r = handle_init_producer_id(meta(TxnState.ONGOING), False, -1, -1, 100, SHIPPED)
    assert r.error == Errors.CONCURRENT_TRANSACTIONS and r.transit is None
    assert r.fenced is not None and (r.fenced.epoch, r.fenced.last_epoch, r.fenced.state) == (5, -1, TxnState.PREPARE_ABORT)
    # after the markers, CompleteAbort; the retry then bumps once more
    done = complete_transaction(r.fenced)
    assert done.state == TxnState.COMPLETE_ABORT
    again = handle_init_producer_id(done, False, -1, -1, 100, SHIPPED)
    assert again.transit is not None and again.transit.epoch == 6


def test_ongoing_with_foreign_producer_id_is_fenced_without_abort() -> None:
    r = handle_init_producer_id(meta(TxnState.ONGOING), False, 42, 1, 100, SHIPPED)
    assert (r.error, r.fenced) == (Errors.PRODUCER_FENCED, None)


def test_success_is_a_transition_to_empty_and_consumes_a_new_id_only_when_used() -> None:
    r = handle_init_producer_id(meta(TxnState.COMPLETE_COMMIT), False, 7, 4, 100, SHIPPED)
    assert r.error == Errors.NONE and r.transit == TxnMetadata(True, 7, 7, 5, 4, int(TxnState.EMPTY), False)
    assert not r.used_new_producer_id
    fresh = handle_init_producer_id(load_metadata(NO_LOG_VALUE), False, -1, -1, 100, SHIPPED)
    assert fresh.used_new_producer_id and fresh.transit.producer_id == 100


def test_pre_kip360_coordinator_ignores_the_request_fields() -> None:
    cfg = CoordinatorConfig(False, False, 32767, False, False)
    r = handle_init_producer_id(meta(), False, 42, 1, 100, cfg)
    assert r.transit is not None and (r.transit.producer_id, r.transit.epoch) == (7, 5)


def test_shipped_log_drops_last_epoch_and_previous_producer_id() -> None:
    m = TxnMetadata(True, 9, 7, 0, 32766, int(TxnState.EMPTY), True)
    loaded = load_metadata(to_log_value(m, persist_last_epoch=False, persist_prev_producer_id=False))
    assert loaded == TxnMetadata(True, 9, -1, 0, -1, int(TxnState.EMPTY), False)


def test_designed_log_keeps_last_producer_id_and_epoch() -> None:
    m = TxnMetadata(True, 9, 7, 0, 32766, int(TxnState.EMPTY), True)
    loaded = load_metadata(to_log_value(m, persist_last_epoch=True, persist_prev_producer_id=True))
    assert loaded == m._replace(has_failed_epoch_fence=False)


def test_retry_across_failover_shipped_fenced_designed_succeeds() -> None:
    before = meta(epoch=4, last=-1)
    for cfg, expect in ((SHIPPED, Errors.PRODUCER_FENCED), (DESIGNED, Errors.NONE)):
        bump = handle_init_producer_id(before, False, 7, 4, 100, cfg).transit
        assert bump is not None and (bump.epoch, bump.last_epoch) == (5, 4)
        reloaded = load_metadata(to_log_value(bump, persist_last_epoch=cfg.persist_last_epoch,
                                              persist_prev_producer_id=cfg.persist_prev_producer_id))
        retry = handle_init_producer_id(reloaded, False, 7, 4, 100, cfg)
        assert retry.error == expect
        if expect == Errors.NONE:
            assert (retry.transit.producer_id, retry.transit.epoch) == (7, 5)


def test_expired_metadata_is_no_metadata() -> None:
    assert not load_metadata(NO_LOG_VALUE).exists


def test_client_reactions_to_init_producer_id_responses() -> None:
    client = TxnClient(1, -1, -1, 1, 7, 4, 1)
    assert tc.on_init_response(client, Errors.NONE, 7, 5)[:3] == (INIT_READY, 7, 5)
    assert tc.on_init_response(client, Errors.CONCURRENT_TRANSACTIONS, -1, -1) is None
    assert tc.on_init_response(client, Errors.PRODUCER_FENCED, -1, -1).phase == INIT_FENCED
    assert tc.on_init_response(client, Errors.INVALID_PRODUCER_EPOCH, -1, -1).phase == INIT_FENCED
    assert tc.on_init_response(client, Errors.UNKNOWN_SERVER_ERROR, -1, -1).phase == INIT_FATAL


def test_retry_keeps_the_request_fields() -> None:
    client, req = tc.begin_init(TxnClient(2, 7, 4, 3, -1, -1, 1), 0, 7, 4)
    assert client.started == 1  # re-initialising keeps the instance
    _again, req2 = tc.resend(client, 0, new_connection=True)
    assert (req2.producer_id, req2.epoch, req2.attempt) == (7, 4, req.attempt + 1)
    _same, req3 = tc.resend(client, 0, new_connection=False)
    assert req3.attempt == req.attempt


def test_one_transaction_log_record_for_both_machines() -> None:
    from eoscheck.model.state import TxnLogValue
    from eoscheck.model.transactions.metadata import TxnLogRecord, from_log_record, to_log_record

    assert TxnLogRecord is TxnLogValue
    ongoing = TxnMetadata(True, 9, 9, 3, 2, int(TxnState.PREPARE_COMMIT), True, -1, (0, 1))
    # the record keeps the partitions of a PrepareX (markers are re-sent from it after a failover)
    assert load_metadata(to_log_value(ongoing)).partitions == (0, 1)
    assert to_log_record(ongoing) == to_log_value(ongoing, persist_last_epoch=False, persist_prev_producer_id=False)
    assert from_log_record(to_log_record(ongoing)) == ongoing._replace(prev_producer_id=-1, last_epoch=-1,
                                                                      has_failed_epoch_fence=False)
    # an Empty record carries none (valueToBytes writes null)
    assert to_log_value(ongoing._replace(state=int(TxnState.EMPTY))).partitions == ()


def test_ongoing_fence_is_the_transactions_rule() -> None:
    # one rule in one place: the handler's Ongoing branch is transactions.timeout's fence + abort
    from eoscheck.model.transactions.timeout import init_producer_id_on_ongoing

    for failed_fence in (False, True):
        m = meta(TxnState.ONGOING)._replace(prev_producer_id=3, has_failed_epoch_fence=failed_fence)
        rule = init_producer_id_on_ongoing(m, max_epoch=SHIPPED.max_epoch)
        shipped = handle_init_producer_id(m, False, -1, -1, 100, SHIPPED)
        assert (shipped.error, shipped.fenced) == (rule.error, rule.meta)
        designed = handle_init_producer_id(m, False, -1, -1, 100, DESIGNED)
        # the KIP's design keeps previousProducerId across the transition
        assert designed.fenced == rule.meta._replace(prev_producer_id=3)


def test_complete_transaction_needs_every_marker() -> None:
    import pytest

    prepared = meta(TxnState.PREPARE_COMMIT)._replace(partitions=(0,))
    with pytest.raises(ValueError):
        complete_transaction(prepared)
    done = complete_transaction(prepared._replace(partitions=(), prev_producer_id=3), shipped=False)
    assert (done.state, done.prev_producer_id) == (TxnState.COMPLETE_COMMIT, 3)

"""Conformance of the idempotent producer client with kafka-semantics.md §2.5-2.7: sequence
assignment at drain time, drain gating, canRetry / handleFailedBatch per client version, the
KIP-360 local epoch bump, and the pre-KIP-360 sequence restart."""

from __future__ import annotations

import pytest
from eoscheck.model.errors import Errors
from eoscheck.model.producer import client as cl
from eoscheck.model.producer.config import ClientConfig
from eoscheck.model.state import INFLIGHT, QUEUED, RETRY, ProduceResponse

PID = 7
INT_MAX = 2**31 - 1


def cfg(version: str = "kip360", bump: str = "resequence_inflight", max_in_flight: int = 5,
        delivery_timeout: int = 100, max_epoch: int = 32767) -> ClientConfig:
    return ClientConfig(version, bump, max_in_flight, delivery_timeout, INT_MAX, max_epoch)


def with_inflight(n: int, c: ClientConfig, sent: int | None = None):
    client = cl.new_client(PID)
    for _ in range(sent if sent is not None else n):
        client = cl.send(client, 0)
    reqs = []
    for _ in range(n):
        drained = cl.drain(client, 0, 0, c)
        assert drained is not None
        client, req = drained
        reqs.append(req)
    return client, reqs


def resp(record: int, error: int, base_offset: int = -1, lso: int = 0, connection: int = 0) -> ProduceResponse:
    return ProduceResponse(0, connection, record, int(error), base_offset, lso)


def ack(client, record: int, offset: int, c: ClientConfig):
    return cl.handle_produce_response(client, resp(record, Errors.NONE, offset), 0, c).client


def is_unresolved(client) -> bool:
    """The partition has an unresolved sequence (a flag, or the sequence after the expired batch; -1: none)."""
    return client.unresolved not in (False, -1)


def batch(client, record: int):
    return next(b for b in client.batches if b.record == record)


# --- §2.5 sequence assignment and drain gating ----------------------------------------------------------

def test_sequence_assigned_at_drain_not_send() -> None:
    client = cl.send(cl.new_client(PID), 0)
    assert client.batches[0].seq == -1 and client.next_seq == 0
    client, req = cl.drain(client, 0, 0, cfg())
    assert (req.seq, req.epoch, req.producer_id) == (0, 0, PID)
    assert client.next_seq == 1


def test_max_in_flight_bounds_drain() -> None:
    c = cfg(max_in_flight=2)
    client, _ = with_inflight(2, c, sent=3)
    assert cl.drain(client, 0, 0, c) is None


def test_retry_keeps_original_pid_epoch_sequence() -> None:
    c = cfg()
    client, reqs = with_inflight(2, c)
    client = cl.handle_produce_response(client, resp(0, Errors.NOT_LEADER_OR_FOLLOWER), 0, c).client
    assert batch(client, 0).status == RETRY
    client, again = cl.drain(client, 0, 0, c)
    assert (again.record, again.seq, again.epoch, again.producer_id) == (0, reqs[0].seq, reqs[0].epoch, PID)
    assert client.next_seq == 2  # a retry does not consume a sequence


def test_retried_batch_drained_only_if_first_in_flight() -> None:
    c = cfg()
    client, _ = with_inflight(2, c)
    client = cl.handle_produce_response(client, resp(1, Errors.NOT_LEADER_OR_FOLLOWER), 0, c).client
    assert cl.drain(client, 0, 0, c) is None  # record 0 (lower sequence) is still in flight


def test_new_batch_waits_behind_retry() -> None:
    c = cfg()
    client, _ = with_inflight(1, c, sent=2)
    client = cl.handle_produce_response(client, resp(0, Errors.REQUEST_TIMED_OUT), 0, c).client
    client, req = cl.drain(client, 0, 0, c)
    assert req.record == 0  # the retry (at the head of the deque) goes before the new batch


def test_duplicate_sequence_number_is_success() -> None:
    c = cfg()
    client, _ = with_inflight(1, c)
    out = cl.handle_produce_response(client, resp(0, Errors.DUPLICATE_SEQUENCE_NUMBER), 0, c)
    assert out.client.acked & 1 and not out.client.batches


def test_retry_stops_at_delivery_timeout() -> None:
    c = cfg(delivery_timeout=5)
    client, _ = with_inflight(1, c)
    out = cl.handle_produce_response(client, resp(0, Errors.NOT_LEADER_OR_FOLLOWER), 5, c)
    assert out.client.failed & 1 and not out.client.batches


# --- §2.6 KIP-360 client (trunk) ------------------------------------------------------------------------

def test_unknown_pid_without_log_start_offset_just_retries() -> None:
    c = cfg()
    client, _ = with_inflight(1, c)
    out = cl.handle_produce_response(client, resp(0, Errors.UNKNOWN_PRODUCER_ID, lso=-1), 0, c)
    assert batch(out.client, 0).status == RETRY and not out.client.epoch_bump_required


@pytest.mark.parametrize("last_acked_offset_below_lso", [True, False])
def test_unknown_pid_idempotent_requests_bump_and_retries(last_acked_offset_below_lso: bool) -> None:
    c = cfg()
    client, _ = with_inflight(2, c, sent=2)
    client = ack(client, 0, 4, c)
    lso = 9 if last_acked_offset_below_lso else 2
    out = cl.handle_produce_response(client, resp(1, Errors.UNKNOWN_PRODUCER_ID, lso=lso), 0, c)
    assert out.client.epoch_bump_required
    assert batch(out.client, 1).status == RETRY and not out.client.failed


def test_out_of_order_for_a_batch_that_is_not_next_retries_without_bump() -> None:
    c = cfg()
    client, _ = with_inflight(2, c)
    # record 1 (seq 1) answered OOS while seq 0 is not yet acked: lastAcked = -1, 1 != 0
    out = cl.handle_produce_response(client, resp(1, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), 0, c)
    assert batch(out.client, 1).status == RETRY
    assert not out.client.epoch_bump_required and not out.client.fatal


def test_out_of_order_for_the_next_batch_requests_bump_and_retries() -> None:
    c = cfg()
    client, _ = with_inflight(1, c)
    out = cl.handle_produce_response(client, resp(0, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), 0, c)
    assert out.client.epoch_bump_required
    assert batch(out.client, 0).status == RETRY


def test_invalid_producer_epoch_fails_batch_and_bumps() -> None:
    c = cfg()
    client, _ = with_inflight(1, c)
    out = cl.handle_produce_response(client, resp(0, Errors.INVALID_PRODUCER_EPOCH), 0, c)
    assert out.client.failed & 1 and out.client.epoch_bump_required and not out.client.fatal


def test_bump_resequences_in_flight_batches_from_zero_under_new_epoch() -> None:
    c = cfg()
    client, _ = with_inflight(3, c, sent=3)
    client = ack(client, 0, 0, c)
    client = client._replace(batches=tuple(b._replace(status=RETRY) for b in client.batches))
    client = client._replace(epoch_bump_required=True)
    bumped = cl.bump_epoch(client, c)
    assert bumped.epoch == 1 and bumped.producer_id == PID
    assert [(b.record, b.epoch, b.seq, b.sequence_reset) for b in bumped.batches] == [(1, 1, 0, True), (2, 1, 1, True)]
    assert bumped.next_seq == 2 and not bumped.epoch_bump_required
    assert bumped.last_acked_seq == -1


def test_bump_at_short_max_resets_producer_id() -> None:
    c = cfg(max_epoch=32767)
    client = cl.new_client(PID)._replace(epoch=32767, epoch_bump_required=True)
    bumped = cl.bump_epoch(client, c)
    assert bumped.producer_id == -1 and bumped.next_seq == 0


def test_kip_designed_bump_fails_sequenced_batches_instead_of_resequencing() -> None:
    # KIP-360 text: "we will fail all subsequent batches for that partition which have been assigned a sequence"
    c = cfg(bump="fail_inflight")
    client, _ = with_inflight(2, c, sent=3)
    out = cl.handle_produce_response(client, resp(0, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), 0, c)
    assert out.client.failed == 0b011
    assert [b.record for b in out.client.batches] == [2] and out.client.batches[0].status == QUEUED


def _two_in_retry(c: ClientConfig):
    """r0 (seq 0) and r1 (seq 1) went out, the connection closed: both wait to be retried; r2 is queued."""
    client, _ = with_inflight(2, c, sent=3)
    return cl.connection_closed(client)


# KIP-360, "simplified error handling": "1. Assignment of the epoch/sequence number to a record batch
# is permanent ... 2. When we encounter a fatal error for a batch, we will fail all subsequent batches
# for that partition which have been assigned a sequence number." A batch that expires has failed for
# good, so the rule holds for expiry too (review finding 7): without it the later batch was retried with
# its permanent sequence behind a possible hole and came back OUT_OF_ORDER_SEQUENCE_NUMBER.

def test_kip_designed_expiry_in_retry_fails_later_sequenced_batches_and_bumps() -> None:
    c = cfg(bump="fail_inflight", delivery_timeout=1)
    client = cl.expire_batch(_two_in_retry(c), 0, c)
    assert client.failed == 0b011 and not is_unresolved(client) and client.epoch_bump_required
    assert [(b.record, b.status) for b in client.batches] == [(2, QUEUED)]
    client = cl.bump_epoch(client, c)
    _, req = cl.drain(client, 0, 0, c)
    assert (req.record, req.epoch, req.seq) == (2, 1, 0)  # the queued batch starts the new epoch at 0


def test_kip_shipped_expiry_in_retry_leaves_the_sequence_unresolved_and_keeps_later_batches() -> None:
    c = cfg(delivery_timeout=1)
    client = cl.expire_batch(_two_in_retry(c), 0, c)
    assert client.failed == 0b001 and client.unresolved == 1 and not client.epoch_bump_required
    assert [(b.record, b.status, b.seq) for b in client.batches] == [(1, RETRY, 1), (2, QUEUED, -1)]


def test_kip_designed_in_flight_expiry_fails_later_sequenced_batches() -> None:
    c = cfg(bump="fail_inflight", delivery_timeout=1)
    client, _ = with_inflight(2, c, sent=3)
    client = cl.expire_in_flight_batch(client, 0, c)  # a first attempt: shipped would leave no trace
    assert client.failed == 0b011 and client.epoch_bump_required and not is_unresolved(client)
    shipped = cl.expire_in_flight_batch(with_inflight(2, cfg(delivery_timeout=1), sent=3)[0], 0, cfg(delivery_timeout=1))
    assert shipped.failed == 0b001 and not shipped.epoch_bump_required and [b.record for b in shipped.batches] == [1, 2]


def test_kip_designed_retriable_answer_past_the_delivery_timeout_fails_later_batches() -> None:
    c = cfg(bump="fail_inflight", delivery_timeout=1)
    client, _ = with_inflight(2, c, sent=3)
    out = cl.handle_produce_response(client, resp(0, Errors.NOT_ENOUGH_REPLICAS), 1, c)
    assert out.outcome == cl.FAILED and out.client.failed == 0b011 and out.client.epoch_bump_required
    assert not is_unresolved(out.client)
    shipped = cl.handle_produce_response(with_inflight(2, cfg(delivery_timeout=1), sent=3)[0],
                                         resp(0, Errors.NOT_ENOUGH_REPLICAS), 1, cfg(delivery_timeout=1))
    assert shipped.outcome == cl.FAILED and shipped.client.failed == 0b001 and shipped.client.unresolved == 1


def test_kip_designed_non_retriable_error_fails_later_sequenced_batches() -> None:
    c = cfg(bump="fail_inflight")
    client, _ = with_inflight(2, c, sent=3)
    out = cl.handle_produce_response(client, resp(0, Errors.INVALID_PRODUCER_EPOCH), 0, c)
    assert out.outcome == cl.FAILED and out.client.failed == 0b011 and out.client.epoch_bump_required
    shipped = cl.handle_produce_response(with_inflight(2, cfg(), sent=3)[0], resp(0, Errors.INVALID_PRODUCER_EPOCH), 0, cfg())
    assert shipped.client.failed == 0b001 and [b.record for b in shipped.client.batches] == [1, 2]


def test_kip_designed_expiry_of_a_later_batch_keeps_the_earlier_ones() -> None:
    # "subsequent" batches only: r0 stays in retry when r1 fails
    c = cfg(bump="fail_inflight", delivery_timeout=1)
    client = cl.expire_batch(_two_in_retry(c), 1, c)
    assert client.failed == 0b010 and [(b.record, b.status) for b in client.batches] == [(0, RETRY), (2, QUEUED)]


def test_unresolved_partition_blocks_new_batches_then_bumps_if_gap() -> None:
    c = cfg(delivery_timeout=3)
    client, _ = with_inflight(1, c, sent=2)
    # the sent batch expires: unresolved; nothing acked so next (1) - lastAcked (-1) != 1
    client = cl.expire_batch(client, 0, c)
    assert is_unresolved(client)
    assert cl.drain(client, 0, 0, c) is None
    resolved = cl.resolve_sequences(client, c)
    assert resolved.epoch_bump_required and not is_unresolved(resolved)


# --- §2.7 pre-KIP-360 client ------------------------------------------------------------------------

def test_pre_kip360_unknown_pid_after_retention_restarts_sequences_same_epoch() -> None:
    c = cfg("pre-kip360")
    client, _ = with_inflight(3, c, sent=3)
    client = ack(client, 0, 0, c)  # lastAckedOffset 0 < logStartOffset 5
    out = cl.handle_produce_response(client, resp(1, Errors.UNKNOWN_PRODUCER_ID, lso=5), 0, c)
    assert (out.client.producer_id, out.client.epoch) == (PID, 0)
    assert [(b.record, b.seq, b.sequence_reset) for b in out.client.batches] == [(1, 0, True), (2, 1, True)]
    assert out.client.next_seq == 2
    assert not out.client.failed


def test_pre_kip360_restart_clears_last_acked_sequence() -> None:
    c = cfg("pre-kip360")
    client, _ = with_inflight(3, c, sent=3)
    client = ack(client, 0, 0, c)
    out = cl.handle_produce_response(client, resp(1, Errors.UNKNOWN_PRODUCER_ID, lso=5), 0, c)
    assert out.client.last_acked_seq == -1


def test_pre_kip360_after_restart_oos_of_next_batch_resets_pid() -> None:
    # records 0-2 acked (seq 0-2); 3, 4 in flight; retention: restart 3 -> seq 0, 4 -> seq 1 (reset);
    # both acked; record 5 is drained with seq 2 (not reset) and is the next batch (lastAcked 1), so
    # OUT_OF_ORDER for it is not retriable and the idempotent producer resets its id (§2.7)
    c = cfg("pre-kip360")
    client, _ = with_inflight(5, c, sent=5)
    for r in range(3):
        client = ack(client, r, r, c)
    client = cl.handle_produce_response(client, resp(3, Errors.UNKNOWN_PRODUCER_ID, lso=5), 0, c).client
    client = client._replace(batches=tuple(b._replace(status=INFLIGHT) for b in client.batches))
    client = ack(client, 3, 5, c)
    client = ack(client, 4, 6, c)
    client, req = cl.drain(cl.send(client, 0), 0, 0, c)
    assert (req.record, req.seq) == (5, 2)
    out = cl.handle_produce_response(client, resp(5, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, lso=5), 0, c)
    assert out.client.producer_id == -1


def test_pre_kip360_unknown_pid_without_lso_retries() -> None:
    c = cfg("pre-kip360")
    client, _ = with_inflight(1, c)
    out = cl.handle_produce_response(client, resp(0, Errors.UNKNOWN_PRODUCER_ID, lso=-1), 0, c)
    assert batch(out.client, 0).status == RETRY


def test_pre_kip360_unknown_pid_not_retention_fails_batch() -> None:
    c = cfg("pre-kip360")
    client, _ = with_inflight(2, c, sent=2)
    client = ack(client, 0, 7, c)  # lastAckedOffset 7 >= logStartOffset 5: real data loss
    out = cl.handle_produce_response(client, resp(1, Errors.UNKNOWN_PRODUCER_ID, lso=5), 0, c)
    assert out.client.failed & 0b10


def test_pre_kip360_unknown_pid_not_retention_resets_producer_id() -> None:
    # UnknownProducerIdException is an OutOfOrderSequenceException: resetProducerId() (2.4
    # TransactionManager.handleFailedBatch; fidelity audit B2)
    c = cfg("pre-kip360")
    client, _ = with_inflight(2, c, sent=3)
    client = ack(client, 0, 7, c)
    out = cl.handle_produce_response(client, resp(1, Errors.UNKNOWN_PRODUCER_ID, lso=5), 0, c)
    assert out.client.producer_id == -1 and out.outcome == cl.RAISED_OUT_OF_ORDER


def test_pre_kip360_failed_batch_shifts_later_sequences_down() -> None:
    # §2.6 adjustSequencesDueToFailedBatch (removed by KIP-360): later in-flight batches move down by the
    # failed batch's record count, are marked reset, and the producer id and epoch stay
    c = cfg("pre-kip360")
    client, _ = with_inflight(3, c, sent=3)
    client = ack(client, 0, 7, c)
    out = cl.handle_produce_response(client, resp(1, Errors.INVALID_PRODUCER_EPOCH, lso=5), 0, c)
    assert (out.client.producer_id, out.client.epoch) == (PID, 0)
    assert out.client.failed & 0b10
    assert [(b.record, b.seq, b.sequence_reset) for b in out.client.batches] == [(2, 1, True)]
    assert out.client.next_seq == 2


def test_pre_kip360_oos_next_batch_resets_producer_id() -> None:
    c = cfg("pre-kip360")
    client, _ = with_inflight(1, c)
    out = cl.handle_produce_response(client, resp(0, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), 0, c)
    assert out.client.producer_id == -1 and out.client.failed & 1


def test_pre_kip360_oos_not_next_retries() -> None:
    c = cfg("pre-kip360")
    client, _ = with_inflight(2, c)
    out = cl.handle_produce_response(client, resp(1, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), 0, c)
    assert batch(out.client, 1).status == RETRY and out.client.producer_id == PID


def test_011_out_of_order_resets_the_producer_id() -> None:
    # 0.11.0.0 Sender.failBatch: OutOfOrderSequenceException -> resetProducerId() (fidelity audit C4)
    c = cfg("0.11", max_in_flight=1)
    client, _ = with_inflight(1, c)
    out = cl.handle_produce_response(client, resp(0, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), 0, c)
    assert not out.client.fatal and out.client.producer_id == -1 and out.outcome == cl.RAISED_OUT_OF_ORDER


# --- §1.8 idempotent InitProducerId ---------------------------------------------------------------------

def test_idempotent_init_gives_fresh_pid_epoch_0_and_sequences_from_0() -> None:
    c = cfg("pre-kip360")
    client, _ = with_inflight(1, c)
    client = cl.handle_produce_response(client, resp(0, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), 0, c).client
    assert client.producer_id == -1
    client = cl.init_producer_id(client, 55)
    assert (client.producer_id, client.epoch, client.next_seq, client.last_acked_seq) == (55, 0, 0, -1)


def test_oos_while_unresolved_not_the_next_after_unresolved_point_retries_without_bump() -> None:
    # §2.6: with an unresolved partition, OUT_OF_ORDER requests the bump only for "the next batch after
    # the unresolved point"; any other batch is retried while the sequence resolves
    c = cfg(delivery_timeout=3)
    client, _ = with_inflight(3, c, sent=3)
    client = client._replace(batches=(client.batches[0]._replace(status=RETRY),) + client.batches[1:])
    client = cl.expire_batch(client, 0, c)  # seq 0 expired after being sent: unresolved at seq 1
    out = cl.handle_produce_response(client, resp(2, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), 0, c)
    assert batch(out.client, 2).status == RETRY and not out.client.epoch_bump_required
    out = cl.handle_produce_response(client, resp(1, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), 0, c)
    assert out.client.epoch_bump_required

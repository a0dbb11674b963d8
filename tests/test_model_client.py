"""The idempotent producer client's handling (kafka-semantics.md §2.5-§2.7), per version."""

from __future__ import annotations

from eoscheck.model.errors import Errors
from eoscheck.model.producer import client as cl
from eoscheck.model.producer.config import ClientConfig
from eoscheck.model.state import INFLIGHT, QUEUED, RETRY, ProduceResponse


def cfg(version: str = "kip360", bump: str = "resequence_inflight", mif: int = 5, dt: int = 10) -> ClientConfig:
    return ClientConfig(version, bump, mif, dt, max_seq=2**31 - 1, max_epoch=32767)


def sent_client(n: int, c: ClientConfig, acked_prefix: int = 0):
    """A client with ``n`` batches drained (records acked_prefix..), after ``acked_prefix`` acks."""
    client = cl.new_client(7)
    for r in range(acked_prefix):
        client = cl.send(client, 0)
        client, _ = cl.drain(client, 0, 0, c)
        client, _ = cl.handle_produce_response(client, ProduceResponse(0, 0, r, Errors.NONE, r, 0), 0, c)
    for _ in range(n):
        client = cl.send(client, 0)
        client, _ = cl.drain(client, 0, 0, c)
    return client


def resp(record: int, error: int, offset: int = -1, lso: int = 0) -> ProduceResponse:
    return ProduceResponse(0, 0, record, error, offset, lso)


def test_sequences_assigned_at_drain_in_order_and_kept_on_retry() -> None:
    c = cfg()
    client = sent_client(2, c)
    assert [(b.record, b.seq, b.status) for b in client.batches] == [(0, 0, INFLIGHT), (1, 1, INFLIGHT)]
    client = cl.connection_closed(client)
    assert all(b.status == RETRY for b in client.batches)
    client, req = cl.drain(client, 0, 0, c)
    assert (req.record, req.seq) == (0, 0)
    assert cl.drain(client, 0, 0, c) is None  # only the first in-flight batch is retried


def test_in_flight_window_is_bounded() -> None:
    c = cfg(mif=2)
    client = sent_client(2, c)
    client = cl.send(client, 0)
    assert cl.drain(client, 0, 0, c) is None


def test_ack_updates_last_acked_sequence_and_offset() -> None:
    c = cfg()
    client, out = cl.handle_produce_response(sent_client(1, c), resp(0, Errors.NONE, 4), 0, c)
    assert out == cl.ACKED and (client.last_acked_seq, client.last_acked_offset, client.acked) == (0, 4, 1)


def test_retriable_error_retries_until_delivery_timeout() -> None:
    c = cfg(dt=2)
    client = sent_client(1, c)
    again, out = cl.handle_produce_response(client, resp(0, Errors.NOT_LEADER_OR_FOLLOWER), 1, c)
    assert out == cl.RETRIED and again.batches[0].status == RETRY
    late, out = cl.handle_produce_response(client, resp(0, Errors.NOT_LEADER_OR_FOLLOWER), 2, c)
    assert out == cl.FAILED and late.failed == 1 and late.unresolved == 1  # the sequence after the failed one


def test_pre_kip360_unknown_producer_id_resets_sequence_under_same_epoch() -> None:
    c = cfg("pre-kip360")
    client = sent_client(2, c, acked_prefix=1)  # record 0 acked at offset 0; records 1, 2 in flight
    client, out = cl.handle_produce_response(client, resp(1, Errors.UNKNOWN_PRODUCER_ID, lso=3), 0, c)
    assert out == cl.RETRIED
    assert [(b.record, b.seq, b.epoch, b.sequence_reset) for b in client.batches] == [(1, 0, 0, True), (2, 1, 0, True)]
    assert client.next_seq == 2


def test_pre_kip360_unknown_producer_id_without_retention_is_raised_and_resets_the_id() -> None:
    # audit B2: UnknownProducerIdException extends OutOfOrderSequenceException -> resetProducerId()
    c = cfg("pre-kip360")
    client = sent_client(2, c, acked_prefix=1)  # last acked offset 0, log start offset 0: not retention
    client, out = cl.handle_produce_response(client, resp(1, Errors.UNKNOWN_PRODUCER_ID, lso=0), 0, c)
    assert out == cl.RAISED_OUT_OF_ORDER and client.producer_id == -1 and client.failed == 0b10
    # record 2's request is still on the wire under the old id (audit C5)
    assert [(b.record, b.status, b.producer_id) for b in client.batches] == [(2, INFLIGHT, 7)]


def test_pre_kip360_out_of_order_for_next_batch_is_raised_and_resets_the_id() -> None:
    c = cfg("pre-kip360")
    client = sent_client(2, c, acked_prefix=1)
    client, out = cl.handle_produce_response(client, resp(1, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), 0, c)
    assert out == cl.RAISED_OUT_OF_ORDER and client.producer_id == -1 and client.failed == 0b10


def test_pre_kip360_answers_for_the_reset_producer_id_settle_their_batches() -> None:
    # audit C5 (2.4 Sender.completeBatch): after resetProducerId a written old-id batch is still
    # acknowledged; a retriable answer fails it with a synthetic OutOfOrderSequenceException
    c = cfg("pre-kip360")
    client = sent_client(2, c, acked_prefix=1)
    client, _ = cl.handle_produce_response(client, resp(1, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), 0, c)
    acked, out = cl.handle_produce_response(client, resp(2, Errors.NONE, offset=5), 0, c)
    assert out == cl.ACKED and acked.acked & 0b100 and not acked.batches and acked.last_acked_offset == client.last_acked_offset
    failed, out = cl.handle_produce_response(client, resp(2, Errors.NOT_ENOUGH_REPLICAS), 0, c)
    assert out == cl.RAISED_OUT_OF_ORDER and failed.failed & 0b100 and not failed.batches
    closed = cl.connection_closed(client)
    assert closed.failed & 0b100 and not closed.batches


def test_out_of_order_for_a_later_batch_is_retried() -> None:
    # the earlier batch failed; this one succeeds once that one is retried
    for version in ("pre-kip360", "kip360"):
        c = cfg(version)
        client = sent_client(2, c, acked_prefix=1)
        client, out = cl.handle_produce_response(client, resp(2, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), 0, c)
        assert out == cl.RETRIED


def test_0_11_out_of_order_is_raised_and_resets_the_producer_id() -> None:
    # audit C4: 0.11.0 Sender.failBatch resets the producer id; the producer is not stopped
    c = cfg("0.11", mif=1)
    client, out = cl.handle_produce_response(sent_client(1, c), resp(0, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), 0, c)
    assert out == cl.RAISED_OUT_OF_ORDER and not client.fatal and client.producer_id == -1 and client.failed == 1


def test_kip360_shipped_bumps_epoch_and_rewrites_in_flight_sequences() -> None:
    c = cfg("kip360", "resequence_inflight")
    client = sent_client(2, c, acked_prefix=1)
    client, out = cl.handle_produce_response(client, resp(1, Errors.UNKNOWN_PRODUCER_ID, lso=3), 0, c)
    assert out == cl.RETRIED and client.epoch_bump_required
    assert cl.drain(client, 0, 0, c) is None  # nothing drains until the bump
    client = cl.connection_closed(client)
    client = cl.bump_epoch(client, c)
    assert client.epoch == 1 and client.last_acked_seq == -1
    assert [(b.record, b.epoch, b.seq) for b in client.batches] == [(1, 1, 0), (2, 1, 1)]


def test_kip360_designed_fails_the_batch_and_later_sequenced_ones() -> None:
    c = cfg("kip360", "fail_inflight")
    client = sent_client(2, c, acked_prefix=1)
    client, out = cl.handle_produce_response(client, resp(1, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), 0, c)
    assert out == cl.RAISED_OUT_OF_ORDER and client.failed == 0b110 and not client.batches
    client = cl.bump_epoch(client, c)
    assert (client.epoch, client.next_seq) == (1, 0)


def test_idempotent_bump_at_max_epoch_resets_the_producer_id() -> None:
    c = ClientConfig("kip360", "resequence_inflight", 5, 10, 2**31 - 1, max_epoch=3)
    client = cl.new_client(7)._replace(epoch=3, epoch_bump_required=True)
    client = cl.bump_epoch(client, c)
    assert (client.producer_id, client.epoch) == (-1, -1)
    assert cl.init_producer_id(client, 9)[:3] == (9, 0, 0)


def test_expired_sent_batch_leaves_sequence_unresolved_until_resolved() -> None:
    c = cfg("kip360", dt=2)
    client = cl.connection_closed(sent_client(1, c, acked_prefix=1))
    client = cl.expire_batch(client, 0, c)
    assert client.unresolved == 2 and client.failed == 0b10
    assert cl.drain(cl.send(client, 2), 0, 2, c) is None  # new batches wait
    resolved = cl.resolve_sequences(client, c)
    assert resolved.epoch_bump_required and resolved.unresolved == -1  # next seq 2 != last acked 0 + 1


def test_stale_response_is_dropped() -> None:
    c = cfg()
    client = sent_client(1, c)
    assert cl.handle_produce_response(client, resp(5, Errors.NONE, 1), 0, c).outcome == cl.DROPPED


def test_queued_batch_has_no_sequence() -> None:
    client = cl.send(cl.new_client(0), 3)
    assert client.batches[0].status == QUEUED and client.batches[0].seq == -1 and client.batches[0].created == 3


def test_out_of_order_while_unresolved_bumps_only_for_the_batch_after_the_expired_one() -> None:
    c = cfg("kip360")
    client = sent_client(2, c, acked_prefix=1)._replace(unresolved=2)  # records 1, 2 carry seqs 1, 2
    waited, out = cl.handle_produce_response(client, resp(1, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), 0, c)
    assert out == cl.RETRIED and not waited.epoch_bump_required
    bumped, out = cl.handle_produce_response(client, resp(2, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), 0, c)
    assert out == cl.RETRIED and bumped.epoch_bump_required


def test_an_expired_in_flight_first_attempt_leaves_no_unresolved_sequence() -> None:
    # audit B5 (Sender.getExpiredInflightBatches, l.428): only a batch in retry marks the sequence unresolved
    c = cfg("kip360", dt=2)._replace(in_flight_expiry=True)
    client = sent_client(1, c)
    first = cl.expire_in_flight_batch(client, 0, c)
    assert first.failed == 1 and not first.batches and first.unresolved == -1
    retried = cl.handle_produce_response(client, resp(0, Errors.NOT_ENOUGH_REPLICAS), 0, c).client
    assert retried.batches[0].retried
    again = cl.drain(retried, 0, 0, c)[0]
    assert cl.expire_in_flight_batch(again, 0, c).unresolved == 1


def test_success_answer_reads_no_time() -> None:
    """``handle_produce_success`` (the idempotent preset's success rule, keyed without the clock) gives
    ``handle_produce_response``'s answer whatever the clock and the batches' creation times, for every
    client version, under the current producer id and an id reset since, and for an answer with no
    batch in flight."""
    for version in ("0.11", "pre-kip360", "kip360"):
        c = cfg(version=version, dt=2)
        base = sent_client(3, c, acked_prefix=1)
        reset = base._replace(producer_id=base.producer_id + 1, epoch=0)
        for client in (base, reset):
            for error in (Errors.NONE, Errors.DUPLICATE_SEQUENCE_NUMBER):
                for record in (1, 2, 3, 9):
                    answer = resp(record, error, 5)
                    got = cl.handle_produce_success(client, answer, c)
                    for now in (0, 1, 5, 50):
                        assert cl.handle_produce_response(client, answer, now, c) == got
                    timeless = client._replace(batches=tuple(b._replace(created=None) for b in client.batches))
                    shaped, outcome = cl.handle_produce_success(timeless, answer, c)
                    assert outcome == got.outcome
                    assert shaped._replace(batches=()) == got.client._replace(batches=())
                    assert [b.record for b in shaped.batches] == [b.record for b in got.client.batches]

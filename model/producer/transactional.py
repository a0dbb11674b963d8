"""The transactional producer client (``KafkaProducer`` + ``TransactionManager`` + ``Sender``) as pure
functions over ``TxnProducer``: initTransactions, beginTransaction with one batch stream per output
partition, AddPartitionsToTxn per partition before its first drain, produce with sequences (the
per-partition state is the idempotent client's, ``producer.client``), the reactions to produce errors
per client version, the delivery timeout of an in-flight batch, abortUndrainedBatches, EndTxn and
the KIP-360 epoch bump after an abortable error.

Reactions to a failed produce (``TransactionManager.canRetry`` / ``handleFailedBatch``, 2.5+):
UNKNOWN_PRODUCER_ID with no log start offset or on a re-sequenced batch -> retry; with the last
acknowledged offset below the log start offset (state lost to retention) -> restart the partition's
sequences at 0 under the same epoch and retry; otherwise the batch fails and the transaction gets an
abortable error that needs an epoch bump. OUT_OF_ORDER_SEQUENCE_NUMBER for a batch that is not the
next one (and no unresolved sequence) -> retry; otherwise as UNKNOWN_PRODUCER_ID. Before KIP-360
(0.11, 1.0-2.4) both are fatal for a transactional producer (an OutOfOrderSequenceException).
INVALID_PRODUCER_EPOCH / PRODUCER_FENCED -> fenced (fatal). Anything else -> abortable, and a KIP-360
client (2.5+) bumps its epoch after the abort, as after every failed batch (``maybeTransitionToErrorState``).
"""

from __future__ import annotations

from eoscheck.checker.ops import CONCRETE

from ..errors import RETRIABLE, Errors
from ..partition.sequence import increment_sequence
from ..state import (
    INFLIGHT,
    QUEUED,
    RETRY,
    TXN_ABORTABLE,
    TXN_BUMP,
    TXN_FATAL,
    TXN_FENCED,
    TXN_IN_TXN,
    TXN_INIT,
    TXN_READY,
    IdempotentClient,
    ProducerBatch,
    ProduceRequest,
    ProduceResponse,
    TxnProducer,
)
from . import client as cl
from . import txn_responses as tr
from .client import _fail, _restart_sequences
from .config import ClientConfig
from .txn_offsets_client import ABORTABLE as OFFSETS_ABORTABLE
from .txn_offsets_client import DONE as OFFSETS_DONE
from .txn_offsets_client import RETRY as OFFSETS_RETRY
from .txn_offsets_client import on_txn_offset_commit_error

#: a produce response outcome beyond the idempotent client's (``client.ACKED`` ... ``DROPPED``)
FENCED = 5
OUTCOME_NAMES = {**cl.OUTCOME_NAMES, cl.FAILED: "failed (abortable)", FENCED: "fenced"}

#: errors that mean "another instance or the coordinator fenced this producer epoch"
FENCING_ERRORS = frozenset({Errors.PRODUCER_FENCED, Errors.INVALID_PRODUCER_EPOCH})
#: the fatal errors that end a producer as fenced: a fencing error, or INVALID_PRODUCER_ID_MAPPING, which the 4.0
#: client takes as fatal (KAFKA-18019: the coordinator no longer maps the transactional id to its producer id)
FENCED_OUTCOMES = frozenset(FENCING_ERRORS | {Errors.INVALID_PRODUCER_ID_MAPPING})

#: ``TxnProducer.bump_after_abort`` when the abortable error is an InvalidPidMappingException (the
#: coordinator no longer maps the transactional id to this producer id): ``beginCompletingTransaction``
#: skips EndTxn, which the coordinator would refuse the same way, and sends InitProducerId(producer id,
#: epoch) at once (2.5-3.9). True (1): bump after the abort's EndTxn; False (0): no bump.
SKIP_END_TXN = 2


def new_producer(partitions: int) -> TxnProducer:
    """A producer before initTransactions: no producer id, nothing sent."""
    part = cl.new_client(-1)._replace(epoch=-1)
    return TxnProducer(TXN_INIT, -1, -1, 0, 0, (part,) * partitions, 0, 0, False)


def _with_epoch(part: IdempotentClient, producer_id: int, epoch: int) -> IdempotentClient:
    """A new producer id or epoch starts every partition's sequences at 0."""
    return part._replace(producer_id=producer_id, epoch=epoch, next_seq=0, last_acked_seq=-1,
                         epoch_bump_required=False, unresolved=-1)


def with_producer_id(p: TxnProducer, producer_id: int, epoch: int) -> TxnProducer:
    return p._replace(producer_id=producer_id, epoch=epoch,
                      parts=tuple(_with_epoch(part, producer_id, epoch) for part in p.parts))


def init_request(p: TxnProducer) -> tuple[int, int]:
    """The (producer id, epoch) InitProducerId carries: none for initTransactions, the current pair
    for the KIP-360 bump after an abort."""
    return (p.producer_id, p.epoch) if p.phase == TXN_BUMP else (-1, -1)


def on_init_producer_id(p: TxnProducer, error: int, producer_id: int, epoch: int) -> TxnProducer | None:
    """``InitProducerIdHandler``; None: retry the request (CONCURRENT_TRANSACTIONS, coordinator errors). The
    handler clears lastError but not epochBumpRequired (2.5.0 .. 3.9.1 alike), which only ``completeTransaction``
    clears: a bump that ended an abort without it (``keeps_partitions_added``) leaves ``bump_after_abort`` set."""
    if error == Errors.NONE:
        return with_producer_id(p, producer_id, epoch)._replace(phase=TXN_READY, bump_after_abort=bool(p.bump_after_abort))
    if error in RETRIABLE:
        return None
    return _fatal(p, error)


def _fatal(p: TxnProducer, error: int) -> TxnProducer:
    return p._replace(phase=TXN_FENCED if error in FENCING_ERRORS else TXN_FATAL, fatal_error=int(error))


def begin_transaction(p: TxnProducer, batches: int, now: int, consume: bool = False) -> TxnProducer:
    """beginTransaction and ``batches`` send() calls per output partition (accumulated, not drained
    until the partition is added to the transaction); a consume-transform-produce loop processes the
    input record at its position."""
    parts = list(p.parts)
    for i, part in enumerate(parts):
        for _ in range(batches):
            part = cl.send(part, now)
        parts[i] = part
    inputs = p.inputs + (p.position,) if consume else p.inputs
    # ``added`` is what the last transaction left: nothing, unless an InitProducerId answer ended its abort
    # (``keeps_partitions_added``)
    return p._replace(phase=TXN_IN_TXN, parts=tuple(parts), inputs=inputs, offsets=0)


def on_offset_fetch(p: TxnProducer, reaction: int, position: int) -> TxnProducer | None:
    """The consumer's OffsetFetch answer: start at ``position``; None: retry (UNSTABLE_OFFSET_COMMIT)."""
    from ..group.offset_fetch import FetchReaction
    return p._replace(position=position) if reaction == FetchReaction.POSITION else None


def on_coordinator_error(p: TxnProducer, api: str, error: int, *, can_bump_epoch: bool,
                         pid_mapping_fatal: bool) -> TxnProducer | None:
    """The handler's reaction to a coordinator error (``txn_responses.on_txn_response``, the table the
    conformance interface checks against Kafka's tests); None: resend (retriable). ``can_bump_epoch``:
    a KIP-360 client talking to a coordinator with InitProducerId v3 (``canBumpEpoch``);
    ``pid_mapping_fatal``: the 4.0+ client (KAFKA-18019)."""
    r = tr.on_txn_response(api, error, can_bump_epoch=can_bump_epoch, pid_mapping_fatal=pid_mapping_fatal)
    if r.action in (tr.RETRY, tr.LOOKUP_RETRY):
        return None
    if r.action == tr.ABORTABLE:
        # transitionToAbortableError: lastError is this one (InvalidPidMappingException: EndTxn is skipped)
        return _abortable(p, r.bump_epoch, skip_end_txn=error == Errors.INVALID_PRODUCER_ID_MAPPING)
    return _fatal(p, error)


def on_add_offsets(p: TxnProducer, error: int, *, can_bump_epoch: bool = False,
                   pid_mapping_fatal: bool = False) -> TxnProducer | None:
    """The answer to AddOffsetsToTxn (the group's __consumer_offsets partition joins the transaction)."""
    if error == Errors.NONE:
        return p._replace(offsets=1)
    return on_coordinator_error(p, "AddOffsetsToTxn", error, can_bump_epoch=can_bump_epoch,
                                pid_mapping_fatal=pid_mapping_fatal)


def on_txn_offset_commit(p: TxnProducer, error: int, *, any_retriable: bool = False) -> TxnProducer | None:
    """The answer to TxnOffsetCommit, by the rule the conformance API checks against Kafka's unit tests
    (``txn_offsets_client.on_txn_offset_commit_error``): written; None: retried (the coordinator errors,
    and every other retriable one with ``any_retriable``, 3.8.0+); the group's fencing
    (CommitFailedException, FencedInstanceId) and TRANSACTION_ABORTABLE are abortable; an epoch error
    fences the producer, and any error the handler does not name (CONCURRENT_TRANSACTIONS before 3.8.0,
    INVALID_TXN_STATE and INVALID_PRODUCER_ID_MAPPING from a verification) is fatal."""
    reaction = on_txn_offset_commit_error(error, any_retriable=any_retriable)
    if reaction.action == OFFSETS_DONE:
        return p._replace(offsets=2)
    if reaction.action == OFFSETS_RETRY:
        return None
    if reaction.action == OFFSETS_ABORTABLE:
        return _abortable(p, False)
    return _fatal(p, error)


def partitions_to_add(p: TxnProducer) -> tuple[int, ...]:
    """Partitions with records in the open transaction that AddPartitionsToTxn has not added yet."""
    if p.phase != TXN_IN_TXN:
        return ()
    return tuple(i for i, part in enumerate(p.parts) if part.batches and not p.added >> i & 1)


def on_add_partitions(p: TxnProducer, partition: int, error: int, *, can_bump_epoch: bool = False,
                      pid_mapping_fatal: bool = False) -> TxnProducer | None:
    """The answer to AddPartitionsToTxn; None: retry (CONCURRENT_TRANSACTIONS)."""
    if error == Errors.NONE:
        return p._replace(added=p.added | 1 << partition)
    return on_coordinator_error(p, "AddPartitionsToTxn", error, can_bump_epoch=can_bump_epoch,
                                pid_mapping_fatal=pid_mapping_fatal)


def has_sequence(batch: ProducerBatch) -> bool:
    """``ProducerBatch.hasSequence``: the batch was drained at least once (in flight, or re-enqueued for a
    retry with the sequence it was first sent with); a QUEUED batch has none yet."""
    return batch.status != QUEUED


def resends_retries(p: TxnProducer) -> bool:
    """After an abortable error the Sender still drains the batches re-enqueued for a retry: the
    accumulator keeps them (``abort_undrained_batches``) and ``isSendToPartitionAllowed`` refuses only
    a fatal state or a partition outside the transaction (0.11.0.0 .. 4.2.0-rc1). Their earlier attempt
    may have been appended, so they are resent until their fate is known (0.11.0's
    ``Sender.maybeSendTransactionalRequest`` says so: KAFKA-5251, 651d9a5385c on the 0.11.0 branch)."""
    return p.phase == TXN_ABORTABLE and any(b.status == RETRY for part in p.parts for b in part.batches)


def drain(p: TxnProducer, index: int, partition: int, now: int,
          cfg: ClientConfig) -> tuple[TxnProducer, ProduceRequest] | None:
    """The Sender drains the partition's next batch once the partition is in the transaction; after an
    abortable error only a retry (``resends_retries``: the client's retry path, which never takes a
    QUEUED batch). A transactional client's producer id / epoch moves only by an InitProducerId or a TV2
    EndTxn answer, and batches of the old epoch outlive that only after an abort that skipped EndTxn
    (``skips_end_txn``, 2.5-3.9), whose InitProducerId answer reset the sequence bookkeeping
    (``resetSequenceNumbers``): Kafka no longer tracks them, so the next transaction's batches drain beside
    them (``stale_tracked=False``; 3.9.1 RecordAccumulator.java ``shouldStopDrainBatchesForPartition``,
    TransactionManager.java ``resetSequenceNumbers``)."""
    if not p.added >> partition & 1:
        return None
    if p.phase == TXN_ABORTABLE:
        if not any(b.status == RETRY for b in p.parts[partition].batches):
            return None
    elif p.phase != TXN_IN_TXN:
        return None
    drained = cl.drain(p.parts[partition], index, now, cfg, stale_tracked=False)
    if drained is None:
        return None
    part, request = drained
    return _set_part(p, partition, part), request


def _set_part(p: TxnProducer, partition: int, part: IdempotentClient) -> TxnProducer:
    return p._replace(parts=p.parts[:partition] + (part,) + p.parts[partition + 1:])


def _abortable(p: TxnProducer, needs_bump: bool, *, skip_end_txn: bool = False) -> TxnProducer:
    """transitionToAbortableError: epochBumpRequired stays set once set; lastError is the new error, so
    only the latest one decides whether the abort skips EndTxn (``SKIP_END_TXN``)."""
    if p.phase in (TXN_FENCED, TXN_FATAL):
        return p
    bump = SKIP_END_TXN if skip_end_txn and needs_bump else bool(p.bump_after_abort) or needs_bump
    return p._replace(phase=TXN_ABORTABLE, bump_after_abort=bump)


def on_produce_response(p: TxnProducer, partition: int, resp: ProduceResponse, now: int,
                        cfg: ClientConfig, *, ipe_abortable: bool = False,
                        pid_mapping_fatal: bool = False) -> tuple[TxnProducer, int]:
    """``_on_produce_response``; a batch of a transaction aborted without EndTxn (``skips_end_txn``) may fail
    after the abort: while its InitProducerId is outstanding (ABORTING_TRANSACTION)
    ``transitionToAbortableError`` ignores the error and ``isCompleting`` leaves epochBumpRequired unset, and
    once READY the transition to ABORTABLE_ERROR is invalid (it throws): neither changes the phase; a fatal
    error still ends the producer (3.9.1 TransactionManager.java:209-223, 444-453, 655-666)."""
    after, outcome = _on_produce_response(p, partition, resp, now, cfg, ipe_abortable=ipe_abortable,
                                          pid_mapping_fatal=pid_mapping_fatal)
    if p.phase in (TXN_BUMP, TXN_READY) and after.phase == TXN_ABORTABLE:
        return after._replace(phase=p.phase, bump_after_abort=p.bump_after_abort), outcome
    return after, outcome


def _on_produce_response(p: TxnProducer, partition: int, resp: ProduceResponse, now: int,
                         cfg: ClientConfig, *, ipe_abortable: bool = False,
                         pid_mapping_fatal: bool = False) -> tuple[TxnProducer, int]:
    """``Sender.completeBatch`` for a transactional producer: (producer, outcome).
    ``ipe_abortable``: INVALID_PRODUCER_EPOCH is InvalidProducerEpochException (2.7+, KIP-588), an
    abortable error that asks for an epoch bump; before, it fenced the producer. ``pid_mapping_fatal``:
    INVALID_PRODUCER_ID_MAPPING (the coordinator's answer to the leader's verification or add) is fatal
    (KAFKA-14563, 4.0.0: ``maybeTransitionToErrorState``, TransactionManager.java:724-729), outcome FENCED;
    before, an abortable error whose abort skips EndTxn (3.9.1 TransactionManager.java:339-342, 655-666)."""
    part = p.parts[partition]
    index = next((i for i, b in enumerate(part.batches) if b.record == resp.record and b.status == INFLIGHT), -1)
    if index < 0:
        return p, cl.DROPPED  # the batch completed already (expired in flight): the answer is ignored
    error = resp.error
    if error in (Errors.NONE, Errors.DUPLICATE_SEQUENCE_NUMBER) or error in RETRIABLE:
        part, outcome = cl.handle_produce_response(part, resp, now, cfg)
        return _set_part(p, partition, part), outcome
    batch = part.batches[index]
    retry = part._replace(batches=part.batches[:index] + (batch._replace(status=RETRY),) + part.batches[index + 1:])
    if error == Errors.UNKNOWN_PRODUCER_ID and cfg.version != "0.11":
        if resp.log_start_offset < 0 or batch.sequence_reset:
            return _set_part(p, partition, retry), cl.RETRIED
        if part.last_acked_offset < resp.log_start_offset:
            # the head of the log was removed (retention): restart the sequences, same producer id/epoch
            restarted = _restart_sequences(retry, cfg, part.producer_id, part.epoch)
            return _set_part(p, partition, restarted), cl.RETRIED
    if error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER and cfg.version != "0.11":
        expected = increment_sequence(CONCRETE, max_seq=cfg.max_seq, seq=part.last_acked_seq, inc=1)
        if part.unresolved < 0 and (batch.sequence_reset or batch.seq != expected):
            return _set_part(p, partition, retry), cl.RETRIED
    failed = _set_part(p, partition, _fail(part, [index]))
    if error == Errors.INVALID_PRODUCER_EPOCH and ipe_abortable:
        return _abortable(failed, True), cl.FAILED
    if error in FENCING_ERRORS:
        return _fatal(failed, error), FENCED
    if error == Errors.INVALID_PRODUCER_ID_MAPPING:
        # Sender.failBatch -> handleFailedBatch -> maybeTransitionToErrorState: InvalidPidMappingException is
        # the new lastError either way, so the 2.5-3.9 abort goes straight to InitProducerId(producer id, epoch)
        if pid_mapping_fatal:
            return _fatal(failed, error), FENCED
        return _abortable(failed, cfg.version == "kip360", skip_end_txn=True), cl.FAILED
    if error in (Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, Errors.UNKNOWN_PRODUCER_ID):
        if cfg.version != "kip360":
            # before KIP-360 an OutOfOrderSequenceException (UnknownProducerIdException is one) is fatal
            return _fatal(failed, error), cl.RAISED_OUT_OF_ORDER
        return _abortable(failed, True), cl.FAILED
    # any other failed batch too: handleFailedBatch -> maybeTransitionToErrorState sets epochBumpRequired
    # for every non-fatal batch failure of a transactional client that can bump (2.5.0 .. 3.9.0 and trunk
    # 2024-10 alike; 2.4 has no epochBumpRequired); the state is never COMMITTING / ABORTING here (the
    # model's application ends a transaction once nothing is in flight), so isCompleting() is false
    return _abortable(failed, cfg.version == "kip360"), cl.FAILED


def give_up_in_flight(p: TxnProducer, partition: int, cfg: ClientConfig) -> TxnProducer | None:
    """delivery.timeout.ms passes for the partition's oldest in-flight batch while its request is still
    outstanding (KIP-91): the batch fails, its sequence is unresolved, the transaction gets an abortable
    error, and a KIP-360 client will bump its epoch after the abort. The request may still arrive."""
    part = p.parts[partition]
    index = next((i for i, b in enumerate(part.batches) if b.status == INFLIGHT), -1)
    if p.phase not in (TXN_IN_TXN, TXN_ABORTABLE) or index < 0:
        return None
    return _abortable(_set_part(p, partition, cl.expire_batch(part, index, cfg)), True)


def expire_retried_batch(p: TxnProducer, partition: int, cfg: ClientConfig) -> TxnProducer | None:
    """The accumulator expires the partition's first batch re-enqueued for a retry (``RecordAccumulator.expiredBatches``
    takes batches from the head of the partition's deque, where ``insertInSequenceOrder`` puts the retries ahead of
    the batches without a sequence; KIP-91, 2.1.0 .. 4.1.0: past delivery.timeout.ms since creation; 0.11-2.0:
    past request.timeout.ms since its last attempt). ``Sender.sendProducerData`` fails it with a TimeoutException
    (``failBatch``, no sequence adjustment: an abortable error, and ``maybeTransitionToErrorState`` requires the
    epoch bump where the client can bump) and, the batch being ``inRetry``, marks its sequence unresolved: it was
    sent at least once and may have been appended, as an in-flight batch that expires (``give_up_in_flight``). What
    the unresolved sequence becomes differs by version: 2.5+ ``maybeResolveSequences`` once nothing of the
    partition is in flight (``finish_transaction``); 1.0-2.4's next ``Sender.run`` finds it and makes a
    transactional producer fatal ("can no longer retry them. It isn't safe to continue", the same KafkaException
    2.5+ raises when it cannot bump, ``finish_transaction``'s OUT_OF_ORDER_SEQUENCE_NUMBER); 0.11.0 keeps no
    unresolved sequence (its ``resetProducerId`` throws for a transactional producer, caught by the Sender loop),
    so later batches follow the expired one's sequence."""
    part = p.parts[partition]
    index = next((i for i, b in enumerate(part.batches) if b.status == RETRY), -1)
    if p.phase not in (TXN_IN_TXN, TXN_ABORTABLE) or index < 0:
        return None
    if cfg.version == "0.11":
        return _abortable(_set_part(p, partition, _fail(part, [index])), True)
    expired = _abortable(_set_part(p, partition, cl.expire_batch(part, index, cfg)), True)
    return _fatal(expired, int(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER)) if cfg.version == "pre-kip360" else expired


def send_failed(p: TxnProducer, partition: int, *, aborts: bool) -> TxnProducer | None:
    """A send() of the open transaction fails in the application thread (``KafkaProducer.doSend`` catches
    the ApiException, e.g. RecordTooLargeException, before the accumulator): the record is failed and
    never sent. ``aborts`` is KAFKA-9279 (3.2.0: ``maybeTransitionToErrorState``, an abortable error
    with the epoch bump where the client can bump); before, only the returned future knew. The model's
    sends happen at beginTransaction, so the failed one is a record still queued there."""
    part = p.parts[partition]
    index = next((i for i, b in enumerate(part.batches) if b.status == QUEUED and b.seq < 0), -1)
    if p.phase != TXN_IN_TXN or index < 0:
        return None
    failed = _set_part(p, partition, _fail(part, [index]))
    return _abortable(failed, True) if aborts else failed


def connection_closed(p: TxnProducer, partition: int) -> TxnProducer:
    """request.timeout.ms on the partition's connection: in-flight batches will be retried."""
    return _set_part(p, partition, cl.connection_closed(p.parts[partition]))


def ready_to_commit(p: TxnProducer, consume: bool = False) -> bool:
    """commitTransaction's flush is done: every batch of the transaction was acknowledged (and, in a
    consume-transform-produce loop, the input offset was sent to the transaction)."""
    return p.phase == TXN_IN_TXN and not any(part.batches for part in p.parts) and (not consume or p.offsets == 2)


def skips_end_txn(p: TxnProducer) -> bool:
    """abortTransaction after an InvalidPidMappingException (``SKIP_END_TXN``): ``beginCompletingTransaction``
    queues no EndTxn, only InitProducerId(producer id, epoch) (2.5.0 KAFKA-8805, 937f1f741c, .. 3.9.x; 4.0.0's
    KAFKA-18019, e4c0034679, made the error fatal and removed the skip: ``client_pid_mapping_fatal``,
    ``client_produce_pid_mapping_fatal``)."""
    return p.phase == TXN_ABORTABLE and p.bump_after_abort == SKIP_END_TXN


def abort_skipping_end_txn(p: TxnProducer, *, can_bump_epoch: bool, cfg: ClientConfig) -> TxnProducer:
    """The abort that skips EndTxn (``skips_end_txn``): ``beginCompletingTransaction`` queues
    InitProducerId(producer id, epoch) whether or not an epoch bump is required, so a TV2 producer sends it too
    (2.5.0, 2.8.0, 3.0.0, 3.9.1 TransactionManager.java:335-357; trunk e14a81b4b2 .. e4c0034679, 1-17 November 2024,
    had a TV2 client with the skip). Where the coordinator cannot bump (``canBumpEpoch``: its InitProducerId is below
    v3) that request cannot be written: ProducerId and ProducerEpoch are v3+ fields and not ignorable, so the
    generated writer throws UnsupportedVersionException, ``NetworkClient.doSend`` answers it as a version mismatch and
    ``TxnRequestHandler.onComplete`` makes it fatal (3.9.1 NetworkClient.java:515-549, TransactionManager.java:1231-1232;
    the same in 2.5.0, 2.8.0, 3.0.0). The application's abortTransaction then fails with the producer."""
    if not can_bump_epoch:
        return _fatal(p, int(Errors.UNSUPPORTED_VERSION))
    return finish_transaction(p, False, p.epoch, bump_after_abort=True, cfg=cfg)


def ready_to_abort(p: TxnProducer) -> bool:
    """abortTransaction may go on: ``TransactionManager.nextRequest(hasIncompleteBatches)`` holds EndTxn back
    while any batch is incomplete once ``abort_undrained_batches`` has failed the ones without a sequence, so
    it waits for every batch in flight or re-enqueued for a retry (0.11.0.0 .. 4.2.0-rc1: KAFKA-5449,
    9fe07b9652e on the 0.11.0 branch, trunk 54a3718a900). Only EndTxn waits: an abort that skips it
    (``skips_end_txn``) sends its InitProducerId with batches still in flight or waiting for a retry
    (3.9.1 TransactionManager.java:335-357, 779-789)."""
    return skips_end_txn(p) or (p.phase == TXN_ABORTABLE
                                and not any(has_sequence(b) for part in p.parts for b in part.batches))


def abort_undrained_batches(p: TxnProducer) -> TxnProducer:
    """``RecordAccumulator.abortUndrainedBatches`` for a transactional producer: only the batches without a
    sequence (never drained) fail with the transaction; a batch that has one stays incomplete and is
    resent (``resends_retries``), because its earlier attempt may have been appended. 1.0.0 on
    (KAFKA-5494, 5d2422258cb) tests ``!batch.hasSequence()``; 0.11.0.x tested ``!batch.isClosed()``, and
    a batch is closed when drained and stays closed when re-enqueued, so the same batches fail."""
    parts = tuple(_fail(part, [i for i, b in enumerate(part.batches) if not has_sequence(b)]) for part in p.parts)
    return p._replace(parts=parts)


def on_end_txn(p: TxnProducer, commit: bool, error: int, answer: tuple[int, int], *, tv2: bool,
               bump_after_abort: bool, cfg: ClientConfig, can_bump_epoch: bool = False,
               pid_mapping_fatal: bool = False) -> TxnProducer | None:
    """The answer to EndTxn (None: retry, CONCURRENT_TRANSACTIONS). A TV2 answer carries the producer
    id and bumped epoch the producer continues with (a new producer id at epoch 0 after an overflow;
    sequences restart); a KIP-360 client bumps its epoch with InitProducerId after aborting on an
    error that needs it (``bump_after_abort``). An error is the handler's (``on_coordinator_error``);
    an abortable one with a bump answering EndTxn(ABORT) leaves the transaction aborted by the
    application and the producer bumping: ``beginCompletingTransaction`` queued InitProducerId(producer
    id, epoch) behind this EndTxn when a bump was already required, and the 2.5-3.9 client's
    abortableErrorIfPossible requires one now (the state stays ABORTING_TRANSACTION)."""
    if error in RETRIABLE:
        return None
    if error != Errors.NONE:
        failed = on_coordinator_error(p, "EndTxn", error, can_bump_epoch=can_bump_epoch,
                                      pid_mapping_fatal=pid_mapping_fatal)
        if failed is None or commit or failed.phase != TXN_ABORTABLE or not failed.bump_after_abort:
            return failed
        return keeps_partitions_added(finish_transaction(failed._replace(bump_after_abort=True), False, p.epoch,
                                                         bump_after_abort=bump_after_abort, cfg=cfg), p.added)
    producer_id, epoch = answer if tv2 else (p.producer_id, p.epoch)
    return finish_transaction(p, commit, epoch, bump_after_abort=bump_after_abort, cfg=cfg, producer_id=producer_id)


def finish_transaction(p: TxnProducer, commit: bool, epoch: int, *, bump_after_abort: bool,
                       cfg: ClientConfig, producer_id: int | None = None) -> TxnProducer:
    """The application's transaction is over (committed, or aborted with or without an EndTxn). A new
    epoch restarts the sequences; under the same epoch a partition whose sequence is unresolved (a
    batch expired in flight) is resolved as ``maybeResolveSequences`` does: in order -> nothing lost;
    otherwise the KIP-360 client bumps its epoch and an older client cannot continue (fatal). A commit bumps too
    when epochBumpRequired survived the last abort (``keeps_partitions_added``): ``beginCompletingTransaction``
    queues InitProducerId(producer id, epoch) behind EndTxn(COMMIT) and ``completeTransaction`` moves to
    INITIALIZING (2.5.0 .. 3.9.1 TransactionManager ``beginCompletingTransaction``, ``completeTransaction``)."""
    bit = 1 << p.txn
    # a consume-transform-produce loop moves past the input record, or re-reads its position after an abort
    position = (p.position + 1 if p.position >= 0 else -1) if commit else -1
    p = p._replace(txn=p.txn + 1, added=0, committed=p.committed | bit if commit else p.committed,
                   aborted=p.aborted if commit else p.aborted | bit, position=position, offsets=0)
    # bump_after_abort is only set in IN_TRANSACTION when it survived an abort (an abortable error moves to ABORTABLE)
    bump = bool(p.bump_after_abort) and bump_after_abort
    producer_id = p.producer_id if producer_id is None else producer_id
    if (producer_id, epoch) != (p.producer_id, p.epoch):
        return with_producer_id(p, producer_id, epoch)._replace(phase=TXN_READY, bump_after_abort=False)
    parts = list(p.parts)
    for i, part in enumerate(parts):
        if part.unresolved >= 0:
            resolved = cl.resolve_sequences(part, cfg)
            if resolved.epoch_bump_required or resolved.producer_id != part.producer_id:
                if cfg.version != "kip360":
                    return _fatal(p, int(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER))
                bump = True
            parts[i] = resolved._replace(epoch_bump_required=False)
    return p._replace(parts=tuple(parts), phase=TXN_BUMP if bump else TXN_READY, bump_after_abort=False)


def keeps_partitions_added(p: TxnProducer, added: int) -> TxnProducer:
    """An abort that InitProducerId's answer ends (``TXN_BUMP`` after ``finish_transaction``) when no EndTxn
    completed it: the abort skipped EndTxn (``skips_end_txn``), or its EndTxn failed abortably with
    InitProducerId(producer id, epoch) queued behind it (``on_end_txn``). ``InitProducerIdHandler`` moves to
    READY without ``completeTransaction()``, the only place that clears partitionsInTransaction (``added``), so
    the next transaction starts with those partitions added: ``maybeAddPartition`` sends no
    AddPartitionsToTxn for them and ``isSendToPartitionAllowed`` lets their first batch drain at once
    (2.5.0 KAFKA-8805 .. 3.9.2-rc0 alike, TransactionManager ``completeTransaction`` and
    ``InitProducerIdHandler.handleResponse``; 3.9.1 :1160-1172, :1306-1319). beginAbort cleared
    newPartitionsInTransaction, the Sender sends no InitProducerId while an AddPartitionsToTxn is in flight
    (pendingPartitionsInTransaction is empty), and each sendOffsetsToTransaction sends its own
    AddOffsetsToTxn: only ``added`` carries. From 4.0.0 (KAFKA-18019) an abort always sends EndTxn and an
    INVALID_PRODUCER_ID_MAPPING answer is fatal, so neither path is reached with it.
    epochBumpRequired survives the same way (``bump_after_abort`` set at TXN_BUMP, kept by ``on_init_producer_id``):
    the next transaction's end, commit or abort, queues InitProducerId(producer id, epoch) behind its EndTxn and
    bumps the epoch once more (``finish_transaction``)."""
    return p._replace(added=added, bump_after_abort=True) if p.phase == TXN_BUMP else p


def restart(p: TxnProducer) -> TxnProducer:
    """A new producer instance for the same transactional id (the application restarted it after a
    crash, a fatal error or a long pause): no producer id yet, nothing queued or in flight (the old
    instance's unsent records fail with it; its requests may still be in flight, on a connection the
    new instance never reads), an open transaction counted as aborted by the application, record
    numbering and the ghosts carried on so the properties still identify every record."""
    open_txn = p.phase in (TXN_IN_TXN, TXN_ABORTABLE)
    parts = []
    for part in p.parts:
        failed = part.failed
        for b in part.batches:
            failed |= 1 << b.record
        parts.append(part._replace(batches=(), failed=failed, connection=part.connection + 1, producer_id=-1,
                                   epoch=-1, next_seq=0, last_acked_seq=-1, epoch_bump_required=False, unresolved=-1))
    return p._replace(phase=TXN_INIT, producer_id=-1, epoch=-1, added=0, parts=tuple(parts),
                      txn=p.txn + 1 if open_txn else p.txn, aborted=p.aborted | (1 << p.txn if open_txn else 0),
                      bump_after_abort=False, fatal_error=0, position=-1, offsets=0)


def is_done(p: TxnProducer, transactions: int, input_records: int = 0) -> bool:
    """Fenced or fatal, or between transactions with none left to run (every transaction used, or in a
    consume-transform-produce loop every input record processed)."""
    return p.phase in (TXN_FENCED, TXN_FATAL) or (p.phase == TXN_READY and (
        p.txn >= transactions or (input_records > 0 and p.position >= input_records)))


__all__ = [
    "FENCED",
    "FENCING_ERRORS",
    "OUTCOME_NAMES",
    "SKIP_END_TXN",
    "abort_skipping_end_txn",
    "abort_undrained_batches",
    "begin_transaction",
    "connection_closed",
    "drain",
    "expire_retried_batch",
    "finish_transaction",
    "give_up_in_flight",
    "has_sequence",
    "init_request",
    "is_done",
    "keeps_partitions_added",
    "new_producer",
    "on_add_offsets",
    "on_add_partitions",
    "on_coordinator_error",
    "on_end_txn",
    "on_init_producer_id",
    "on_offset_fetch",
    "on_produce_response",
    "on_txn_offset_commit",
    "partitions_to_add",
    "ready_to_abort",
    "ready_to_commit",
    "resends_retries",
    "restart",
    "skips_end_txn",
    "with_producer_id",
]

"""The idempotent producer client (``Sender``, ``RecordAccumulator``, ``TransactionManager``) as
pure functions over ``IdempotentClient``.

Per version (``ClientConfig.version``):

* ``"0.11"``: OUT_OF_ORDER_SEQUENCE_NUMBER is raised to the application and resets the producer id
  (``Sender.failBatch``: ``resetProducerId``); the producer carries on with a new id. (Not fatal:
  fidelity audit C4.)
* ``"pre-kip360"`` (1.0-2.4, §2.7): UNKNOWN_PRODUCER_ID with ``lastAckedOffset < logStartOffset``
  restarts the in-flight sequences at 0 under the *same* producer id and epoch and retries; an
  UNKNOWN_PRODUCER_ID otherwise (an ``OutOfOrderSequenceException`` subclass), or an
  OUT_OF_ORDER_SEQUENCE_NUMBER for the next expected batch, resets the producer id
  (``resetIdempotentProducerId``), failing the batches that carry the old one; any other batch
  that fails for good moves the later sequences down (``adjustSequencesDueToFailedBatch``).
* ``"kip360"`` (2.5+, §2.6): UNKNOWN_PRODUCER_ID / OUT_OF_ORDER_SEQUENCE_NUMBER request a local
  epoch bump. As *shipped* (``epoch_bump="resequence_inflight"``) the bump rewrites the
  partition's in-flight batches from sequence 0 under the new epoch
  (``startSequencesAtBeginning``) and retries them; as the KIP *designs* it
  (``"fail_inflight"``) a sequence, once assigned, never changes: the batch and every later
  batch with a sequence fail, and new batches start at 0 under the bumped epoch. The KIP's rule
  ("when we encounter a fatal error for a batch, we will fail all subsequent batches for that
  partition which have been assigned a sequence number") covers every way a sequenced batch fails
  for good, not only the OUT_OF_ORDER / UNKNOWN_PRODUCER_ID answers: a delivery-timeout expiry
  (in retry or in flight, or a retriable answer past the timeout) and a non-retriable error fail
  the later sequenced batches too and request the bump. The design has no unresolved sequence
  (shipped's ``markSequenceUnresolved``, which keeps later batches going and judges them by their
  answers): a later batch is never retried behind a hole, so it cannot come back OUT_OF_ORDER.

Sequences are assigned when a batch is first drained and kept on retries. A retried batch is
drained only when it is the first in flight (in-flight drops to one during retries); a new batch
waits behind retries, behind an unresolved sequence and behind a pending epoch bump.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from eoscheck.checker.ops import CONCRETE

from ..errors import RETRIABLE, Errors
from ..partition.sequence import increment_sequence
from ..state import INFLIGHT, QUEUED, RETRY, IdempotentClient, ProducerBatch, ProduceRequest, ProduceResponse
from .config import ClientConfig
from .idempotent_epoch import bump_idempotent_epoch

# what the client did with a produce response (a step parameter, so traces and properties see it)
ACKED, RETRIED, FAILED, RAISED_OUT_OF_ORDER, DROPPED = 0, 1, 2, 3, 4
OUTCOME_NAMES = {ACKED: "acked", RETRIED: "retried", FAILED: "failed",
                 RAISED_OUT_OF_ORDER: "raised-OutOfOrderSequenceException", DROPPED: "dropped"}


class ResponseOutcome(NamedTuple):
    client: IdempotentClient
    outcome: int


def new_client(producer_id: int) -> IdempotentClient:
    return IdempotentClient(producer_id=producer_id, epoch=0, next_seq=0, last_acked_seq=-1,
                            last_acked_offset=-1, sent=0, batches=(), acked=0, failed=0, connection=0,
                            epoch_bump_required=False, unresolved=-1, fatal=False)


def _next(cfg: ClientConfig, seq: int) -> int:
    return increment_sequence(CONCRETE, max_seq=cfg.max_seq, seq=seq, inc=1)


def is_expired(batch: ProducerBatch, now: int, cfg: ClientConfig) -> bool:
    """Past ``delivery.timeout.ms``: never (re)sent again."""
    return now - batch.created >= cfg.delivery_timeout


def send(client: IdempotentClient, now: int) -> IdempotentClient:
    """``KafkaProducer.send``: the record joins the accumulator; no sequence yet."""
    batch = ProducerBatch(client.sent, now, QUEUED, -1, -1, -1, False)
    return client._replace(sent=client.sent + 1, batches=client.batches + (batch,))


def _sequenced(client: IdempotentClient) -> list[int]:
    return [i for i, b in enumerate(client.batches) if b.status != QUEUED]


def drain(client: IdempotentClient, client_id: int, now: int, cfg: ClientConfig, *,
          stale_tracked: bool = True) -> tuple[IdempotentClient, ProduceRequest] | None:
    """The Sender drains the partition's next batch, if the gating rules allow one. A new batch waits for
    the sequenced batches of an older producer id / epoch only while the client still tracks them
    (``stale_tracked``): 2.5.0 .. 4.1.0's ``shouldStopDrainBatchesForPartition`` stops on
    ``hasInflightBatches(tp)`` with a stale id/epoch, which reads the partition's bookkeeping entry
    (2.5.0 ``nextBatchBySequence`` + ``matchesProducerIdAndEpoch``; 3.0.0+ ``hasStaleProducerIdAndEpoch``), and
    the transactional InitProducerId answer of an epoch bump empties that bookkeeping (``resetSequenceNumbers``,
    the same in 2.5.0, 3.0.0, 3.9.1 and 4.1.0): batches of the old epoch still in flight or in retry are
    then untracked and no longer hold a new batch back."""
    if client.fatal or client.producer_id < 0 or client.epoch_bump_required:
        return None
    batches = client.batches
    sequenced = _sequenced(client)
    if any(batches[i].status == RETRY for i in sequenced):
        first = batches[sequenced[0]]
        if first.status != RETRY or is_expired(first, now, cfg):
            return None
        i, batch = sequenced[0], first._replace(status=INFLIGHT)
        new_seq = client.next_seq
    else:
        if client.unresolved >= 0 or len(sequenced) >= cfg.max_in_flight:
            return None
        if stale_tracked and any(batches[j].producer_id != client.producer_id or batches[j].epoch != client.epoch
                                 for j in sequenced):
            return None  # wait until batches of the previous producer id / epoch are done
        queued = [j for j, b in enumerate(batches) if b.status == QUEUED]
        if not queued or is_expired(batches[queued[0]], now, cfg):
            return None
        i = queued[0]
        batch = batches[i]._replace(status=INFLIGHT, producer_id=client.producer_id, epoch=client.epoch,
                                    seq=client.next_seq)
        new_seq = _next(cfg, client.next_seq)
    request = ProduceRequest(client_id, client.connection, batch.record, batch.producer_id, batch.epoch,
                             batch.seq, batch.created)
    return client._replace(batches=batches[:i] + (batch,) + batches[i + 1:], next_seq=new_seq), request


def _fail(client: IdempotentClient, indexes: list[int]) -> IdempotentClient:
    failed = client.failed
    for i in indexes:
        failed |= 1 << client.batches[i].record
    drop = set(indexes)
    return client._replace(batches=tuple(b for i, b in enumerate(client.batches) if i not in drop), failed=failed)


def _restart_sequences(client: IdempotentClient, cfg: ClientConfig, producer_id: int, epoch: int) -> IdempotentClient:
    """``startSequencesAtBeginning``: rewrite every batch that carries a sequence from 0 under
    (producer_id, epoch), in order; the last acknowledged sequence is forgotten."""
    seq, batches = 0, list(client.batches)
    for i, b in enumerate(batches):
        if b.status != QUEUED:
            batches[i] = b._replace(producer_id=producer_id, epoch=epoch, seq=seq, sequence_reset=True)
            seq = _next(cfg, seq)
    return client._replace(batches=tuple(batches), next_seq=seq, last_acked_seq=-1)


def _fail_and_adjust_sequences(client: IdempotentClient, index: int, cfg: ClientConfig) -> IdempotentClient:
    """Before KIP-360 (``adjustSequencesDueToFailedBatch``): a batch that failed for good leaves a
    hole, so every later sequenced batch moves down by its record count (marked reset) and the next
    sequence with them; the producer id and epoch stay. KIP-360 removed this."""
    batches = list(client.batches)
    for j in range(index + 1, len(batches)):
        b = batches[j]
        if b.status != QUEUED:
            batches[j] = b._replace(seq=b.seq - 1 if b.seq > 0 else cfg.max_seq, sequence_reset=True)
    next_seq = client.next_seq - 1 if client.next_seq > 0 else cfg.max_seq
    return _fail(client._replace(batches=tuple(batches), next_seq=next_seq), [index])


def reset_producer_id(client: IdempotentClient, keep_in_flight: bool = False) -> IdempotentClient:
    """``resetIdempotentProducerId``: forget the producer id and sequences; batches that carry the
    old id fail; InitProducerId will give a new id. ``keep_in_flight`` (the 0.11-2.4 reset on an
    answer, fidelity audit C5): batches whose request is on the wire stay in flight under the old
    id and are settled by their own answer (``old_id_answer``)."""
    client = _fail(client, [i for i in _sequenced(client)
                            if not (keep_in_flight and client.batches[i].status == INFLIGHT)])
    return client._replace(producer_id=-1, epoch=-1, next_seq=0, last_acked_seq=-1,
                           epoch_bump_required=False, unresolved=-1)


def init_producer_id(client: IdempotentClient, producer_id: int) -> IdempotentClient:
    """The idempotent InitProducerId response: a fresh producer id at epoch 0."""
    return client._replace(producer_id=producer_id, epoch=0, next_seq=0, last_acked_seq=-1)


def bump_epoch(client: IdempotentClient, cfg: ClientConfig) -> IdempotentClient:
    """``bumpIdempotentEpochAndResetIdIfNeeded`` (KIP-360), which Kafka runs at the top of every
    ``Sender.runOnce`` whatever is in flight: as shipped, batches whose requests are still on the wire
    are rewritten too, and their answers are judged against the rewritten batch (the earlier review's
    finding 8)."""
    needs_new_pid, new_epoch = bump_idempotent_epoch(CONCRETE, max_epoch=cfg.max_epoch,
                                                     producer_id=client.producer_id, epoch=client.epoch)
    if needs_new_pid:
        return reset_producer_id(client)
    client = client._replace(epoch=new_epoch, last_acked_seq=-1, epoch_bump_required=False, unresolved=-1)
    if cfg.epoch_bump == "resequence_inflight":
        return _restart_sequences(client, cfg, client.producer_id, new_epoch)
    return client._replace(next_seq=0)


def connection_closed(client: IdempotentClient, track_retries: bool = False) -> IdempotentClient:
    """request.timeout.ms fired: the connection is closed, every in-flight batch will be retried
    and responses still on the old connection are never read. A batch of a producer id the client
    has since reset is not retried: it fails (0.11-2.4 ``Sender.completeBatch``: "the producer id
    changed in the mean time")."""
    old = [i for i, b in enumerate(client.batches) if b.status == INFLIGHT and b.producer_id != client.producer_id]
    if old:
        client = _fail(client, old)
    batches = tuple(b._replace(status=RETRY, retried=b.retried or track_retries) if b.status == INFLIGHT else b
                    for b in client.batches)
    return client._replace(batches=batches, connection=client.connection + 1)


def old_id_answer(client: IdempotentClient, index: int, error: int, now: int, cfg: ClientConfig) -> ResponseOutcome:
    """The answer to a batch sent under a producer id the client has reset since (0.11-2.4,
    ``Sender.completeBatch`` with ``handleCompletedBatch`` / ``handleFailedBatch`` skipping the
    bookkeeping of another id) with an error (success still completes it: ``handle_produce_success``): a
    retriable error fails it with a synthetic OutOfOrderSequenceException ("the producer id changed in the
    mean time"), as do OUT_OF_ORDER_SEQUENCE_NUMBER and UNKNOWN_PRODUCER_ID (its subclass); anything else
    fails it."""
    batch = client.batches[index]
    rest = client.batches[:index] + client.batches[index + 1:]
    failed = client._replace(batches=rest, failed=client.failed | 1 << batch.record)
    raised = (error in (Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, Errors.UNKNOWN_PRODUCER_ID)
              or (error in RETRIABLE and not is_expired(batch, now, cfg)))
    return ResponseOutcome(failed, RAISED_OUT_OF_ORDER if raised else FAILED)


def _designed(cfg: ClientConfig) -> bool:
    """KIP-360 as its text designs the client (sequences permanent once assigned)."""
    return cfg.version == "kip360" and cfg.epoch_bump == "fail_inflight"


def fail_sequenced_from(client: IdempotentClient, index: int) -> IdempotentClient:
    """KIP-360 as designed ("simplified error handling", item 2): a sequenced batch failed for good,
    so it and every later batch of the partition that carries a sequence fail (a permanent sequence
    behind a possible hole can never be accepted), and the epoch is bumped so that new batches start
    at 0."""
    later = [i for i in _sequenced(client) if i >= index]
    return _fail(client, later)._replace(epoch_bump_required=True)


def expire_batch(client: IdempotentClient, index: int, cfg: ClientConfig) -> IdempotentClient:
    """The accumulator expires a batch past delivery.timeout.ms; if it had been sent, the
    partition's sequence is unresolved until the in-flight batches complete (as designed: the
    later sequenced batches fail with it)."""
    batch = client.batches[index]
    if batch.status == QUEUED:
        return _fail(client, [index])
    if _designed(cfg):
        return fail_sequenced_from(client, index)
    client = _fail(client, [index])
    return client._replace(unresolved=_next(cfg, batch.seq))


def expire_in_flight_batch(client: IdempotentClient, index: int, cfg: ClientConfig) -> IdempotentClient:
    """``Sender.getExpiredInflightBatches``: a batch whose request is still outstanding reaches
    delivery.timeout.ms and fails (its request may still be appended). Only a batch in retry marks
    the partition's sequence unresolved (``Sender`` l.428, ``inRetry``); a first attempt just leaves
    the client, its sequence stays used (fidelity audit B5). As designed, either way the later
    sequenced batches fail with it."""
    batch = client.batches[index]
    if _designed(cfg):
        return fail_sequenced_from(client, index)
    client = _fail(client, [index])
    return client._replace(unresolved=_next(cfg, batch.seq)) if batch.retried else client


def resolve_sequences(client: IdempotentClient, cfg: ClientConfig) -> IdempotentClient:
    """``maybeResolveSequences`` once nothing is in flight: if the next sequence follows the last
    acknowledged one, nothing was lost; otherwise bump the epoch (KIP-360) or reset the id."""
    if _next(cfg, client.last_acked_seq) == client.next_seq:
        return client._replace(unresolved=-1)
    if cfg.version == "kip360":
        return client._replace(unresolved=-1, epoch_bump_required=True)
    return reset_producer_id(client)


#: the answers that complete a batch (``Sender.completeBatch``'s success path)
SUCCESS: Final = frozenset((int(Errors.NONE), int(Errors.DUPLICATE_SEQUENCE_NUMBER)))


def handle_produce_success(client: IdempotentClient, resp: ProduceResponse, cfg: ClientConfig) -> ResponseOutcome:
    """``handle_produce_response`` for an answer in ``SUCCESS``. It reads no clock and no batch's creation
    time (only a failed batch's retry asks for its delivery timeout), so a caller may pass a client
    whose times are left out and keep the clock out of its memo key."""
    index = next((i for i, b in enumerate(client.batches) if b.record == resp.record and b.status == INFLIGHT), -1)
    if index < 0:
        return ResponseOutcome(client, DROPPED)
    batch = client.batches[index]
    rest = client.batches[:index] + client.batches[index + 1:]
    if batch.producer_id != client.producer_id and cfg.version != "kip360":
        # ``old_id_answer``: 0.11-2.4 complete it, skipping the bookkeeping of the id they reset
        return ResponseOutcome(client._replace(batches=rest, acked=client.acked | 1 << batch.record), ACKED)
    last_seq = batch.seq if client.last_acked_seq < 0 else max(client.last_acked_seq, batch.seq)
    return ResponseOutcome(client._replace(
        batches=rest, acked=client.acked | (1 << batch.record), last_acked_seq=last_seq,
        last_acked_offset=max(client.last_acked_offset, resp.base_offset)), ACKED)


def handle_produce_response(client: IdempotentClient, resp: ProduceResponse, now: int, cfg: ClientConfig) -> ResponseOutcome:
    """``Sender.completeBatch`` + ``TransactionManager.canRetry`` / ``handleFailedBatch``."""
    error = resp.error
    if error in SUCCESS:
        return handle_produce_success(client, resp, cfg)
    index = next((i for i, b in enumerate(client.batches) if b.record == resp.record and b.status == INFLIGHT), -1)
    if index < 0:
        return ResponseOutcome(client, DROPPED)
    batch = client.batches[index]
    if batch.producer_id != client.producer_id and cfg.version != "kip360":
        return old_id_answer(client, index, error, now, cfg)

    def retry(c: IdempotentClient) -> ResponseOutcome:
        if is_expired(batch, now, cfg):  # canRetry: past the delivery timeout
            if _designed(cfg):
                return ResponseOutcome(fail_sequenced_from(c, index), FAILED)
            c = _fail(c, [index])
            return ResponseOutcome(c._replace(unresolved=_next(cfg, batch.seq)), FAILED)
        b = c.batches[index]._replace(status=RETRY, retried=c.batches[index].retried or cfg.in_flight_expiry)
        return ResponseOutcome(c._replace(batches=c.batches[:index] + (b,) + c.batches[index + 1:]), RETRIED)

    if error in RETRIABLE:
        return retry(client)
    # "an earlier batch failed; this one will succeed once that one is retried"
    not_next = batch.sequence_reset or batch.seq != _next(cfg, client.last_acked_seq)
    version = cfg.version
    if error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER:
        if version == "0.11":
            # 0.11.0 Sender.failBatch: resetProducerId(); the producer carries on with a new id
            return ResponseOutcome(reset_producer_id(_fail(client, [index]), keep_in_flight=True), RAISED_OUT_OF_ORDER)
        if client.unresolved < 0 and not_next:
            return retry(client)
        if version == "pre-kip360":
            return ResponseOutcome(reset_producer_id(_fail(client, [index]), keep_in_flight=True), RAISED_OUT_OF_ORDER)
        if client.unresolved >= 0 and batch.seq != client.unresolved and cfg.epoch_bump == "resequence_inflight":
            return retry(client)  # wait and see whether the unresolved sequence resolves (no bump)
        return _kip360_bump(client, index, retry, RAISED_OUT_OF_ORDER, cfg)
    if error == Errors.UNKNOWN_PRODUCER_ID:
        if version == "pre-kip360":
            if batch.sequence_reset or resp.log_start_offset < 0:
                return retry(client)
            if client.last_acked_offset < resp.log_start_offset:
                # state lost to retention: restart the sequences at 0 under the same id and epoch
                return retry(_restart_sequences(client, cfg, client.producer_id, client.epoch))
            # UnknownProducerIdException extends OutOfOrderSequenceException: the idempotent producer
            # resets its producer id (1.0 Sender.failBatch, 2.4 handleFailedBatch; fidelity audit B2)
            return ResponseOutcome(reset_producer_id(_fail(client, [index]), keep_in_flight=True), RAISED_OUT_OF_ORDER)
        if version == "kip360":
            if batch.sequence_reset or resp.log_start_offset < 0:
                return retry(client)
            return _kip360_bump(client, index, retry, FAILED, cfg)
    # INVALID_PRODUCER_EPOCH and anything else: not retriable, the batch fails
    if version == "pre-kip360":
        return ResponseOutcome(_fail_and_adjust_sequences(client, index, cfg), FAILED)
    if version == "kip360":
        if cfg.epoch_bump == "fail_inflight":
            return ResponseOutcome(fail_sequenced_from(client, index), FAILED)
        return ResponseOutcome(_fail(client, [index])._replace(epoch_bump_required=True), FAILED)
    return ResponseOutcome(_fail(client, [index]), FAILED)


def _kip360_bump(client: IdempotentClient, index: int, retry, raised: int, cfg: ClientConfig) -> ResponseOutcome:
    """KIP-360: request an epoch bump for the partition. As shipped the batch is retried (it will
    be re-sequenced by the bump); as designed it fails with every later sequenced batch."""
    if cfg.epoch_bump == "resequence_inflight":
        return retry(client._replace(epoch_bump_required=True))
    return ResponseOutcome(fail_sequenced_from(client, index), raised)

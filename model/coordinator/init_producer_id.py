"""InitProducerId on the transaction coordinator for a transactional id (KIP-98, KIP-360).

One rule, written over ``ops`` so the explorer runs it on ints and the prover on bit-vectors:
``init_producer_id_decision``. It covers the metadata states Empty / CompleteCommit /
CompleteAbort with no pending transition; the caller answers CONCURRENT_TRANSACTIONS for a
pending transition or PrepareCommit/PrepareAbort, and fences an Ongoing transaction.

Three coordinators, chosen by two plain switches:

* ``kip360=False`` — before KIP-360 (<= 2.4): the request has no producer id/epoch; every call
  bumps the epoch (or rotates the producer id when exhausted). No lastProducerEpoch.
* ``kip360=True, shipped=False`` — KIP-360 *as designed* (the KIP text): cases 1a, 1b-i, 1b-ii,
  2a-i, 2a-ii, 2b (the request matches the persisted last producer id/epoch: return the current
  pair, retry-safe), 2c (else INVALID_PRODUCER_EPOCH); INVALID_PRODUCER_ID_MAPPING recovery =
  no metadata -> new producer id.
* ``kip360=True, shipped=True`` — Kafka as shipped (2.6 .. trunk; 2.5.x's EndTxn/fence differ, see
  the ``kafka-shipped`` variant; ``TransactionCoordinator.
  handleInitProducerId`` + ``TransactionMetadata.prepareIncrementProducerEpoch``): ``validPid``
  also accepts the previous producer id with an exhausted epoch (retry after rotation); the 2b
  retry compares the epoch only with ``lastProducerEpoch``; which transitions set previousProducerId
  is the machine's switch (fidelity audit B1); a retry of the bump that produced ``max_epoch - 1`` hits
  the exhaustion precondition of ``prepareIncrementProducerEpoch`` (IllegalStateException ->
  UNKNOWN_SERVER_ERROR, no state change); PRODUCER_FENCED instead of INVALID_PRODUCER_EPOCH.
  Whether lastProducerEpoch survives a failover is not decided here: that is the transaction
  log's persistence (``model.coordinator.txn_log``).

Kafka's overflow threshold: an epoch is exhausted at ``max_epoch - 1`` (``isEpochExhausted``);
``max_epoch`` itself is reserved so that the coordinator can always fence once more.
"""

from __future__ import annotations

from typing import NamedTuple

from eoscheck.checker.ops import Ops, Term

from ..errors import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, Errors
from .rules_util import first_case

EPOCH_BITS = 16
PID_BITS = 64
ERROR_BITS = 16


class InitPidOutcome(NamedTuple):
    """What the coordinator answers and stores. On an error the fields equal the metadata's."""

    error: Term
    producer_id: Term
    epoch: Term
    last_epoch: Term
    prev_producer_id: Term


def is_epoch_exhausted(ops: Ops, *, max_epoch: int, epoch: Term) -> Term:
    """``TransactionMetadata.isEpochExhausted``: epoch >= max_epoch - 1."""
    return ops.ge(epoch, ops.const(max_epoch - 1, EPOCH_BITS))


def valid_producer_id(ops: Ops, *, max_epoch: int, meta_exists: Term, meta_producer_id: Term,
                      meta_prev_producer_id: Term, meta_epoch: Term, req_producer_id: Term, req_epoch: Term) -> Term:
    """``validPid`` of ``handleInitProducerId`` (Kafka as shipped): metadata just created (epoch -1),
    or the current producer id, or the previous one with an exhausted epoch (a retry after rotation).
    Checked before the metadata's state is looked at, for every state."""
    fresh = ops.or_(ops.not_(meta_exists), ops.eq(meta_epoch, ops.const(NO_PRODUCER_EPOCH, EPOCH_BITS)))
    return ops.or_(fresh, ops.eq(req_producer_id, meta_producer_id),
                   ops.and_(ops.eq(req_producer_id, meta_prev_producer_id),
                            is_epoch_exhausted(ops, max_epoch=max_epoch, epoch=req_epoch)))


def init_producer_id_decision(ops: Ops, *, kip360: bool, shipped: bool, max_epoch: int,
                              meta_exists: Term, meta_producer_id: Term, meta_prev_producer_id: Term,
                              meta_epoch: Term, meta_last_epoch: Term, req_producer_id: Term,
                              req_epoch: Term, new_producer_id: Term) -> InitPidOutcome:
    """The coordinator's answer to InitProducerId(transactional id, producer id, epoch).

    ``meta_*`` describe the metadata (ignored when ``meta_exists`` is false); ``req_*`` are the
    request's ProducerId/ProducerEpoch fields (-1 = not given; ignored before KIP-360);
    ``new_producer_id`` is the producer id allocator's next id, used only if the outcome's
    producer id equals it.
    """
    c = ops.const

    def code(e: Errors) -> Term:
        return c(int(e), ERROR_BITS)

    none_pid, none_epoch = c(NO_PRODUCER_ID, PID_BITS), c(NO_PRODUCER_EPOCH, EPOCH_BITS)
    zero = c(0, EPOCH_BITS)
    ok = code(Errors.NONE)
    unchanged = (meta_producer_id, meta_epoch, meta_last_epoch, meta_prev_producer_id)

    # Metadata that does not exist yet (or was created and never written: epoch -1) is
    # initialised at epoch 0; the new producer id is taken only when there is no metadata.
    fresh = ops.or_(ops.not_(meta_exists), ops.eq(meta_epoch, none_epoch))
    fresh_pid = ops.ite(meta_exists, meta_producer_id, new_producer_id)
    exhausted = is_epoch_exhausted(ops, max_epoch=max_epoch, epoch=meta_epoch)
    bumped = ops.add(meta_epoch, c(1, EPOCH_BITS))

    if not kip360:
        # Pre-KIP-360: no expected pid/epoch, no last epoch, no previous producer id.
        cases = [
            (fresh, (ok, fresh_pid, zero, none_epoch, none_pid)),
            (exhausted, (ok, new_producer_id, zero, none_epoch, none_pid)),
        ]
        return InitPidOutcome(*first_case(ops, cases, (ok, meta_producer_id, bumped, none_epoch, none_pid)))

    has_pid = ops.ne(req_producer_id, none_pid)
    has_epoch = ops.ne(req_epoch, none_epoch)
    # KafkaApis rejects a request that gives only one of ProducerId / ProducerEpoch.
    invalid_request = ops.or_(ops.and_(has_pid, ops.not_(has_epoch)), ops.and_(ops.not_(has_pid), has_epoch))
    expected = ops.and_(has_pid, has_epoch)
    error_fields = lambda e: (code(e), *unchanged)

    if not shipped:
        # KIP-360 as designed: cases named as in the KIP.
        match_current = ops.and_(expected, ops.eq(req_producer_id, meta_producer_id), ops.eq(req_epoch, meta_epoch))
        match_last = ops.and_(expected, ops.eq(req_producer_id, meta_prev_producer_id),
                              ops.eq(req_epoch, meta_last_epoch), ops.ne(meta_last_epoch, none_epoch))
        cases = [
            (invalid_request, error_fields(Errors.INVALID_REQUEST)),
            # 1a, and the INVALID_PRODUCER_ID_MAPPING recovery "no mapping: new producer id".
            (fresh, (ok, fresh_pid, zero, none_epoch, none_pid)),
            # 1b-ii / 1b-i: a new instance; last producer id/epoch set to empty.
            (ops.and_(ops.not_(expected), exhausted), (ok, new_producer_id, zero, none_epoch, none_pid)),
            (ops.not_(expected), (ok, meta_producer_id, bumped, none_epoch, none_pid)),
            # 2a-ii / 2a-i: the same instance re-initialising; last := the current pair.
            (ops.and_(match_current, exhausted), (ok, new_producer_id, zero, meta_epoch, meta_producer_id)),
            (match_current, (ok, meta_producer_id, bumped, meta_epoch, meta_producer_id)),
            # 2b: a retry of a bump whose response was lost: return the current pair.
            (match_last, (ok, *unchanged)),
        ]
        # 2c
        return InitPidOutcome(*first_case(ops, cases, error_fields(Errors.INVALID_PRODUCER_EPOCH)))

    # Kafka as shipped.
    valid_pid = valid_producer_id(ops, max_epoch=max_epoch, meta_exists=meta_exists, meta_producer_id=meta_producer_id,
                                  meta_prev_producer_id=meta_prev_producer_id, meta_epoch=meta_epoch,
                                  req_producer_id=req_producer_id, req_epoch=req_epoch)
    rotate = ops.and_(exhausted, ops.or_(ops.not_(expected), ops.eq(req_epoch, meta_epoch)))
    cases = [
        (invalid_request, error_fields(Errors.INVALID_REQUEST)),
        (ops.and_(expected, ops.not_(valid_pid)), error_fields(Errors.PRODUCER_FENCED)),
        # prepareIncrementProducerEpoch from epoch -1: epoch 0, lastProducerEpoch -1.
        (fresh, (ok, fresh_pid, zero, none_epoch, fresh_pid)),
        # prepareProducerIdRotation(recordLastEpoch = expected defined).
        (rotate, (ok, new_producer_id, zero, ops.ite(expected, meta_epoch, none_epoch), meta_producer_id)),
        # prepareIncrementProducerEpoch's precondition: IllegalStateException.
        (exhausted, error_fields(Errors.UNKNOWN_SERVER_ERROR)),
        (ops.not_(expected), (ok, meta_producer_id, bumped, none_epoch, meta_producer_id)),
        (ops.eq(req_epoch, meta_epoch), (ok, meta_producer_id, bumped, meta_epoch, meta_producer_id)),
        # retry: no bump; an Empty transition is still written, so previousProducerId := producerId.
        (ops.eq(req_epoch, meta_last_epoch), (ok, meta_producer_id, meta_epoch, meta_last_epoch, meta_producer_id)),
    ]
    return InitPidOutcome(*first_case(ops, cases, error_fields(Errors.PRODUCER_FENCED)))

"""The idempotent producer's local epoch bump (``TransactionManager.bumpIdempotentProducerEpoch``,
KIP-360): no coordinator round trip, because an idempotent producer id is unique to one instance."""

from __future__ import annotations

from eoscheck.checker.ops import Ops, Term

from ..errors import NO_PRODUCER_EPOCH

EPOCH_BITS = 16


def bump_idempotent_epoch(ops: Ops, *, max_epoch: int, producer_id: Term, epoch: Term) -> tuple[Term, Term]:
    """(needs_new_producer_id, new_epoch): epoch + 1, or at ``max_epoch`` (Short.MAX_VALUE) the
    producer id is reset (``resetIdempotentProducerId``) and InitProducerId must be called again;
    the epoch is then NO_PRODUCER_EPOCH until the new id arrives. ``producer_id`` is kept in the
    signature so that obligations can range over the (producer id, epoch) pair."""
    at_max = ops.eq(epoch, ops.const(max_epoch, EPOCH_BITS))
    new_epoch = ops.ite(at_max, ops.const(NO_PRODUCER_EPOCH, EPOCH_BITS), ops.add(epoch, ops.const(1, EPOCH_BITS)))
    return at_max, new_epoch

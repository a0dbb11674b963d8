"""Fencing an Ongoing transaction's producer (``TransactionMetadata.prepareFenceProducerEpoch``)."""

from __future__ import annotations

from eoscheck.checker.ops import Ops, Term

EPOCH_BITS = 16


def fence_producer_epoch(ops: Ops, *, max_epoch: int, epoch: Term, has_failed_epoch_fence: Term) -> Term:
    """The epoch the coordinator fences with: epoch + 1, but unchanged after a failed fence
    (``hasFailedEpochFence``, KAFKA-9666) and, as in later trunk, unchanged at ``max_epoch``
    (the 2024 snapshot threw IllegalStateException there instead)."""
    keep = ops.or_(has_failed_epoch_fence, ops.eq(epoch, ops.const(max_epoch, EPOCH_BITS)))
    return ops.ite(keep, epoch, ops.add(epoch, ops.const(1, EPOCH_BITS)))

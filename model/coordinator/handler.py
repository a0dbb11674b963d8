"""The transaction coordinator's request handling for one transactional id, over concrete state.

``handle_init_producer_id`` is ``TransactionCoordinator.handleInitProducerId`` around the shared
rule ``init_producer_id_decision``: pending transition or PrepareCommit/PrepareAbort ->
CONCURRENT_TRANSACTIONS; Ongoing -> fence the open transaction (epoch bump via
``fence_producer_epoch``, PrepareAbort written, CONCURRENT_TRANSACTIONS so the client retries);
Empty / CompleteX / no metadata -> the rule, whose success is a transition to Empty that becomes
visible only when its transaction-log append completes.
"""

from __future__ import annotations

from typing import NamedTuple

from eoscheck.checker.ops import CONCRETE

from ..errors import Errors
from ..state import TxnMetadata
from ..transactions.codes import TxnState
from .fencing import fence_producer_epoch
from .init_producer_id import init_producer_id_decision


class CoordinatorConfig(NamedTuple):
    kip360: bool
    shipped: bool
    max_epoch: int
    persist_last_epoch: bool
    persist_prev_producer_id: bool


class InitPidResult(NamedTuple):
    error: int
    #: the transition to append (None: answer now with ``error`` and the current pid/epoch)
    transit: TxnMetadata | None
    #: metadata changed without an append round trip (the fence of an Ongoing transaction)
    fenced: TxnMetadata | None
    used_new_producer_id: bool


def handle_init_producer_id(meta: TxnMetadata, pending: bool, req_producer_id: int, req_epoch: int,
                            new_producer_id: int, cfg: CoordinatorConfig) -> InitPidResult:
    if not cfg.kip360:
        req_producer_id, req_epoch = -1, -1  # the request has no such fields before v3
    if pending:
        return InitPidResult(Errors.CONCURRENT_TRANSACTIONS, None, None, False)
    if meta.exists and meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
        return InitPidResult(Errors.CONCURRENT_TRANSACTIONS, None, None, False)
    if meta.exists and meta.state == TxnState.ONGOING:
        expected = req_producer_id >= 0 and req_epoch >= 0
        if expected and req_producer_id not in (meta.producer_id, meta.prev_producer_id):
            # validPid (shipped) / "a different producer id" (the KIP): fenced before the state switch
            return InitPidResult(Errors.PRODUCER_FENCED if cfg.shipped else Errors.INVALID_PRODUCER_EPOCH,
                                 None, None, False)
        epoch = fence_producer_epoch(CONCRETE, max_epoch=cfg.max_epoch, epoch=meta.epoch,
                                     has_failed_epoch_fence=meta.has_failed_epoch_fence)
        fenced = meta._replace(epoch=epoch, last_epoch=-1, state=int(TxnState.PREPARE_ABORT),
                               prev_producer_id=meta.producer_id if cfg.shipped else meta.prev_producer_id)
        return InitPidResult(Errors.CONCURRENT_TRANSACTIONS, None, fenced, False)
    out = init_producer_id_decision(
        CONCRETE, kip360=cfg.kip360, shipped=cfg.shipped, max_epoch=cfg.max_epoch, meta_exists=meta.exists,
        meta_producer_id=meta.producer_id, meta_prev_producer_id=meta.prev_producer_id, meta_epoch=meta.epoch,
        meta_last_epoch=meta.last_epoch, req_producer_id=req_producer_id, req_epoch=req_epoch,
        new_producer_id=new_producer_id)
    if out.error != Errors.NONE:
        return InitPidResult(int(out.error), None, None, False)
    transit = TxnMetadata(True, out.producer_id, out.prev_producer_id, out.epoch, out.last_epoch,
                          int(TxnState.EMPTY), False)
    return InitPidResult(Errors.NONE, transit, None, out.producer_id == new_producer_id)


def complete_transaction(meta: TxnMetadata) -> TxnMetadata:
    """Every marker of a PrepareCommit/PrepareAbort landed: CompleteCommit/CompleteAbort is written
    (``prepareComplete``; clears hasFailedEpochFence)."""
    target = TxnState.COMPLETE_COMMIT if meta.state == TxnState.PREPARE_COMMIT else TxnState.COMPLETE_ABORT
    return meta._replace(state=int(target), has_failed_epoch_fence=False)

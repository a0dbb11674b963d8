"""The transaction coordinator's request handling for one transactional id, over concrete state.

``handle_init_producer_id`` is ``TransactionCoordinator.handleInitProducerId`` around the shared
rule ``init_producer_id_decision``, in Kafka's order: a pending transition ->
CONCURRENT_TRANSACTIONS (after KafkaApis' INVALID_REQUEST for exactly one of producer id and epoch);
a request producer id/epoch that fails ``validPid`` -> PRODUCER_FENCED
(whatever the state); PrepareCommit/PrepareAbort -> CONCURRENT_TRANSACTIONS; Ongoing -> fence the
open transaction (``transactions.timeout.init_producer_id_on_ongoing``: epoch bump via
``fence_producer_epoch``, PrepareAbort written, CONCURRENT_TRANSACTIONS so the client retries);
Empty / CompleteX / no metadata -> the rule, whose success is a transition to Empty that becomes
visible only when its transaction-log append completes. The KIP's text says nothing about
Prepare/Ongoing for a re-initialising producer; the designed variant applies the same producer-id
check (answering INVALID_PRODUCER_EPOCH, the KIP's error), so the variants differ only where the
KIP does.
"""

from __future__ import annotations

from typing import NamedTuple

from eoscheck.checker.ops import CONCRETE

from ..errors import Errors
from ..state import TxnMetadata
from ..transactions.codes import TxnState
from ..transactions.markers import complete_if_done
from ..transactions.metadata import transit
from ..transactions.timeout import init_producer_id_on_ongoing
from .init_producer_id import init_producer_id_decision, valid_producer_id


class CoordinatorConfig(NamedTuple):
    kip360: bool
    shipped: bool
    max_epoch: int
    persist_last_epoch: bool
    persist_prev_producer_id: bool
    #: transaction.version 2 (KIP-890 part 2): EndTxn bumps the epoch
    tv2: bool = False
    #: with tv2: the fence-abort's second bump (the 2024 snapshot, 4.0.0); False since KAFKA-19367 (4.0.1, 4.1.0)
    tv2_fence_double_bump: bool = True
    #: as shipped, which transitions record the producer id they start from as previousProducerId:
    #: every one (4.1.0+: KAFKA-15370 [1/N], kept by the Java TransactionMetadata of KAFKA-18884), or False: only
    #: the InitProducerId transition to Empty and a TV2 CompleteX (2.5.0 .. 4.0.1; fidelity audit B1)
    prev_pid_every_transition: bool = True


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
    if (req_producer_id == -1) != (req_epoch == -1):
        # KafkaApis refuses exactly one of ProducerId / ProducerEpoch before the coordinator sees it
        return InitPidResult(Errors.INVALID_REQUEST, None, None, False)
    if pending:
        return InitPidResult(Errors.CONCURRENT_TRANSACTIONS, None, None, False)
    expected = req_producer_id >= 0 and req_epoch >= 0
    if cfg.kip360 and expected and meta.exists and meta.state not in (TxnState.EMPTY, TxnState.COMPLETE_COMMIT,
                                                                      TxnState.COMPLETE_ABORT):
        # (for Empty/CompleteX the shared rule checks validPid itself)
        valid = valid_producer_id(CONCRETE, max_epoch=cfg.max_epoch, meta_exists=meta.exists,
                                  meta_producer_id=meta.producer_id, meta_prev_producer_id=meta.prev_producer_id,
                                  meta_epoch=meta.epoch, req_producer_id=req_producer_id, req_epoch=req_epoch)
        if not valid:
            return InitPidResult(Errors.PRODUCER_FENCED if cfg.shipped else Errors.INVALID_PRODUCER_EPOCH,
                                 None, None, False)
    if meta.exists and meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
        return InitPidResult(Errors.CONCURRENT_TRANSACTIONS, None, None, False)
    if meta.exists and meta.state == TxnState.ONGOING:
        # the transactions room's fence + abort (PrepareEpochFence -> PrepareAbort, CONCURRENT_TRANSACTIONS)
        fenced = init_producer_id_on_ongoing(meta, max_epoch=cfg.max_epoch, tv2=cfg.tv2,
                                             tv2_double_bump=cfg.tv2_fence_double_bump)
        # PrepareEpochFence / PrepareAbort: the Scala coordinator and the KIP keep previousProducerId
        keep = not (cfg.shipped and cfg.prev_pid_every_transition)
        new = fenced.meta._replace(prev_producer_id=meta.prev_producer_id) if keep else fenced.meta
        return InitPidResult(fenced.error, None, new, False)
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


def complete_transaction(meta: TxnMetadata, *, shipped: bool = True) -> TxnMetadata:
    """Every marker of a PrepareCommit/PrepareAbort landed: CompleteCommit/CompleteAbort is written
    (``markers.complete_if_done``: ``prepareComplete`` clears hasFailedEpochFence). ``shipped``: the
    transition records the producer id as previousProducerId (4.1.0+, KAFKA-15370 [1/N], and 2.5.0 .. 4.0.1
    for TV2); False keeps it (the KIP's design, and 2.5.0 .. 4.0.1's TV0/TV1 CompleteX)."""
    done, wrote = complete_if_done(meta)
    if not wrote:
        raise ValueError(f"transaction in state {meta.state} with partitions {meta.partitions} cannot complete")
    return done if shipped else done._replace(prev_producer_id=meta.prev_producer_id)


def transaction_transition(meta: TxnMetadata, state: int, *, every_transition: bool) -> TxnMetadata:
    """A transaction transition of a client request (AddPartitionsToTxn, EndTxn; TV0/TV1):
    ``every_transition`` is 4.1.0+ (KAFKA-15370 [1/N]; the Java coordinator too), which records the producer
    id it starts from as previousProducerId; 2.5.0 .. 4.0.1's ``completeTransitionTo`` keeps it for Ongoing
    and PrepareX, and so does the KIP's design (fidelity audit B1)."""
    if every_transition:
        return transit(meta, state=int(state))
    return meta._replace(state=int(state))

"""The transactional producer's InitProducerId handling (``TransactionManager.InitProducerIdHandler``).

NONE -> READY with the returned pair; CONCURRENT_TRANSACTIONS and coordinator errors -> retry
the same request; PRODUCER_FENCED / INVALID_PRODUCER_EPOCH -> fatal ProducerFencedException;
anything else (UNKNOWN_SERVER_ERROR, INVALID_REQUEST) -> fatal.
"""

from __future__ import annotations

from ..errors import RETRIABLE, Errors
from ..state import (
    INIT_FATAL,
    INIT_FENCED,
    INIT_INITIALIZING,
    INIT_READY,
    InitPidRequest,
    TxnClient,
)
from . import txn_responses as tr

HANDLED, RETRYING, DROPPED_STALE = 0, 1, 2


def begin_init(client: TxnClient, client_id: int, producer_id: int, epoch: int,
               new_instance: bool = False) -> tuple[TxnClient, InitPidRequest]:
    """Send InitProducerId carrying (producer_id, epoch) (-1, -1 for a new instance)."""
    attempt = client.attempt + 1
    new = client._replace(phase=INIT_INITIALIZING, attempt=attempt, req_producer_id=producer_id, req_epoch=epoch,
                          started=-1 if new_instance else client.started)
    return new, InitPidRequest(client_id, attempt, producer_id, epoch)


def resend(client: TxnClient, client_id: int, *, new_connection: bool) -> tuple[TxnClient, InitPidRequest]:
    """A retry carries the same producer id and epoch as the first attempt. After a timeout the
    connection is new (a new attempt: responses to the old one are never read); after a retriable
    error response the same attempt is simply sent again."""
    attempt = client.attempt + 1 if new_connection else client.attempt
    return (client._replace(attempt=attempt),
            InitPidRequest(client_id, attempt, client.req_producer_id, client.req_epoch))


def on_init_response(client: TxnClient, error: int, producer_id: int, epoch: int) -> TxnClient | None:
    """The client after a response to its current attempt; None means: retry the request."""
    if error == Errors.NONE:
        return client._replace(phase=INIT_READY, producer_id=producer_id, epoch=epoch)
    if error in RETRIABLE:
        return None
    if error in (Errors.PRODUCER_FENCED, Errors.INVALID_PRODUCER_EPOCH):
        return client._replace(phase=INIT_FENCED)
    return client._replace(phase=INIT_FATAL)


def on_txn_error(client: TxnClient, client_id: int, error: int, *, kip360: bool,
                 pid_mapping_fatal: bool = False, api: str = "EndTxn") -> tuple[TxnClient, InitPidRequest | None]:
    """The client after an AddPartitionsToTxn/EndTxn error, by the client's table
    (``txn_responses.on_txn_response``; ``kip360``: canBumpEpoch, a KIP-360 client and coordinator).
    An abortable error with an epoch bump re-initialises with the client's pair: for
    INVALID_PRODUCER_ID_MAPPING ``beginCompletingTransaction`` skips EndTxn and sends InitProducerId at
    once (2.5-3.9; the instances' transactions carry no data, so the abort has nothing else to do).
    PRODUCER_FENCED fences it; a fatal error is fatal: INVALID_PRODUCER_ID_MAPPING before KIP-360 and,
    with ``pid_mapping_fatal``, in the 4.0+ client (KAFKA-18019). This coordinator never answers
    TRANSACTION_ABORTABLE or UNKNOWN_PRODUCER_ID, the abortable errors without an immediate bump."""
    r = tr.on_txn_response(api, error, can_bump_epoch=kip360, pid_mapping_fatal=pid_mapping_fatal)
    if r.action == tr.ABORTABLE and r.bump_epoch and error == Errors.INVALID_PRODUCER_ID_MAPPING:
        return begin_init(client, client_id, client.producer_id, client.epoch)
    if r.action != tr.FATAL:
        raise ValueError(f"{api} answered {Errors(error).name}: not an answer this client model reacts to")
    return client._replace(phase=INIT_FENCED if error == Errors.PRODUCER_FENCED else INIT_FATAL), None

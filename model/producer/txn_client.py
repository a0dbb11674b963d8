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


def on_txn_error(client: TxnClient, client_id: int, error: int, *,
                 kip360: bool) -> tuple[TxnClient, InitPidRequest | None]:
    """The client after an AddPartitionsToTxn/EndTxn error: a KIP-360 client re-initialises with its
    pair on INVALID_PRODUCER_ID_MAPPING; PRODUCER_FENCED fences it; anything else is fatal. This is
    the 2.5-3.9 client (fidelity audit C3): since 4.0 INVALID_PRODUCER_ID_MAPPING is fatal
    (KAFKA-18019) and a TV2 client does not re-initialise after an abortable error (KAFKA-17898)."""
    if error == Errors.INVALID_PRODUCER_ID_MAPPING and kip360:
        return begin_init(client, client_id, client.producer_id, client.epoch)
    return client._replace(phase=INIT_FENCED if error == Errors.PRODUCER_FENCED else INIT_FATAL), None

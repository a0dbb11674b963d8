"""``kafka.eos``: the data producers' transactional ids expire, and a zombie re-initialises after
INVALID_PRODUCER_ID_MAPPING, so that KAFKA-18019's duplicate is reachable where the client allows it.

Expiry (``transactional.id.expiration.ms``): ``TransactionStateManager.removeExpiredTransactionalIds``
writes a tombstone for an id whose state allows it (Empty, CompleteCommit, CompleteAbort) and that has
no pending transition, then drops the metadata: the same condition and effect as the instances'
``ExpireTransactionalId`` (``eos_instances``), spending the same budget, ``txn_id_expirations`` (0: no
id expires, and none of this module's rules has a binding). The expiration time itself (7 days by
default) is abstracted: an idle id may expire at any step.

The zombie (``restarts``: the previous instance of a transactional id, unaware that the new one
fenced it) may begin its next transaction, processing the input record its own position names
(``ZombieAddPartitionsToTxn``). KAFKA-18019 (PR 17822) gives the scenario: instance A processed
offset 4, B fenced A and processed offset 5, both idled past the expiration, and A then tries offset
5 "since in its view, that is next". The coordinator answers A's AddPartitionsToTxn with
PRODUCER_FENCED while it still has the id (B's epoch is above A's, fatal), and with
INVALID_PRODUCER_ID_MAPPING once the id expired: abortable for the 2.5-3.9 client (the abort skips
EndTxn and bumps with InitProducerId(producer id, epoch)), fatal for 4.0+
(``client_pid_mapping_fatal``). ``ZombieInitProducerId`` sends that InitProducerId; with no metadata
the coordinator creates it with a new producer id (KIP-360's recovery from an unknown id), so A holds
the id's current producer id and continues as its live instance, trying its record again (the
application's "abort the transaction and try again" loop, as in the JIRA's scenario): A and B's
processing of offset 5 are both committed.

Abstractions: A's transaction attempt sends nothing before its AddPartitionsToTxn is answered, so
begin and AddPartitionsToTxn are one step, and an answer of NONE (the coordinator still taking A's
epoch: B has not initialised yet) is not modelled (a zombie does not produce new batches, as in
``kafka.eos``); the zombie re-initialises only once the new instance has (its InitProducerId would
be fenced by, or fence, that instance's first one). When the zombie's InitProducerId succeeds, the two
instances swap slots (``adopt``): ``producer[t]`` is the instance the coordinator maps the id to, and
the one it replaces lives on as the zombie, unaware, with its own requests on connections the new one
never reads. Without a group only (``members`` = 0).
"""

from __future__ import annotations

from typing import Any

from eoscheck.checker.compose import precondition, rule

from ..coordinator.txn_log import NO_LOG_VALUE, NO_METADATA
from ..errors import Errors, error_name
from ..producer import transactional as tx
from ..protocol import Protocol
from ..state import TXN_ABORTABLE, TXN_BUMP, TXN_INIT, TXN_READY, TxnMetadata, TxnProducer
from ..transactions.add_partitions import add_partitions_to_txn
from ..transactions.codes import NO_PENDING
from ..transactions.states import EXPIRATION_ALLOWED

#: this module's actions (no bindings while ``txn_id_expirations`` or ``producers`` is 0, or with a group)
ACTIONS = frozenset({"ExpireDataTransactionalId", "ZombieAddPartitionsToTxn", "ZombieInitProducerId"})


def may_expire(meta: TxnMetadata) -> bool:
    """``removeExpiredTransactionalIds``' condition on the metadata (its time condition is abstracted):
    the id exists, its state allows expiration and no transition is pending."""
    return meta.exists and meta.pending_state == NO_PENDING and meta.state in EXPIRATION_ALLOWED


def adopt(replaced: TxnProducer, reinitialised: TxnProducer) -> TxnProducer:
    """The re-initialised zombie as the transactional id's live instance: its own producer id, epoch,
    transaction version and input position (its view of the next record), with the ghosts (record
    numbering, transactions, inputs) of the instance it replaces carried on as ``tx.restart`` carries
    them, on new connections."""
    fresh = tx.with_producer_id(tx.restart(replaced), reinitialised.producer_id, reinitialised.epoch)
    return fresh._replace(phase=TXN_READY, position=reinitialised.position, tv=reinitialised.tv)


def _expiring(machine: Any) -> range:
    return range(machine.n_producers) if machine.data_txn_id_expiry else range(0)


def _reinitialising(machine: Any) -> range:
    return range(machine.n_producers) if machine.data_txn_id_expiry and machine.bounds["restarts"] else range(0)


class TxnIdExpiry:
    """The rules of the module doc; ``EosMachine`` calls ``_txn_id_expiry_setup`` before compiling."""

    n_producers: int
    bounds: dict[str, int]
    members: int
    transactions: int
    consume: bool
    input_records: int
    n_partitions: int
    txn_errors: dict[str, bool]
    protocol: Protocol
    #: the data producers' ids may expire (``txn_id_expirations`` > 0, producers, no group)
    data_txn_id_expiry: bool = False

    def _txn_id_expiry_setup(self, bounds: dict[str, int]) -> None:
        self.data_txn_id_expiry = bool(bounds.get("txn_id_expirations", 0) and bounds.get("producers", 0)
                                       and not bounds.get("members", 0))

    def _txn_id_expiry_idle(self) -> set[str]:
        if not self.data_txn_id_expiry:
            return set(ACTIONS)
        return set() if self.bounds["restarts"] else {"ZombieAddPartitionsToTxn", "ZombieInitProducerId"}

    @precondition(lambda self, txn: may_expire(txn))
    @rule("ExpireDataTransactionalId", params={"t": _expiring}, reads=("txn[t]",), writes=("txn[t]", "txn_log[t]"),
          spends="txn_id_expirations")
    def expire_data_txn_id(self, txn: TxnMetadata) -> Any:
        """transactional.id.expiration.ms: the idle id's tombstone is written and its metadata removed."""
        return {"txn": NO_METADATA, "txn_log": NO_LOG_VALUE}

    @precondition(lambda self, zombie: zombie != () and zombie.phase == TXN_READY and zombie.txn < self.transactions
                  and (not self.consume or 0 <= zombie.position < self.input_records))
    @rule("ZombieAddPartitionsToTxn", params={"t": _reinitialising}, reads=("zombie[t]", "txn[t]"),
          writes=("zombie[t]",), results=("error",), show={"error": error_name})
    def zombie_add_partitions(self, zombie: TxnProducer, txn: TxnMetadata) -> Any:
        """The zombie begins its next transaction and sends AddPartitionsToTxn; the coordinator refuses
        it (fenced, or the id no longer mapped to its producer id) and, the error being abortable, the
        application aborts: nothing was sent, and after InvalidPidMappingException the abort skips
        EndTxn and InitProducerId(producer id, epoch) follows."""
        out = add_partitions_to_txn(txn, zombie.producer_id, zombie.epoch, tuple(range(self.n_partitions)),
                                    pending_first=self.protocol.add_partitions_pending_first)
        if out.error == Errors.NONE:
            return None  # the coordinator still takes the zombie's epoch: not modelled (module doc)
        client = tx.on_coordinator_error(zombie, "AddPartitionsToTxn", out.error, **self.txn_errors)
        if client is None:
            return None  # retriable: sent again later, nothing changes
        if client.phase == TXN_ABORTABLE:
            client = client._replace(phase=TXN_BUMP if client.bump_after_abort else TXN_READY, bump_after_abort=False)
        return {"zombie": client, "error": int(out.error)}

    @precondition(lambda self, zombie, producer: zombie != () and zombie.phase == TXN_BUMP and producer.phase != TXN_INIT)
    @rule("ZombieInitProducerId", params={"t": _reinitialising},
          reads=("zombie[t]", "producer[t]", "txn[t]", "next_producer_id"),
          writes=("zombie[t]", "producer[t]", "txn[t]", "txn_log[t]", "next_producer_id"), results=("error",),
          show={"error": error_name})
    def zombie_init_producer_id(self, zombie: TxnProducer, producer: TxnProducer, txn: TxnMetadata,
                                next_producer_id: int) -> Any:
        """The zombie's InitProducerId(producer id, epoch) (the coordinator's handler, as the live
        instance's); once it holds the id's producer id and epoch it is the live instance (``adopt``)."""
        out = self.init_producer_id(producer=zombie, txn=txn, next_producer_id=next_producer_id)  # type: ignore[attr-defined]
        if out is None:
            return None
        client = out.pop("producer", None)
        if client is None or client.phase != TXN_READY:
            return {**out, **({"zombie": client} if client is not None else {})}
        return {**out, "producer": adopt(producer, client), "zombie": producer}


__all__ = ["ACTIONS", "TxnIdExpiry", "adopt", "may_expire"]

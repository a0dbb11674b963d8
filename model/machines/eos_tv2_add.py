"""``kafka.eos`` with KIP-890 part 2's implicit partition add (``Protocol.tv2_partition_add`` leader, or the
counterfactual leader-epoch-blind): a TV2 client sends no AddPartitionsToTxn for its output partitions, and
the leader adds a partition with the transaction coordinator before it appends the producer's batch there,
unless the producer has a transaction open on the partition at the batch's epoch. The coordinator's
answer to that add reaches the batch as ``AddPartitionsToTxnManager`` and ``ReplicaManager`` convert it,
the same conversion as KIP-890 part 1's verification (``partition.verification.verification_produce_error``).

A subclass rather than a branch in ``EosMachine``: its HandleProduce writes the coordinator's
metadata, so it is memoised on more slots than the default one. ``EosMachine(protocol, ...)``
returns this class only when the switch asks for it (``EosMachine.__new__``), so the default
configurations compile the rules they always did.

Abstractions: the leader's AddPartitionsToTxn and the append are one step (the VerificationGuard
makes verify-then-append atomic) unless ``verification_steps`` puts them apart (``VerifyProduce`` below,
``eos_verification``): then the race KAFKA-18575's PR describes is reachable, a batch of the next
transaction whose add started before the previous transaction's marker, refused INVALID_TXN_STATE at its
append once that marker cleared its verification entry (the trunk before February 3, 2025:
``tv2_marker_keeps_verification`` off). Every trunk with the leader's add asked for the transaction at the
batch's epoch, in the leader's check and the append's (``hasOngoingTransaction(producerId, producerEpoch)``
since KAFKA-14563's commit; ``ongoing_at_epoch``); from January 22 to February 3, 2025 it also answered
CONCURRENT_TRANSACTIONS for a transaction open at a lower epoch (``tv2_leader_concurrent_below_epoch``,
KAFKA-18575). The __consumer_offsets
partition still joins with the client's AddOffsetsToTxn; a group's members and the instances keep
their own AddPartitionsToTxn rules, so those bounds are refused. With ``client_tv_change=upgrade`` the
clients start on TV1 (their own AddPartitionsToTxn, the leader's verify-only check) and the leader
takes a batch's transaction version from its client's current one, which the produce request's
version carries: exact while the client switches only with nothing in flight (a batch of the last
TV1 transaction still on the network after a delivery timeout would be taken for a TV2 one).
Upgrading, the client bumps its epoch unless ``tv2_upgrade_bumps_epoch`` is off (KAFKA-18227).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from eoscheck.checker.compose import precondition, rule
from eoscheck.checker.registry import SwitchValue

from ..errors import Errors, error_name
from ..partition.producer_state import find_entry
from ..partition.txn_produce import AWAITED, answer_verification, open_below, refuse_before_verification
from ..partition.verification import SENTINEL, produce_verification_error, verification_produce_error
from ..protocol import ClientTvChange, Protocol, Tv2PartitionAdd
from ..state import TXN_BUMP, TXN_READY, ProduceRequest, Routed, TxnMetadata, TxnPartitionState, TxnProducer
from ..transactions.add_partitions import add_partitions_to_txn
from .eos import EosMachine, _solo
from .eos_endtxn import LateEndTxn, _changing
from .eos_verification import GUARD_NAMES, _answering, answer_name


def leader_skips_add(leader: TxnPartitionState, producer_id: int, epoch: int, epoch_blind: bool) -> bool:
    """The leader appends without adding the partition: the producer has a transaction open on it at the
    batch's epoch (``UnifiedLog.hasOngoingTransaction(producerId, producerEpoch)``, in every trunk with the
    leader's add: KAFKA-14563's commit made it epoch-aware) or, in the counterfactual ``epoch_blind``
    (3.x's ``hasOngoingTransaction(producerId)``), at any epoch: a TV2 batch of the next transaction then
    joins the one whose marker has not arrived yet."""
    entry = find_entry(leader.producers, producer_id)
    if entry is None or entry.current_txn_first_offset < 0:
        return False
    return epoch_blind or entry.epoch == epoch


def open_below_epoch(leader: TxnPartitionState, producer_id: int, epoch: int) -> bool:
    """``open_below`` for the producer's entry at ``leader``."""
    return open_below(find_entry(leader.producers, producer_id), epoch)


#: the produce error of the leader's early CONCURRENT_TRANSACTIONS: ``maybeStartTransactionVerificationForPartition``
#: hands it to ``postVerificationCallback`` without asking the coordinator, which retries it as NOT_ENOUGH_REPLICAS
EARLY_CONCURRENT = produce_verification_error(int(Errors.CONCURRENT_TRANSACTIONS))


class Tv2LeaderAddMachine(EosMachine):
    """``kafka.eos`` whose TV2 leaders add partitions to transactions (module doc)."""

    leader_adds_partitions: ClassVar[bool] = True

    def __init__(self, protocol: Protocol, bounds: Mapping[str, int], memoize: bool = True,
                 extensions: Mapping[str, SwitchValue] | None = None) -> None:
        if bounds.get("members", 0) or bounds.get("instances", 0):
            raise ValueError(f"tv2_partition_add={protocol.tv2_partition_add.value} is modelled for producers without "
                             "a group or instances (members = instances = 0)")
        #: the transaction version of the batch HandleProduce is handling (``produce_verification`` reads it)
        self._batch_tv = 2
        #: ``hasOngoingTransaction(producerId, epoch)`` (KAFKA-14563's commit) in the append's guard check too;
        #: the counterfactual asks 3.x's ``hasOngoingTransaction(producerId)`` there as at the start
        self.ongoing_at_epoch = protocol.tv2_partition_add == Tv2PartitionAdd.LEADER
        #: KAFKA-18575's ConcurrentTransactionsException, at the leader's check and the append's
        self.concurrent_below_epoch = protocol.tv2_leader_concurrent_below_epoch
        self._epoch_blind = protocol.tv2_partition_add == Tv2PartitionAdd.LEADER_EPOCH_BLIND
        super().__init__(protocol, bounds, memoize=memoize, extensions=extensions)
        if protocol.client_tv_change == ClientTvChange.NONE:
            # every producer is a TV2 client (``Protocol.consistency_error``): none sends AddPartitionsToTxn,
            # so coverage must not list it as never fired
            self.actions = {name: params for name, params in self.actions.items() if name != "AddPartitionsToTxn"}

    @precondition(lambda self, producer: producer.phase == TXN_READY and producer.txn < self.transactions and (
        not self.consume or 0 <= producer.position < self.input_records))
    @rule("BeginTransaction", params={"t": _solo}, reads=("producer[t]", "now"), writes=("producer[t]",),
          results=("txn",))
    def begin_transaction(self, producer: TxnProducer, now: int) -> Any:
        """beginTransaction and the sends; a TV2 client drains to its output partitions at once (the
        leader adds them), so they count as added."""
        out = EosMachine.begin_transaction(self, producer=producer, now=now)
        client = out["producer"]
        if client.tv >= 2:
            client = client._replace(added=sum(1 << i for i, part in enumerate(client.parts) if part.batches))
        return {**out, "producer": client}

    def produce_verification(self, partition: int, leader: TxnPartitionState, txn: TxnMetadata, producer_id: int,
                             epoch: int) -> int:
        """The coordinator's answer to the leader's AddPartitionsToTxn for a TV2 batch (NONE when the
        leader skips the add): it takes the place of KIP-890 part 1's verify-only request."""
        if self._batch_tv < 2:  # a TV1 client's batch (before an upgrade): KIP-890 part 1's verification
            return EosMachine.produce_verification(self, partition, leader, txn, producer_id, epoch)
        if self.stale_at_start(leader, producer_id, epoch):
            return int(Errors.INVALID_PRODUCER_EPOCH)  # KAFKA-18042: no add is sent
        if self.concurrent_below_epoch and open_below_epoch(leader, producer_id, epoch):
            return EARLY_CONCURRENT
        if leader_skips_add(leader, producer_id, epoch, self._epoch_blind):
            return int(Errors.NONE)
        # the add goes through the same AddPartitionsToTxnManager handler as KIP-890 part 1's verification, and
        # its answer through ReplicaManager's: PRODUCER_FENCED -> INVALID_PRODUCER_EPOCH (abortable for a 2.7+
        # client), CONCURRENT_TRANSACTIONS -> NOT_ENOUGH_REPLICAS (retried). The operation is addPartition, which
        # from 4.0.0 hands a TRANSACTION_ABORTABLE on as it is (only defaultError converts it); an add never answers
        # it, so ``generic_error`` changes nothing here
        added = add_partitions_to_txn(txn, producer_id, epoch, (partition,),
                                      pending_first=self.protocol.add_partitions_pending_first)
        return verification_produce_error(int(added.error), generic_error=False)

    def tv2_entry_at_append(self, leader: TxnPartitionState, producer_id: int, epoch: int) -> bool:
        """The one-step HandleProduce's TV2 batch is appended under the entry the leader's add created (it did
        not skip the add: no transaction open there at the batch's epoch); a TV1 client's as in ``EosMachine``."""
        if self._batch_tv < 2:
            return EosMachine.tv2_entry_at_append(self, leader, producer_id, epoch)
        return not leader_skips_add(leader, producer_id, epoch, self._epoch_blind)

    @rule("HandleProduce", receive="requests", params=("partition", "client", "record"),
          reads=("leader[partition]", "txn[client]", "producer[client]"),
          writes=("leader[partition]", "txn[client]", "txn_log[client]"), sends=("responses",),
          results=("seq", "epoch", "error"), show={"error": error_name})
    def handle_produce(self, partition: int, client: int, msg: Routed, leader: TxnPartitionState,
                       txn: TxnMetadata, producer: TxnProducer | None = None) -> Any:
        """EosMachine's HandleProduce, whose check with the coordinator is the leader's add
        (``produce_verification``), and the coordinator's metadata after that add. The batch's transaction
        version is the client's (``producer.tv``), which the produce request's version carries: the
        client switches it only between transactions, when nothing of the previous one is in flight."""
        if self.verification_split:
            return None  # VerifyProduce and AppendVerifiedProduce (below, and ``eos_verification``)
        tv = 2 if producer is None else producer.tv  # compose always passes it; None only keeps the override's signature
        self._batch_tv = tv
        out = EosMachine.handle_produce(self, partition=partition, client=client, msg=msg, leader=leader, txn=txn)
        self._batch_tv = 2
        req = msg.message
        assert isinstance(req, ProduceRequest)
        early = (self.concurrent_below_epoch and open_below_epoch(leader, req.producer_id, req.epoch)
                 or self.stale_at_start(leader, req.producer_id, req.epoch))
        if tv >= 2 and not early and not leader_skips_add(leader, req.producer_id, req.epoch, self._epoch_blind):
            added = add_partitions_to_txn(txn, req.producer_id, req.epoch, (partition,),
                                          pending_first=self.protocol.add_partitions_pending_first)
            if added.wrote:
                out = {**self._coordinator(added.meta), **out}
        return out

    @rule("VerifyProduce", receive="requests", params=("partition", "client", "record"),
          reads=("leader[partition]", "txn[client]", "now", "coordinator_epoch", "producer[client]"),
          writes=("leader[partition]", "txn[client]", "txn_log[client]"),
          results=("seq", "epoch", "guard", "answer"), show={"guard": GUARD_NAMES.__getitem__, "answer": answer_name})
    def verify_produce(self, partition: int, client: int, msg: Routed, leader: TxnPartitionState, txn: TxnMetadata,
                       now: int, coordinator_epoch: int = 0, producer: TxnProducer | None = None) -> Any:
        """``SplitVerification``'s VerifyProduce (``verification_steps``) for a TV2 batch: the leader starts
        the verification unless the producer has a transaction open there at the batch's epoch
        (``leader_skips_add``: the SENTINEL guard) or, with KAFKA-18575's check, at a lower one (the early
        CONCURRENT_TRANSACTIONS, nothing started), and the request it sends the coordinator is the add (``transactionSupportedOperation``
        addPartition, Produce v12): the coordinator's metadata after that add and its answer, converted as
        for the one-step rule. A TV1 client's batch (before an upgrade) is KIP-890 part 1's verify-only
        request."""
        req = msg.message
        assert isinstance(req, ProduceRequest)
        if producer is not None and producer.tv < 2:
            self._batch_tv = producer.tv
            out = EosMachine.verify_produce(self, partition=partition, client=client, msg=msg, leader=leader, txn=txn,
                                            now=now, coordinator_epoch=coordinator_epoch)
            self._batch_tv = 2
            return out
        if not self.may_hold(leader, client, req):
            return None
        if self.stale_at_start(leader, req.producer_id, req.epoch):
            return self.refused_at_start(leader, req)
        if self.concurrent_below_epoch and open_below_epoch(leader, req.producer_id, req.epoch):
            # no verification entry and no request to the coordinator: the error goes straight to the callback
            after = refuse_before_verification(leader, req, EARLY_CONCURRENT)
            return {"leader": after, "seq": req.seq, "epoch": req.epoch, "guard": SENTINEL,
                    "answer": EARLY_CONCURRENT}
        if leader_skips_add(leader, req.producer_id, req.epoch, self._epoch_blind):
            return self.held(leader, req, None, now)
        # the operation is addPartition, whose supportsEpochBump the new entry records (4.0.0, KAFKA-18654): a
        # marker at the entry's epoch then keeps it (``write_marker``); before, no entry had the flag
        bump = self.protocol.tv2_marker_keeps_verification or self.new_producer_seq_zero
        if self.verification_answers:  # the add goes to the coordinator, which writes it when it answers
            return self.held(leader, req, AWAITED, now, sent_to=coordinator_epoch, adds=1, supports_epoch_bump=bump)
        # the same handler as the one-step rule's add, so 4.0.0's pending-first order too (KAFKA-18660)
        added = add_partitions_to_txn(txn, req.producer_id, req.epoch, (partition,),
                                      pending_first=self.protocol.add_partitions_pending_first)
        out = self.held(leader, req, verification_produce_error(int(added.error), generic_error=False), now,
                        supports_epoch_bump=bump)
        return {**self._coordinator(added.meta), **out} if added.wrote else out

    @rule("AnswerVerification", params={"t": "producer", "p": _answering},
          reads=("leader[p]", "txn[t]", "coordinator_epoch"), writes=("leader[p]", "txn[t]", "txn_log[t]"),
          results=("record", "answer"), show={"answer": error_name})
    def answer_verification_rule(self, t: int, p: int, leader: TxnPartitionState, txn: TxnMetadata,
                                 coordinator_epoch: int) -> Any:
        """``SplitVerification``'s AnswerVerification for a TV2 leader's add (``verification_answers``): the
        coordinator handles the add when the request reaches it (``handleAddPartitionsToTransaction``, 4.0), so
        it adds the partition to the transaction it has then, and writes that to __transaction_state; a TV1
        client's batch (before an upgrade) is KIP-890 part 1's verify-only request, answered from the metadata."""
        outs = []
        for item in leader.pending:
            if item.answer != AWAITED or item.request.client != t:
                continue
            req = item.request
            meta: dict[str, Any] = {}
            if not item.adds:
                self._batch_tv = 0
                answer = self.coordinator_answer(p, item, txn, coordinator_epoch)
                self._batch_tv = 2
            elif item.sent_to != coordinator_epoch:
                answer = verification_produce_error(int(Errors.NOT_COORDINATOR), generic_error=False)
            else:
                added = add_partitions_to_txn(txn, req.producer_id, req.epoch, (p,),
                                              pending_first=self.protocol.add_partitions_pending_first)
                answer = verification_produce_error(int(added.error), generic_error=False)
                meta = self._coordinator(added.meta) if added.wrote else {}
            outs.append({**meta, "leader": answer_verification(leader, item, answer), "record": req.record,
                         "answer": answer})
        return outs or None

    @precondition(lambda self, producer: producer.phase == TXN_READY and producer.tv == self.tv_from
                  and (not self.consume or producer.position >= 0))
    @rule("ClientTransactionVersion", params={"t": _changing}, reads=("producer[t]",), writes=("producer[t]",),
          results=("tv",))
    def client_transaction_version(self, producer: TxnProducer) -> Any:
        """The client switches its transaction version between two transactions; upgrading to TV2 it
        bumps its epoch first with InitProducerId(producer id, epoch) (4.0.0, KAFKA-18227), which the
        coordinator answers only once the last TV1 transaction completed."""
        out = LateEndTxn.client_transaction_version(self, producer=producer)
        client = out["producer"]
        if client.tv >= 2 and self.protocol.tv2_upgrade_bumps_epoch:
            client = client._replace(phase=TXN_BUMP)
        return {**out, "producer": client}

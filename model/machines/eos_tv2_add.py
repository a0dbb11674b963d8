"""``kafka.eos`` with KIP-890 part 2's implicit partition add (``Protocol.tv2_partition_add`` leader or
leader-epoch-blind): a TV2 client sends no AddPartitionsToTxn for its output partitions, and the leader
adds a partition with the transaction coordinator before it appends the producer's batch there,
unless it takes the producer's transaction to be open on the partition already.

A subclass rather than a branch in ``EosMachine``: its HandleProduce writes the coordinator's
metadata, so it is memoised on more slots than the default one. ``build`` picks this class only
when the switch asks for it, so the default configurations compile the rules they always did.

Abstractions: the leader's AddPartitionsToTxn and the append are one step (the VerificationGuard
makes verify-then-append atomic); KAFKA-18575's second outcome, a marker written between the leader's
check and its append (INVALID_TXN_STATE for the batch), is not modelled. The __consumer_offsets
partition still joins with the client's AddOffsetsToTxn.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from eoscheck.checker.compose import precondition, rule
from eoscheck.checker.registry import SwitchValue

from .. import properties as props
from ..errors import Errors, error_name
from ..partition.producer_state import find_entry
from ..partition.txn_produce import handle_txn_produce
from ..protocol import Protocol, Tv2PartitionAdd
from ..state import TXN_READY, ProduceRequest, ProduceResponse, Routed, TxnMetadata, TxnPartitionState, TxnProducer
from ..transactions.add_partitions import add_partitions_to_txn
from .eos import EosMachine, _solo


def leader_skips_add(leader: TxnPartitionState, producer_id: int, epoch: int, epoch_blind: bool) -> bool:
    """The leader appends without adding the partition: the producer has a transaction open on it
    (``UnifiedLog.hasOngoingTransaction``), at the batch's epoch (4.0.0, KAFKA-18654) or, before
    KAFKA-18575, at any epoch: a TV2 batch of the next transaction then joins the one whose marker
    has not arrived yet."""
    entry = find_entry(leader.producers, producer_id)
    if entry is None or entry.current_txn_first_offset < 0:
        return False
    return epoch_blind or entry.epoch == epoch


class Tv2LeaderAddMachine(EosMachine):
    """``kafka.eos`` whose TV2 leaders add partitions to transactions (module doc)."""

    leader_adds_partitions: ClassVar[bool] = True

    def __init__(self, protocol: Protocol, bounds: Mapping[str, int], memoize: bool = True,
                 extensions: Mapping[str, SwitchValue] | None = None) -> None:
        super().__init__(protocol, bounds, memoize=memoize, extensions=extensions)
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

    @rule("HandleProduce", receive="requests", params=("partition", "client", "record"),
          reads=("leader[partition]", "txn[client]"),
          writes=("leader[partition]", "txn[client]", "txn_log[client]"), sends=("responses",),
          results=("seq", "epoch", "error"), show={"error": error_name})
    def handle_produce(self, partition: int, client: int, msg: Routed, leader: TxnPartitionState,
                       txn: TxnMetadata) -> Any:
        """The leader adds the partition to the producer's transaction with the coordinator (unless it
        takes the transaction to be open there already), then the produce checks and the append."""
        req = msg.message
        assert isinstance(req, ProduceRequest)
        coordinator: dict[str, Any] = {}
        added = int(Errors.NONE)
        epoch_blind = self.protocol.tv2_partition_add == Tv2PartitionAdd.LEADER_EPOCH_BLIND
        if not leader_skips_add(leader, req.producer_id, req.epoch, epoch_blind):
            out_add = add_partitions_to_txn(txn, req.producer_id, req.epoch, (partition,))
            added = int(out_add.error)
            if out_add.wrote:
                coordinator = self._coordinator(out_add.meta)
        out = handle_txn_produce(leader, producer_id=req.producer_id, epoch=req.epoch, seq=req.seq,
                                 value=props.record_value(client, req.record), timestamp=req.created,
                                 max_seq=self.cfg.max_seq, cache_size=self.protocol.broker_batch_cache,
                                 unknown_producer=self.protocol.broker_unknown_producer.value,
                                 old_duplicate_error=self.protocol.broker_duplicate_sequence_error,
                                 verification_error=added)
        resp = ProduceResponse(client, msg.connection, req.record, out.error, out.offset,
                               out.partition.log_start_offset)
        return {**coordinator, "leader": self.stamped(leader, out.partition, req.seq, req.created),
                "responses": msg._replace(message=resp), "seq": req.seq, "epoch": req.epoch, "error": out.error}

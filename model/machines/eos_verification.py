"""``kafka.eos``'s KIP-890 part 1 verification as two steps, a mixin of ``EosMachine``
(``verification_steps`` > 0 with ``partition_verification``).

With the bound at 0 the leader's HandleProduce asks the coordinator and appends in one step. In Kafka
(3.6+) the two are apart: ``ReplicaManager.appendRecords`` calls ``maybeStartTransactionVerification``
(the producer's ``VerificationStateEntry`` with a new ``VerificationGuard`` unless the producer has a
transaction ongoing on the partition, which answers the SENTINEL guard), sends a verify-only
AddPartitionsToTxn through ``AddPartitionsToTxnManager`` and appends in its callback, with the guard;
``UnifiedLog.analyzeAndValidateProducerState`` refuses a transactional batch with no transaction ongoing
whose guard is not its producer's current one, and a marker or a transactional append of the producer
clears the entry (``updateProducers``). A SENTINEL batch is appended in the same request handler, but
after the log's lock was let go, so a marker can land in between too (KAFKA-19690).

``VerifyProduce`` takes the oldest request of a connection, starts the verification on the leader
(``partition.txn_produce.begin_verified_produce``) and reads the coordinator's answer at once
(``EosMachine.produce_verification``); the request waits on the leader (``TxnPartitionState.pending``, at
most ``verification_steps`` per leader) and its connection is muted, as Kafka's socket server mutes a
connection until its request is answered. ``AppendVerifiedProduce`` is the callback: the answer's error,
or the append with the guard (``finish_verified_produce``: the rooms' ``handle_txn_produce`` and the guard
rule ``verification.missing_guard_error`` the conformance leader uses too).

Abstractions: the coordinator answers when the leader starts the verification (the window modelled is
between the answer and the append; a marker between the start and the answer makes the request's guard
stale in Kafka, here the answer reflects the marker's transaction instead); verification entries do not
expire (``max_ticks`` is refused), and TxnOffsetCommit's write to ``__consumer_offsets`` keeps the
one-step rule. Refused: a leader that adds partitions itself (``tv2_partition_add`` leader modes, its own
HandleProduce) and output leader failovers (a pending request would have to fail over with its leader).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from eoscheck.checker.compose import rule
from eoscheck.checker.liveness.temporal import WF, Fairness

from .. import properties as props
from ..errors import error_name
from ..partition.txn_produce import PendingProduce, begin_verified_produce, finish_verified_produce, needs_verification
from ..partition.verification import SENTINEL, STALE
from ..state import ProduceRequest, ProduceResponse, Routed, TxnMetadata, TxnPartitionState

#: the actions of this mixin (listed only with ``verification_steps``)
SPLIT_ACTIONS = frozenset({"VerifyProduce", "AppendVerifiedProduce"})
SPLIT_FAIRNESS: tuple[Fairness, ...] = (WF("VerifyProduce"), WF("AppendVerifiedProduce"))
GUARD_NAMES = {SENTINEL: "SENTINEL", 1: "guard", STALE: "stale guard"}
#: bounds the split cannot honour, with why
_REFUSED_BOUNDS = {
    "max_ticks": "verification entries do not expire in the model",
    "output_leader_failovers": "a pending produce would have to move with its leader",
    "output_restarted_replica_failovers": "a pending produce would have to move with its leader",
    "output_snapshot_restored_failovers": "a pending produce would have to move with its leader",
}


def show_pending(leader: TxnPartitionState) -> dict[str, Any]:
    """The leader's verification entries and waiting requests, shown only while there are any (so the
    traces of the one-step rule keep their form)."""
    out: dict[str, Any] = {}
    if leader.verifications:
        out["verifications"] = [f"pid {v.producer_id}: lowest seq {v.lowest_sequence}, epoch {v.epoch}"
                                for v in leader.verifications]
    if leader.pending:
        out["verifying"] = [f"producer{p.request.client}/r{p.request.record} (pid {p.request.producer_id}, epoch "
                            f"{p.request.epoch}, seq {p.request.seq}): {GUARD_NAMES[p.guard]}, answer "
                            f"{error_name(p.answer)}" for p in leader.pending]
    return out


def rename_pending(leader: TxnPartitionState, perm: Any) -> TxnPartitionState:
    """Producer ``t``'s waiting requests are ``perm[t]``'s (kept sorted)."""
    if not leader.pending:
        return leader
    return leader._replace(pending=tuple(sorted(p._replace(request=p.request._replace(client=perm[p.request.client]))
                                                for p in leader.pending)))


def _splitting(machine: Any) -> range:
    return range(machine.n_partitions) if machine.verification_split else range(0)


class SplitVerification:
    """KIP-890 part 1's verification and append as two steps (see the module doc)."""

    protocol: Any
    cfg: Any
    n_partitions: int

    def _verification_setup(self, bounds: Mapping[str, int]) -> None:
        """This mixin's attributes; ValueError (one line) for a configuration it cannot honour."""
        self.verification_steps = steps = bounds.get("verification_steps", 0)
        self.verification_split = steps > 0
        if not steps:
            return
        if not self.protocol.partition_verification:
            raise ValueError("verification_steps needs partition_verification (KIP-890 part 1, Kafka 3.6+)")
        if self.protocol.tv2_partition_add.value != "client":
            raise ValueError(f"verification_steps is modelled for the client's AddPartitionsToTxn, not "
                             f"tv2_partition_add={self.protocol.tv2_partition_add.value}")
        for name, why in _REFUSED_BOUNDS.items():
            if bounds.get(name, 0):
                raise ValueError(f"verification_steps cannot be combined with {name} ({why})")

    def verification_idle(self, idempotent: bool) -> set[str]:
        """The actions that cannot fire: the two steps without the split; with it, the leaders' one-step
        HandleProduce (unless idempotent producers' leader shares the name)."""
        if not self.verification_split:
            return set(SPLIT_ACTIONS)
        return set() if idempotent else {"HandleProduce"}

    @rule("VerifyProduce", receive="requests", params=("partition", "client", "record"),
          reads=("leader[partition]", "txn[client]"), writes=("leader[partition]",),
          results=("seq", "epoch", "guard", "answer"), show={"guard": GUARD_NAMES.__getitem__, "answer": error_name})
    def verify_produce(self, partition: int, client: int, msg: Routed, leader: TxnPartitionState,
                       txn: TxnMetadata) -> Any:
        """The leader takes the oldest request of a connection whose request before it was answered, and
        starts its verification (``ReplicaManager.appendRecords``); the coordinator answers at once."""
        req = msg.message
        assert isinstance(req, ProduceRequest)
        if len(leader.pending) >= self.verification_steps or any(
                p.request.client == client and p.request.connection == req.connection for p in leader.pending):
            return None
        answer = None
        if needs_verification(leader, req.producer_id):
            answer = self.produce_verification(partition, leader, txn, req.producer_id, req.epoch)  # type: ignore[attr-defined]
        after = begin_verified_produce(leader, req, answer, 0)
        item = next(p for p in after.pending if p.request == req)
        return {"leader": after, "seq": req.seq, "epoch": req.epoch, "guard": item.guard, "answer": item.answer}

    @rule("AppendVerifiedProduce", params={"partition": _splitting}, reads=("leader[partition]",),
          writes=("leader[partition]",), sends=("responses",), results=("client", "record", "guard", "error"),
          show={"guard": GUARD_NAMES.__getitem__, "error": error_name})
    def append_verified_produce(self, partition: int, leader: TxnPartitionState) -> Any:
        """The verification's callback for one waiting request: the coordinator's error, or the append
        with the request's guard, and the answer on its connection."""
        outs = []
        for item in leader.pending:
            outs.append(self._append_one(partition, leader, item))
        return outs or None

    def _append_one(self, partition: int, leader: TxnPartitionState, item: PendingProduce) -> dict[str, Any]:
        req = item.request
        p = self.protocol
        out = finish_verified_produce(leader, item, value=props.record_value(req.client, req.record),
                                      max_seq=self.cfg.max_seq, cache_size=p.broker_batch_cache,
                                      unknown_producer=p.broker_unknown_producer.value,
                                      old_duplicate_error=p.broker_duplicate_sequence_error,
                                      stale_epoch_first=p.stale_epoch_before_verification,
                                      check_guard=p.verification_guard)
        resp = ProduceResponse(req.client, req.connection, req.record, out.error, out.offset,
                               out.partition.log_start_offset)
        routed = Routed(partition, req.client, req.connection, req.record, resp)
        return {"leader": out.partition, "responses": routed, "client": req.client, "record": req.record,
                "guard": item.guard, "error": out.error}

    def fairness(self) -> tuple[Fairness, ...]:
        others: tuple[Fairness, ...] = super().fairness()  # type: ignore[misc]
        return others + (SPLIT_FAIRNESS if self.verification_split else ())


__all__ = ["SPLIT_ACTIONS", "SplitVerification", "rename_pending", "show_pending"]

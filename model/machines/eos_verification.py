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

Expiry (``max_ticks``): ``ExpireProducerIds`` is ``removeExpiredProducers``, which also drops every entry
created ``producer.id.expiration.ms`` ago or earlier (3.6.0 to the 2024-10 trunk alike); a request holding
its guard then holds a stale one (``txn_produce.expire_producer_state``), and time passes only while no
request a leader holds is still awaited by its producer (``EosMachine``'s clock, as for requests on the
network). Output leader failover (``eos_failover``): the entries are the old leader's alone (never
replicated), so the new leader has none, and each request the old one held is answered as the callback
answers it on a broker that lost the leadership (``answered_at_failover``: NOT_LEADER_OR_FOLLOWER, or the
coordinator's error). A TV2 leader that adds partitions itself (``eos_tv2_add``) overrides VerifyProduce:
its request to the coordinator is the add, and the append asks for the transaction at the batch's epoch.

The coordinator's answer (``verification_answers``, fid18): at 0 the coordinator answers when the leader
starts (the window modelled is between the answer and the append); at 1 ``VerifyProduce`` only sends the
request (the held request's answer is ``AWAITED``, with the coordinator epoch it went to and whether it is a
TV2 leader's add) and ``AnswerVerification`` answers it from the coordinator's metadata when it handles it
(``TransactionCoordinator.handleVerifyPartitionsInTransaction``; NOT_COORDINATOR from a coordinator that
failed over since), so a marker, an EndTxn or a timeout abort can come between the start and the answer
too. A request still awaiting its answer at an output leader failover is answered NOT_LEADER_OR_FOLLOWER.

Abstractions: at a failover the new leader has no entry even
when it is a former leader (Kafka's broker keeps its own leftover entries until a replicated batch or
marker of the producer, or expiry, clears them: exact for a partition's first failover) and a held request
is answered at the failover (Kafka answers it when the coordinator's answer arrives, which cannot make it
an append unless the leadership came back first); TxnOffsetCommit's write to ``__consumer_offsets`` keeps
the one-step rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from eoscheck.checker.compose import rule
from eoscheck.checker.liveness.temporal import WF, Fairness

from .. import properties as props
from ..errors import Errors, error_name
from ..partition.producer_state import find_entry
from ..partition.txn_produce import (
    AWAITED,
    PendingProduce,
    answer_verification,
    begin_verified_produce,
    finish_verified_produce,
    needs_verification,
    refuse_before_verification,
)
from ..partition.verification import SENTINEL, STALE, verification_produce_error
from ..protocol import ClientTvChange, TransactionVersion
from ..state import ProduceRequest, ProduceResponse, Routed, TxnMetadata, TxnPartitionState

#: the actions of this mixin (listed only with ``verification_steps``; AnswerVerification only with
#: ``verification_answers`` too)
SPLIT_ACTIONS = frozenset({"VerifyProduce", "AppendVerifiedProduce", "AnswerVerification"})
SPLIT_FAIRNESS: tuple[Fairness, ...] = (WF("VerifyProduce"), WF("AppendVerifiedProduce"))
GUARD_NAMES = {SENTINEL: "SENTINEL", 1: "guard", STALE: "stale guard"}
#: the leader's state as the coordinator sees it when it answers: not at all (``produce_verification`` asks
#: whether the leader needs to verify; the leader decided that when it started)
_UNSEEN = TxnPartitionState((), 0, ())


def answer_name(answer: int) -> str:
    """A held request's answer for traces: the error, or that the coordinator has not answered yet."""
    return "awaited" if answer == AWAITED else error_name(answer)


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
                            f"{answer_name(p.answer)}" + _sent(p) for p in leader.pending]
    return out


def rename_pending(leader: TxnPartitionState, perm: Any) -> TxnPartitionState:
    """Producer ``t``'s waiting requests are ``perm[t]``'s (kept sorted)."""
    if not leader.pending:
        return leader
    return leader._replace(pending=tuple(sorted(p._replace(request=p.request._replace(client=perm[p.request.client]))
                                                for p in leader.pending)))


def _sent(p: PendingProduce) -> str:
    # shown only with verification_answers (so the traces of the answer at the start keep their form)
    if not p.sent_to and not p.adds:
        return ""
    return f", {'add' if p.adds else 'verify'} sent to coordinator epoch {p.sent_to}"


def _splitting(machine: Any) -> range:
    return range(machine.n_partitions) if machine.verification_split else range(0)


def _answering(machine: Any) -> range:
    return range(machine.n_partitions) if machine.verification_answers else range(0)


class SplitVerification:
    """KIP-890 part 1's verification and append as two steps (see the module doc)."""

    protocol: Any
    cfg: Any
    n_partitions: int
    #: the append asks ``hasOngoingTransaction(producerId, producerEpoch)`` (the TV2 leader-add class, 4.0)
    ongoing_at_epoch: bool = False
    #: the append's check answers CONCURRENT_TRANSACTIONS for a batch above an open transaction's epoch (KAFKA-18575)
    concurrent_below_epoch: bool = False

    def _verification_setup(self, bounds: Mapping[str, int]) -> None:
        """This mixin's attributes; ValueError (one line) for a configuration it cannot honour."""
        p = self.protocol
        #: KAFKA-14563's epoch-aware hasOngoingTransaction (4.0.0+) at the verification's start and the append's
        #: guard check (the TV2 leader-add class sets it before, from ``tv2_partition_add``)
        self.ongoing_at_epoch = self.ongoing_at_epoch or p.verification_ongoing_at_epoch
        #: KAFKA-18042 (4.1.0): a batch below its producer's epoch is refused when the verification would start
        self.stale_epoch_at_start = p.verification_rejects_lower_epoch
        #: KAFKA-18202 (4.1.0): a TV2 client's entry asks a producer without state for sequence 0
        self.new_producer_seq_zero = p.tv2_new_producer_sequence_zero
        #: the verification entries of the client-add abstraction record that their client is a TV2 one
        #: (``supportsEpochBump``: Produce v12, which every TV2 client sends from 4.0.0): set only where KAFKA-18202
        #: reads it, so the entries of the 4.0 variants keep their form. A client switching versions keeps the
        #: flag off (its batches' version is not read here)
        self.tv2_client_entries = (p.tv2_new_producer_sequence_zero and p.transaction_version == TransactionVersion.TV2
                                   and p.client_tv_change == ClientTvChange.NONE)
        self.verification_steps = steps = bounds.get("verification_steps", 0)
        self.verification_split = steps > 0
        #: the coordinator answers in a step of its own (``AnswerVerification``)
        self.verification_answers = bool(bounds.get("verification_answers", 0))
        if self.verification_answers and not steps:
            raise ValueError("verification_answers needs verification_steps (the answer is a step between them)")
        if not steps:
            return
        if not self.protocol.partition_verification:
            raise ValueError("verification_steps needs partition_verification (KIP-890 part 1, Kafka 3.6+)")

    def verification_idle(self, idempotent: bool) -> set[str]:
        """The actions that cannot fire: the two steps without the split; with it, the leaders' one-step
        HandleProduce (unless idempotent producers' leader shares the name)."""
        if not self.verification_split:
            return set(SPLIT_ACTIONS)
        answers = set() if self.verification_answers else {"AnswerVerification"}
        return answers if idempotent else answers | {"HandleProduce"}

    @rule("VerifyProduce", receive="requests", params=("partition", "client", "record"),
          reads=("leader[partition]", "txn[client]", "now", "coordinator_epoch"), writes=("leader[partition]",),
          results=("seq", "epoch", "guard", "answer"), show={"guard": GUARD_NAMES.__getitem__, "answer": answer_name})
    def verify_produce(self, partition: int, client: int, msg: Routed, leader: TxnPartitionState,
                       txn: TxnMetadata, now: int, coordinator_epoch: int) -> Any:
        """The leader takes the oldest request of a connection whose request before it was answered, and
        starts its verification (``ReplicaManager.appendRecords``); the coordinator answers at once, or
        (``verification_answers``) the request goes to it and ``AnswerVerification`` answers later."""
        req = msg.message
        assert isinstance(req, ProduceRequest)
        if not self.may_hold(leader, client, req):
            return None
        if self.stale_at_start(leader, req.producer_id, req.epoch):
            return self.refused_at_start(leader, req)
        if not needs_verification(leader, req.producer_id, self.verification_at(req.epoch)):
            return self.held(leader, req, None, now)
        bump = self.tv2_client_entries
        if self.verification_answers:
            return self.held(leader, req, AWAITED, now, sent_to=coordinator_epoch, supports_epoch_bump=bump)
        answer = self.produce_verification(partition, leader, txn, req.producer_id, req.epoch)  # type: ignore[attr-defined]
        return self.held(leader, req, answer, now, supports_epoch_bump=bump)

    def verification_at(self, epoch: int) -> int | None:
        """The epoch ``needs_verification`` asks the producer's open transaction to be at (``ongoing_at_epoch``,
        4.0.0+), or None: any epoch (3.6-3.9)."""
        return epoch if self.ongoing_at_epoch else None

    def stale_at_start(self, leader: TxnPartitionState, producer_id: int, epoch: int) -> bool:
        """KAFKA-18042 (``verification_rejects_lower_epoch``, 4.1.0): ``maybeStartTransactionVerification`` first
        throws InvalidProducerEpochException for a batch below the epoch of its producer's entry, before it asks
        ``hasOngoingTransaction`` and before any verification entry is created or updated."""
        if not self.stale_epoch_at_start:
            return False
        entry = find_entry(leader.producers, producer_id)
        return entry is not None and epoch < entry.epoch

    def refused_at_start(self, leader: TxnPartitionState, req: ProduceRequest) -> dict[str, Any]:
        """VerifyProduce's step for a batch ``stale_at_start`` refuses: nothing verified or sent to the coordinator,
        the error handed to the callback (``maybeSendPartitionsToTransactionCoordinator``'s ``Left``) as it is."""
        after = refuse_before_verification(leader, req, int(Errors.INVALID_PRODUCER_EPOCH))
        return {"leader": after, "seq": req.seq, "epoch": req.epoch, "guard": SENTINEL,
                "answer": int(Errors.INVALID_PRODUCER_EPOCH)}

    def may_hold(self, leader: TxnPartitionState, client: int, req: ProduceRequest) -> bool:
        """The leader may take the request: it holds fewer than ``verification_steps`` and none of the
        request's connection (the socket server reads no further request of a muted connection)."""
        return len(leader.pending) < self.verification_steps and not any(
            p.request.client == client and p.request.connection == req.connection for p in leader.pending)

    def held(self, leader: TxnPartitionState, req: ProduceRequest, answer: int | None, now: int, *,
             sent_to: int = 0, adds: int = 0, supports_epoch_bump: bool = False) -> dict[str, Any]:
        """VerifyProduce's step: the request held with its guard (``answer`` None: SENTINEL, nothing
        verified; ``AWAITED``: sent to the coordinator of epoch ``sent_to``) and the verification entry
        started at ``now`` (``supports_epoch_bump``: a TV2 leader's add creates it, 4.0.0)."""
        after = begin_verified_produce(leader, req, answer, now, sent_to=sent_to, adds=adds,
                                       supports_epoch_bump=supports_epoch_bump)
        item = next(p for p in after.pending if p.request == req)
        return {"leader": after, "seq": req.seq, "epoch": req.epoch, "guard": item.guard, "answer": item.answer}

    @rule("AnswerVerification", params={"t": "producer", "p": _answering},
          reads=("leader[p]", "txn[t]", "coordinator_epoch"), writes=("leader[p]",), results=("record", "answer"),
          show={"answer": error_name})
    def answer_verification_rule(self, t: int, p: int, leader: TxnPartitionState, txn: TxnMetadata,
                                 coordinator_epoch: int) -> Any:
        """The transaction coordinator answers a verification request of producer ``t``'s that leader ``p``
        sent (``TransactionCoordinator.handleVerifyPartitionsInTransaction``, 3.6.0 to trunk) from its
        metadata now, which may have moved since the leader started (an EndTxn, a timeout abort, a new
        transaction); the answer reaches the leader converted as the produce path sees it
        (``AddPartitionsToTxnManager``, then ReplicaManager's ``postVerificationCallback``)."""
        outs = []
        for item in leader.pending:
            if item.answer == AWAITED and item.request.client == t:
                answer = self.coordinator_answer(p, item, txn, coordinator_epoch)
                outs.append({"leader": answer_verification(leader, item, answer), "record": item.request.record,
                             "answer": answer})
        return outs or None

    def coordinator_answer(self, p: int, item: PendingProduce, txn: TxnMetadata, coordinator_epoch: int) -> int:
        """The produce error the coordinator's answer to ``item`` converts to. A request that went to a
        coordinator that failed over since is answered NOT_COORDINATOR by the broker that no longer owns the
        transactional id's __transaction_state partition (``TransactionStateManager.getTransactionState``),
        which ReplicaManager turns into the retriable NOT_ENOUGH_REPLICAS (KAFKA-15459, 3.6.0)."""
        if item.sent_to != coordinator_epoch:
            return verification_produce_error(int(Errors.NOT_COORDINATOR), generic_error=False)
        req = item.request
        return int(self.produce_verification(p, _UNSEEN, txn, req.producer_id, req.epoch))  # type: ignore[attr-defined]

    @rule("AppendVerifiedProduce", params={"partition": _splitting}, reads=("leader[partition]",),
          writes=("leader[partition]",), sends=("responses",), results=("client", "record", "guard", "error"),
          show={"guard": GUARD_NAMES.__getitem__, "error": error_name})
    def append_verified_produce(self, partition: int, leader: TxnPartitionState) -> Any:
        """The verification's callback for one waiting request: the coordinator's error, or the append
        with the request's guard, and the answer on its connection."""
        outs = []
        for item in leader.pending:
            if item.answer != AWAITED:
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
                                      check_guard=p.verification_guard, ongoing_at_epoch=self.ongoing_at_epoch,
                                      concurrent_below_epoch=self.concurrent_below_epoch,
                                      new_producer_seq_zero=self.new_producer_seq_zero)
        resp = ProduceResponse(req.client, req.connection, req.record, out.error, out.offset,
                               out.partition.log_start_offset)
        routed = Routed(partition, req.client, req.connection, req.record, resp)
        return {"leader": out.partition, "responses": routed, "client": req.client, "record": req.record,
                "guard": item.guard, "error": out.error}

    def answered_at_failover(self, partition: int, leader: TxnPartitionState) -> list[Routed]:
        """The answers of the requests a leader held when its leadership moved (``eos_failover``): the
        verification's callback runs on a broker that is no longer the leader, so a failed verification is
        answered with its error (``postVerificationCallback`` appends nothing for it) and any other request
        NOT_LEADER_OR_FOLLOWER (``Partition.appendRecordsToLeader`` with no local leader log), which the
        producer retries, with its sequence, to the new leader."""
        out = []
        for item in leader.pending:
            req = item.request
            # a request whose answer is still awaited (``verification_answers``) is answered as if the answer
            # were NONE: a failed one would give its error, which the producer sees from the new leader too
            # when it retries there
            error = item.answer if item.answer not in (Errors.NONE, AWAITED) else int(Errors.NOT_LEADER_OR_FOLLOWER)
            out.append(Routed(partition, req.client, req.connection, req.record,
                              ProduceResponse(req.client, req.connection, req.record, error, -1, -1)))
        return out

    def fairness(self) -> tuple[Fairness, ...]:
        others: tuple[Fairness, ...] = super().fairness()  # type: ignore[misc]
        answers = (WF("AnswerVerification"),) if self.verification_answers else ()
        return others + (SPLIT_FAIRNESS + answers if self.verification_split else ())


__all__ = ["SPLIT_ACTIONS", "SplitVerification", "rename_pending", "show_pending"]

"""The exactly-once consume-transform-produce loop (KIP-98 transactions, KIP-447 fencing).

One input partition holding ``records`` records, one output partition, the group's
``__consumer_offsets`` partition, one transaction coordinator, one group coordinator and two
application instances. Each instance runs the loop of the KIP-447 text: poll a record, begin a
transaction, AddPartitionsToTxn(output), produce the output, AddOffsetsToTxn,
TxnOffsetCommit(offset + 1 with its group metadata), EndTxn(COMMIT). The group moves the input
partition between members when a member's session times out (a paused process: it keeps running its
loop as a zombie until it notices) and when a member rejoins.

Deployment styles (``deployment`` switch):

* ``per-partition`` - one producer per input partition with a static transactional id (Kafka Streams
  ``exactly_once``, pre-KIP-447): the new owner's InitProducerId fences the old owner (epoch bump,
  abort of its open transaction, CONCURRENT_TRANSACTIONS until the abort completes).
* ``per-thread`` - one producer per instance (KIP-447, ``exactly_once_beta`` / v2): partitions move
  between producers, so fencing relies on the group: TxnOffsetCommit carries generation and member id,
  and OffsetFetch with require_stable waits (UNSTABLE_OFFSET_COMMIT) for pending offsets.

Faults: a member's session times out (``SessionTimeout``); a transaction times out on the coordinator
(``AbortTimedOutTransaction``); a produce request stays on the network while other steps happen and
may arrive after the client gave up on it (``ProduceTimesOut``, bounded by ``produce_timeouts``);
the transaction coordinator fails over (``TxnCoordinatorFailover``, bounded by ``failovers``): the
new one reloads ``__transaction_state`` with a higher coordinator epoch and resends the markers of
every PrepareCommit/PrepareAbort, while the old one's markers may still arrive
(``StaleTxnMarkerArrives``).

Abstractions - where the model is smaller than Kafka (each could hide a bug outside them):
every other request and its answer are one step, and a coordinator's log append is atomic with its
request (no pending states are ever observed); markers of one transaction are written partition by
partition in any order and a refused marker is simply not written (the coordinator stops sending);
the group coordinator completes pending offsets in the same step as the offsets-partition marker
(Kafka schedules ``handleTxnCompletion`` asynchronously, so a fetch can briefly see the old offset
after the transaction is CompleteCommit - not modelled); JoinGroup + SyncGroup complete in one step
once every member still in the group is between transactions (eager revocation commits first);
sequence numbers are not modelled (one batch per transaction and partition, never retried:
idempotence is the subject of the part-1 machines); with TV2 the coordinator's own fence-abort bumps
twice (fence + PrepareAbort, as the reference reads the snapshot; unverified by a Kafka test).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import IntEnum
from typing import Any, NamedTuple

from eoscheck.checker.liveness.temporal import WF, Fairness, TemporalProperty, always_eventually, leads_to
from eoscheck.checker.machine import Machine, Property
from eoscheck.checker.registry import Bound, ModelDef, Switch, SwitchValue, Variant
from eoscheck.model.coordinator.handler import CoordinatorConfig, handle_init_producer_id
from eoscheck.model.group.membership import join_group, rebalance, remove_member
from eoscheck.model.group.metadata import NO_OFFSET, GroupMeta, GroupState, new_group
from eoscheck.model.group.offset_fetch import FetchReaction, offset_fetch, on_offset_fetch_answer, sends_require_stable
from eoscheck.model.group.pending_offsets import (
    complete_pending_txn_offset_commit,
    on_txn_offset_commit_append,
    prepare_txn_offset_commit,
)
from eoscheck.model.group.txn_offset_commit import validate_txn_offset_commit
from eoscheck.model.partition.producer_state import begin_transaction, empty_entry, maybe_update_epoch
from eoscheck.model.partition.validation import AppendOrigin, append_marker, validate_data_batch
from eoscheck.model.partition.verification import verification_callback_errors, verification_produce_error
from eoscheck.model.state import ProducerStateEntry
from eoscheck.model.transactions.add_partitions import add_partitions_to_txn, verify_partitions
from eoscheck.model.transactions.codes import NO_PENDING, Errors, TxnResult, TxnState
from eoscheck.model.transactions.end_txn import end_txn, end_txn_tv2
from eoscheck.model.transactions.failover import load_transaction
from eoscheck.model.transactions.log import EntryKind, LogEntry, committed_values, last_stable_offset, open_transactions
from eoscheck.model.transactions.markers import TxnMarker, complete_if_done, markers_to_send, on_marker_response
from eoscheck.model.transactions.metadata import TxnLogRecord, TxnMeta, to_log_record
from eoscheck.model.transactions.states import is_valid_transition
from eoscheck.model.transactions.timeout import abort_timed_out

from .pure_rule import PureRule

E, S = Errors, TxnState

#: partition ids inside the transactions: the output partition and the group's offsets partition
OUTPUT, OFFSETS = 0, 1
PARTITION_NAMES = ("output", "__consumer_offsets")
#: member ids are spaced by this many per incarnation (the instances bound is at most this)
INSTANCES = 2
INPUT_PARTITION = 0


class Phase(IntEnum):
    """Where an application instance is in its loop."""

    IDLE = 0  # owns no input partition (or waits for its assignment)
    INIT = 1  # initTransactions: InitProducerId
    FETCH = 2  # position unknown: OffsetFetch
    READY = 3  # between transactions; polls the next record
    PRODUCE = 4  # partition added; send the output record
    AWAIT_PRODUCE = 5  # produce request in flight
    ADD_OFFSETS = 6  # AddOffsetsToTxn
    COMMIT_OFFSETS = 7  # TxnOffsetCommit
    END_TXN = 8  # EndTxn(COMMIT)
    ABORT = 9  # abortable error: EndTxn(ABORT)
    LOST = 10  # after the abort: partitions lost, rejoin the group
    FENCED = 11  # producer fenced (fatal): close it, rejoin with a new producer
    ABORT_TASK = 12  # task corrupted (produce timed out, TRANSACTION_ABORTABLE): EndTxn(ABORT), then refetch
    BUMP_EPOCH = 13  # KIP-360 client: after aborting with an unresolved batch, InitProducerId(pid, epoch)


#: phases with no open transaction on the client: a rebalance may complete, a new assignment applies
BETWEEN_TRANSACTIONS = frozenset({Phase.IDLE, Phase.INIT, Phase.FETCH, Phase.READY})


TV_CHANGES = ("none", "upgrade", "downgrade")


class App(NamedTuple):
    member_id: int
    #: the generation the instance believes current (from its last assignment)
    generation: int
    owns: bool
    phase: int
    #: next input offset to process (-1: unknown)
    position: int
    producer_ready: bool
    producer_epoch: int
    #: times the instance rejoined with a new member id
    incarnation: int
    #: the transaction version the client's EndTxn carries (0: EndTxn <= v4, 2: v5)
    tv: int = 0


class ProduceRequest(NamedTuple):
    """A produce request to the output partition, in flight (it outlives the client's interest in it)."""

    instance: int
    tid: int
    epoch: int
    value: int


class EndTxnRequest(NamedTuple):
    """An EndTxn request the client gave up on (request timeout) that may still reach the coordinator."""

    instance: int
    tid: int
    epoch: int
    result: int
    tv: int = 0


class PipelineState(NamedTuple):
    txns: tuple[TxnMeta, ...]  # per transactional id
    output: tuple[LogEntry, ...]
    offsets_log: tuple[LogEntry, ...]
    #: each partition leader's producer state table (part 1's ``ProducerStateEntry``: epoch, coordinator
    #: epoch, open transaction; no sequences), one entry per transactional id's producer id
    leaders: tuple[tuple[ProducerStateEntry, ...], ...]
    group: GroupMeta
    apps: tuple[App, ...]
    #: ghost: producer ids whose pending offsets include one written by a zombie
    zombie_pending: tuple[int, ...]
    #: ghost: a COMMIT marker made a zombie-written offset visible
    zombie_committed: bool
    #: the transaction coordinator's epoch (bumped by each failover)
    coordinator_epoch: int
    #: the last ``__transaction_state`` record of each transactional id (what a failover reloads)
    txn_log: tuple[TxnLogRecord, ...]
    #: WriteTxnMarkers entries sent by a previous coordinator and still in flight
    stale_markers: tuple[TxnMarker, ...]
    failovers: int
    produce_requests: tuple[ProduceRequest, ...]
    #: delivery timeouts used (each makes the client abort while its request is still in flight)
    produce_timeouts: int
    endtxn_requests: tuple[EndTxnRequest, ...]
    endtxn_timeouts: int


def member_id_of(instance: int, incarnation: int) -> int:
    return 1 + instance + INSTANCES * incarnation


PROPERTIES = {
    "NoDuplicateOutput": "no input record's output is committed twice",
    "OffsetsAgreeWithOutput": "when no transaction is completing, the committed input offset c and the committed "
                              "output agree: exactly the outputs of records 0..c-1 are committed",
    "NoHangingTransaction": "every transaction open on a partition is one its coordinator tracks on that partition "
                            "(Ongoing or PrepareX with the partition added), so the LSO cannot stay stuck",
    "ZombieNeverCommitsOffsets": "no offset written by a zombie (a member no longer in the group, or not the input "
                                 "partition's owner in the current generation) becomes committed; KIP-447's fence "
                                 "(before it, per-partition producers rely on the epoch fence and this fails "
                                 "harmlessly)",
    "ValidTxnTransitions": "the transaction coordinator only makes transitions Kafka's state table allows",
}


#: liveness properties (checked when a spec names them), under ``FAIRNESS``
TEMPORAL = {
    "TransactionsComplete": "every transaction open on the output or offsets partition eventually completes: "
                            "infinitely often no transaction is open there, so the LSO reaches the log end "
                            "([]<>; with finite records, the LSO eventually advances past every transaction)",
    "MarkersComplete": "a transaction in PrepareCommit or PrepareAbort eventually completes (its markers are "
                       "written and acknowledged) (~>)",
    "RebalanceSettles": "a rebalance that started eventually settles: the group is Stable again (~>)",
}

#: The protocol's own steps are weakly fair: a request that can be sent is eventually sent, one in flight
#: eventually arrives, the coordinator's timer eventually fires, markers are eventually written. The faults
#: (session timeouts, delivery timeouts, coordinator failovers, EndTxn timeouts) are not: they may happen,
#: never must.
FAIR_ACTIONS = ("InitProducerId", "OffsetFetch", "AddPartitionsToTxn", "Produce", "ProduceArrives",
                "AddOffsetsToTxn", "TxnOffsetCommit", "EndTxn", "AbortTimedOutTransaction", "WriteTxnMarker",
                "CompleteTransaction", "StaleTxnMarkerArrives", "StaleEndTxnArrives", "Rebalance", "OnAssignment",
                "Rejoin")
FAIRNESS: tuple[Fairness, ...] = tuple(WF(a) for a in FAIR_ACTIONS)

_PREPARING = (S.PREPARE_COMMIT, S.PREPARE_ABORT)


def append_marker_at_entry_time(stored: ProducerStateEntry, marker: TxnMarker, *,
                                check_coordinator_epoch: bool) -> Any:
    """The leader's append of ``marker`` (``append_marker``), stamped with the entry's last timestamp."""
    return append_marker(stored, marker, timestamp=stored.last_timestamp, check_coordinator_epoch=check_coordinator_epoch)


def marker_acknowledged(meta: TxnMeta, partition: int) -> tuple[TxnMeta, bool]:
    """The coordinator after a marker's successful append on ``partition``: the partition is done, and
    the transaction completes (written) when it was the last."""
    return complete_if_done(on_marker_response(meta, partition, int(E.NONE)).meta)


class EosPipeline(Machine):
    actions: Mapping[str, tuple[str, ...]] = {
        "InitProducerId": ("instance",), "OffsetFetch": ("instance",), "AddPartitionsToTxn": ("instance",),
        "Produce": ("instance",), "ProduceArrives": ("instance", "value"), "ProduceTimesOut": ("instance",), "AddOffsetsToTxn": ("instance",),
        "TxnOffsetCommit": ("instance",), "EndTxn": ("instance", "result"),
        "AbortTimedOutTransaction": ("tid",), "WriteTxnMarker": ("tid", "partition"),
        "SessionTimeout": ("instance",), "Rebalance": (), "OnAssignment": ("instance",), "Rejoin": ("instance",),
        "TxnCoordinatorFailover": (), "StaleTxnMarkerArrives": ("tid", "partition", "coordinator_epoch"),
        "EndTxnTimesOut": ("instance",), "StaleEndTxnArrives": ("tid", "result", "epoch"),
        "CompleteTransaction": ("tid",), "ClientTransactionVersion": ("instance", "tv"),
    }
    # Every leaf is a bool in a bool field or a small int (counters, ids, epochs, offsets; -1 is the
    # only negative value): the domain where ``hash`` is injective (``checker.fingerprint``),
    # checked over whole reachable spaces by tests/test_fingerprint.py.
    fingerprint_kind = "hash"

    def __init__(self, *, deployment: str, txn_offset_commit_check: str, require_stable: str,
                 timeout_abort_bumps_epoch: bool, kip890_verification: bool, tv2_epoch_bump: bool,
                 client_epoch_bump_after_abort: bool, tv2_fence_double_bump: bool = True,
                 invalid_producer_epoch_abortable: bool = True,
                 marker_coordinator_epoch_check: bool, records: int, max_generation: int, max_epoch: int,
                 rejoins: int, instances: int, failovers: int, produce_timeouts: int,
                 endtxn_timeouts: int = 0, client_tv_change: str = "none") -> None:
        if deployment not in ("per-partition", "per-thread"):
            raise ValueError(f"unknown deployment {deployment!r}")
        self.per_thread = deployment == "per-thread"
        self.check = txn_offset_commit_check
        self.require_stable = sends_require_stable(require_stable, read_committed=True)
        self.bump = timeout_abort_bumps_epoch
        self.verify = kip890_verification
        self.coordinator_epoch_check = marker_coordinator_epoch_check
        self.records, self.max_generation, self.max_epoch, self.rejoins = records, max_generation, max_epoch, rejoins
        self.instances, self.max_failovers, self.max_produce_timeouts = instances, failovers, produce_timeouts
        self.tv2 = tv2_epoch_bump
        if client_tv_change not in TV_CHANGES:
            raise ValueError(f"unknown client_tv_change {client_tv_change!r}")
        # each client's EndTxn carries its own transaction version; a client may switch once between
        # transactions (the broker then supports TV2 even while its clients send TV0)
        self.tv_change = client_tv_change
        self.server_tv2 = tv2_epoch_bump or client_tv_change != "none"
        self.max_endtxn_timeouts = endtxn_timeouts
        self.client_bump = client_epoch_bump_after_abort
        self.ipe_abortable = invalid_producer_epoch_abortable
        self.tids = instances if self.per_thread else 1
        # the transaction coordinator as shipped (KIP-360 InitProducerId, validPid), as part 1 models it
        self.coordinator = CoordinatorConfig(kip360=True, shipped=True, max_epoch=max_epoch, persist_last_epoch=False,
                                             persist_prev_producer_id=False, tv2=self.server_tv2,
                                             tv2_fence_double_bump=tv2_fence_double_bump)
        # The coordinator's and leaders' rules are pure and their arguments (a transaction's
        # metadata, a producer-state entry, a marker) recur across most states: each distinct call
        # is computed once (``pure_rule``).
        # EndTxn is validated by the request's transaction version (later trunk's split)
        self._end_txn_rules = {0: PureRule(end_txn), 2: PureRule(end_txn_tv2)}
        self._abort_timed_out = PureRule(abort_timed_out, max_epoch=max_epoch, bump_epoch=self.bump,
                                         tv2=self.server_tv2, tv2_double_bump=tv2_fence_double_bump)
        self._complete_if_done = PureRule(complete_if_done)
        self._markers_to_send = PureRule(markers_to_send)
        self._to_log_record = PureRule(to_log_record)
        self._append_marker = PureRule(append_marker_at_entry_time, check_coordinator_epoch=self.coordinator_epoch_check)
        self._marker_acknowledged = PureRule(marker_acknowledged)
        # the invariants read the logs, which change far less often than the rest of the state
        self._committed_values = PureRule(committed_values)
        self._open_transactions = PureRule(open_transactions)

    # --- identities -------------------------------------------------------------------------------
    def disabled_actions(self) -> frozenset[str]:
        """Actions this configuration switches off: fault budgets of 0, and the TV2-only completion
        of an empty aborted transaction."""
        off = set()
        if self.max_produce_timeouts == 0:
            off.add("ProduceTimesOut")
        if self.max_failovers == 0:
            off |= {"TxnCoordinatorFailover", "StaleTxnMarkerArrives"}  # stale markers need a failover
        if self.max_endtxn_timeouts == 0:
            off |= {"EndTxnTimesOut", "StaleEndTxnArrives"}
        if not self.tv2 or self.max_endtxn_timeouts == 0:
            # the modelled client never aborts an empty transaction itself: only a TV2 coordinator
            # handling a late EndTxn(ABORT) can complete one without markers
            off.add("CompleteTransaction")
        if self.instances == 1 and self.rejoins == 0:
            off.add("OnAssignment")  # no other member to rebalance with, and no rejoin
        if not (self.max_produce_timeouts and self.client_bump and not self.tv2) and (
                "OnAssignment" in off or (self.per_thread and self.rejoins == 0)):
            # InitProducerId runs again only for a KIP-360 bump after a timed-out batch, for a new
            # task owner (per-partition), or for a fenced thread that rejoined
            off.add("InitProducerId")
        if self.tv_change == "none":
            off.add("ClientTransactionVersion")  # no client switches its transaction version
        return frozenset(off)

    def tid_of(self, instance: int) -> int:
        return instance if self.per_thread else INPUT_PARTITION

    @staticmethod
    def pid_of(tid: int) -> int:
        return tid + 1

    # --- initial state -----------------------------------------------------------------------------
    def init_states(self) -> Iterable[PipelineState]:
        group = new_group(1)
        for i in range(self.instances):
            group = join_group(group, member_id_of(i, 0))
        group = rebalance(group)
        txns = tuple(TxnMeta(True, self.pid_of(t), self.pid_of(t), 0, -1, int(S.EMPTY), False, NO_PENDING, ())
                     for t in range(self.tids))
        apps = []
        for i in range(self.instances):
            owns = group.assignment[INPUT_PARTITION] == member_id_of(i, 0)
            # per-thread: every instance's producer is initialised; per-partition: the task's owner's
            ready = self.per_thread or owns
            apps.append(App(member_id_of(i, 0), group.generation_id, owns, int(Phase.FETCH if owns else Phase.IDLE),
                            NO_OFFSET, ready, 0 if ready else -1, 0, 2 if self.tv2 else 0))
        leaders = tuple(tuple(empty_entry(self.pid_of(t)) for t in range(self.tids)) for _ in PARTITION_NAMES)
        yield PipelineState(txns, (), (), leaders, group, tuple(apps), (), False, 0,
                            tuple(to_log_record(m) for m in txns), (), 0, (), 0, (), 0)

    def within_bounds(self, s: PipelineState) -> bool:
        return (s.group.generation_id <= self.max_generation
                and all(m.epoch < self.max_epoch - 1 for m in s.txns)
                and all(a.incarnation <= self.rejoins for a in s.apps))

    def is_terminal(self, s: PipelineState) -> bool:
        """Done: every record's transaction committed and nothing left in flight."""
        return (s.group.offsets[INPUT_PARTITION].offset == self.records and not s.group.pending
                and all(m.state not in (S.ONGOING, S.PREPARE_COMMIT, S.PREPARE_ABORT) for m in s.txns))

    # --- helpers -----------------------------------------------------------------------------------
    @staticmethod
    def _set(tup: tuple, i: int, v: Any) -> tuple:
        return tup[:i] + (v,) + tup[i + 1:]

    def _app(self, s: PipelineState, i: int, **changes: Any) -> PipelineState:
        return s._replace(apps=self._set(s.apps, i, s.apps[i]._replace(**changes)))

    def _txn(self, s: PipelineState, tid: int, meta: TxnMeta, *, write: bool = True) -> PipelineState:
        """The coordinator's new metadata; ``write``: it was appended to ``__transaction_state`` (every
        transition is; a marker acknowledgement only changes memory)."""
        s = s._replace(txns=self._set(s.txns, tid, meta))
        if write:
            s = s._replace(txn_log=self._set(s.txn_log, tid, self._to_log_record(meta)))
        return s

    def _leader(self, s: PipelineState, partition: int, tid: int, entry: ProducerStateEntry) -> PipelineState:
        return s._replace(leaders=self._set(s.leaders, partition, self._set(s.leaders[partition], tid, entry)))

    def _is_current_owner(self, s: PipelineState, i: int) -> bool:
        a, g = s.apps[i], s.group
        return (a.member_id in g.members and a.generation == g.generation_id
                and g.assignment[INPUT_PARTITION] == a.member_id)

    def _produce_check(self, s: PipelineState, partition: int, tid: int, epoch: int) -> int:
        """The leader's checks of a transactional batch (origin CLIENT or COORDINATOR, no sequences):
        checkProducerEpoch, then the KIP-890 part-1 verification when switched on, by kafka.eos's rules: the
        coordinator's ``verify_partitions`` (a partition outside the transaction is INVALID_TXN_STATE, the 3.6-3.7
        coordinator's answer and what a 3.8+ broker gives a Produce <= v10; another epoch is PRODUCER_FENCED, a
        transaction completing CONCURRENT_TRANSACTIONS), converted as ``AddPartitionsToTxnManager`` converts it
        (PRODUCER_FENCED -> INVALID_PRODUCER_EPOCH; review 13: it was INVALID_TXN_STATE for every failure) and,
        for a produce, as ReplicaManager does (CONCURRENT_TRANSACTIONS -> NOT_ENOUGH_REPLICAS, retried)."""
        entry = s.leaders[partition][tid]
        origin = AppendOrigin.CLIENT if partition == OUTPUT else AppendOrigin.COORDINATOR
        err = validate_data_batch(entry, epoch=epoch, transactional=True, origin=origin)
        if err != E.NONE:
            return err
        if self.verify and entry.current_txn_first_offset < 0:
            answer = verify_partitions(s.txns[tid], self.pid_of(tid), epoch, (partition,), abortable=False)[0][1]
            if partition == OUTPUT:
                return verification_produce_error(answer, generic_error=False)
            # TxnOffsetCommit: the group coordinator passes the converted answer on (maybeConvertOffsetCommitError)
            return verification_callback_errors({partition: answer}, generic_error=False).get(partition, int(E.NONE))
        return int(E.NONE)

    # --- transitions -------------------------------------------------------------------------------
    def successors(self, s: PipelineState) -> Iterable[tuple[tuple, PipelineState]]:
        for i, a in enumerate(s.apps):
            yield from self._app_steps(s, i, a)
        for req in s.produce_requests:
            arrived = self._produce_arrives(s, req)
            if arrived is not None:
                yield ("ProduceArrives", req.instance, req.value), arrived
        for late in s.endtxn_requests:
            out = self._end_txn(s.txns[late.tid], self.pid_of(late.tid), late.epoch, late.result, late.tv)
            gone = s._replace(endtxn_requests=tuple(r for r in s.endtxn_requests if r != late))
            yield (("StaleEndTxnArrives", late.tid, TxnResult(late.result).name, late.epoch),
                   self._txn(gone, late.tid, out.meta, write=out.wrote))
        for tid, m in enumerate(s.txns):
            done, wrote = self._complete_if_done(m)
            if wrote:  # a PrepareAbort with no partitions (TV2 abort of an empty transaction): no markers
                yield ("CompleteTransaction", tid), self._txn(s, tid, done)
            out = self._abort_timed_out(m)
            if out.wrote:
                yield ("AbortTimedOutTransaction", tid), self._txn(s, tid, out.meta)
            for marker in self._markers_to_send(m, s.coordinator_epoch):
                nxt = self._write_marker(s, tid, marker)
                if nxt is not None:
                    yield ("WriteTxnMarker", tid, PARTITION_NAMES[marker.partition]), nxt
        for marker in s.stale_markers:
            tid = marker.producer_id - 1
            gone = s._replace(stale_markers=tuple(x for x in s.stale_markers if x != marker))
            nxt = self._write_marker(gone, tid, marker, respond=False)
            yield (("StaleTxnMarkerArrives", tid, PARTITION_NAMES[marker.partition], marker.coordinator_epoch),
                   gone if nxt is None else nxt)
        if s.failovers < self.max_failovers:
            yield ("TxnCoordinatorFailover",), self._failover(s)
        for i, a in enumerate(s.apps):
            if a.member_id in s.group.members:
                yield ("SessionTimeout", i), s._replace(group=remove_member(s.group, a.member_id))
        if s.group.state == GroupState.PREPARING_REBALANCE and all(
                a.phase in BETWEEN_TRANSACTIONS for a in s.apps if a.member_id in s.group.members):
            yield ("Rebalance",), s._replace(group=rebalance(s.group))
        for i, a in enumerate(s.apps):
            g = s.group
            if (a.member_id in g.members and g.state == GroupState.STABLE and a.generation != g.generation_id
                    and a.phase in BETWEEN_TRANSACTIONS):
                yield ("OnAssignment", i), self._on_assignment(s, i)
            # a removed member notices (heartbeat: UNKNOWN_MEMBER_ID) between transactions; a member whose
            # transaction failed (CommitFailedException, fenced producer) rejoins in any case
            if a.phase in (Phase.LOST, Phase.FENCED) or (a.member_id not in g.members
                                                         and a.phase in BETWEEN_TRANSACTIONS):
                yield ("Rejoin", i), self._rejoin(s, i)

    def _app_steps(self, s: PipelineState, i: int, a: App) -> Iterable[tuple[tuple, PipelineState]]:
        if self.tv_change != "none" and a.phase == Phase.READY and a.tv == (0 if self.tv_change == "upgrade" else 2):
            # a rolling client upgrade (or downgrade) between two transactions of the same producer
            yield ("ClientTransactionVersion", i, 2 - a.tv), self._app(s, i, tv=2 - a.tv)
        tid = self.tid_of(i)
        pid = self.pid_of(tid)
        m = s.txns[tid]
        ph = a.phase
        if ph == Phase.INIT:
            yield ("InitProducerId", i), self._init_producer_id(s, i, tid)
        elif ph == Phase.BUMP_EPOCH:
            yield ("InitProducerId", i), self._init_producer_id(s, i, tid, pid, a.producer_epoch)
        elif ph == Phase.FETCH:
            reaction, pos = on_offset_fetch_answer(offset_fetch(s.group, INPUT_PARTITION,
                                                                require_stable=self.require_stable))
            if reaction == FetchReaction.POSITION:
                yield ("OffsetFetch", i), self._app(s, i, phase=int(Phase.READY), position=pos)
            # on UNSTABLE_OFFSET_COMMIT the consumer backs off and retries: no state change to record
        elif ph == Phase.READY and a.position < self.records:
            out = add_partitions_to_txn(m, pid, a.producer_epoch, (OUTPUT,))
            yield ("AddPartitionsToTxn", i), self._after_coordinator_call(s, i, tid, out.error, out.meta,
                                                                            Phase.PRODUCE)
        elif ph == Phase.PRODUCE:
            req = ProduceRequest(i, tid, a.producer_epoch, a.position)
            nxt = s._replace(produce_requests=tuple(sorted(s.produce_requests + (req,))))
            yield ("Produce", i), self._app(nxt, i, phase=int(Phase.AWAIT_PRODUCE))
        elif ph == Phase.AWAIT_PRODUCE and s.produce_timeouts < self.max_produce_timeouts:
            # delivery.timeout.ms expires: the batch fails (abortable), the request may still arrive later
            yield ("ProduceTimesOut", i), self._app(s._replace(produce_timeouts=s.produce_timeouts + 1), i,
                                                    phase=int(Phase.ABORT_TASK))
        elif ph == Phase.ADD_OFFSETS:
            out = add_partitions_to_txn(m, pid, a.producer_epoch, (OFFSETS,))
            yield ("AddOffsetsToTxn", i), self._after_coordinator_call(s, i, tid, out.error, out.meta,
                                                                         Phase.COMMIT_OFFSETS)
        elif ph == Phase.COMMIT_OFFSETS:
            committed = self._txn_offset_commit(s, i, tid, a)
            if committed is not s:  # s itself: retried (CONCURRENT_TRANSACTIONS), nothing changes
                yield ("TxnOffsetCommit", i), committed
        elif ph in (Phase.END_TXN, Phase.ABORT, Phase.ABORT_TASK):
            result = TxnResult.COMMIT if ph == Phase.END_TXN else TxnResult.ABORT
            out = self._end_txn(m, pid, a.producer_epoch, result, a.tv)
            nxt = self._txn(s, tid, out.meta)
            if out.error == E.CONCURRENT_TRANSACTIONS:
                return  # retriable: the client retries; no state change to record
            if out.error == E.NONE:
                # TV2 (EndTxn v5): the answer carries the bumped epoch the client continues with
                epoch = out.meta.epoch if a.tv >= 2 else a.producer_epoch
                if result == TxnResult.COMMIT:
                    nxt = self._app(nxt, i, phase=int(Phase.READY), position=a.position + 1, producer_epoch=epoch)
                elif ph == Phase.ABORT_TASK:
                    after = Phase.BUMP_EPOCH if self.client_bump and a.tv < 2 else Phase.FETCH
                    nxt = self._app(nxt, i, phase=int(after), position=NO_OFFSET, producer_epoch=epoch)
                else:
                    nxt = self._app(nxt, i, phase=int(Phase.LOST), owns=False, position=NO_OFFSET,
                                    producer_epoch=epoch)
            else:  # PRODUCER_FENCED, INVALID_TXN_STATE: fatal for the producer
                nxt = self._app(nxt, i, phase=int(Phase.FENCED), owns=False, position=NO_OFFSET)
            yield ("EndTxn", i, result.name), nxt
            if s.endtxn_timeouts < self.max_endtxn_timeouts:
                # the request goes unanswered: the client gives up on it and will send it again on a new
                # connection, but the first copy may still be processed later
                end_req = EndTxnRequest(i, tid, a.producer_epoch, int(result), a.tv)
                yield ("EndTxnTimesOut", i), s._replace(endtxn_timeouts=s.endtxn_timeouts + 1,
                                                        endtxn_requests=tuple(sorted(s.endtxn_requests + (end_req,))))

    def _end_txn(self, m: TxnMeta, pid: int, epoch: int, result: int, tv: int):
        return self._end_txn_rules[2 if tv >= 2 else 0](m, pid, epoch, result)

    def _after_coordinator_call(self, s: PipelineState, i: int, tid: int, error: int, meta: TxnMeta,
                                on_success: Phase) -> PipelineState:
        if error == E.NONE:
            return self._app(self._txn(s, tid, meta), i, phase=int(on_success))
        if error == E.CONCURRENT_TRANSACTIONS:
            return s  # retried later
        return self._app(s, i, phase=int(Phase.FENCED), owns=False, position=NO_OFFSET)

    def _init_producer_id(self, s: PipelineState, i: int, tid: int, req_producer_id: int = -1,
                          req_epoch: int = -1) -> PipelineState:
        """InitProducerId from instance ``i``: a new producer instance sends no producer id / epoch; the
        KIP-360 epoch bump of a running producer sends its own."""
        m = s.txns[tid]
        # part 1's coordinator handler (pending/Prepare -> CONCURRENT_TRANSACTIONS, validPid, Ongoing ->
        # fence + abort, else the InitProducerId rule); the allocator is not modelled: an exhausted
        # epoch keeps the producer id
        r = handle_init_producer_id(m, m.pending_state != NO_PENDING, req_producer_id, req_epoch, m.producer_id,
                                    self.coordinator)
        if r.fenced is not None:
            return self._txn(s, tid, r.fenced)  # CONCURRENT_TRANSACTIONS: retry once the abort completed
        if r.error == E.PRODUCER_FENCED:
            return self._app(s, i, phase=int(Phase.FENCED), owns=False, position=NO_OFFSET)
        if r.transit is None:
            return s  # CONCURRENT_TRANSACTIONS (or another error): retry
        out = r.transit
        meta = m._replace(producer_id=out.producer_id, epoch=out.epoch, last_epoch=out.last_epoch,
                          prev_producer_id=out.prev_producer_id, state=int(S.EMPTY), partitions=())
        s = self._txn(s, tid, meta)
        return self._app(s, i, producer_ready=True, producer_epoch=out.epoch,
                         phase=int(Phase.FETCH if s.apps[i].owns else Phase.IDLE))

    def _produce_arrives(self, s: PipelineState, req: ProduceRequest) -> PipelineState | None:
        """The leader handles the request; the answer reaches the client only if it still waits for it.
        None: NOT_ENOUGH_REPLICAS (the verification met a transaction completing), which the client retries,
        so the request stays in flight and nothing changes."""
        tid = req.tid
        err = self._produce_check(s, OUTPUT, tid, req.epoch)
        if err == E.NOT_ENOUGH_REPLICAS:
            return None
        s = s._replace(produce_requests=tuple(r for r in s.produce_requests if r != req))
        if err == E.NONE:
            offset = len(s.output)
            s = s._replace(output=s.output + (LogEntry(self.pid_of(tid), req.epoch, int(EntryKind.TXN_DATA),
                                                       req.value),))
            entry = begin_transaction(maybe_update_epoch(s.leaders[OUTPUT][tid], req.epoch), offset)
            s = self._leader(s, OUTPUT, tid, entry)
        a = s.apps[req.instance]
        if not (a.phase == Phase.AWAIT_PRODUCE and a.producer_epoch == req.epoch and a.position == req.value):
            return s
        i = req.instance
        if err == E.NONE:
            return self._app(s, i, phase=int(Phase.ADD_OFFSETS))
        if err == E.INVALID_TXN_STATE:
            return self._app(s, i, phase=int(Phase.ABORT_TASK))  # abortable (TRANSACTION_ABORTABLE for new clients)
        if err == E.INVALID_PRODUCER_EPOCH and self.ipe_abortable:
            # 2.7+ (KIP-588): InvalidProducerEpochException is abortable; Streams aborts and migrates the task
            return self._app(s, i, phase=int(Phase.ABORT))
        return self._app(s, i, phase=int(Phase.FENCED), owns=False, position=NO_OFFSET)

    def _txn_offset_commit(self, s: PipelineState, i: int, tid: int, a: App) -> PipelineState:
        # pre-KIP-447 clients send no group metadata (generation -1, member ""): the check ignores them
        err = validate_txn_offset_commit(s.group, check=self.check, generation_id=a.generation,
                                         member_id=a.member_id)
        if err == E.NONE:
            err = self._produce_check(s, OFFSETS, tid, a.producer_epoch)
        if err == E.NONE:
            pid, offset = self.pid_of(tid), a.position + 1
            log_offset = len(s.offsets_log)
            group = prepare_txn_offset_commit(s.group, pid, ((INPUT_PARTITION, offset),))
            group = on_txn_offset_commit_append(group, pid, INPUT_PARTITION, offset, log_offset)
            s = s._replace(group=group, offsets_log=s.offsets_log + (
                LogEntry(pid, a.producer_epoch, int(EntryKind.TXN_DATA), offset),))
            entry = begin_transaction(maybe_update_epoch(s.leaders[OFFSETS][tid], a.producer_epoch), log_offset)
            s = self._leader(s, OFFSETS, tid, entry)
            if not self._is_current_owner(s, i) and pid not in s.zombie_pending:
                s = s._replace(zombie_pending=tuple(sorted(s.zombie_pending + (pid,))))
            return self._app(s, i, phase=int(Phase.END_TXN))
        if err == E.CONCURRENT_TRANSACTIONS:
            return s  # the verification met a transaction completing: the client retries
        if err in (E.ILLEGAL_GENERATION, E.UNKNOWN_MEMBER_ID, E.FENCED_INSTANCE_ID, E.INVALID_TXN_STATE):
            return self._app(s, i, phase=int(Phase.ABORT))  # CommitFailedException: abortable
        return self._app(s, i, phase=int(Phase.FENCED), owns=False, position=NO_OFFSET)

    def _failover(self, s: PipelineState) -> PipelineState:
        """A new transaction coordinator loads ``__transaction_state`` with a higher coordinator epoch;
        the old one's outstanding markers stay in flight."""
        stale = set(s.stale_markers)
        for m in s.txns:
            stale.update(markers_to_send(m, s.coordinator_epoch))
        epoch = s.coordinator_epoch + 1
        txns = tuple(load_transaction(rec, epoch)[0] for rec in s.txn_log)
        return s._replace(txns=txns, coordinator_epoch=epoch, stale_markers=tuple(sorted(stale)),
                          failovers=s.failovers + 1)

    def _write_marker(self, s: PipelineState, tid: int, marker: TxnMarker, *,
                      respond: bool = True) -> PipelineState | None:
        """The leader's append of a marker (None: refused); ``respond``: the sending coordinator is the
        current one and handles the answer."""
        stored = s.leaders[marker.partition][tid]
        # (the counterfactual leader ignores the coordinator epoch)
        app = self._append_marker(stored, marker)
        if app.error != E.NONE:
            return None  # the coordinator stops sending: the transaction stays in PrepareX
        kind = EntryKind.COMMIT if marker.result == TxnResult.COMMIT else EntryKind.ABORT
        entry = LogEntry(marker.producer_id, marker.producer_epoch, int(kind), marker.coordinator_epoch)
        s = self._leader(s, marker.partition, tid, app.entry)
        if marker.partition == OUTPUT:
            s = s._replace(output=s.output + (entry,))
        else:
            is_commit = marker.result == TxnResult.COMMIT
            zombie = marker.producer_id in s.zombie_pending
            s = s._replace(offsets_log=s.offsets_log + (entry,),
                           group=complete_pending_txn_offset_commit(s.group, marker.producer_id, is_commit),
                           zombie_pending=tuple(p for p in s.zombie_pending if p != marker.producer_id),
                           zombie_committed=s.zombie_committed or (zombie and is_commit))
        if not respond:
            return s
        meta, wrote = self._marker_acknowledged(s.txns[tid], marker.partition)
        return self._txn(s, tid, meta, write=wrote)

    def _on_assignment(self, s: PipelineState, i: int) -> PipelineState:
        a, g = s.apps[i], s.group
        owns = g.assignment[INPUT_PARTITION] == a.member_id
        if not owns:
            # per-partition: the task (and its producer) is closed with the partition
            ready = a.producer_ready if self.per_thread else False
            return self._app(s, i, generation=g.generation_id, owns=False, phase=int(Phase.IDLE),
                             position=NO_OFFSET, producer_ready=ready)
        # per-partition (Streams exactly_once, 2.x): a reassigned task, even one the instance kept, gets a new
        # producer and runs initTransactions before its offsets are fetched; that InitProducerId waits
        # (CONCURRENT_TRANSACTIONS) for the task's previous transaction to complete
        ready = a.producer_ready if self.per_thread else False
        phase = Phase.FETCH if ready else Phase.INIT
        return self._app(s, i, generation=g.generation_id, owns=True, phase=int(phase), position=NO_OFFSET,
                         producer_ready=ready)

    def _rejoin(self, s: PipelineState, i: int) -> PipelineState:
        a = s.apps[i]
        ready = a.producer_ready and a.phase != Phase.FENCED and self.per_thread
        member = member_id_of(i, a.incarnation + 1)
        # the consumer resets its member id and joins again (the old id leaves the group if still there)
        s = s._replace(group=join_group(remove_member(s.group, a.member_id), member))
        return self._app(s, i, member_id=member, incarnation=a.incarnation + 1, owns=False, phase=int(Phase.IDLE),
                         position=NO_OFFSET, producer_ready=ready, producer_epoch=a.producer_epoch if ready else -1)

    # --- properties --------------------------------------------------------------------------------
    def properties(self) -> Mapping[str, Property]:
        return {
            "NoDuplicateOutput": Property("NoDuplicateOutput", PROPERTIES["NoDuplicateOutput"], "invariant",
                                          self._no_duplicates),
            "OffsetsAgreeWithOutput": Property("OffsetsAgreeWithOutput", PROPERTIES["OffsetsAgreeWithOutput"],
                                               "invariant", self._agree),
            "NoHangingTransaction": Property("NoHangingTransaction", PROPERTIES["NoHangingTransaction"], "invariant",
                                             self._no_hanging),
            "ZombieNeverCommitsOffsets": Property("ZombieNeverCommitsOffsets", PROPERTIES["ZombieNeverCommitsOffsets"],
                                                  "invariant", lambda s: not s.zombie_committed),
            "ValidTxnTransitions": Property("ValidTxnTransitions", PROPERTIES["ValidTxnTransitions"], "transition",
                                            self._valid_transitions),
        }

    def temporal_properties(self) -> Mapping[str, TemporalProperty]:
        return {
            "TransactionsComplete": always_eventually("TransactionsComplete", TEMPORAL["TransactionsComplete"],
                                                      self._no_open_transaction),
            "MarkersComplete": leads_to("MarkersComplete", TEMPORAL["MarkersComplete"], _some_preparing,
                                        _none_preparing),
            "RebalanceSettles": leads_to("RebalanceSettles", TEMPORAL["RebalanceSettles"], _rebalancing,
                                         _group_stable),
        }

    def fairness(self) -> tuple[Fairness, ...]:
        return FAIRNESS

    def _no_open_transaction(self, s: PipelineState) -> bool:
        return not self._open_transactions(s.output) and not self._open_transactions(s.offsets_log)

    def _no_duplicates(self, s: PipelineState) -> bool:
        out = self._committed_values(s.output)
        return len(out) == len(set(out))

    def _agree(self, s: PipelineState) -> bool:
        if any(m.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT) for m in s.txns):
            return True
        c = s.group.offsets[INPUT_PARTITION].offset
        c = 0 if c == NO_OFFSET else c
        return set(self._committed_values(s.output)) == set(range(c))

    def _no_hanging(self, s: PipelineState) -> bool:
        for partition, log in ((OUTPUT, s.output), (OFFSETS, s.offsets_log)):
            for pid, _ in self._open_transactions(log):
                m = s.txns[pid - 1]
                if m.state not in (S.ONGOING, S.PREPARE_COMMIT, S.PREPARE_ABORT) or partition not in m.partitions:
                    return False
        return True

    def _valid_transitions(self, s: PipelineState, step: tuple, t: PipelineState) -> bool:
        for before, after in zip(s.txns, t.txns):
            if before.state != after.state and not is_valid_transition(before.state, after.state,
                                                                       tv2=self.tv2 or after.tv >= 2):
                return False
        return True

    # --- presentation ------------------------------------------------------------------------------
    def chart_step(self, step: tuple, before: PipelineState, after: PipelineState) -> Any:
        from .pipeline_chart import chart_step
        return chart_step(self, step, before, after)

    def chart_lanes(self) -> list[str]:
        from .pipeline_chart import lanes
        return lanes(self.instances)

    def itf_fields(self, s: PipelineState) -> dict[str, Any]:
        from .itf_data import pipeline_fields
        return pipeline_fields(self, s, PARTITION_NAMES, EntryKind)

    def fields(self, s: PipelineState) -> dict[str, Any]:
        f: dict[str, Any] = {}
        for tid, m in enumerate(s.txns):
            p = f"txn[{tid}]"
            f[f"{p}.state"] = TxnState(m.state).name
            f[f"{p}.producer_id"] = m.producer_id
            f[f"{p}.epoch"] = m.epoch
            f[f"{p}.partitions"] = [PARTITION_NAMES[x] for x in m.partitions]
        for partition, (name, log) in enumerate((("output", s.output), ("offsets", s.offsets_log))):
            f[f"{name}.log"] = [f"{EntryKind(e.kind).name}(pid={e.producer_id}, epoch={e.producer_epoch}, "
                                + (f"coordinator_epoch={e.value})" if e.kind in (EntryKind.COMMIT, EntryKind.ABORT)
                                   else f"value={e.value})") for e in log]
            f[f"{name}.committed"] = list(committed_values(log))
            f[f"{name}.lso"] = last_stable_offset(log)
            for tid, e in enumerate(s.leaders[partition]):
                f[f"{name}.producer_state_pid{self.pid_of(tid)}"] = (f"epoch={e.epoch} "
                                                                      f"coordinator_epoch={e.coordinator_epoch}")
        g = s.group
        f["group.state"] = GroupState(g.state).name
        f["group.generation"] = g.generation_id
        f["group.members"] = list(g.members)
        f["group.owner"] = g.assignment[INPUT_PARTITION]
        f["group.committed_offset"] = g.offsets[INPUT_PARTITION].offset
        f["group.pending"] = [f"pid={e.producer_id} offset={e.offset} at={e.appended_at}" for e in g.pending]
        for i, a in enumerate(s.apps):
            p = f"app[{i}]"
            f[f"{p}.phase"] = Phase(a.phase).name
            f[f"{p}.member_id"] = a.member_id
            f[f"{p}.generation"] = a.generation
            f[f"{p}.owns"] = a.owns
            f[f"{p}.position"] = a.position
            f[f"{p}.producer_epoch"] = a.producer_epoch
            if self.tv_change != "none":
                f[f"{p}.transaction_version"] = a.tv
        f["coordinator.epoch"] = s.coordinator_epoch
        f["coordinator.stale_markers"] = [
            f"{'COMMIT' if x.result == TxnResult.COMMIT else 'ABORT'}(pid={x.producer_id}, epoch={x.producer_epoch}, "
            f"coordinator_epoch={x.coordinator_epoch}) -> {PARTITION_NAMES[x.partition]}" for x in s.stale_markers]
        f["network.produce"] = [f"app[{r.instance}] pid={self.pid_of(r.tid)} epoch={r.epoch} value={r.value}"
                                for r in s.produce_requests]
        f["network.end_txn"] = [f"app[{r.instance}] pid={self.pid_of(r.tid)} epoch={r.epoch} "
                                f"{TxnResult(r.result).name}" for r in s.endtxn_requests]
        f["ghost.zombie_committed"] = s.zombie_committed
        return f


def _some_preparing(s: PipelineState) -> bool:
    return any(m.state in _PREPARING for m in s.txns)


def _none_preparing(s: PipelineState) -> bool:
    return not _some_preparing(s)


def _rebalancing(s: PipelineState) -> bool:
    return s.group.state == GroupState.PREPARING_REBALANCE


def _group_stable(s: PipelineState) -> bool:
    return s.group.state == GroupState.STABLE


# --- the model definition ----------------------------------------------------------------------------

SWITCHES = {
    "deployment": Switch("one producer per input partition (static transactional id, pre-KIP-447 Streams) or one "
                         "per instance/thread (KIP-447)", "per-thread", ("per-partition", "per-thread")),
    "txn_offset_commit_check": Switch("TxnOffsetCommit group fencing: none (before 2.5), 2.5 (2.5-2.8), 3.0 "
                                      "(3.0-3.2), or current (3.3+)",
                                      "current", ("pre-kip447", "2.5", "3.0", "current")),
    "require_stable": Switch("when OffsetFetch sets require_stable: always (shipped consumer), read_committed (KIP "
                             "text), never (before KIP-447)", "always", ("always", "read_committed", "never")),
    "timeout_abort_bumps_epoch": Switch("the timeout abort fences the producer with an epoch bump (KAFKA-6119, "
                                        "0.11.0.2 and 1.0.0; False is Kafka 0.11.0.0-0.11.0.1)",
                                        True),
    "kip890_verification": Switch("partition leaders verify with the coordinator that a first transactional batch "
                                  "belongs to an ongoing transaction (KIP-890 part 1)", False),
    "client_epoch_bump_after_abort": Switch("KIP-360 client (2.5+): after aborting a transaction whose batch timed "
                                            "out, the producer bumps its epoch with InitProducerId(pid, epoch)",
                                            True),
    "tv2_epoch_bump": Switch("transaction version 2 (KIP-890 part 2, Kafka 4.0): every EndTxn bumps the epoch, the "
                             "client continues with the bumped epoch, and EndTxn is validated by the TV2 table "
                             "(retry = epoch one below)", False),
    "client_tv_change": Switch("a client switches its transaction version once, between two transactions: "
                               "none, upgrade (TV0 -> TV2) or downgrade (TV2 -> TV0); each EndTxn is validated by "
                               "its own version and each transaction records it", "none", TV_CHANGES),
    "tv2_fence_double_bump": Switch("with tv2_epoch_bump: the coordinator's fence-abort (transaction timeout, "
                                    "InitProducerId on Ongoing) bumps the epoch twice, the fence and then the TV2 "
                                    "abort (the 2024 snapshot, 4.0.0); KAFKA-19367 (June 2025; 4.0.1 via "
                                    "PRs #19958/#19991, 4.1.0+) bumps once, so the fenced producer's EndTxn(ABORT) is a retry",
                                    True),
    "invalid_producer_epoch_abortable": Switch("a produce refused with INVALID_PRODUCER_EPOCH (a stale epoch at the "
                                               "partition) is an abortable error for the transactional client "
                                               "(InvalidProducerEpochException, 2.7+, KIP-588): EndTxn(ABORT), then "
                                               "the task migrates; before 2.7 it was fatal (the producer is fenced)",
                                               True),
    "marker_coordinator_epoch_check": Switch("leaders refuse a marker with an older coordinator epoch "
                                             "(TRANSACTION_COORDINATOR_FENCED; Kafka since 0.11 - False is a "
                                             "counterfactual showing what the check prevents)", True),
}

VARIANTS = {
    "eos-beta-kip447": Variant("per-thread producers with KIP-447 fencing (Kafka 3.x, exactly_once_v2)"),
    "eos-beta-2.5": Variant("per-thread producers with the 2.5-2.8 TxnOffsetCommit checks",
                            {"txn_offset_commit_check": "2.5"}),
    "eos-beta-pre-kip447": Variant("per-thread producers on a pre-KIP-447 broker: no generation checks, no "
                                   "require_stable (must break exactly-once)",
                                   {"txn_offset_commit_check": "pre-kip447", "require_stable": "never"}),
    "eos-alpha-pre-kip447": Variant("per-partition producers, pre-KIP-447 (Kafka Streams exactly_once against a "
                                    "broker before 2.5, whose TxnOffsetCommit v0-2 carries no group metadata)",
                                    {"deployment": "per-partition", "txn_offset_commit_check": "pre-kip447",
                                     "require_stable": "never"}),
    "eos-alpha-kip447": Variant("per-partition producers with KIP-447 checks",
                                {"deployment": "per-partition"}),
    "kafka-2.4-eos-alpha": Variant("what Kafka 2.4 ran: per-partition producers, no KIP-447, no KIP-360 client "
                                   "bump; the timeout abort already bumped the epoch (KAFKA-6119)",
                                   {"deployment": "per-partition", "txn_offset_commit_check": "pre-kip447",
                                    "require_stable": "never", "client_epoch_bump_after_abort": False,
                                    "invalid_producer_epoch_abortable": False}),
    "kafka-0.11-eos-alpha": Variant("Kafka 0.11.0.0-0.11.0.1: as kafka-2.4-eos-alpha, and the timeout abort keeps the epoch "
                                    "(before KAFKA-6119)",
                                    {"deployment": "per-partition", "txn_offset_commit_check": "pre-kip447",
                                     "require_stable": "never", "timeout_abort_bumps_epoch": False,
                                     "client_epoch_bump_after_abort": False,
                                     "invalid_producer_epoch_abortable": False}),
    "timeout-abort-no-bump": Variant("per-thread, KIP-447, but the timeout abort keeps the epoch (as 0.11.0.0-0.11.0.1, before "
                                     "KAFKA-6119): "
                                     "must break atomicity", {"timeout_abort_bumps_epoch": False}),
    "no-coordinator-epoch-check": Variant("counterfactual: leaders accept markers of an old coordinator "
                                          "(with failovers, a stale COMMIT marker commits the next transaction)",
                                          {"marker_coordinator_epoch_check": False}),
    "kip890-verification": Variant("KIP-447 plus KIP-890 part 1 (3.6+): leaders verify a first transactional batch "
                                   "with the coordinator", {"kip890_verification": True}),
    "kip890-tv2": Variant("KIP-447 plus KIP-890 parts 1 and 2 (4.0.0, the 2024 snapshot): verification, an epoch "
                          "bump per transaction, and two bumps on a fence-abort",
                          {"kip890_verification": True, "tv2_epoch_bump": True}),
    "kip890-tv2-kafka-19367": Variant("as kip890-tv2 after KAFKA-19367 (June 2025; first released in 4.0.1 via "
                                      "PRs 19958 and 19991, and 4.1.0+): one bump on a fence-abort",
                                      {"kip890_verification": True, "tv2_epoch_bump": True,
                                       "tv2_fence_double_bump": False}),
    "tv2-without-verification": Variant("KIP-447 with only the per-transaction epoch bump of KIP-890 part 2",
                                         {"tv2_epoch_bump": True}),
    "tv2-client-upgrade": Variant("KIP-447 plus KIP-890 parts 1 and 2 on the broker, clients on TV0 that upgrade "
                                  "to TV2 between two transactions (a rolling client upgrade)",
                                  {"kip890_verification": True, "client_tv_change": "upgrade"}),
    "tv2-client-downgrade": Variant("as kip890-tv2, and clients downgrade to TV0 between two transactions",
                                    {"kip890_verification": True, "tv2_epoch_bump": True,
                                     "client_tv_change": "downgrade"}),
    "timeout-abort-no-bump-kip890": Variant("as timeout-abort-no-bump with KIP-890 part-1 verification at leaders",
                                            {"timeout_abort_bumps_epoch": False, "kip890_verification": True}),
}

BOUNDS = {
    "records": Bound("records in the input partition", 1, 1, 4),
    "max_generation": Bound("highest group generation explored (limits rebalances)", 2, 1, 10),
    "max_epoch": Bound("Short.MAX_VALUE stand-in; states with an exhausted epoch are not explored", 6, 3, 32767),
    "rejoins": Bound("times an instance may rejoin the group with a new member id", 0, 0, 4),
    "instances": Bound("application instances (members of the group)", 2, 1, INSTANCES),
    "failovers": Bound("transaction coordinator failovers", 0, 0, 2),
    "produce_timeouts": Bound("produce deliveries that time out on the client while the request is in flight",
                              0, 0, 2),
    "endtxn_timeouts": Bound("EndTxn requests the client gives up on (and resends) while the first copy is still "
                             "in flight", 0, 0, 2),
}


def build(switches: Mapping[str, SwitchValue], bounds: Mapping[str, int]) -> EosPipeline:
    return EosPipeline(deployment=str(switches["deployment"]),
                       txn_offset_commit_check=str(switches["txn_offset_commit_check"]),
                       require_stable=str(switches["require_stable"]),
                       timeout_abort_bumps_epoch=bool(switches["timeout_abort_bumps_epoch"]),
                       kip890_verification=bool(switches["kip890_verification"]),
                       tv2_epoch_bump=bool(switches["tv2_epoch_bump"]),
                       client_epoch_bump_after_abort=bool(switches["client_epoch_bump_after_abort"]),
                       tv2_fence_double_bump=bool(switches["tv2_fence_double_bump"]),
                       invalid_producer_epoch_abortable=bool(switches["invalid_producer_epoch_abortable"]),
                       marker_coordinator_epoch_check=bool(switches["marker_coordinator_epoch_check"]),
                       records=bounds["records"], max_generation=bounds["max_generation"],
                       max_epoch=bounds["max_epoch"], rejoins=bounds["rejoins"], instances=bounds["instances"],
                       failovers=bounds["failovers"], produce_timeouts=bounds["produce_timeouts"],
                       endtxn_timeouts=bounds["endtxn_timeouts"],
                       client_tv_change=str(switches["client_tv_change"]))


MODEL = ModelDef(
    name="kafka.eos_pipeline",
    doc="Exactly-once consume-transform-produce: transactions, group rebalances, zombies and KIP-447 fencing",
    variants=VARIANTS, default_variant="eos-beta-kip447", switches=SWITCHES, bounds=BOUNDS,
    properties=PROPERTIES, build=build, temporal=TEMPORAL,
)

MODELS: list[ModelDef] = [MODEL]

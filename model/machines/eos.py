"""Machine ``kafka.eos``: transactional producers with sequence numbers, their transaction coordinator
and two or more output partition leaders, in one machine, on one typed protocol (``model.protocol``),
declared with ``checker.compose`` as parts and guarded rules.

Parts: ``producer[t]`` (``producer.transactional``: a transactional producer with its own
transactional id ``t``; per-partition sequences and the in-flight window come from
``producer.client``), ``txn[t]`` and ``txn_log[t]`` (the transaction coordinator's metadata and the
last ``__transaction_state`` record of ``t``), ``leader[p]`` (the leader of output partition ``p``:
``partition.txn_produce``), the produce ``requests`` and ``responses`` (ordered per connection),
the producer id allocator, the clock and the fault budgets; with ``input_records`` the group
coordinator (``group``: committed and pending offsets) and the ``__consumer_offsets`` leader, for a
consume-transform-produce loop; with ``restarts`` a ``zombie[t]``: the previous instance of
``t``'s producer, still able to end its transaction or commit offsets.

Each rule is one ``@rule``: name, parameters, the parts it reads and writes, its guard
(``@precondition``) and an effect that calls the room owning the decision. Compose memoises each
rule on exactly the parts it reads. A fault rule spends a ``Budget``; a zero budget removes it,
and rules that only matter with a budget (request timeouts with lost responses, expiry with a
clock) get no bindings, so a small spec stays small.

Abstractions (beyond those of the rooms): a leader verifies a transactional batch with the coordinator
(KIP-890 part 1) and appends it in one step unless ``verification_steps`` puts them apart
(``eos_verification``); requests to the coordinator (InitProducerId,
AddPartitionsToTxn, EndTxn) and the coordinator's log appends are atomic with their answer (with
``endtxn_timeouts`` an EndTxn the client gave up on may also arrive late, and the atomic EndTxn is
its retry: ``eos_endtxn``); markers
are written partition by partition and a refused marker is not retried; every transaction of a
producer writes ``batches`` records to every output partition; a TV2 client still sends
AddPartitionsToTxn (unless ``tv2_partition_add`` makes the leader add the partition:
``eos_tv2_add``) and never sends EndTxn for a transaction with no partition (so the TV2 abort
from Empty does not arise); a TV2 EndTxn at the exhausted epoch rotates to a new producer id, but
the coordinator's own timeout abort there is cut by ``max_epoch``; a coordinator failover reloads
``txn_log`` (nextProducerId is not persisted: a rotation in PrepareX across a failover is not
faithful); without ``members`` there is no group (each producer owns its input partition and
commits offsets without group metadata; ``eos_group`` has the group, with per-thread producers or,
``eos_alpha``, per-partition ones); a restarted producer's zombie does not produce new batches (only
its requests already in flight arrive) unless it re-initialises after its transactional id expired
(``eos_txn_id_expiry``, with ``txn_id_expirations``: it then becomes the live instance); no read_committed consumers as actors unless ``readers``
(NoAbortedRead reads the leaders' LSO instead). Leader failover of the transactional output
partitions (in-sync, restarted from the log, restored from a snapshot) is the mixin ``eos_failover``;
liveness of transactions and the group is ``eos_liveness``.

Idempotent-only producers (no transactional id), their partition's leader and follower, leader
failover and the older ``kafka.idempotent_produce``'s faults are the mixin ``eos_idempotent``
(``idempotent_producers`` > 0); ``eos_presets`` runs that machine's specs on this one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, NamedTuple

from eoscheck.checker.compose import (
    Actors,
    Budget,
    Channel,
    Clock,
    Composed,
    Delivery,
    Network,
    Part,
    Projection,
    Scalar,
    invariant,
    precondition,
    rule,
    transition,
)
from eoscheck.checker.registry import SwitchValue

from .. import properties as props
from ..coordinator.handler import CoordinatorConfig, handle_init_producer_id
from ..coordinator.txn_log import NO_LOG_VALUE, NO_METADATA, load_metadata, to_log_value
from ..errors import Errors, error_name
from ..group.metadata import NO_MEMBER_ID, GroupMeta, new_group
from ..group.offset_fetch import (
    offset_fetch,
    on_offset_fetch_answer,
    sends_require_stable,
)
from ..group.pending_offsets import (
    complete_pending_txn_offset_commit,
    defer_txn_offset_completion,
    on_txn_offset_commit_append,
    prepare_txn_offset_commit,
)
from ..group.txn_offset_commit import validate_txn_offset_commit
from ..partition.producer_state import truncate_head
from ..partition.txn_produce import (
    append_coordinator_batch,
    expire_producer_state,
    handle_txn_produce,
    needs_verification,
    producer_state_lso,
    write_marker,
)
from ..partition.verification import verification_callback_errors, verification_produce_error
from ..producer import transactional as tx
from ..producer.client import RAISED_OUT_OF_ORDER
from ..producer.config import ClientConfig
from ..protocol import (
    DECISIONS,
    ClientTvChange,
    ClientVersion,
    InitProducerIdMode,
    PreviousProducerIdUpdate,
    Protocol,
    Support,
    TransactionVersion,
    Tv2PartitionAdd,
    from_switches,
    refusal,
)
from ..state import (
    BATCH_STATUS_NAMES,
    INFLIGHT,
    TXN_BUMP,
    TXN_IN_TXN,
    TXN_INIT,
    TXN_PHASE_NAMES,
    TXN_READY,
    IdempotentClient,
    ProduceRequest,
    ProduceResponse,
    Routed,
    TxnLogValue,
    TxnMetadata,
    TxnPartitionState,
    TxnProducer,
)
from ..transactions.add_partitions import add_partitions_to_txn, verify_partitions
from ..transactions.codes import NO_PENDING, TxnResult, TxnState
from ..transactions.end_txn import answer_after_end_txn
from ..transactions.log import EntryKind, last_stable_offset
from ..transactions.markers import (
    TxnMarker,
    complete_if_done,
    markers_to_send,
    on_marker_response,
)
from ..transactions.states import EXPIRATION_ALLOWED, is_valid_transition
from ..transactions.timeout import abort_timed_out
from . import eos_fast, eos_symmetry
from . import eos_partition_symmetry as eps
from .eos_alpha import EosAlpha
from .eos_endtxn import LateEndTxn
from .eos_failover import TxnLeaderFailover
from .eos_fence_faults import FailedFenceAppends
from .eos_group import (
    GROUP_PROJECTIONS,
    CommitFields,
    EosGroup,
    GroupOffsets,
    commit_fields,
    show_membership,
    with_commit_fields,
)
from .eos_idempotent import IDEMPOTENT_PARTITION, IdempotentProducers, Waiting, in_flight, waiting
from .eos_instances import INSTANCE_CHART_PARTS, InstancesMixin
from .eos_liveness import EosLiveness
from .eos_offsets_completion import ScheduledOffsetCompletion
from .eos_partition_symmetry import PARTITION
from .eos_readers import EosReaders
from .eos_send_errors import SendErrors
from .eos_txn_id_expiry import TxnIdExpiry
from .eos_verification import GUARD_NAMES, SplitVerification, answer_name, show_pending

#: what kafka.eos models of the protocol: every decision, each with every value; ``deployment`` and
#: ``per_partition_group_metadata`` matter with a group only (``members``: eos_group, eos_alpha), without
#: one each producer keeps its own input partition; ``client_tv_change`` with the transaction version it
#: starts from, refused in one line by ``eos_endtxn``
SUPPORT = Support(
    machine="kafka.eos",
    honours={"client_version": frozenset(ClientVersion), "transaction_version": frozenset(TransactionVersion),
             "init_producer_id": frozenset(InitProducerIdMode), "client_tv_change": frozenset(ClientTvChange)},
)

ROUTE = ("partition", "client", "connection")
#: the partition id of the group's __consumer_offsets partition in a transaction (output partitions are 0..2)
OFFSETS = props.OFFSETS_PARTITION


#: a producer as Tick's guard reads it (its ``awaiting`` projection): per output partition, the
#: connection and the records of its batches in flight. The rest of a producer (phase, transaction,
#: epoch, queued batches, ghosts) changes on most steps; keyed on it, Tick missed its memo ~10k times
#: in the yardstick's first 300k states.
Awaiting = tuple[tuple[int, tuple[int, ...]], ...]


def _awaiting(p: TxnProducer) -> Awaiting:
    return tuple([in_flight(part) for part in p.parts])


class ProduceFields(NamedTuple):
    """What HandleProduceResponse reads and writes of its producer (``tx.on_produce_response``: the
    answered partition's sequence state, and the phase, bump and error an abortable or fatal answer
    sets): a written projection, so the producer's transaction counter, other ghosts, id and offsets
    moving cost it no miss (the symmetric 2-worker row's first item: 3,699 misses keyed on the whole
    producer, 885 on this)."""

    phase: int
    bump_after_abort: int
    fatal_error: int
    parts: tuple[IdempotentClient, ...]


def _produce_fields(p: TxnProducer) -> ProduceFields:
    return ProduceFields(p.phase, p.bump_after_abort, p.fatal_error, p.parts)


def _with_produce_fields(p: TxnProducer, f: ProduceFields) -> TxnProducer:
    return p._replace(phase=f.phase, bump_after_abort=f.bump_after_abort, fatal_error=f.fatal_error, parts=f.parts)


_PRODUCE = Projection(_produce_fields, _with_produce_fields)


def _zombie_commit(z: TxnProducer | tuple[()]) -> CommitFields | tuple[()]:
    """A zombie's ``CommitFields`` (ZombieTxnOffsetCommit's written projection), () if there is none."""
    return commit_fields(z) if z else ()


_ZOMBIE_COMMIT = Projection(_zombie_commit, with_commit_fields)


def _busy(messages: tuple[Routed, ...]) -> bool:
    """Any produce response in flight (Tick's guard reads only this of the responses channel)."""
    return bool(messages)


def _awaited(producer: tuple[Awaiting, ...], m: Waiting) -> bool:
    """The producer still waits for this request's answer (the batch is in flight on that connection)."""
    connection, records = producer[m.client][m.partition]
    return m.connection == connection and m.record in records


def _quiet(machine: Any, requests: tuple[Waiting, ...], responses: bool, producer: tuple[Awaiting, ...],
           idem_requests: tuple[Routed, ...], idem_responses: tuple[Routed, ...],
           leader: tuple[tuple[tuple[int, int, int], ...], ...]) -> bool:
    """Time passes only while nothing a client waits for is in flight (a late request may be), a
    request a leader holds while it verifies it (``verification_steps``) included. Reads the
    channels' ``waiting`` / ``busy`` and the producers' ``awaiting`` projections: what decides it."""
    return (not responses and not any(_awaited(producer, m) for m in requests)
            and not any(_holds_awaited(producer, p, held) for p, held in enumerate(leader) if held)
            and machine.idempotent_quiet(idem_requests, idem_responses))


def _holds_awaited(producer: tuple[Awaiting, ...], p: int, held: tuple[tuple[int, int, int], ...]) -> bool:
    """Leader ``p`` holds a request (client, connection, record) whose producer still waits for it."""
    for client, connection, record in held:
        in_flight_connection, records = producer[client][p]
        if connection == in_flight_connection and record in records:
            return True
    return False


def _verifying(leader: TxnPartitionState) -> tuple[tuple[int, int, int], ...]:
    """The requests a leader holds between their verification and their append, as (client, connection,
    record) (``_quiet`` reads this projection: () for every leader unless ``verification_steps``)."""
    return tuple((p.request.client, p.request.connection, p.request.record) for p in leader.pending)


def _verifying_record(record: Callable[..., dict[str, Any]], p: Any) -> dict[str, Any]:
    """A held request as an ITF record; where it went and whether it adds only with ``verification_answers``
    (so the records of the answer at the start keep their form)."""
    out = record(p, request=record(p.request), guard=GUARD_NAMES[p.guard], answer=answer_name(p.answer))
    if not p.sent_to and not p.adds:
        out.pop("sent_to", None)
        out.pop("adds", None)
    return out


def _show_producer(p: TxnProducer) -> dict[str, Any]:
    out: dict[str, Any] = {"phase": TXN_PHASE_NAMES[p.phase], "producer_id": p.producer_id, "epoch": p.epoch,
                           "txn": p.txn, "added": [i for i in range(len(p.parts)) if p.added >> i & 1],
                           "committed": [x for x in range(p.txn) if p.committed >> x & 1],
                           "aborted": [x for x in range(p.txn) if p.aborted >> x & 1], "tv": p.tv}
    if p.fatal_error:
        out["error"] = error_name(p.fatal_error)
    for i, part in enumerate(p.parts):
        out[f"partition[{i}]"] = (f"next seq {part.next_seq}, last acked seq {part.last_acked_seq}, batches "
                                  + str([f"r{b.record} {BATCH_STATUS_NAMES[b.status]} seq {b.seq}"
                                         for b in part.batches]))
    return out


def _show_leader(leader: TxnPartitionState) -> dict[str, Any]:
    log = []
    for e in leader.log:
        if e.kind == EntryKind.TXN_DATA:
            t, r = props.record_of(e.value)
            log.append(f"data producer{t}/r{r} (pid {e.producer_id}, epoch {e.producer_epoch})")
        else:
            log.append(f"{EntryKind(e.kind).name} (pid {e.producer_id}, epoch {e.producer_epoch}, coordinator "
                       f"epoch {e.value})")
    return {"log": log, "log_start_offset": leader.log_start_offset, "lso": last_stable_offset(leader.log),
            "producer_state_lso": producer_state_lso(leader),
            "producers": [f"pid {e.producer_id}: epoch {e.epoch}, batches {[(b.seq, b.offset) for b in e.batches]} "
                          f"(seq, offset), txn first offset {e.current_txn_first_offset}, coordinator epoch "
                          f"{e.coordinator_epoch}, lastTimestamp {e.last_timestamp}" for e in leader.producers],
            **show_pending(leader)}


def _show_txn_log(v: TxnLogValue) -> dict[str, Any]:
    """The record's fields; the client's transaction version only when it is not 0 (so traces without TV2 read as
    before the record kept it)."""
    out: dict[str, Any] = {k: list(x) if isinstance(x, tuple) else x for k, x in v._asdict().items()}
    if not v.tv:
        del out["tv"]
    return out


def _show_txn(m: TxnMetadata) -> dict[str, Any]:
    out = {"state": TxnState(m.state).name if m.exists else "none", "producer_id": m.producer_id,
           "epoch": m.epoch, "partitions": list(m.partitions)}
    if m.has_failed_epoch_fence:  # shown only when set (FenceAppendFails), so other traces read as before
        out["failed_epoch_fence"] = True
    return out


def _show_messages(msgs: tuple[Routed, ...]) -> list[str]:
    out = []
    for m in msgs:
        x = m.message
        if isinstance(x, ProduceResponse):
            out.append(f"ProduceResponse(partition {m.partition}, producer{m.client}/r{m.record}, "
                       f"{error_name(x.error)}, offset {x.base_offset}, conn {m.connection})")
        else:
            out.append(f"Produce(partition {m.partition}, producer{m.client}/r{m.record}, pid {x.producer_id}, "
                       f"epoch {x.epoch}, seq {x.seq}, conn {m.connection})")
    return out


def _show_group(g: GroupMeta) -> dict[str, Any]:
    # a group with membership starts at generation 1 (eos_group); without, it stays at 0 and shows as before
    out = {**(show_membership(g) if g.generation_id else {}), "committed": [o.offset for o in g.offsets],
           "pending": [f"pid {e.producer_id}: input {e.partition} offset {e.offset}" for e in g.pending]}
    if g.completing:  # shown only while a scheduled completion waits (other traces unchanged)
        out["completing"] = [f"pid {pid}: {'COMMIT' if commit else 'ABORT'}" for pid, commit in g.completing]
    return out


def _consumers(machine: Any) -> range:
    return range(machine.n_producers) if machine.input_records else range(0)


def _solo(machine: Any) -> range:
    """Producers that each keep their own input partition (no group: ``eos_group`` has the group's rules)."""
    return range(0) if machine.members else range(machine.n_producers)


def _solo_consumers(machine: Any) -> range:
    return range(0) if machine.members else _consumers(machine)


def _zombies(machine: Any) -> range:
    return range(machine.n_producers) if machine.bounds["restarts"] else range(0)


def _show_marker(m: TxnMarker) -> str:
    return (f"{TxnResult(m.result).name}(partition {m.partition}, pid {m.producer_id}, epoch {m.producer_epoch}, "
            f"coordinator epoch {m.coordinator_epoch})")


def _with_time(machine: Any) -> range:
    return range(machine.n_partitions) if machine.bounds["max_ticks"] else range(0)


def _with_losses(machine: Any) -> range:
    return range(machine.n_partitions) if machine.bounds["lost_responses"] else range(0)


def _invariant(name: str, check: Callable[..., bool], reads: tuple[str, ...], **fixed: str) -> Any:
    """A property of ``model.properties`` as a composed invariant on the parts it reads; ``fixed`` maps
    the check's other arguments to machine attributes."""
    # generated with the reads as its own parameters, so that ``checker.compose`` calls it positionally
    # on a miss (a ``**parts`` function costs a dict per miss)
    args = ", ".join(f"{r}={r}" for r in reads) + "".join(f", {k}=self.{a}" for k, a in fixed.items())
    env: dict[str, Any] = {"check": check}
    exec(f"def holds(self, {', '.join(reads)}):\n    return check({args})", env)  # noqa: S102
    holds = env["holds"]
    holds.__doc__, holds.__module__, holds.__qualname__ = check.__doc__, __name__, f"EosMachine.{check.__name__}"
    return invariant(name, reads=reads)(holds)


def _transition(name: str, check: Callable[..., bool], reads: tuple[str, ...], actions: tuple[str, ...],
                when: Callable[[tuple], bool] | None = None, moves: tuple[str, ...] | None = None) -> Any:
    """A transition property of ``model.properties``, checked on the steps of ``actions`` (and
    ``when``) only (the others cannot break it); with ``moves``, only on steps that change one of
    those terms (``transition``'s ``stuttering=(terms)``: the property holds on every other step)."""
    def holds(self: Any, step: tuple, before: Any, after: Any) -> bool:
        return check(step, before, after)
    holds.__doc__ = check.__doc__
    return transition(name, reads=reads, actions=actions, when=when,
                      stuttering=moves if moves is not None else False)(holds)


def _held(p: TxnProducer) -> tuple[int, int] | tuple[()]:
    """The (producer id, epoch) a live producer holds (EpochInRange's projection of a producer), () if none."""
    return (p.producer_id, p.epoch) if p.producer_id >= 0 and not p.fatal_error else ()


def _txn_epoch(m: TxnMetadata) -> int:
    return m.epoch


class _ProducerFence(NamedTuple):
    """What FencedGetsFencingError reads of a producer (``props.eos_fenced_gets_fencing_error``)."""

    fatal_error: int
    producer_id: int
    epoch: int


class _TxnFence(NamedTuple):
    """What FencedGetsFencingError reads of the coordinator's metadata."""

    exists: bool
    producer_id: int
    epoch: int
    next_producer_id: int


class _TxnIdentity(NamedTuple):
    """What NoSpuriousFencing reads of the coordinator's metadata (``props.eos_no_spurious_fencing``)."""

    exists: bool
    producer_id: int
    prev_producer_id: int
    epoch: int
    next_producer_id: int


def _txn_identity(m: TxnMetadata) -> _TxnIdentity:
    return _TxnIdentity(m.exists, m.producer_id, m.prev_producer_id, m.epoch, m.next_producer_id)


def _fatal_error(p: TxnProducer) -> int:
    """A producer's fatal error (0: none): NoSpuriousFencing can fail only on a step that changes one."""
    return p.fatal_error


def _producer_fence(p: TxnProducer | tuple[()]) -> _ProducerFence | tuple[()]:
    # a zombie slot holds () while there is none (the property skips it)
    return _ProducerFence(p.fatal_error, p.producer_id, p.epoch) if p else ()


def _txn_fence(m: TxnMetadata) -> _TxnFence:
    return _TxnFence(m.exists, m.producer_id, m.epoch, m.next_producer_id)


def _epoch_in_range(self: Any, producer: tuple[tuple[int, int] | tuple[()], ...], txn: tuple[int, ...]) -> bool:
    # ``props.eos_epoch_in_range`` on the projections it reads (``_held``, the coordinator's epochs)
    held = [h for h in producer if h]
    top = self.max_epoch
    return len(held) == len(set(held)) and all(e <= top for e in txn) and all(h[1] <= top for h in held)


_epoch_in_range.__doc__ = props.eos_epoch_in_range.__doc__


def _no_loss(self: Any, t: int, leader: TxnPartitionState, producer: TxnProducer) -> bool:
    return props.eos_no_loss_at(t, leader, producer, self.batches)


def _exactly_once(self: Any, t: int, leader: TxnPartitionState, producer: TxnProducer, group: GroupMeta,
                  txn: TxnMetadata) -> bool:
    return props.eos_exactly_once_at(t, leader, producer, group, txn, self.batches)


_no_loss.__doc__ = props.eos_no_loss.__doc__
_exactly_once.__doc__ = props.eos_exactly_once.__doc__

#: the steps that can fail a producer, and those that change the coordinator's metadata
_FAILING = ("InitProducerId", "AddPartitionsToTxn", "EndTxn", "HandleProduceResponse", "TxnOffsetCommit",
            "ZombieEndTxn", "ZombieTxnOffsetCommit", "ZombieAddPartitionsToTxn", "ZombieInitProducerId")
#: the steps FencedGetsFencingError looks at: every step that can fail a producer. TxnOffsetCommit
#: too since fid16: until fid15 its only fatal errors were fencing errors, since fid15 an answer
#: TxnOffsetCommitHandler does not name is fatal as well (``producer.transactional.on_txn_offset_commit``)
_FENCING_CHECKED = _FAILING
#: the steps whose error (their last field) is the fatal error they give their producer, if any:
#: ``on_init_producer_id`` and ``on_add_partitions`` fail it with exactly that error and leave it
#: alone on NONE; ``on_txn_offset_commit`` writes on NONE, retries without a step, and otherwise makes
#: the transaction abortable or fails the producer with exactly that error
_ERROR_IS_FATAL = frozenset({"InitProducerId", "AddPartitionsToTxn", "ZombieInitProducerId", "TxnOffsetCommit",
                             "ZombieTxnOffsetCommit"})
_FENCING = frozenset(int(e) for e in tx.FENCING_ERRORS)
#: the steps that can fail a data producer (``producer[t]``) with a fatal error: NoSpuriousFencing looks at them
_FAILING_PRODUCER = ("InitProducerId", "AddPartitionsToTxn", "AddOffsetsToTxn", "EndTxn", "HandleProduceResponse",
                     "TxnOffsetCommit", "ZombieInitProducerId")


def _may_fail_unfenced(step: tuple) -> bool:
    """Whether a step of ``_FENCING_CHECKED`` can give a producer a new fatal error that is not a
    fencing one (FencedGetsFencingError holds on the others, whatever the states). A produce response
    does so only when it raises OutOfOrderSequence or is INVALID_PRODUCER_ID_MAPPING (fatal from 4.0.0,
    ``client_produce_pid_mapping_fatal``); a step whose error is a fencing error fails its
    producer (EndTxn's ``on_end_txn`` too) with that error, or not at all; InitProducerId and
    AddPartitionsToTxn and TxnOffsetCommit answered NONE fail nobody. An EndTxn answered NONE (or aborted locally) may
    still fail the producer on an unresolved sequence (``finish_transaction``): checked."""
    action, error = step[0], step[-1]
    if action == "HandleProduceResponse":
        # its last field is the outcome, the one before the error: 4.0's fatal INVALID_PRODUCER_ID_MAPPING (KAFKA-14563)
        return error == RAISED_OUT_OF_ORDER or step[-2] == Errors.INVALID_PRODUCER_ID_MAPPING
    if error in _FENCING:
        return False
    return not (error == 0 and action in _ERROR_IS_FATAL)


#: EndTxn's error field when no EndTxn was sent: nothing added (aborted locally), or the last error was
#: InvalidPidMappingException (``beginCompletingTransaction`` goes straight to InitProducerId, which a coordinator
#: below InitProducerId v3 cannot be sent: ``transactional.abort_skipping_end_txn``)
_LOCAL_ABORT, _SKIPPED_END_TXN, _SKIPPED_END_TXN_UNWRITABLE = -1, -2, -3


def _end_txn_error_name(e: int) -> str:
    if e == _LOCAL_ABORT:
        return "no partition added: aborted locally"
    if e == _SKIPPED_END_TXN:
        return "InvalidPidMapping: EndTxn skipped, InitProducerId(producer id, epoch) next"
    if e == _SKIPPED_END_TXN_UNWRITABLE:
        return "InvalidPidMapping: EndTxn skipped, InitProducerId(producer id, epoch) unwritable below v3: fatal"
    return error_name(e)


#: PrepareCommit and PrepareAbort as ints (the markers' gates: an IntEnum member costs ~100 ns to compare)
_PREPARING = frozenset({int(TxnState.PREPARE_COMMIT), int(TxnState.PREPARE_ABORT)})
_COORDINATOR = ("InitProducerId", "AddPartitionsToTxn", "EndTxn", "AbortTimedOutTransaction", "WriteTxnMarker",
                "TxnCoordinatorFailover", "AddOffsetsToTxn", "WriteOffsetsMarker", "ZombieEndTxn", "StaleEndTxnArrives",
                "CompleteEmptyTransaction", "FenceAppendFails", "ExpireDataTransactionalId", "ZombieInitProducerId")


class EosMachine(SplitVerification, EosAlpha, EosLiveness, InstancesMixin, IdempotentProducers, EosGroup, EosReaders,
                 TxnLeaderFailover, LateEndTxn, FailedFenceAppends, ScheduledOffsetCompletion, SendErrors, TxnIdExpiry,
                 Composed):
    """``kafka.eos``; see the module doc."""

    # Every slot is an interned id (``checker.intern`` reduces ids below 2**61-1), the clock, a budget
    # counter or one of the two scalars (the producer id allocator and the coordinator epoch), which
    # start at 0 and only grow: the domain where ``hash`` is injective (``checker.fingerprint``; no
    # slot ever holds -2). The engines sample-check it; tests/test_fingerprint.py walks whole specs.
    fingerprint_kind = "hash"

    #: the chart's lanes (``checker.compose.chart``): Kafka's actors, not the state's parts
    chart_parts: ClassVar[Mapping[str, str]] = {
        "producer": "producer[]", "zombie": "zombie[]", "next_producer_id": "txn coordinator",
        "coordinator_epoch": "txn coordinator", "txn": "txn coordinator", "txn_log": "txn coordinator",
        "leader": "leader[]", "offsets_leader": "group coordinator", "group": "group coordinator",
        "now": "clock", "client": "client[]", "idem_leader": "idempotent leader", "idem_follower": "idempotent leader",
        "leader_epoch": "idempotent leader", **INSTANCE_CHART_PARTS}

    # --- parts, in slot order
    now = Clock(max="max_ticks", tick="Tick", reads=("requests:waiting", "responses:busy", "producer:awaiting",
                                                     "idem_requests", "idem_responses", "leader:verifying"),
                when=_quiet,
                doc="abstract time in ticks (producer-id expiry)")
    next_producer_id = Scalar(init=lambda m: m.n_idempotent,
                              doc="the producer id allocator's next id (idempotent producers start with ids 0..n-1)")
    coordinator_epoch = Scalar(init=0, doc="the transaction coordinator's epoch")
    producer = Actors(count="producers",
                      init=lambda m, i: m.initial_producer(i, m.initially_owns(i))._replace(tv=m.initial_tv),
                      show=_show_producer, symmetric="producer", rename={PARTITION: eps.rename_producer},
                      projections={**GROUP_PROJECTIONS["producer"], "held": _held, "fence": _producer_fence,
                                   "fatal": _fatal_error, "awaiting": _awaiting, "produce": _PRODUCE},
                      doc="transactional producers, one per transactional id")
    zombie = Actors(count="producers", init=(), show=lambda z: _show_producer(z) if z else "none", symmetric="producer",
                    rename={PARTITION: eps.rename_producer}, projections={"fence": _producer_fence, "commit": _ZOMBIE_COMMIT},
                    doc="the previous instance of a transactional id's producer, after a restart (() if none)")
    txn = Actors(count="producers", init=NO_METADATA, show=_show_txn, symmetric="producer",
                 rename={PARTITION: eps.rename_txn}, projections={**GROUP_PROJECTIONS["txn"], "epoch": _txn_epoch,
                                                                      "fence": _txn_fence, "identity": _txn_identity},
                 doc="the coordinator's metadata per transactional id")
    txn_log = Actors(count="producers", init=NO_LOG_VALUE, show=_show_txn_log, symmetric="producer",
                     rename={PARTITION: eps.rename_txn_log}, doc="the last __transaction_state record per id")
    leader = Actors(count="partitions", init=TxnPartitionState((), 0, ()), show=_show_leader, symmetric=PARTITION,
                    rename={"producer": eos_symmetry.rename_leader}, projections={"verifying": _verifying},
                    doc="output partition leaders: log, log start offset, producer state")
    offsets_leader = Part(init=TxnPartitionState((), 0, ()), show=_show_leader,
                          doc="the leader of the group's __consumer_offsets partition (consume-transform-produce)")
    group = Part(init=lambda m: m._initial_group or new_group(m.n_producers), show=_show_group,
                 rename={"producer": eos_symmetry.rename_group}, projections=GROUP_PROJECTIONS["group"],
                 doc="the group coordinator: committed and pending offsets per input partition")
    requests = Channel(network=Network(Delivery.ORDERED), connection=ROUTE, show=_show_messages,
                       rename={"producer": eos_symmetry.rename_routed, PARTITION: eps.rename_routed},
                       projections={"waiting": waiting},
                       doc="produce requests in flight")
    responses = Channel(network=Network(Delivery.ORDERED, loss="lost_responses"), connection=ROUTE,
                        label=("partition", "client", "record"), drop="LoseResponse", show=_show_messages,
                        rename={"producer": eos_symmetry.rename_routed, PARTITION: eps.rename_routed},
                        projections={"waiting": waiting, "busy": _busy},
                        doc="produce responses in flight")
    stale_markers = Channel(network=Network(Delivery.UNORDERED), show=lambda ms: [_show_marker(m) for m in ms],
                            rename={PARTITION: eps.rename_markers},
                            doc="WriteTxnMarkers entries of a coordinator that failed over, still in flight")
    lost_responses = Budget("lost_responses", doc="produce responses lost")
    produce_timeouts = Budget("produce_timeouts", doc="in-flight batches given up on (delivery.timeout.ms)")
    txn_timeouts = Budget("txn_timeouts", doc="transactions aborted on transaction.timeout.ms")
    delete_records = Budget("delete_records", doc="log start offset moves (DeleteRecords, retention)")
    coordinator_failovers = Budget("coordinator_failovers", doc="transaction coordinator failovers")
    restarts = Budget("restarts", doc="producer instances restarted (the old one lives on as a zombie)")

    #: whether this class's TV2 leaders add partitions (``tv2_partition_add``: ``eos_tv2_add``)
    leader_adds_partitions: ClassVar[bool] = False

    def __new__(cls, protocol: Protocol | None = None, *args: Any, **kwargs: Any) -> EosMachine:  # noqa: PYI034
        # ``EosMachine(protocol, ...)`` runs a protocol whose TV2 leaders add partitions on the class
        # that models them (``machine_class``); a derived class stays itself (and is refused below);
        # unpickling calls this without arguments
        runs = machine_class(protocol) if cls is EosMachine and protocol is not None else cls
        return super().__new__(runs)

    def __init__(self, protocol: Protocol, bounds: Mapping[str, int], memoize: bool = True,
                 extensions: Mapping[str, SwitchValue] | None = None) -> None:
        why = refusal(protocol, SUPPORT)
        if why is None and protocol.tv2_partition_add != Tv2PartitionAdd.CLIENT and not self.leader_adds_partitions:
            why = (f"{type(self).__name__} cannot honour tv2_partition_add={protocol.tv2_partition_add.value} "
                   "(a class derived from EosMachine keeps the client's AddPartitionsToTxn)")
        if why is not None:
            raise ValueError(why)
        self.protocol = p = protocol
        #: the values of switches a derived model adds (``model.extend``); {} for kafka.eos itself
        self.extensions: dict[str, SwitchValue] = dict(extensions or {})
        self.bounds = dict(bounds)
        self.n_partitions, self.transactions, self.batches = bounds["partitions"], bounds["transactions"], bounds["batches"]
        self.n_producers, self.input_records = bounds["producers"], bounds["input_records"]
        self.consume = self.input_records > 0
        self.require_stable = sends_require_stable(p.require_stable.value, read_committed=True)
        self.max_epoch = bounds["max_epoch"]
        #: the largest coordinator epoch explored: max_epoch, or below the exhausted ones
        self.explored_epoch = self.max_epoch if bounds.get("exhausted_epochs", 1) else self.max_epoch - 2
        self.tv2 = p.transaction_version == TransactionVersion.TV2
        self._end_txn_setup()
        #: the transaction version every producer starts with (``client_tv_change`` may switch it)
        self.initial_tv = 2 if self.tv2 else 0
        self.cfg = ClientConfig(version=p.client_version.value, epoch_bump=p.client_epoch_bump.value,
                                max_in_flight=bounds["max_in_flight"], delivery_timeout=1 << 30,
                                max_seq=bounds["max_seq"], max_epoch=self.max_epoch)
        self.coordinator = CoordinatorConfig(
            kip360=p.init_producer_id != InitProducerIdMode.PRE_KIP360,
            shipped=p.init_producer_id == InitProducerIdMode.KIP360_SHIPPED, max_epoch=self.max_epoch,
            persist_last_epoch=p.persist_last_epoch, persist_prev_producer_id=p.persist_prev_producer_id,
            tv2=self.server_tv2, tv2_fence_double_bump=p.tv2_fence_double_bump,
            prev_pid_every_transition=p.previous_producer_id_update == PreviousProducerIdUpdate.EVERY_TRANSITION)
        #: the client's table for coordinator errors (``producer.txn_responses``): canBumpEpoch is a KIP-360
        #: client with a coordinator that has InitProducerId v3; KAFKA-18019 makes the 4.0 client's
        #: INVALID_PRODUCER_ID_MAPPING fatal
        self.txn_errors = {"can_bump_epoch": p.client_version == ClientVersion.KIP360 and self.coordinator.kip360,
                           "pid_mapping_fatal": p.client_pid_mapping_fatal}
        self._txn_slots: tuple[int, int] = (0, 0)
        config = {name: bounds[name] for name in ("producers", "partitions", "max_ticks", "lost_responses",
                                                  "produce_timeouts", "txn_timeouts", "delete_records",
                                                  "coordinator_failovers", "restarts")}
        self._instances_setup(bounds, config)
        self._txn_id_expiry_setup(self.bounds)
        config.update(self.idempotent_setup(p, bounds))
        config.update(self._group_setup(bounds))
        self._alpha_setup(bounds)
        config.update(self._readers_setup(bounds))
        config.update(self.txn_failover_setup(bounds))
        config.update(self.optional_budgets_setup(bounds))
        self._verification_setup(bounds)
        super().__init__(config, memoize=memoize)
        self._instances_compiled()
        # Rules that cannot fire without their fault or the clock have no bindings (or a clock stopped
        # at 0); they are not listed either, so coverage does not report them as never fired.
        idle = ({"RequestTimeout"} if not bounds["lost_responses"] else set()) | (
            {"ExpireProducerIds", "Tick"} if not bounds["max_ticks"] else set()) | (
            {"StaleTxnMarkerArrives", "StaleOffsetsMarkerArrives"} if not bounds["coordinator_failovers"] else set()) | (
            set() if self.input_records and bounds["coordinator_failovers"] else {"StaleOffsetsMarkerArrives"}) | (
            set() if self.input_records else {"OffsetFetch", "AddOffsetsToTxn", "TxnOffsetCommit",
                                              "WriteOffsetsMarker"}) | (
            set() if bounds["restarts"] else {"ZombieEndTxn"}) | (
            set() if bounds["restarts"] and self.input_records else {"ZombieTxnOffsetCommit"}) | self.idempotent_idle() | (
            self.group_idle_actions()) | (set() if self.n_readers else {"Fetch"}) | self.txn_failover_idle() | (
            self.end_txn_idle_actions()) | self.optional_budgets_idle() | self._txn_id_expiry_idle() | (
            self.verification_idle(bool(self.n_idempotent)))
        listed: Mapping[str, tuple[str, ...]] = self._plan.actions
        idle |= self._instances_idle(listed)
        self.actions = {name: params for name, params in listed.items() if name not in idle}
        base = self.slot("txn")
        self._txn_slots = (base, base + bounds["producers"])
        self._epoch_ok: dict[tuple, bool] = {}
        self._pid_slot = self.slot("next_producer_id")
        self._group_slot = self.slot("group")
        first = self.slot("member") if self.members else 0
        self._member_slots = (first, first + self.members)
        self._fast_paths()

    def _fast_paths(self) -> None:
        """The per-configuration hot paths (``eos_fast``): the constraint and the canonical form as
        generated functions on the instance (they shadow the class's methods, which stay the
        reference), and no memo lookups for rules that cannot fire."""
        eos_fast.prune_idle_rules(self)
        self._alpha_compiled(self.n_producers)  # the copies' places in a state, after the pruning
        own_bounds = type(self).within_bounds is not EosMachine.within_bounds
        if not own_bounds:
            self.within_bounds = eos_fast.constraint(self)  # type: ignore[method-assign,assignment]
        own_form = type(self).canonical is not Composed.canonical
        if not own_form:  # a derived machine's own form stays; ``Composed``'s
            self.canonical = eos_fast.canonical_form(self)  # type: ignore[method-assign,assignment]
        if type(self).is_terminal is EosMachine.is_terminal:
            self.is_terminal = eos_fast.terminal(self, EosMachine.is_terminal)  # type: ignore[method-assign,assignment]
        # the coordinator's epochs, the group's generation and every member's rejoins under one bound
        # each, the producer id allocators global counters: renaming the declared scalarsets moves none
        self.symmetric_constraint = not own_bounds and not own_form
        if not self.alpha and type(self).successors is EosAlpha.successors:
            # no per-partition metadata to fix up: the generated function itself, as ``Composed`` binds it
            # for a class that does not override ``successors`` (``_Plan.compile`` rebinds it, pickling
            # leaves it behind)
            self.successors = self._plan.successors  # type: ignore[method-assign,assignment]

    def clear_caches(self) -> None:
        super().clear_caches()
        self._epoch_ok = {}
        self._group_ok = {}
        self._fast_paths()

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["_epoch_ok"] = {}
        state["_group_ok"] = {}
        state.pop("within_bounds", None)  # closures over the compiled plan: rebuilt on arrival
        state.pop("canonical", None)
        state.pop("is_terminal", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._fast_paths()

    def _coordinator(self, meta: TxnMetadata) -> dict[str, Any]:
        """The coordinator's new metadata, appended to __transaction_state (what a load would see)."""
        return {"txn": meta, "txn_log": to_log_value(meta, persist_last_epoch=self.protocol.persist_last_epoch,
                                                     persist_prev_producer_id=self.protocol.persist_prev_producer_id)}

    # --- structure ---------------------------------------------------------------------------------

    def _epochs_within(self, key: Any, s: tuple) -> bool:
        """Every coordinator epoch is within ``explored_epoch`` (memoised on the ``txn`` slots, ``key``)."""
        ok = self._epoch_ok[key] = all(map(self.epoch_within, self.view(s).txn))
        return ok

    def epoch_within(self, meta: Any) -> bool:
        """A transactional id's coordinator epoch is within ``explored_epoch`` (one part of ``within_bounds``)."""
        return bool(meta.epoch <= self.explored_epoch)

    def within_bounds(self, s: tuple) -> bool:
        # the reference form; ``eos_fast.constraint`` generates the one the engines call (the slots
        # below are logical: every slot, the ones the states leave out as constants included)
        logical = self.logical(s)
        lo, hi = self._txn_slots
        key = logical[lo:hi]
        ok = self._epoch_ok.get(key)
        if ok is None:
            ok = self._epochs_within(key, s)
        ok = ok and self.idempotent_within_bounds(logical[self._pid_slot]) and self._instances_within_bounds(logical)
        if ok and self.members:
            return self.group_within_bounds_at(s)
        return ok

    def itf_fields(self, s: tuple) -> dict[str, Any]:
        """``fields`` with the logs, producer-state entries, pending offsets and messages as records
        (ITF consumers need the data, not the one-line descriptions ``fields`` shows people)."""
        from .itf_data import record
        v = self.view(s)
        out = dict(self.fields(s))
        leaders = [(f"leader[{p}]", part) for p, part in enumerate(v.leader)] + [("offsets_leader", v.offsets_leader)]
        for name, part in leaders:
            out[f"{name}.log"] = [record(e, kind=EntryKind(e.kind).name) for e in part.log]
            out[f"{name}.producers"] = [record(e) for e in part.producers]
            if part.verifications:
                out[f"{name}.verifications"] = [record(e) for e in part.verifications]
            if part.pending:
                out[f"{name}.verifying"] = [_verifying_record(record, p) for p in part.pending]
        out["group.pending"] = [record(e) for e in v.group.pending]
        if v.group.completing:  # scheduled completions (eos_offsets_completion), as records
            out["group.completing"] = [{"producer_id": pid, "result": "COMMIT" if commit else "ABORT"}
                                       for pid, commit in v.group.completing]
        if v.zombie_offsets:
            out["zombie_offsets.entries"] = [record(e) for e in v.zombie_offsets]
        for channel in ("requests", "responses"):
            out[channel] = [record(m, message=record(m.message, error=error_name(m.message.error))
                                   if isinstance(m.message, ProduceResponse) else record(m.message))
                            for m in getattr(v, channel)]
        out["stale_markers"] = [record(m, result=TxnResult(m.result).name) for m in v.stale_markers]
        out.update(self.idempotent_itf_fields(v))
        out.update(self.end_txn_itf_fields(v))
        out.update(self._instances_itf(s))
        return out

    def is_terminal(self, s: tuple) -> bool:
        v = self.view(s)
        if self.members:
            return ((self.group_done(v.group, v.txn) and not v.requests and not v.responses) or self.group_stopped(
                v.group, v.member, v.producer)) and self.idempotent_done(v.client, v.idem_requests, v.idem_responses)
        settled = all(m.state not in (TxnState.ONGOING, TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT) for m in v.txn)
        return (settled and not v.requests and not v.responses
                and all(tx.is_done(p, self.transactions, self.input_records) for p in v.producer)
                and self.idempotent_done(v.client, v.idem_requests, v.idem_responses)
                and self._instances_terminal(s))

    # --- the producer client -----------------------------------------------------------------------

    @precondition(lambda self, producer: producer.phase in (TXN_INIT, TXN_BUMP))
    @rule("InitProducerId", params={"t": "producer"}, reads=("producer[t]", "txn[t]", "next_producer_id"),
          writes=("producer[t]", "txn[t]", "txn_log[t]", "next_producer_id"), results=("error",),
          show={"error": error_name})
    def init_producer_id(self, producer: TxnProducer, txn: TxnMetadata, next_producer_id: int) -> Any:
        """initTransactions, or the KIP-360 bump after an abort (the coordinator's handler)."""
        req_pid, req_epoch = tx.init_request(producer)
        r = handle_init_producer_id(txn, txn.pending_state != NO_PENDING, req_pid, req_epoch, next_producer_id,
                                    self.coordinator)
        if r.fenced is not None:  # an Ongoing transaction is fenced and aborted; the client retries
            return {**self._coordinator(r.fenced), "error": int(r.error)}
        if r.transit is None:
            client = tx.on_init_producer_id(producer, r.error, -1, -1)
            return None if client is None else {"producer": client, "error": int(r.error)}
        out = r.transit
        if txn.exists:
            out = txn._replace(producer_id=out.producer_id, epoch=out.epoch, last_epoch=out.last_epoch,
                               prev_producer_id=out.prev_producer_id, state=int(TxnState.EMPTY), partitions=())
        client = tx.on_init_producer_id(producer, int(Errors.NONE), out.producer_id, out.epoch)
        return {**self._coordinator(out), "producer": client, "error": int(Errors.NONE),
                "next_producer_id": next_producer_id + (1 if r.used_new_producer_id else 0)}

    @precondition(lambda self, producer: producer.phase == TXN_READY and producer.txn < self.transactions and (
        not self.consume or 0 <= producer.position < self.input_records))
    @rule("BeginTransaction", params={"t": _solo}, reads=("producer[t]", "now"), writes=("producer[t]",),
          results=("txn",))
    def begin_transaction(self, producer: TxnProducer, now: int) -> Any:
        """beginTransaction and the sends of one transaction (in a consume-transform-produce loop: the
        output of the input record at the consumer's position)."""
        return {"producer": tx.begin_transaction(producer, self.batches, now, self.consume), "txn": producer.txn}

    # --- the consumer and the group coordinator (consume-transform-produce, ``input_records`` > 0) ----

    @precondition(lambda self, producer: producer.phase == TXN_READY and producer.position < 0)
    @rule("OffsetFetch", params={"t": _solo_consumers}, reads=("producer[t]", "group"), writes=("producer[t]",),
          results=("position",))
    def offset_fetch_rule(self, t: int, producer: TxnProducer, group: GroupMeta) -> Any:
        """The consumer learns its position in input partition ``t`` (require_stable: wait while a
        transaction's offsets for it are pending)."""
        reaction, position = on_offset_fetch_answer(offset_fetch(group, t, require_stable=self.require_stable))
        client = tx.on_offset_fetch(producer, reaction, position)
        return None if client is None else {"producer": client, "position": position}

    @precondition(lambda self, producer: producer.phase == TXN_IN_TXN and producer.offsets == 0)
    @rule("AddOffsetsToTxn", params={"t": _consumers}, reads=("producer[t]", "txn[t]"),
          writes=("producer[t]", "txn[t]", "txn_log[t]"), results=("error",), show={"error": error_name})
    def add_offsets(self, producer: TxnProducer, txn: TxnMetadata) -> Any:
        out = add_partitions_to_txn(txn, producer.producer_id, producer.epoch, (OFFSETS,),
                                    pending_first=self.protocol.add_partitions_pending_first)
        client = tx.on_add_offsets(producer, out.error, **self.txn_errors)
        if client is None:
            return None
        return {**(self._coordinator(out.meta) if out.wrote else {}), "producer": client, "error": int(out.error)}

    # the producer through a written projection (``CommitFields``: what the commit reads and writes, as
    # the group's TxnOffsetCommit in ``eos_group``), the gate on the whole producer (read by the gate
    # alone): its batches and ghosts moving cost no miss
    @precondition(lambda self, whole: whole.phase == TXN_IN_TXN and whole.offsets == 1)
    @rule("TxnOffsetCommit", params={"t": _solo_consumers},
          reads=("producer[t]:commit", "txn[t]", "group", "offsets_leader", "whole=producer[t]"),
          writes=("producer[t]:commit", "group", "offsets_leader"), results=("offset", "error"),
          show={"error": error_name})
    def txn_offset_commit(self, t: int, producer: CommitFields, txn: TxnMetadata, group: GroupMeta,
                          offsets_leader: TxnPartitionState) -> Any:
        """The group coordinator validates the commit (no group metadata: the producer is alone on its
        input partition) and appends the offset to __consumer_offsets as a transactional batch; it stays
        pending until the marker."""
        return self._offsets_commit(t, producer, txn, group, offsets_leader, generation_id=-1, member_id=NO_MEMBER_ID)

    def _offsets_commit(self, partition: int, producer: CommitFields, txn: TxnMetadata, group: GroupMeta,
                        offsets_leader: TxnPartitionState, *, generation_id: int, member_id: int) -> dict[str, Any] | None:
        """TxnOffsetCommit of ``producer``'s next input offset of ``partition`` with this group metadata:
        the group coordinator's checks, then the transactional append to __consumer_offsets (pending
        until the marker); None when the client retries the answer (no step)."""
        offset = producer.position + 1
        error = validate_txn_offset_commit(group, check=self.protocol.txn_offset_commit_check.value,
                                           generation_id=generation_id, member_id=member_id)
        written = offsets_leader
        if error == Errors.NONE:
            verification = int(Errors.NONE)
            p = self.protocol
            if p.partition_verification and needs_verification(offsets_leader, producer.producer_id,
                                                                 self.verification_at(producer.epoch)):
                answer = verify_partitions(txn, producer.producer_id, producer.epoch, (OFFSETS,),
                                           abortable=p.verification_abortable)[0][1]
                # AddPartitionsToTxnManager's conversion, as for a produce request (TxnOffsetCommit v4+ is a
                # 3.8+ client's genericError); the group coordinator passes these errors on
                # (maybeConvertOffsetCommitError)
                verification = verification_callback_errors({OFFSETS: answer},
                                                            generic_error=p.client_transaction_abortable).get(
                    OFFSETS, int(Errors.NONE))
            out = append_coordinator_batch(offsets_leader, producer_id=producer.producer_id, epoch=producer.epoch,
                                           value=offset, verification_error=verification)
            error, written = out.error, out.partition
            if error == Errors.NONE:
                pid = producer.producer_id
                group = on_txn_offset_commit_append(prepare_txn_offset_commit(group, pid, ((partition, offset),)),
                                                    pid, partition, offset, out.offset)
        # CommitFields holds every field the answer reads and writes (phase, bump, fatal error, offsets)
        client = tx.on_txn_offset_commit(producer, error,  # type: ignore[arg-type]
                                         any_retriable=self.protocol.client_txn_offset_commit_any_retriable)
        if client is None:
            return None  # retried (a retriable error): nothing was written, nothing changes
        return {"producer": client, "group": group, "offsets_leader": written, "offset": offset, "error": int(error)}

    # the group through a written projection (its committed and pending offsets): the membership
    # moving costs no miss, and the write keeps it
    @precondition(lambda self, txn: txn.state in _PREPARING and OFFSETS in txn.partitions)  # a gate (below)
    @rule("WriteOffsetsMarker", params={"t": _consumers},
          reads=("txn[t]", "offsets_leader", "group:offsets", "coordinator_epoch", "now"),
          writes=("txn[t]", "txn_log[t]", "offsets_leader", "group:offsets"), results=("result",))
    def write_offsets_marker(self, txn: TxnMetadata, offsets_leader: TxnPartitionState, group: GroupOffsets,
                             coordinator_epoch: int, now: int) -> Any:
        """The marker on __consumer_offsets: the group coordinator materialises (COMMIT) or drops
        (ABORT) the producer's pending offsets."""
        return self._offsets_marker(txn, offsets_leader, group, coordinator_epoch, now, deferred=False)

    def _offsets_marker(self, txn: TxnMetadata, offsets_leader: TxnPartitionState, group: GroupOffsets,
                        coordinator_epoch: int, now: int, *, deferred: bool) -> dict[str, Any] | None:
        """The marker on __consumer_offsets and its answer to the coordinator; the producer's pending
        offsets completed at once, or (``deferred``, ``eos_offsets_completion``) only scheduled."""
        marker = next((m for m in self._markers(txn, coordinator_epoch) if m.partition == OFFSETS), None)
        if marker is None:
            return None
        error, written = write_marker(offsets_leader, marker, timestamp=now,
                                      check_coordinator_epoch=self.protocol.marker_coordinator_epoch_check,
                                      sets_timestamp=self.protocol.marker_sets_producer_timestamp,
                                      tv2_epoch_check=self.tv2_marker_check)
        if error != Errors.NONE:
            return None
        commit = marker.result == TxnResult.COMMIT
        if deferred:
            group = defer_txn_offset_completion(group, marker.producer_id, commit)  # type: ignore[arg-type,assignment]
        else:
            group = complete_pending_txn_offset_commit(group, marker.producer_id, commit)  # type: ignore[arg-type,assignment]
        done, wrote = complete_if_done(on_marker_response(txn, OFFSETS, int(Errors.NONE)).meta)
        coordinator = self._coordinator(done) if wrote else {"txn": done}
        return {**coordinator, "offsets_leader": written, "group": group, "result": TxnResult(marker.result).name}

    # The per-partition rules of a producer are one binding per producer that yields the steps of
    # every partition in partition order (``p`` is the step's first result, so steps and their order
    # are those of a binding per (t, p)): they read the producer only, and a binding per partition
    # looked its memo up, and missed, once per partition on the same key.

    # Gates: a precondition on some of a rule's reads is memoised on those slots and looked up first
    # (``checker.compose``), so the many states where a producer has nothing to add, drain or end cost
    # a lookup on its one slot, and no miss of the full key when another part moves. Each is the
    # effect's own "nothing to do" test, so the steps are the same.
    @precondition(lambda self, producer: bool(tx.partitions_to_add(producer)))
    @rule("AddPartitionsToTxn", params={"t": "producer"}, reads=("producer[t]", "txn[t]"),
          writes=("producer[t]", "txn[t]", "txn_log[t]"), results=("p", "error"), show={"error": error_name})
    def add_partitions(self, producer: TxnProducer, txn: TxnMetadata) -> Any:
        moves = []
        for p in tx.partitions_to_add(producer):
            out = add_partitions_to_txn(txn, producer.producer_id, producer.epoch, (p,),
                                        pending_first=self.protocol.add_partitions_pending_first)
            client = tx.on_add_partitions(producer, p, out.error, **self.txn_errors)
            if client is None:
                continue  # CONCURRENT_TRANSACTIONS: retried later, nothing changes
            moves.append({**(self._coordinator(out.meta) if out.wrote else {}), "producer": client, "p": p,
                          "error": int(out.error)})
        return moves

    # after an abortable error the Sender still resends the batches re-enqueued for a retry (``tx.drain``)
    @precondition(lambda self, producer: producer.added != 0 and (producer.phase == TXN_IN_TXN
                                                                  or tx.resends_retries(producer)))
    @rule("Drain", params={"t": "producer"}, reads=("producer[t]", "now"),
          writes=("producer[t]",), sends=("requests",), results=("p", "record", "seq", "epoch"))
    def drain(self, t: int, producer: TxnProducer, now: int) -> Any:
        moves = []
        for p in range(self.n_partitions):
            drained = tx.drain(producer, t, p, now, self.cfg)
            if drained is None:
                continue
            client, req = drained
            moves.append({"producer": client, "requests": Routed(p, t, req.connection, req.record, req), "p": p,
                          "record": req.record, "seq": req.seq, "epoch": req.epoch})
        return moves

    @rule("DeliveryTimeout", params={"t": "producer"}, reads=("producer[t]",),
          writes=("producer[t]",), results=("p",), spends="produce_timeouts")
    def delivery_timeout(self, producer: TxnProducer) -> Any:
        """delivery.timeout.ms passes for an in-flight batch; its request stays on the network."""
        return self._expiries(producer, tx.give_up_in_flight)

    @rule("ExpireRetriedBatch", params={"t": "producer"}, reads=("producer[t]",),
          writes=("producer[t]",), results=("p",), spends="produce_timeouts")
    def expire_retried_batch(self, producer: TxnProducer) -> Any:
        """delivery.timeout.ms passes for a batch waiting in the accumulator for its retry (``tx.expire_retried_batch``):
        the same budget as an in-flight batch's, since either was sent and its fate is unknown."""
        return self._expiries(producer, tx.expire_retried_batch)

    def _expiries(self, producer: TxnProducer,
                  expire: Callable[[TxnProducer, int, ClientConfig], TxnProducer | None]) -> list[dict[str, Any]]:
        """One move per partition where ``expire`` fails a batch of the producer."""
        moves = []
        for p in range(self.n_partitions):
            client = expire(producer, p, self.cfg)
            if client is not None:
                moves.append({"producer": client, "p": p})
        return moves

    # a gate on the producer alone (``checker.compose`` memoises it on that slot): with no batch in
    # flight no request can time out, however the channels change
    @precondition(lambda self, producer: any(b.status == INFLIGHT for part in producer.parts for b in part.batches))
    @rule("RequestTimeout", params={"t": lambda m: range(m.n_producers) if m.bounds["lost_responses"] else range(0)},
          reads=("producer[t]", "requests:waiting", "responses:waiting"), writes=("producer[t]",), results=("p",))
    def request_timeout(self, t: int, producer: TxnProducer, requests: tuple[Waiting, ...],
                        responses: tuple[Waiting, ...]) -> Any:
        """request.timeout.ms for a batch whose request and response are both gone (a lost response)."""
        moves = []
        for p, part in enumerate(producer.parts):
            if not any(b.status == INFLIGHT for b in part.batches):
                continue
            waiting = {m.record for m in requests + responses
                       if m.partition == p and m.client == t and m.connection == part.connection}
            if any(b.status == INFLIGHT and b.record not in waiting for b in part.batches):
                moves.append({"producer": tx.connection_closed(producer, p), "p": p})
        return moves

    @precondition(lambda self, producer: tx.ready_to_commit(producer, self.consume) or tx.ready_to_abort(producer))
    @rule("EndTxn", params={"t": "producer"}, reads=("producer[t]", "txn[t]", "next_producer_id"),
          writes=("producer[t]", "txn[t]", "txn_log[t]", "next_producer_id"), results=("result", "error"),
          show={"error": _end_txn_error_name})
    def end_transaction(self, producer: TxnProducer, txn: TxnMetadata, next_producer_id: int) -> Any:
        """commitTransaction once every batch is acknowledged; abortTransaction after an abortable error
        once every batch that was sent is complete (those never sent are aborted; with no partition added,
        a TV0/1 client aborts locally); after an InvalidPidMappingException (2.5.0 .. 3.9.x) without EndTxn
        and without waiting (``tx.skips_end_txn``): the batches still in flight or waiting for a retry keep
        their producer id, epoch and sequence (3.9.1 ``RecordAccumulator.drain`` never re-stamps a batch that
        has a sequence; the InitProducerId answer only resets the sequence numbers, TransactionManager.java:1306-1319),
        and the partitions added stay added into the next transaction (``tx.keeps_partitions_added``)."""
        bump = self.bumps_after_abort(producer)
        tv2 = producer.tv >= 2
        if tx.ready_to_commit(producer, self.consume):
            commit = True
        elif tx.ready_to_abort(producer):
            commit = False
            producer = tx.abort_undrained_batches(producer)
            if producer.bump_after_abort == tx.SKIP_END_TXN:
                # InitProducerId(producer id, epoch) follows on TV2 too, or the producer fails if it cannot be sent
                can_bump = self.txn_errors["can_bump_epoch"]
                client = tx.abort_skipping_end_txn(producer, can_bump_epoch=can_bump, cfg=self.cfg)
                client = tx.keeps_partitions_added(client, producer.added)
                error = _SKIPPED_END_TXN if can_bump else _SKIPPED_END_TXN_UNWRITABLE
                return {"producer": client, "result": "ABORT", "error": error}
            # a TV2 client sends EndTxn once a send() was triggered (4.0 ``TransactionManager.nextRequest``:
            # transactionStarted is set by the send, the leader adding the partition), and beginTransaction here
            # always sends: only a TV0/1 client ends a transaction with nothing added locally
            if not tv2 and not producer.added and not producer.offsets:
                client = tx.finish_transaction(producer, False, producer.epoch, bump_after_abort=bump, cfg=self.cfg)
                return {"producer": client, "result": "ABORT", "error": _LOCAL_ABORT}
        else:
            return None
        result = TxnResult.COMMIT if commit else TxnResult.ABORT
        # validated by the transaction version the request carries (the producer's)
        out = self.coordinator_end_txn(txn, producer.producer_id, producer.epoch, int(result), producer.tv,
                                       next_producer_id)
        answer = answer_after_end_txn(out.meta, self.protocol.tv2_rotation_answer_next_producer_id)
        answered = tx.on_end_txn(producer, commit, out.error, answer, tv2=tv2,
                                 bump_after_abort=bump, cfg=self.cfg, **self.txn_errors)
        if answered is None:
            return None  # CONCURRENT_TRANSACTIONS: retried
        rotated = out.wrote and out.meta.next_producer_id >= 0
        return {**(self._coordinator(out.meta) if out.wrote else {}), "producer": answered, "result": result.name,
                "error": int(out.error), "next_producer_id": next_producer_id + (1 if rotated else 0)}

    @precondition(lambda self, producer, zombie: producer.phase != TXN_INIT and zombie == ())
    @rule("Restart", params={"t": "producer"}, reads=("producer[t]", "zombie[t]"), writes=("producer[t]", "zombie[t]"),
          spends="restarts")
    def restart(self, producer: TxnProducer, zombie: Any) -> Any:
        """The application starts a new instance for the transactional id; the old one carries on as
        a zombie, unaware, until something fences it."""
        return {"producer": tx.restart(producer), "zombie": producer}

    # the gate is EndTxn's on the old instance (``end_transaction`` does nothing unless it may commit or
    # abort), memoised on the zombie alone: keyed on the coordinator entry and the allocator too, which move
    # with the live instance's transactions, a zombie with batches in flight missed its memo on every move
    @precondition(lambda self, zombie: zombie != () and (tx.ready_to_commit(zombie, self.consume)
                                                         or tx.ready_to_abort(zombie)))
    @rule("ZombieEndTxn", params={"t": _zombies}, reads=("zombie[t]", "txn[t]", "next_producer_id"),
          writes=("zombie[t]", "txn[t]", "txn_log[t]", "next_producer_id"), results=("result", "error"),
          show={"error": _end_txn_error_name})
    def zombie_end_transaction(self, zombie: TxnProducer, txn: TxnMetadata, next_producer_id: int) -> Any:
        """The old instance ends its transaction as if it were still the only one."""
        out = self.end_transaction(producer=zombie, txn=txn, next_producer_id=next_producer_id)
        return None if out is None else {**{k: v for k, v in out.items() if k != "producer"}, "zombie": out["producer"]}

    # the old instance through the same written projection as TxnOffsetCommit's producer
    @precondition(lambda self, whole: whole != () and whole.phase == TXN_IN_TXN and whole.offsets == 1)
    @rule("ZombieTxnOffsetCommit", params={"t": lambda m: _consumers(m) if m.bounds["restarts"] else range(0)},
          reads=("zombie[t]:commit", "txn[t]", "group", "offsets_leader", "whole=zombie[t]"),
          writes=("zombie[t]:commit", "group", "offsets_leader"), results=("offset", "error"),
          show={"error": error_name})
    def zombie_txn_offset_commit(self, t: int, zombie: CommitFields, txn: TxnMetadata, group: GroupMeta,
                                 offsets_leader: TxnPartitionState) -> Any:
        """The old instance commits its input offset to its transaction."""
        out = self.txn_offset_commit(t=t, producer=zombie, txn=txn, group=group, offsets_leader=offsets_leader)
        return None if out is None else {**{k: v for k, v in out.items() if k != "producer"}, "zombie": out["producer"]}

    @rule("HandleProduceResponse", receive="responses", params=("partition", "client", "record"),
          reads=("producer[client]:produce", "now"), writes=("producer[client]:produce",), results=("error", "outcome"),
          show={"error": error_name, "outcome": tx.OUTCOME_NAMES.__getitem__})
    def handle_response(self, partition: int, msg: Routed, producer: ProduceFields, now: int) -> Any:
        resp = msg.message
        assert isinstance(resp, ProduceResponse)
        if msg.connection != producer.parts[partition].connection:
            return {"error": resp.error, "outcome": tx.cl.DROPPED}  # the connection was closed: never read
        # ProduceFields holds every field the answer reads and writes (parts, phase, bump, fatal error)
        client, outcome = tx.on_produce_response(producer, partition, resp, now, self.cfg,  # type: ignore[arg-type]
                                                 ipe_abortable=self.protocol.invalid_producer_epoch_abortable,
                                                 pid_mapping_fatal=self.protocol.client_produce_pid_mapping_fatal)
        return {"producer": client, "error": resp.error, "outcome": outcome}

    # --- partition leaders -------------------------------------------------------------------------

    @rule("HandleProduce", receive="requests", params=("partition", "client", "record"),
          reads=("leader[partition]", "txn[client]"), writes=("leader[partition]",), sends=("responses",),
          results=("seq", "epoch", "error"), show={"error": error_name})
    def handle_produce(self, partition: int, client: int, msg: Routed, leader: TxnPartitionState,
                       txn: TxnMetadata) -> Any:
        """The leader handles the oldest request of a connection: KIP-890 verification with the
        coordinator when switched on, then the produce checks and the append."""
        if self.verification_split:
            return None  # VerifyProduce and AppendVerifiedProduce (``eos_verification``)
        req = msg.message
        assert isinstance(req, ProduceRequest)
        verification = self.produce_verification(partition, leader, txn, req.producer_id, req.epoch)
        out = handle_txn_produce(leader, producer_id=req.producer_id, epoch=req.epoch, seq=req.seq,
                                 value=props.record_value(client, req.record), timestamp=req.created,
                                 max_seq=self.cfg.max_seq, cache_size=self.protocol.broker_batch_cache,
                                 unknown_producer=self.protocol.broker_unknown_producer.value,
                                 old_duplicate_error=self.protocol.broker_duplicate_sequence_error,
                                 verification_error=verification, new_producer_seq_zero=self.new_producer_seq_zero,
                                 tv2_verified=self.new_producer_seq_zero
                                 and self.tv2_entry_at_append(leader, req.producer_id, req.epoch))
        resp = ProduceResponse(client, msg.connection, req.record, out.error, out.offset,
                               out.partition.log_start_offset)
        return {"leader": self.stamped(leader, out.partition, req.seq, req.created), "responses": msg._replace(message=resp), "seq": req.seq,
                "epoch": req.epoch, "error": out.error}

    def produce_verification(self, partition: int, leader: TxnPartitionState, txn: TxnMetadata, producer_id: int,
                             epoch: int) -> int:
        """The error of the leader's check with the coordinator before a transactional batch is
        appended (NONE: append it): KIP-890 part 1 when ``partition_verification`` is on.

        The extension point of a design review (``model.extend``): a derived machine overrides this
        to try another rule. It sees what HandleProduce reads (the partition's leader and the
        producer's coordinator metadata), so the rule's memo stays exact; machine attributes such as
        ``self.protocol`` and ``self.extensions`` are constants of the run."""
        p = self.protocol
        if p.partition_verification and self.stale_at_start(leader, producer_id, epoch):
            return int(Errors.INVALID_PRODUCER_EPOCH)  # KAFKA-18042: before the coordinator is asked
        if p.partition_verification and needs_verification(leader, producer_id, self.verification_at(epoch)):
            answer = verify_partitions(txn, producer_id, epoch, (partition,), abortable=p.verification_abortable)[0][1]
            # the coordinator's answer as the produce request sees it: AddPartitionsToTxnManager's
            # conversion (PRODUCER_FENCED -> INVALID_PRODUCER_EPOCH; TRANSACTION_ABORTABLE -> INVALID_TXN_STATE
            # for Produce <= v10), then ReplicaManager's (retriable coordinator errors -> NOT_ENOUGH_REPLICAS)
            return verification_produce_error(answer, generic_error=p.client_transaction_abortable)
        return int(Errors.NONE)

    def tv2_entry_at_append(self, leader: TxnPartitionState, producer_id: int, epoch: int) -> bool:
        """The one-step HandleProduce's batch is appended under a verification entry of a TV2 client (the one its
        verification created, with supportsEpochBump): with the client's add, the leader verified it (no
        transaction open for the producer there) and every producer is a TV2 client (``tv2_client_entries``)."""
        return (self.tv2_client_entries and self.protocol.partition_verification
                and needs_verification(leader, producer_id, self.verification_at(epoch)))

    @rule("DeleteRecords", params={"p": "partitions"}, reads=("leader[p]",), writes=("leader[p]",),
          results=("offset",), spends="delete_records")
    def delete_records_rule(self, leader: TxnPartitionState) -> Any:
        """Retention or DeleteRecords moves the log start offset (up to the high watermark); before
        KAFKA-7190 producers whose last batch falls below it are evicted."""
        moves = []
        for offset in range(leader.log_start_offset + 1, len(leader.log) + 1):
            producers = (leader.producers if self.protocol.broker_retain_producer_state
                         else truncate_head(leader.producers, offset))
            moves.append({"leader": leader._replace(log_start_offset=offset, producers=producers), "offset": offset})
        return moves or None

    @rule("ExpireProducerIds", params={"p": _with_time}, reads=("leader[p]", "now"), writes=("leader[p]",))
    def expire_producer_ids(self, leader: TxnPartitionState, now: int) -> Any:
        """producer.id.expiration.ms (KIP-854): idle producers with no open transaction are forgotten, and
        KIP-890 verification entries as old (``verification_steps``; the one-step rule keeps none)."""
        expired = expire_producer_state(leader, now, self.bounds["producer_id_expiration"])
        return None if expired is None else {"leader": expired}

    # --- the transaction coordinator ---------------------------------------------------------------

    @rule("AbortTimedOutTransaction", params={"t": "producer"}, reads=("txn[t]",), writes=("txn[t]", "txn_log[t]"),
          spends="txn_timeouts")
    def timeout_abort(self, txn: TxnMetadata) -> Any:
        out = abort_timed_out(txn, max_epoch=self.max_epoch, bump_epoch=self.protocol.timeout_abort_bumps_epoch,
                              tv2=self.server_tv2, tv2_double_bump=self.protocol.tv2_fence_double_bump)
        return self._coordinator(out.meta) if out.wrote else None

    # a gate on the metadata alone: a marker for ``p`` only while PrepareX with ``p`` in the transaction
    @precondition(lambda self, p, txn: txn.state in _PREPARING and p in txn.partitions)
    @rule("WriteTxnMarker", params={"t": "producer", "p": "partitions"},
          reads=("txn[t]", "leader[p]", "coordinator_epoch", "now"), writes=("txn[t]", "txn_log[t]", "leader[p]"),
          results=("result",))
    def write_txn_marker(self, p: int, txn: TxnMetadata, leader: TxnPartitionState, coordinator_epoch: int,
                         now: int) -> Any:
        """The coordinator's marker reaches the leader and is appended; the coordinator completes the
        transaction once every partition acknowledged (a refused marker is abandoned)."""
        marker = next((m for m in self._markers(txn, coordinator_epoch) if m.partition == p), None)
        if marker is None:
            return None
        error, written = write_marker(leader, marker, timestamp=now,
                                      check_coordinator_epoch=self.protocol.marker_coordinator_epoch_check,
                                      sets_timestamp=self.protocol.marker_sets_producer_timestamp,
                                      tv2_epoch_check=self.tv2_marker_check)
        if error != Errors.NONE:
            return None
        done, wrote = complete_if_done(on_marker_response(txn, p, int(Errors.NONE)).meta)
        coordinator = self._coordinator(done) if wrote else {"txn": done}
        return {**coordinator, "leader": self.stamped(leader, written, -1, now), "result": TxnResult(marker.result).name}

    @rule("TxnCoordinatorFailover", reads=("txn", "txn_log", "coordinator_epoch", "instances_txn_log"),
          writes=("txn", "coordinator_epoch", "instances_txn", "init_pending"), sends=("stale_markers",),
          spends="coordinator_failovers")
    def coordinator_failover(self, txn: tuple[TxnMetadata, ...], txn_log: tuple[TxnLogValue, ...],
                             coordinator_epoch: int, instances_txn_log: TxnLogValue) -> Any:
        """A new coordinator loads __transaction_state with a higher coordinator epoch (in-memory fields
        are lost; a loaded PrepareX resends every marker; an append in progress is lost); the old one's
        markers stay in flight."""
        stale = [m for meta in txn for m in self._markers(meta, coordinator_epoch)]
        return {"txn": tuple(load_metadata(value) for value in txn_log), "coordinator_epoch": coordinator_epoch + 1,
                "stale_markers": stale, "instances_txn": load_metadata(instances_txn_log), "init_pending": ()}

    @rule("StaleOffsetsMarkerArrives", receive="stale_markers", match=lambda m: m.partition == OFFSETS,
          params=("producer_id",), reads=("offsets_leader", "group", "now"), writes=("offsets_leader", "group"),
          results=("result", "error"), show={"error": error_name})
    def stale_offsets_marker(self, msg: TxnMarker, offsets_leader: TxnPartitionState, group: GroupMeta,
                             now: int) -> Any:
        error, written = write_marker(offsets_leader, msg, timestamp=now,
                                      check_coordinator_epoch=self.protocol.marker_coordinator_epoch_check,
                                      sets_timestamp=self.protocol.marker_sets_producer_timestamp,
                                      tv2_epoch_check=self.tv2_marker_check)
        if error == Errors.NONE:
            group = complete_pending_txn_offset_commit(group, msg.producer_id, msg.result == TxnResult.COMMIT)
        return {"offsets_leader": written, "group": group, "result": TxnResult(msg.result).name, "error": int(error)}

    @rule("StaleTxnMarkerArrives", receive="stale_markers", match=lambda m: m.partition != OFFSETS,
          params=("partition", "producer_id"),
          reads=("leader[partition]", "now"), writes=("leader[partition]",), results=("result", "error"),
          show={"error": error_name})
    def stale_marker(self, msg: TxnMarker, leader: TxnPartitionState, now: int) -> Any:
        """A marker of the old coordinator reaches the leader; nobody handles the answer."""
        error, written = write_marker(leader, msg, timestamp=now,
                                      check_coordinator_epoch=self.protocol.marker_coordinator_epoch_check,
                                      sets_timestamp=self.protocol.marker_sets_producer_timestamp,
                                      tv2_epoch_check=self.tv2_marker_check)
        return {"leader": self.stamped(leader, written, -1, now), "result": TxnResult(msg.result).name, "error": int(error)}

    def _markers(self, meta: TxnMetadata, coordinator_epoch: int) -> tuple[TxnMarker, ...]:
        return markers_to_send(meta, coordinator_epoch,
                               rotation_markers_new_producer_id=self.protocol.rotation_markers_new_producer_id)

    # --- properties (each one function of ``model.properties`` with its one-line doc) --------------

    no_duplicate = _invariant("NoDuplicate", props.eos_no_duplicate, ("leader",))
    # NoLoss and ExactlyOnce are conjunctions over (producer, partition) pairs: memoised per pair, a
    # miss comes with a new (leader, producer) pair rather than a new pair of leaders and producers
    # (ExactlyOnce has no bindings without input_records: a producer's inputs then stay empty).
    no_loss = invariant("NoLoss", params={"t": "producer", "p": "partitions"},
                        reads=("leader[p]", "producer[t]"))(_no_loss)
    atomic = _invariant("AtomicTransactions", props.eos_atomic_transactions, ("leader",), batches="batches")
    @invariant("NoAbortedRead", reads=("leader", "reader"))
    def no_aborted_read(self, leader: tuple[TxnPartitionState, ...], reader: tuple[Any, ...]) -> bool:
        """read_committed never reads an aborted record: what the consumers delivered (with readers), else what the leaders' LSO exposes."""
        if reader:
            return props.eos_no_aborted_delivery(leader, reader)
        return props.eos_no_aborted_read(leader)
    no_hanging = _invariant("NoHangingTransaction", props.eos_no_hanging_transaction,
                            ("leader", "offsets_leader", "txn"))
    exactly_once = invariant("ExactlyOnce", params={"t": _solo_consumers, "p": "partitions"},
                             reads=("leader[p]", "producer[t]", "group", "txn[t]"))(_exactly_once)
    order = _invariant("PerPartitionOrder", props.eos_per_partition_order, ("leader",))
    no_zombie_write = _invariant("NoZombieWrite", props.eos_no_zombie_write, ("leader", "offsets_leader"))
    # memoised on each producer's (producer id, epoch) if live and each coordinator epoch (projections)
    epoch_in_range = invariant("EpochInRange", reads=("producer:held", "txn:epoch"))(_epoch_in_range)
    # it holds on every response that did not raise OutOfOrderSequence (its first test)
    oos_on_loss = _transition("OutOfOrderOnlyOnLoss", props.eos_out_of_order_only_on_loss, ("leader", "producer"),
                              ("HandleProduceResponse",),
                              when=lambda step: step[-1] == RAISED_OUT_OF_ORDER and step[1] != IDEMPOTENT_PARTITION)
    # only a new fatal error that is not a fencing one can break it: a produce response fails a
    # producer with another error only when it raises OutOfOrderSequence or, from 4.0.0, answers
    # INVALID_PRODUCER_ID_MAPPING (``on_produce_response``);
    # the other steps pass without a memo key (``_may_fail_unfenced``)
    # on projections (``_ProducerFence``, ``_TxnFence``): a step that moves a producer's batches or
    # sequences only is a hit
    fencing_error = _transition("FencedGetsFencingError", props.eos_fenced_gets_fencing_error,
                                ("producer:fence", "zombie:fence", "txn:fence"), _FENCING_CHECKED, when=_may_fail_unfenced)
    # on projections too: the producer's (fatal error, producer id, epoch), the zombie's presence and the
    # coordinator's (exists, producer id, previous producer id, epoch, next producer id). It fails only
    # where a producer's fatal error goes from none to a fenced outcome, so a step that leaves every
    # producer's fatal error as it was passes on two id lookups per producer (``moves``), not a 9-term
    # key (session 17's A/B: most steps of these actions change a producer, few its fatal error)
    spurious_fencing = _transition("NoSpuriousFencing", props.eos_no_spurious_fencing,
                                   ("producer:fence", "zombie:fence", "txn:identity"), _FAILING_PRODUCER,
                                   moves=("producer:fatal",))

    # KIP-890's split verification (``verification_steps``): an append refused INVALID_TXN_STATE while its
    # producer still waits for it and the coordinator counts the partition in the batch's transaction
    spurious_refusal = _transition("NoSpuriousTxnStateRefusal", props.eos_no_spurious_txn_state_refusal,
                                   ("leader", "producer", "txn"), ("AppendVerifiedProduce",),
                                   when=lambda step: step[-1] == Errors.INVALID_TXN_STATE)

    # the same steps: an append refused OUT_OF_ORDER_SEQUENCE_NUMBER though the batch follows its producer's last one
    # (4.0.x: a lower epoch's verification entry, KAFKA-18042)
    spurious_out_of_order = _transition("NoSpuriousOutOfOrder", props.eos_no_spurious_out_of_order,
                                        ("leader", "producer"), ("AppendVerifiedProduce",),
                                        when=lambda step: step[-1] == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER)

    # per coordinator (``each``): an outcome that writes its coordinator's metadata from a memo key
    # holding it is decided once, not once per successor (session 20: 80% of the pipeline shape's
    # transition checks)
    @transition("ValidTxnTransitions", reads=("txn",), actions=_COORDINATOR, each=True)
    def valid_transitions(self, step: tuple, before: Any, after: Any) -> bool:
        """The transaction coordinator only makes transitions Kafka's state table allows."""
        a, b = before.txn, after.txn  # one coordinator's metadata
        # metadata removed: transactional-id expiry, whose Dead is reached from Empty / CompleteX only
        return a.state == b.state or not a.exists or (a.state in EXPIRATION_ALLOWED if not b.exists else
                                                      is_valid_transition(a.state, b.state, tv2=self.tv2 or b.tv >= 2))


PROPERTY_DOCS: dict[str, str] = EosMachine.property_docs()


def machine_class(protocol: Protocol) -> type[EosMachine]:
    """The class that runs ``protocol``: TV2 leaders that add partitions (``tv2_partition_add``) have
    their own HandleProduce, memoised on the coordinator's metadata too, so only they pay for it."""
    if protocol.tv2_partition_add != Tv2PartitionAdd.CLIENT:
        from .eos_tv2_add import Tv2LeaderAddMachine
        return Tv2LeaderAddMachine
    return EosMachine


def build(switches: Mapping[str, Any], bounds: Mapping[str, int]) -> EosMachine:
    return EosMachine(from_switches({k: v for k, v in switches.items() if k in DECISIONS}), bounds)


def build_for(cls: type[EosMachine]) -> Callable[[Mapping[str, SwitchValue], Mapping[str, int]], EosMachine]:
    """A ``ModelDef.build`` for a derived machine class: the protocol decisions go to ``Protocol``,
    every other switch (the derived model's own) to ``extensions``."""
    def build_derived(switches: Mapping[str, SwitchValue], bounds: Mapping[str, int]) -> EosMachine:
        protocol = from_switches({k: v for k, v in switches.items() if k in DECISIONS})
        return cls(protocol, bounds, extensions={k: v for k, v in switches.items() if k not in DECISIONS})
    return build_derived


def machine(variant: str = "kafka-3.0-3.5", **bounds: int) -> EosMachine:
    """A kafka.eos machine for tests and tools: a named variant and bounds over the defaults."""
    from ..protocol import VARIANTS
    from .eos_model import BOUNDS
    values = {name: b.default for name, b in BOUNDS.items()}
    values.update(bounds)
    return EosMachine(VARIANTS[variant].protocol, values)


__all__ = ["OFFSETS", "PROPERTY_DOCS", "SUPPORT", "EosMachine", "build", "build_for", "machine"]

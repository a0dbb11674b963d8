"""Idempotent-only producers in ``kafka.eos``: the parts, rules and properties of the older
``kafka.idempotent_produce`` machine, declared with ``checker.compose`` as a mixin that
``EosMachine`` inherits (compose collects parts, rules and properties over the MRO).

Parts: ``client[c]`` (an idempotent producer without a transactional id: ``producer.client``), the
leader of its partition ``idem_leader`` (``partition.log``: log, log start offset, producer state)
with the in-sync follower ``idem_follower`` and the ``leader_epoch``, and the produce requests and
responses ``idem_requests`` / ``idem_responses`` (ordered per connection, responses lossy under the
machine's ``lost_responses`` budget). Every decision is a call into the rooms the older machine
calls (``producer.client``, ``partition.validation``, ``partition.log``,
``partition.producer_state``); the rules only route.

Each mechanism is switched on by its bound: ``idempotent_producers`` (0: nothing of this module
is compiled; its invariants have no bindings), ``transient_errors`` (NOT_ENOUGH_REPLICAS),
``leader_failovers`` / ``restarted_replica_failovers`` / ``snapshot_restored_failovers`` (the three
kinds of replica a leadership moves to; any of them adds the follower), ``delete_records`` (shared
with the transactional leaders), ``lost_responses`` (shared), ``late_delivery`` and
``clock_skew``, ``new_producer_ids`` (a state constraint on the producer id allocator).

Abstraction (as in the older machine): the idempotent producers write to one partition of their
own, ``IDEMPOTENT_PARTITION``; the transactional producers' leaders (``partition.txn_produce``
over ``transactions.log`` entries) do not serve them, so an idempotent and a transactional
producer never share a log. Steps that exist in both worlds share the transactional rules' names
and fields (``HandleProduce``, ``HandleProduceResponse``, ``LoseResponse``, ``DeleteRecords``,
``ExpireProducerIds``) with ``partition`` = ``IDEMPOTENT_PARTITION``; the client's own steps
whose transactional namesakes have other fields are ``IdempotentDrain``,
``IdempotentRequestTimeout`` and ``IdempotentInitProducerId``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, NamedTuple, cast

from eoscheck.checker.compose import (
    Actors,
    Budget,
    Channel,
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
from eoscheck.checker.liveness.temporal import (
    SF,
    WF,
    Fairness,
    TemporalProperty,
    leads_to,
)

from .. import properties as props
from ..errors import Errors, error_name
from ..partition.log import (
    advance_log_start_offset,
    append_batch,
    expire_producers,
    rebuild_producer_state,
    record_batch,
)
from ..partition.producer_state import (
    find_entry,
    is_producer_expired,
    remove_expired_producers,
    truncate_head,
)
from ..partition.validation import validate_produce
from ..producer import client as cl
from ..producer.config import ClientConfig
from ..protocol import ClientVersion, Protocol
from ..state import (
    BATCH_STATUS_NAMES,
    INFLIGHT,
    QUEUED,
    RETRY,
    FollowerState,
    IdempotentClient,
    IdempotentState,
    LogRecord,
    PartitionState,
    ProducerBatch,
    ProduceRequest,
    ProduceResponse,
    Routed,
)
from .idempotent_symmetry import (
    rename_client,
    rename_follower,
    rename_partition,
    rename_pid,
)

#: the idempotent producers' partition (the transactional output partitions are 0..2, the group's
#: __consumer_offsets partition is ``properties.OFFSETS_PARTITION``)
IDEMPOTENT_PARTITION = 3
_P = IDEMPOTENT_PARTITION
ROUTE = ("partition", "client", "connection")
#: the scalarset of the idempotent producers
CLIENTS = "idempotent_client"

#: the bounds of this module (name -> default when a caller leaves it out)
IDEMPOTENT_BOUND_DEFAULTS: dict[str, int] = {
    "idempotent_producers": 0, "idempotent_records": 2, "acked_prefix": 0, "delivery_timeout": 3,
    "transient_errors": 0, "leader_failovers": 0, "restarted_replica_failovers": 0,
    "snapshot_restored_failovers": 0, "late_delivery": 0, "clock_skew": 0, "new_producer_ids": 1,
}
#: kafka.eos's steps of transactional producers and their coordinator (none with ``producers = 0``)
_TRANSACTIONAL_ONLY = frozenset({
    "InitProducerId", "BeginTransaction", "OffsetFetch", "AddOffsetsToTxn", "TxnOffsetCommit", "WriteOffsetsMarker",
    "AddPartitionsToTxn", "Drain", "DeliveryTimeout", "ExpireRetriedBatch", "RequestTimeout", "EndTxn", "Restart",
    "ZombieEndTxn", "ZombieTxnOffsetCommit", "AbortTimedOutTransaction", "WriteTxnMarker", "TxnCoordinatorFailover",
    "StaleTxnMarkerArrives", "StaleOffsetsMarkerArrives"})
#: this module's parts (as ``fields`` names them) and budgets (``faults.<name>``)
_PARTS = frozenset({"client", "idem_leader", "idem_follower", "leader_epoch", "idem_requests", "idem_responses"})
_BUDGETS = frozenset(f"faults.{b}" for b in ("transient_errors", "leader_failovers", "restarted_replica_failovers",
                                             "snapshot_restored_failovers"))
#: the replica kinds a leadership moves to, each with its budget (``LeaderFailover``'s ``rebuilt``)
IN_SYNC, REBUILT, SNAPSHOT = 0, 1, 2


def _request(step: tuple) -> tuple:
    return step[2:4]  # (client, record) of HandleProduce / HandleProduceResponse (step[1] is the partition)


def _batch(step: tuple) -> tuple:
    return step[1:3]  # (client, record) of ExpireBatch


def _client(step: tuple) -> Any:
    return step[1]


#: the older machine's fairness with this module's step shapes: the client drains, retries, times out,
#: resolves sequences and bumps epochs when it can; the leader handles every request, every response
#: arrives, followers catch up (weak fairness per request, response and client); the clock and a
#: batch's expiry are strongly fair (both are enabled on and off in a retry loop). Faults may happen,
#: never must.
IDEMPOTENT_FAIRNESS: tuple[Fairness, ...] = (
    WF("HandleProduce", per=_request, per_name="request (client, record)"),
    WF("HandleProduceResponse", per=_request, per_name="response (client, record)"),
    SF("ExpireBatch", per=_batch, per_name="batch (client, record)"),
    WF("IdempotentDrain", "IdempotentRequestTimeout", "ResolveSequences", "BumpEpoch", "IdempotentInitProducerId",
       per=_client, per_name="client"),
    WF("PropagateLogStartOffset"), SF("Tick"))


class _LogView(NamedTuple):
    """What ``model.properties``' idempotent checks read of a state: the partition and the clients."""

    partition: PartitionState
    clients: tuple[IdempotentClient, ...]


def _state(partition: PartitionState, clients: tuple[IdempotentClient, ...] = ()) -> IdempotentState:
    # the idempotent checks of ``model.properties`` read only these two fields of the older state
    return cast(IdempotentState, _LogView(partition, clients))


class Waiting(NamedTuple):
    """What a request timeout reads of a produce request or response in flight (``Routed`` without the
    message): a projection of the channels (``checker.compose``), so messages that change only in
    their content cost it no memo miss."""

    partition: int
    client: int
    connection: int
    record: int


def waiting(messages: tuple[Routed, ...]) -> tuple[Waiting, ...]:
    # a set (sorted): a request timeout asks only which records are still on their way
    return tuple(sorted({Waiting(m.partition, m.client, m.connection, m.record) for m in messages}))


def in_flight(client: IdempotentClient) -> tuple[int, tuple[int, ...]]:
    """The client's connection and the records of its batches in flight (IdempotentRequestTimeout's gate,
    on the client's ``shape``)."""
    return client.connection, tuple(b.record for b in client.batches if b.status == INFLIGHT)


def _timed_out(c: int, flight: tuple[int, tuple[int, ...]], on_way: tuple[Waiting, ...],
               back: tuple[Waiting, ...]) -> bool:
    """A batch of client ``c`` in flight on its connection (``in_flight``) whose request and response
    are both gone (its response lost)."""
    return any(r not in {m.record for m in on_way + back if m.client == c and m.connection == flight[0]}
               for r in flight[1])


def expiry(client: IdempotentClient) -> tuple[int, int]:
    """When the client's oldest batch not in flight and its oldest in flight were created (-1: none):
    all ExpireBatch reads of the client's times (``is_expired`` compares a batch's creation with now).
    The batches are in record order and were created in that order (Send appends one created
    ``now``, which never goes back; ``with_shape`` refuses a write that moves one), so the oldest of
    each kind is its first, which ExpireBatch expires."""
    waiting = sent = -1
    for b in client[_BATCHES]:
        created = b[1]
        if b[2] == INFLIGHT:
            if sent < 0 or created < sent:
                sent = created
        elif waiting < 0 or created < waiting:
            waiting = created
    return waiting, sent


# field positions (the projections below run once per distinct client value, on every such value)
_BATCHES: Final = 6
_CREATED: Final = 1
_new = tuple.__new__


def shape(client: IdempotentClient) -> IdempotentClient:
    """The client with its batches' creation times left out (None): every step of the client but
    Send reads the times of at most the batches it sends or answers, which it takes from a second
    projection (``drain``, ``expiry``, ``in_flight_created``). Clients that differ only in their
    times are many (the idempotent preset's first 330k states: 30,167 clients, 1,135 shapes; 57,899
    (client, now) pairs, 3,524 (shape, now)). ``None``, not a number: a function that read a time it
    was not given would fail, not decide on a made-up time."""
    batches = client[_BATCHES]
    if not batches:
        return client
    # each batch's eight fields spelled out (no slice, list or star-unpacking per batch)
    return _new(IdempotentClient, (*client[:_BATCHES], tuple([_new(ProducerBatch, (b[0], None, b[2], b[3], b[4], b[5],
                                                                                      b[6], b[7])) for b in batches]),
                                   *client[_BATCHES + 1:]))


def with_shape(client: IdempotentClient, new: IdempotentClient) -> IdempotentClient:
    """``new`` (a shape) with the creation times of ``client``'s batches, by record. A step that
    writes the shape keeps, drops or rewrites batches in their order but never adds one (Send writes
    the client whole): anything else is refused, so the batches stay in creation order."""
    batches = new[_BATCHES]
    if not batches:
        return new
    old = client[_BATCHES]
    drop = len(old) - len(batches)
    if drop >= 0:
        # the usual write keeps the client's last batches (none or the first ones answered or
        # expired): one pass pairing them, None where a record differs (then the general walk)
        out = [_new(ProducerBatch, (x[0], o[1], x[2], x[3], x[4], x[5], x[6], x[7])) if x[0] == o[0] else None
               for x, o in zip(batches, old[drop:] if drop else old)]
        if None not in out:
            return _new(IdempotentClient, (*new[:_BATCHES], tuple(out), *new[_BATCHES + 1:]))
    out = []
    rest = iter(old)
    for b in batches:
        record = b[0]
        for o in rest:
            if o[0] == record:
                break
        else:
            raise ValueError(f"a write of client:shape adds or moves the batch of record {record} (the client holds "
                             f"{[o[0] for o in old]}, the write {[x[0] for x in batches]})")
        out.append(_new(ProducerBatch, (record, o[_CREATED], *b[2:])))
    return _new(IdempotentClient, (*new[:_BATCHES], tuple(out), *new[_BATCHES + 1:]))


def queued(client: IdempotentClient) -> tuple[IdempotentClient, int]:
    """The client's ``shape`` and the creation time of its last batch (-1: none): what Send writes.
    Send appends one batch created ``now`` and reads no other time, so it reads the shape and the
    clock and writes this (``with_queued`` puts the other batches' times back per state): its memo
    is keyed on (shape, now), 3,524 pairs in the idempotent preset's first 330k states against
    57,899 (client, now), and each of the other pairs costs a write (``with_queued`` and an intern)
    instead of a miss (the effect, its outcome and builder, a memo entry)."""
    batches = client[_BATCHES]
    return shape(client), batches[-1][_CREATED] if batches else -1


def with_queued(client: IdempotentClient, new: tuple[IdempotentClient, int]) -> IdempotentClient:
    """``new``'s shape with the creation times of ``client``'s batches, by record, and a batch
    ``client`` does not hold (Send's, the last) created at ``new``'s time. Anything but keeping the
    batches in order and adding at most one after them is refused, as is a time that does not
    agree with the client's last batch (``queued(with_queued(c, q)) == q``)."""
    shaped, last = new
    batches = shaped[_BATCHES]
    old = client[_BATCHES]
    if len(batches) == len(old) + 1:
        out = [_new(ProducerBatch, (x[0], o[1], x[2], x[3], x[4], x[5], x[6], x[7])) if x[0] == o[0] else None
               for x, o in zip(batches, old)]
        if None not in out:
            b = batches[-1]
            out.append(_new(ProducerBatch, (b[0], last, b[2], b[3], b[4], b[5], b[6], b[7])))
            return _new(IdempotentClient, (*shaped[:_BATCHES], tuple(out), *shaped[_BATCHES + 1:]))
    got = with_shape(client, shaped)
    if (got[_BATCHES][-1][_CREATED] if got[_BATCHES] else -1) != last:
        raise ValueError(f"a write of client:queued gives the last batch the time {last}, the client's is not that")
    return got


def in_flight_created(client: IdempotentClient) -> tuple[tuple[int, int], ...]:
    """(record, creation time) of each batch in flight: the times a produce response's handling reads
    (a retriable error retries a batch only before its delivery timeout)."""
    return tuple([(b[0], b[1]) for b in client[_BATCHES] if b[2] == INFLIGHT])


def _with_created(client: IdempotentClient, created: Mapping[int, int]) -> IdempotentClient:
    """A shape with the creation times of the batches in ``created`` (by record) put back."""
    batches = tuple([b if b[0] not in created else _new(ProducerBatch, (b[0], created[b[0]], *b[2:]))
                     for b in client.batches])
    return _new(IdempotentClient, (*client[:_BATCHES], batches, *client[_BATCHES + 1:]))


def drain_next(client: IdempotentClient) -> tuple[int, int] | None:
    """What IdempotentDrain's gate reads of the client: None where ``client.drain`` drains nothing
    whatever the time, else (creation of the batch it would drain, batches sequenced before it; -1
    for a retry, which ignores max.in.flight). ``client.drain``'s tests in its order, time aside."""
    # the fields by position (a named field of a NamedTuple is a descriptor call): this runs once per
    # client value, on most of them
    pid, epoch, _, _, _, _, batches, _, _, _, bump_required, unresolved, fatal, _ = client
    if fatal or pid < 0 or bump_required:
        return None
    first: ProducerBatch | None = None
    queued: ProducerBatch | None = None
    sequenced, retry, other = 0, False, False
    for b in batches:
        status = b[2]
        if status == QUEUED:
            if queued is None:
                queued = b
            continue
        if first is None:
            first = b
        sequenced += 1
        retry = retry or status == RETRY
        other = other or b[3] != pid or b[4] != epoch
    if retry:
        assert first is not None
        return (first[_CREATED], -1) if first[2] == RETRY else None
    if unresolved >= 0 or other:
        return None
    return None if queued is None else (queued[_CREATED], sequenced)


#: the client ``timing`` last projected and its answer (``drain`` and ``expiry`` read it)
_LAST_TIMING: list[Any] = [None, (None, None)]


def timing(client: IdempotentClient) -> tuple[tuple[int, int] | None, tuple[int, int]]:
    """``drain_next`` and ``expiry`` at once: what the gates of IdempotentDrain and ExpireBatch read of
    the client. One projection for both puts the two gates on the same slots (with ``now``), which
    compose looks up once per state for both (a gate group); neither effect reads it, so it stays out
    of their outcomes' keys."""
    got = _LAST_TIMING[1] = drain_next(client), expiry(client)
    _LAST_TIMING[0] = client
    return got


# The ``drain`` and ``expiry`` projections of a client are computed (once per client value) where
# IdempotentDrain's or ExpireBatch's gate holds, which read its ``timing`` on the same state just
# before: they take their half of it when ``timing`` last saw this very object (a value is immutable
# and the reference keeps it alive, so the answer is its own), else compute it.
def drain(client: IdempotentClient) -> tuple[int, int] | None:
    """``drain_next`` (the ``drain`` projection)."""
    return _LAST_TIMING[1][0] if _LAST_TIMING[0] is client else drain_next(client)


def oldest(client: IdempotentClient) -> tuple[int, int]:
    """``expiry`` (the ``expiry`` projection)."""
    return _LAST_TIMING[1][1] if _LAST_TIMING[0] is client else expiry(client)


def logged(leader: PartitionState) -> tuple[LogRecord, ...]:
    """What the idempotent log invariants read of the leader: its log, each record's client, record,
    producer id and epoch (its sequence and timestamp None: a check that read one would fail). The
    leader changes in its producer state and log start offset, and its records in their sequences
    and times, far more often than in these (a fused check keyed on the whole leader misses on each)."""
    return tuple([_new(LogRecord, (r[0], r[1], r[2], r[3], None, None)) for r in leader.log])


def appendable(leader: PartitionState) -> PartitionState:
    """What a produce request's handling reads of the leader: its producer state, log start offset and
    log end offset, its records None (a check that read one would fail). The leader validates a batch
    against its producer state, not its log, and appends at the log end: leaders that differ only
    in their records (the idempotent preset's first 600k states: 3,183 leaders, 128 without their
    records) decide every request alike."""
    return _new(PartitionState, ((None,) * len(leader.log), leader.log_start_offset, leader.producers))


def with_appended(leader: PartitionState, new: PartitionState) -> PartitionState:
    """``new`` (an ``appendable`` leader) with ``leader``'s records and the ones ``new`` appended after
    them. A write of the projection appends or leaves the log alone: anything else is refused."""
    n = len(leader.log)
    log = new.log
    tail = log[n:]
    if len(log) < n or any(r is not None for r in log[:n]) or None in tail:
        raise ValueError(f"a write of idem_leader:appendable does more than append to the log ({n} records "
                         f"before, {len(log)} written, of which {len(log) - len(tail)} kept)")
    return _new(PartitionState, (leader.log + tail if tail else leader.log, new.log_start_offset, new.producers))


def _log_state(log: tuple[LogRecord, ...]) -> IdempotentState:
    # ``model.properties``' log checks read ``partition.log`` alone
    return _state(PartitionState(log, 0, ()))


def _show_client(c: IdempotentClient) -> dict[str, Any]:
    return {"producer_id": c.producer_id, "epoch": c.epoch, "next_seq": c.next_seq,
            "last_acked_seq": c.last_acked_seq, "last_acked_offset": c.last_acked_offset, "sent": c.sent,
            "batches": [f"r{b.record} {BATCH_STATUS_NAMES[b.status]} (pid {b.producer_id}, epoch {b.epoch}, "
                        f"seq {b.seq}{', reset' if b.sequence_reset else ''}, created {b.created})" for b in c.batches],
            "acked": [r for r in range(c.sent) if c.acked >> r & 1],
            "failed": [r for r in range(c.sent) if c.failed >> r & 1], "connection": c.connection,
            "epoch_bump_required": c.epoch_bump_required, "unresolved": c.unresolved, "fatal": c.fatal}


def _show_producers(producers: tuple) -> list[str]:
    return [f"pid {e.producer_id}: epoch {e.epoch}, batches {[(b.seq, b.offset) for b in e.batches]} (seq, offset), "
            f"lastTimestamp {e.last_timestamp}" for e in producers]


def _show_leader(part: PartitionState) -> dict[str, Any]:
    return {"log": [f"{o}: client{r.client}/r{r.record} (pid {r.producer_id}, epoch {r.epoch}, seq {r.seq})"
                    for o, r in enumerate(part.log)],
            "log_start_offset": part.log_start_offset, "producers": _show_producers(part.producers)}


def _show_follower(f: tuple[FollowerState, ...]) -> Any:
    return {"log_start_offset": f[0].log_start_offset, "producers": _show_producers(f[0].producers)} if f else "none"


def _show_messages(msgs: tuple[Routed, ...]) -> list[str]:
    out = []
    for m in msgs:
        x = m.message
        if isinstance(x, ProduceResponse):
            out.append(f"ProduceResponse(client{m.client}/r{m.record}, {error_name(x.error)}, offset "
                       f"{x.base_offset}, logStartOffset {x.log_start_offset})")
        else:
            out.append(f"Produce(client{m.client}/r{m.record}, pid {x.producer_id}, epoch {x.epoch}, seq {x.seq}, "
                       f"conn {x.connection}{' (closed)' if m.connection < 0 else ''}, leader epoch "
                       f"{x.leader_epoch})")
    return out


def closed(connection: int) -> int:
    """The routing connection of a request whose connection the client closed: negative, one value
    per closed connection (so each keeps its own order), and the leader needs no client to know it."""
    return -1 - connection


def rename_routed(msgs: tuple[Routed, ...], perm: tuple[int, ...]) -> tuple[Routed, ...]:
    """Messages with client ``i`` renamed ``perm[i]`` (and its initial producer id in a request)."""
    out = []
    for m in msgs:
        x = m.message
        if isinstance(x, ProduceRequest):
            x = x._replace(client=perm[x.client], producer_id=rename_pid(x.producer_id, perm))
        else:
            x = x._replace(client=perm[x.client])
        out.append(m._replace(client=perm[m.client], message=x))
    return tuple(out)


def _idempotent(machine: Any) -> range:
    """The idempotent partition as a parameter domain: bound only when there are idempotent producers."""
    return range(_P, _P + 1) if machine.n_idempotent else range(0)


def _replicated(machine: Any) -> range:
    return range(_P, _P + 1) if machine.n_idempotent and machine.has_follower else range(0)


def _lossy(machine: Any) -> range:
    return range(machine.n_idempotent) if machine.bounds.get("lost_responses", 0) else range(0)


def _acked_prefix(machine: Any, order: Iterable[int]) -> dict[str, Any]:
    """The parts of an initial state in which the clients, in ``order``, wrote and had acknowledged
    ``acked_prefix`` records each (a producer that has been running for a while)."""
    partition = PartitionState(log=(), log_start_offset=0, producers=())
    clients = [cl.new_client(c) for c in range(machine.n_idempotent)]
    for c in order:
        client = clients[c]
        for r in range(machine.acked_prefix):
            partition, offset = append_batch(partition, LogRecord(c, r, c, 0, r, 0), machine.broker_cache)
            client = client._replace(last_acked_seq=r, last_acked_offset=offset, acked=client.acked | 1 << r)
        clients[c] = client._replace(sent=machine.acked_prefix,
                                     next_seq=machine.acked_prefix % (machine.idem_cfg.max_seq + 1))
    follower = (FollowerState(0, partition.producers),) if machine.has_follower else ()
    return {"client": tuple(clients), "idem_leader": partition, "idem_follower": follower}


class IdempotentProducers:
    """The idempotent-only producers of ``kafka.eos`` (see the module doc); ``EosMachine`` calls
    ``idempotent_setup`` before compiling and ``idempotent_within_bounds`` / ``idempotent_quiet`` /
    ``idempotent_done`` from its own constraint, clock and terminal test."""

    # attributes ``EosMachine`` sets, and ``Composed``'s decoder (declared for the type checker)
    bounds: dict[str, int]
    protocol: Protocol
    if TYPE_CHECKING:
        def view(self, state: tuple) -> Any: ...

    # --- parts
    # the idempotent producers are interchangeable (``idempotent_symmetry``): a client's slot moves, and
    # every mention of it (records, messages, its initial producer id) is renamed with it
    client = Actors(count="idempotent_producers", init=lambda m, i: cl.new_client(i), show=_show_client,
                    symmetric=CLIENTS, rename={CLIENTS: rename_client},
                    projections={"send_order": props.send_order_view, "expiry": oldest,
                                 "drain": drain, "timing": timing, "shape": Projection(shape, with_shape),
                                 "queued": Projection(queued, with_queued),
                                 "in_flight_created": in_flight_created},
                    doc="idempotent producers (no transactional id), each with the producer id of its index")
    idem_leader = Part(init=PartitionState((), 0, ()), show=_show_leader, rename={CLIENTS: rename_partition},
                       projections={"logged": logged, "appendable": Projection(appendable, with_appended)},
                       doc="the leader of the idempotent producers' partition: log, log start offset, producer state")
    idem_follower = Part(init=lambda m: (FollowerState(0, ()),) if m.has_follower else (), show=_show_follower,
                         rename={CLIENTS: rename_follower},
                         doc="its in-sync follower (log start offset, producer state), when leaderships may move")
    leader_epoch = Scalar(init=0, doc="the idempotent partition's leader epoch")
    idem_requests = Channel(network=Network(Delivery.ORDERED), connection=ROUTE, show=_show_messages,
                            rename={CLIENTS: rename_routed}, projections={"waiting": waiting},
                            doc="idempotent produce requests in flight")
    idem_responses = Channel(network=Network(Delivery.ORDERED, loss="lost_responses"), connection=ROUTE,
                             label=("partition", "client", "record"), drop="LoseResponse", show=_show_messages,
                             rename={CLIENTS: rename_routed}, projections={"waiting": waiting},
                             doc="idempotent produce responses in flight")
    transient_errors = Budget("transient_errors", doc="produce requests refused with NOT_ENOUGH_REPLICAS")
    leader_failovers = Budget("leader_failovers", doc="leaderships moved to the in-sync follower")
    restarted_replica_failovers = Budget("restarted_replica_failovers",
                                         doc="leaderships moved to a replica that rebuilt its producer state from its log")
    snapshot_restored_failovers = Budget("snapshot_restored_failovers",
                                         doc="leaderships moved to a replica restored from a producer-state snapshot")

    def idempotent_setup(self, protocol: Protocol, bounds: Mapping[str, int]) -> dict[str, int]:
        """Read this module's bounds (defaults for those left out); return the configuration entries
        its parts name."""
        b = {**IDEMPOTENT_BOUND_DEFAULTS, **{k: v for k, v in bounds.items() if k in IDEMPOTENT_BOUND_DEFAULTS}}
        self.n_idempotent = b["idempotent_producers"]
        self.acked_prefix = b["acked_prefix"]
        self.idem_records = b["acked_prefix"] + b["idempotent_records"]
        self.late_delivery = bool(b["late_delivery"])
        self.clock_skew = b["clock_skew"]
        self.max_pids = self.n_idempotent + b["new_producer_ids"]
        self.expiration = bounds["producer_id_expiration"]
        self.broker_cache = protocol.broker_batch_cache
        self.idem_cfg = ClientConfig(version=protocol.client_version.value,
                                     epoch_bump=protocol.client_epoch_bump.value,
                                     max_in_flight=bounds["max_in_flight"], delivery_timeout=b["delivery_timeout"],
                                     max_seq=bounds["max_seq"], max_epoch=bounds["max_epoch"],
                                     in_flight_expiry=self.late_delivery)
        failovers = {k: b[k] if self.n_idempotent else 0
                     for k in ("leader_failovers", "restarted_replica_failovers", "snapshot_restored_failovers")}
        self.has_follower = any(failovers.values())
        return {"idempotent_producers": self.n_idempotent,
                "transient_errors": b["transient_errors"] if self.n_idempotent else 0, **failovers}

    def idempotent_idle(self) -> set[str]:
        """Actions of this module with no bindings in this configuration (not listed)."""
        if not self.n_idempotent:
            return {"Send", "IdempotentDrain", "ExpireBatch", "IdempotentRequestTimeout", "IdempotentInitProducerId",
                    "ResolveSequences", "BumpEpoch", "PropagateLogStartOffset", "ExpireFollowerProducerIds"}
        idle = set() if self.bounds.get("lost_responses", 0) else {"IdempotentRequestTimeout"}
        if not self.bounds.get("producers", 1):  # idempotent producers only: the transactional steps have no bindings
            idle |= _TRANSACTIONAL_ONLY
        return idle | (set() if self.has_follower else {"PropagateLogStartOffset", "ExpireFollowerProducerIds"})

    def disabled_actions(self) -> frozenset[str]:
        """As the older machine: a KIP-360 client resets its producer id only at an exhausted epoch
        (out of reach below 256), and only a KIP-360 client bumps its epoch locally."""
        off = set()
        if self.protocol.client_version == ClientVersion.KIP360 and self.idem_cfg.max_epoch >= 256:
            off.add("IdempotentInitProducerId")
        if self.protocol.client_version != ClientVersion.KIP360:
            off.add("BumpEpoch")
        if self.idem_cfg.epoch_bump == "fail_inflight":
            off.add("ResolveSequences")  # the KIP's design fails the later batches: no unresolved sequence
        if self.bounds.get("max_ticks", 0) == 0:
            off.add("ExpireFollowerProducerIds")
            if self.idem_cfg.delivery_timeout > 0:
                off |= {"ExpireBatch", "ResolveSequences"}  # unresolved sequences come from expiry
        return frozenset(off)

    def init_parts(self) -> Iterable[Mapping[str, Any]]:
        """With an acked prefix, the clients' earlier records lie in the log one client after another,
        in every order of the clients (no client is privileged)."""
        if not self.n_idempotent:
            return ({},)
        orders = (itertools.permutations(range(self.n_idempotent)) if self.acked_prefix
                  else [range(self.n_idempotent)])
        return [_acked_prefix(self, order) for order in orders]

    def idempotent_within_bounds(self, next_producer_id: int) -> bool:
        """The allocator hands out at most ``new_producer_ids`` ids beyond the clients' first."""
        return not self.n_idempotent or next_producer_id <= self.max_pids

    def idempotent_quiet(self, idem_requests: tuple[Routed, ...], idem_responses: tuple[Routed, ...]) -> bool:
        """Time passes only while no idempotent message is in flight, unless ``late_delivery``."""
        return self.late_delivery or (not idem_requests and not idem_responses)

    def idempotent_done(self, clients: tuple[IdempotentClient, ...], idem_requests: tuple[Routed, ...],
                        idem_responses: tuple[Routed, ...]) -> bool:
        return not idem_requests and not idem_responses and all(
            c.fatal or (c.sent == self.idem_records and not c.batches) for c in clients)

    def temporal_properties(self) -> dict[str, TemporalProperty]:
        name = "IdempotentSendsEventuallyComplete"
        return {name: leads_to(name, props.sends_completed.__doc__ or "", self._sends_outstanding,
                               self._sends_completed)}

    def fairness(self) -> tuple[Fairness, ...]:
        return IDEMPOTENT_FAIRNESS if self.n_idempotent else ()

    def _sends_completed(self, s: tuple) -> bool:
        return props.sends_completed(_state(PartitionState((), 0, ()), self.view(s).client))

    def _sends_outstanding(self, s: tuple) -> bool:
        return not self._sends_completed(s)

    def fields(self, state: tuple) -> dict[str, Any]:
        """Every part by name; without idempotent producers, none of this module's (they never move)."""
        out: dict[str, Any] = super().fields(state)  # type: ignore[misc]
        if not self.n_idempotent:
            for key in [k for k in out if k.split(".")[0].split("[")[0] in _PARTS or k in _BUDGETS]:
                del out[key]
        return out

    def idempotent_itf_fields(self, v: Any) -> dict[str, Any]:
        """This module's parts for ITF: logs, producer-state entries, batches and messages as records."""
        from .itf_data import record
        out: dict[str, Any] = {}
        if not self.n_idempotent:
            return out
        for c, client in enumerate(v.client):
            out[f"client[{c}].batches"] = [record(b, status=BATCH_STATUS_NAMES[b.status]) for b in client.batches]
        out["idem_leader.log"] = [record(r) for r in v.idem_leader.log]
        out["idem_leader.producers"] = [record(e) for e in v.idem_leader.producers]
        if v.idem_follower:
            out["idem_follower.producers"] = [record(e) for e in v.idem_follower[0].producers]
        out["idem_requests"] = [record(m, message=record(m.message)) for m in v.idem_requests]
        out["idem_responses"] = [record(m, message=record(m.message, error=error_name(m.message.error)))
                                 for m in v.idem_responses]
        return out

    # --- the idempotent producer (application, accumulator, Sender, TransactionManager) ---------------

    # The client changes on most steps, mostly in its batches' creation times; its steps but Send
    # read and write the client without them (``shape``) and take the times they use from read-only
    # projections, so their keys miss about a sixth as often. Each effect is the same call into
    # ``producer.client`` on a client whose times it does not read are None (a read of one would
    # fail); the write puts the times back per state. Send writes a new batch created now, through
    # ``queued`` (the shape and the last batch's time): its memo is keyed on the shape and the clock,
    # and the new client's other times are put back per state (a write costs a fraction of a miss).

    @precondition(lambda self, client: client.sent < self.idem_records and not client.fatal)
    @rule("Send", params={"c": "client"}, reads=("client[c]:shape", "now"), writes=("client[c]:queued",))
    def idempotent_send(self, client: IdempotentClient, now: int) -> Any:
        """``KafkaProducer.send``: the next record joins the accumulator (``cl.send`` reads no time of
        the batches already there)."""
        return {"client": queued(cl.send(client, now))}

    # gates on projections (the batch the Sender would drain next; the oldest batches' creation),
    # restating the effect's own "nothing to do" (tests/test_eos_gates.py): the client's other fields
    # moving cost no miss of the full key while nothing can be drained or expire
    @precondition(lambda self, timing, now: (drain := timing[0]) is not None and drain[1] < self.idem_cfg.max_in_flight
                  and now - drain[0] < self.idem_cfg.delivery_timeout)
    @rule("IdempotentDrain", params={"c": "client"},
          reads=("client[c]:shape", "now", "timing=client[c]:timing", "drain=client[c]:drain"),
          writes=("client[c]:shape",),
          sends=("idem_requests",), results=("record", "seq", "epoch"))
    def idempotent_drain(self, c: int, client: IdempotentClient, drain: tuple[int, int] | None) -> Any:
        """The Sender drains the next batch to the leader in the client's metadata. ``cl.drain`` reads
        the creation time of that batch alone (``drain_next``'s: the first batch with a sequence when
        it retries one, else the first queued), put back here.

        The clock is the gate's alone: ``cl.drain`` reads ``now`` only to refuse that batch once it
        expired (``is_expired``), which the gate has ruled out. The batch's creation time stands in for
        it (a batch has not expired when it is created: the gate holds only if the delivery timeout is
        above 0), so the outcome is the same at every time the gate holds and compose keys it without
        the clock."""
        if drain is None:
            return None
        queued = drain[1] >= 0
        record = next(b.record for b in client.batches if (b.status == QUEUED) == queued)
        drained = cl.drain(_with_created(client, {record: drain[0]}), c, drain[0], self.idem_cfg)
        if drained is None:
            return None
        new_client, req = drained
        req = req._replace(leader_epoch=client.known_leader_epoch)
        return {"client": shape(new_client), "idem_requests": Routed(_P, c, req.connection, req.record, req),
                "record": req.record, "seq": req.seq, "epoch": req.epoch}

    @precondition(lambda self, timing, now: 0 <= (exp := timing[1])[0] <= now - self.idem_cfg.delivery_timeout
                  or (self.late_delivery and 0 <= exp[1] <= now - self.idem_cfg.delivery_timeout))
    @rule("ExpireBatch", params={"c": "client"},
          reads=("client[c]:shape", "now", "timing=client[c]:timing", "exp=client[c]:expiry"),
          writes=("client[c]:shape",),
          results=("record",))
    def idempotent_expire_batch(self, client: IdempotentClient, now: int, exp: tuple[int, int]) -> Any:
        """delivery.timeout.ms: the accumulator expires its oldest expired batch waiting to be sent;
        with ``late_delivery`` the Sender also expires the oldest expired in-flight one. The oldest
        batch of each kind is its first (``expiry``), created at ``exp``; if it has not expired, no
        later one has."""
        cfg = self.idem_cfg
        batches = client.batches
        moves = []
        kinds = ((False, exp[0]), (True, exp[1])) if self.late_delivery else ((False, exp[0]),)
        for in_flight, created in kinds:
            if created < 0:
                continue
            i = next(i for i, b in enumerate(batches) if (b.status == INFLIGHT) == in_flight)
            if not cl.is_expired(batches[i]._replace(created=created), now, cfg):
                continue
            expire = cl.expire_in_flight_batch if in_flight else cl.expire_batch
            moves.append({"client": expire(client, i, cfg), "record": batches[i].record})
        return moves

    # a gate on projections (the client's shape, the records on their way), restating the effect's own
    # "nothing timed out" (tests/test_eos_gates.py): the messages' contents moving cost no miss of the
    # full key while nothing can time out
    @precondition(lambda self, c, client, on_way, back: _timed_out(c, in_flight(client), on_way, back))
    @rule("IdempotentRequestTimeout", params={"c": _lossy},
          reads=("client[c]:shape", "idem_requests", "idem_responses",
                 "on_way=idem_requests:waiting", "back=idem_responses:waiting"),
          writes=("client[c]:shape", "idem_requests", "idem_responses"))
    def idempotent_request_timeout(self, c: int, client: IdempotentClient, idem_requests: tuple[Routed, ...],
                                   idem_responses: tuple[Routed, ...]) -> Any:
        """request.timeout.ms once a request went unanswered (its response lost): the connection is
        closed with the client's responses still on it; its requests still in flight are marked closed
        (the leader handles them, nobody reads the answer)."""
        waiting = {m.record for m in idem_requests + idem_responses
                   if m.client == c and m.connection == client.connection}
        if not any(b.status == INFLIGHT and b.record not in waiting for b in client.batches):
            return None
        return {"client": cl.connection_closed(client, self.late_delivery),
                "idem_requests": tuple(m._replace(connection=closed(m.connection))
                                       if m.client == c and m.connection == client.connection else m
                                       for m in idem_requests),
                "idem_responses": tuple(m for m in idem_responses if m.client != c)}

    @precondition(lambda self, client: client.producer_id < 0 and not client.fatal)
    @rule("IdempotentInitProducerId", params={"c": "client"}, reads=("client[c]:shape", "next_producer_id"),
          writes=("client[c]:shape", "next_producer_id"), results=("producer_id",))
    def idempotent_init_producer_id(self, client: IdempotentClient, next_producer_id: int) -> Any:
        """The idempotent InitProducerId (no transactional id): a fresh producer id at epoch 0."""
        return {"client": cl.init_producer_id(client, next_producer_id), "next_producer_id": next_producer_id + 1,
                "producer_id": next_producer_id}

    @precondition(lambda self, client: not (client.producer_id < 0 and not client.fatal) and client.unresolved >= 0
                  and not any(b.status != QUEUED for b in client.batches))
    @rule("ResolveSequences", params={"c": "client"}, reads=("client[c]:shape",), writes=("client[c]:shape",))
    def idempotent_resolve_sequences(self, client: IdempotentClient) -> Any:
        """``maybeResolveSequences`` once nothing is in flight."""
        return {"client": cl.resolve_sequences(client, self.idem_cfg)}

    @precondition(lambda self, client: not (client.producer_id < 0 and not client.fatal) and not (
        client.unresolved >= 0 and not any(b.status != QUEUED for b in client.batches)) and client.epoch_bump_required
        and self.idem_cfg.version == "kip360" and (self.idem_cfg.epoch_bump == "resequence_inflight"
                                                    or not any(b.status == INFLIGHT for b in client.batches)))
    @rule("BumpEpoch", params={"c": "client"}, reads=("client[c]:shape",), writes=("client[c]:shape",))
    def idempotent_bump_epoch(self, client: IdempotentClient) -> Any:
        """KIP-360's local epoch bump; as shipped it does not wait for in-flight requests (the KIP's
        design keeps sequences, so its bump waits until the old epoch's requests are answered)."""
        return {"client": cl.bump_epoch(client, self.idem_cfg)}

    # an answer that completes its batch reads neither the clock, nor a creation time, nor the leader epoch:
    # its own rule keys its memo on (answer, the client's shape) alone (the idempotent preset's first 300k
    # states: 325 misses, not the 8,008 of (answer, shape, times in flight, clock, leader epoch))
    @rule("HandleProduceResponse", receive="idem_responses", params=("partition", "client", "record"),
          match=lambda m: m.message.error in cl.SUCCESS, reads=("sender=client[client]:shape",),
          writes=("sender=client[client]:shape",),
          results=("error", "outcome"), show={"error": error_name, "outcome": cl.OUTCOME_NAMES.__getitem__})
    def idempotent_handle_success(self, msg: Routed, sender: IdempotentClient) -> Any:
        """``Sender.completeBatch`` of a batch the leader appended (or had appended: a duplicate)."""
        resp = msg.message
        assert isinstance(resp, ProduceResponse)
        new_client, outcome = cl.handle_produce_success(sender, resp, self.idem_cfg)
        return {"sender": new_client, "error": resp.error, "outcome": outcome}

    @rule("HandleProduceResponse", receive="idem_responses", params=("partition", "client", "record"),
          match=lambda m: m.message.error not in cl.SUCCESS,
          reads=("sender=client[client]:shape", "flying=client[client]:in_flight_created", "now", "leader_epoch"),
          writes=("sender=client[client]:shape",), results=("error", "outcome"),
          show={"error": error_name, "outcome": cl.OUTCOME_NAMES.__getitem__})
    def idempotent_handle_response(self, msg: Routed, sender: IdempotentClient,
                                   flying: tuple[tuple[int, int], ...], now: int, leader_epoch: int) -> Any:
        """``Sender.completeBatch`` of a failed batch; NOT_LEADER_OR_FOLLOWER refreshes the client's metadata.
        It reads the creation time of the answered batch alone (one in flight: the retry's delivery timeout)."""
        resp = msg.message
        assert isinstance(resp, ProduceResponse)
        new_client, outcome = cl.handle_produce_response(_with_created(sender, dict(flying)), resp, now, self.idem_cfg)
        if resp.error == Errors.NOT_LEADER_OR_FOLLOWER:
            new_client = new_client._replace(known_leader_epoch=leader_epoch)
        return {"sender": shape(new_client), "error": resp.error, "outcome": outcome}

    # --- the idempotent partition's leader and follower ------------------------------------------------

    # the leader through ``appendable`` (its records left out, appended ones put back per state): the
    # log's contents moving cost no miss
    @rule("HandleProduce", receive="idem_requests", params=("partition", "client", "record"),
          reads=("idem_leader:appendable", "idem_follower", "leader_epoch"),
          writes=("idem_leader:appendable", "idem_follower"), sends=("idem_responses",),
          results=("seq", "epoch", "error"), show={"error": error_name})
    def idempotent_handle_produce(self, msg: Routed, idem_leader: PartitionState,
                                  idem_follower: tuple[FollowerState, ...], leader_epoch: int) -> Any:
        """The leader validates and appends (replicated to the follower before the ack, acks=all); a
        request sent to an earlier leader gets NOT_LEADER_OR_FOLLOWER; the answer is lost if the
        client closed that connection."""
        req = msg.message
        assert isinstance(req, ProduceRequest)
        out: dict[str, Any] = {"seq": req.seq, "epoch": req.epoch}
        if req.leader_epoch != leader_epoch:
            resp = ProduceResponse(req.client, req.connection, req.record, int(Errors.NOT_LEADER_OR_FOLLOWER), -1, -1)
        else:
            decision = validate_produce(find_entry(idem_leader.producers, req.producer_id), epoch=req.epoch,
                                        seq=req.seq, max_seq=self.idem_cfg.max_seq,
                                        unknown_producer=self.protocol.broker_unknown_producer.value,
                                        old_duplicate_error=self.protocol.broker_duplicate_sequence_error)
            offset = decision.duplicate_offset
            if decision.append:
                record = LogRecord(req.client, req.record, req.producer_id, req.epoch, req.seq, req.created)
                idem_leader, offset = append_batch(idem_leader, record, self.broker_cache)
                out["idem_leader"] = idem_leader
                if idem_follower:  # the follower takes the batch without sequence checks
                    f = idem_follower[0]
                    out["idem_follower"] = (f._replace(producers=record_batch(f.producers, record, offset,
                                                                              self.broker_cache)),)
            resp = ProduceResponse(req.client, req.connection, req.record, int(decision.error), offset,
                                   idem_leader.log_start_offset)
        out["error"] = resp.error
        if msg.connection >= 0:
            out["idem_responses"] = msg._replace(message=resp)
        return out

    @precondition(lambda self, msg, leader_epoch: msg.message.leader_epoch == leader_epoch)
    @rule("HandleProduce", receive="idem_requests", params=("partition", "client", "record"),
          reads=("idem_leader:appendable", "leader_epoch"), sends=("idem_responses",),
          results=("seq", "epoch", "error"), spends="transient_errors", show={"error": error_name})
    def idempotent_transient_error(self, msg: Routed, idem_leader: PartitionState) -> Any:
        """The leader refuses the batch with a retriable error (NOT_ENOUGH_REPLICAS while the ISR is
        too small): nothing is appended, and a later batch may overtake it."""
        req = msg.message
        assert isinstance(req, ProduceRequest)
        error = int(Errors.NOT_ENOUGH_REPLICAS)
        out: dict[str, Any] = {"seq": req.seq, "epoch": req.epoch, "error": error}
        if msg.connection >= 0:
            out["idem_responses"] = msg._replace(message=ProduceResponse(req.client, req.connection, req.record, error,
                                                                         -1, idem_leader.log_start_offset))
        return out

    @rule("DeleteRecords", params={"p": _idempotent}, reads=("idem_leader",), writes=("idem_leader",),
          results=("offset",), spends="delete_records")
    def idempotent_delete_records(self, idem_leader: PartitionState) -> Any:
        """Retention or DeleteRecords to any offset above the log start offset."""
        retain = self.protocol.broker_retain_producer_state
        return [{"idem_leader": advance_log_start_offset(idem_leader, offset, retain), "offset": offset}
                for offset in range(idem_leader.log_start_offset + 1, len(idem_leader.log) + 1)]

    @rule("PropagateLogStartOffset", params={"p": _replicated}, reads=("idem_leader", "idem_follower"),
          writes=("idem_follower",), results=("offset",))
    def propagate_log_start_offset(self, idem_leader: PartitionState, idem_follower: tuple[FollowerState, ...]) -> Any:
        """A fetch response carries the leader's log start offset to the follower."""
        if not idem_follower:
            return None
        f = idem_follower[0]
        lso = idem_leader.log_start_offset
        if f.log_start_offset >= lso:
            return None
        producers = f.producers if self.protocol.broker_retain_producer_state else truncate_head(f.producers, lso)
        return {"idem_follower": (FollowerState(lso, producers),), "offset": lso}

    def _failover(self, leader: PartitionState, follower: FollowerState, producers: tuple, kind: int,
                  leader_epoch: int) -> dict[str, Any]:
        """The follower leads with ``producers`` and its own log start offset; the old leader follows."""
        return {"idem_leader": PartitionState(leader.log, follower.log_start_offset, producers),
                "idem_follower": (FollowerState(leader.log_start_offset, leader.producers),),
                "leader_epoch": leader_epoch + 1, "rebuilt": kind}

    @rule("LeaderFailover", params={"p": _replicated}, reads=("idem_leader", "idem_follower", "leader_epoch"),
          writes=("idem_leader", "idem_follower", "leader_epoch"), results=("rebuilt",), spends="leader_failovers")
    def leader_failover(self, idem_leader: PartitionState, idem_follower: tuple[FollowerState, ...],
                        leader_epoch: int) -> Any:
        """Leadership moves to the in-sync follower, with the producer state it built by replication."""
        if not idem_follower:
            return None
        f = idem_follower[0]
        return self._failover(idem_leader, f, f.producers, IN_SYNC, leader_epoch)

    @rule("LeaderFailover", params={"p": _replicated}, reads=("idem_leader", "idem_follower", "leader_epoch"),
          writes=("idem_leader", "idem_follower", "leader_epoch"), results=("rebuilt",),
          spends="restarted_replica_failovers")
    def restarted_replica_failover(self, idem_leader: PartitionState, idem_follower: tuple[FollowerState, ...],
                                   leader_epoch: int) -> Any:
        """Leadership moves to a replica that restarted without its producer-state snapshots: it
        rebuilt the state from its log above its log start offset."""
        if not idem_follower:
            return None
        f = idem_follower[0]
        producers = rebuild_producer_state(idem_leader.log, f.log_start_offset, self.broker_cache)
        return self._failover(idem_leader, f, producers, REBUILT, leader_epoch)

    @rule("LeaderFailover", params={"p": _replicated}, reads=("idem_leader", "idem_follower", "leader_epoch"),
          writes=("idem_leader", "idem_follower", "leader_epoch"), results=("rebuilt",),
          spends="snapshot_restored_failovers")
    def snapshot_restored_failover(self, idem_leader: PartitionState, idem_follower: tuple[FollowerState, ...],
                                   leader_epoch: int) -> Any:
        """Leadership moves to a replica restarted from the snapshot it took at its log end (clean
        shutdown): a snapshot keeps one batch per producer (fidelity audit B4)."""
        if not idem_follower:
            return None
        f = idem_follower[0]
        producers = tuple(e._replace(batches=e.batches[-1:]) for e in f.producers)
        return self._failover(idem_leader, f, producers, SNAPSHOT, leader_epoch)

    @rule("ExpireProducerIds", params={"p": _idempotent}, reads=("idem_leader", "now"), writes=("idem_leader",))
    def idempotent_expire_producer_ids(self, idem_leader: PartitionState, now: int) -> Any:
        """The leader's periodic producer-id expiry, against the broker's clock ``clock_skew`` ticks
        ahead of the client's (the stored timestamps are CreateTime, fidelity audit B5)."""
        now += self.clock_skew
        if not any(is_producer_expired(e, now, self.expiration) for e in idem_leader.producers):
            return None
        return {"idem_leader": expire_producers(idem_leader, now, self.expiration)}

    @rule("ExpireFollowerProducerIds", params={"p": _replicated}, reads=("idem_follower", "now"),
          writes=("idem_follower",))
    def follower_expire_producer_ids(self, idem_follower: tuple[FollowerState, ...], now: int) -> Any:
        """The follower runs its own expiry check, in a step of its own (review finding 22)."""
        now += self.clock_skew
        if not idem_follower:
            return None
        f = idem_follower[0]
        if not any(is_producer_expired(e, now, self.expiration) for e in f.producers):
            return None
        return {"idem_follower": (f._replace(producers=remove_expired_producers(f.producers, now, self.expiration)),)}

    # --- properties (one function each; docs from ``model.properties``) ---------------------------------

    # the three log invariants read the log's records without their sequences and times (``logged``):
    # their fused check is keyed on that and the clients' send orders, not on the whole leader
    @invariant("IdempotentNoDuplicates", params={"p": _idempotent}, reads=("log=idem_leader:logged",))
    def idempotent_no_duplicates(self, log: tuple[LogRecord, ...]) -> bool:
        """No record is appended to the idempotent partition's log twice."""
        return props.no_duplicates(_log_state(log))

    # on the client's acked/failed/batched records only (a projection): its batches' states and
    # sequences moving cost no miss
    @invariant("IdempotentSendOrderNoLoss", params={"c": "client"},
               reads=("log=idem_leader:logged", "client[c]:send_order"))
    def idempotent_send_order_no_loss(self, c: int, log: tuple[LogRecord, ...], client: props.SendOrderView) -> bool:
        """Per idempotent producer, records appear in send order with no gap, and nothing acknowledged is lost."""
        return props.send_order_no_loss_of(log, c, client)

    @transition("IdempotentOutOfOrderOnlyOnDataLoss", reads=("idem_leader", "client"),
                actions=("HandleProduceResponse",), when=lambda step: step[-1] == cl.RAISED_OUT_OF_ORDER)
    def idempotent_out_of_order_only_on_data_loss(self, step: tuple, before: Any, after: Any) -> bool:
        """OutOfOrderSequenceException reaches an idempotent producer only when acknowledged data was lost."""
        if step[1] != _P:
            return True
        return props.out_of_order_only_on_data_loss(
            _state(before.idem_leader, before.client), ("HandleProduceResponse", *step[2:]),
            _state(after.idem_leader, after.client))

    @invariant("IdempotentFencedEpochNeverWrites", params={"p": _idempotent}, reads=("log=idem_leader:logged",))
    def idempotent_fenced_epoch_never_writes(self, log: tuple[LogRecord, ...]) -> bool:
        """Once an idempotent producer id wrote with a newer epoch, no batch with an older epoch is appended."""
        return props.fenced_epoch_never_writes(_log_state(log))


__all__ = ["IDEMPOTENT_BOUND_DEFAULTS", "IDEMPOTENT_PARTITION", "IdempotentProducers"]

"""Machine ``kafka.idempotent_produce``: idempotent producers writing to one partition whose leader
validates sequences and epochs, under retention / DeleteRecords, producer-id expiry, lost and
transient errors, and client timeouts.

Requests and responses travel per connection in order (the broker handles one request of a
connection at a time); after a timeout the client reconnects and the old connection's requests
may still be handled, interleaved with the new one's. Reordering within a connection is not a
fault Kafka has; a batch overtakes an earlier one when the earlier one gets a retriable error
(``transient_errors``: NOT_ENOUGH_REPLICAS) or across connections.

Time is abstract: ``Tick`` advances a clock (bounded by ``max_ticks``) only when no message is in
flight, so every message is delivered or lost within the tick it was sent in. A tick is the unit
of ``delivery.timeout.ms`` and of ``producer.id.expiration.ms`` (both bounds, in ticks), so a spec
can set one shorter or longer than the other.

How it runs fast. A step changes one part of the state (a client, the partition, the messages in
flight), and the same part recurs in thousands of global states. So the machine keeps states flat
(``idempotent_packed``: scalars plus ids of interned parts) and splits each step into a *part rule*
(a method below, over the readable NamedTuples of ``state.py``, calling the actors' rules) and its
composition into the flat state (``successors``). A part rule depends only on its arguments, so its
result is memoised on them: each is computed once per distinct argument tuple, and a successor is
mostly a few dictionary lookups and one flat tuple. ``memoize=False`` recomputes every part rule
each time (the test that compares both keeps the cache keys honest).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

from eoscheck.checker.liveness.temporal import SF, WF, Fairness, TemporalProperty, leads_to
from eoscheck.checker.machine import Machine, Property

from .. import properties as props
from ..errors import Errors, error_name
from ..network import deliverable, remove_at
from ..partition.log import (
    advance_log_start_offset,
    append_batch,
    expire_producers,
    rebuild_producer_state,
    record_batch,
)
from ..partition.producer_state import find_entry, is_producer_expired, remove_expired_producers, truncate_head
from ..partition.validation import validate_produce
from ..producer import client as cl
from ..producer.config import ClientConfig
from ..state import (
    BATCH_STATUS_NAMES,
    INFLIGHT,
    QUEUED,
    FollowerState,
    IdempotentClient,
    IdempotentFaults,
    IdempotentState,
    LogRecord,
    PartitionState,
    ProduceRequest,
    ProduceResponse,
)
from .idempotent_invariants import LogInvariant, SendOrderNoLoss
from .idempotent_packed import (
    CLIENT0,
    CLIENTS,
    DELETES,
    FAILOVERS,
    FOLLOWER,
    FOLLOWERS,
    LEADER_EPOCH,
    LOST,
    NEXT_PID,
    NOW,
    PART,
    PARTITIONS,
    REBUILT,
    REQS,
    REQUESTS,
    RESPONSES,
    RESPS,
    SNAPSHOT,
    TRANSIENT,
    PackedIdempotentState,
    export_batch,
    import_batch,
    pack,
)
from .idempotent_symmetry import ClientSymmetry

#: liveness properties (checked when a spec names them), under ``FAIRNESS``
TEMPORAL_DOCS: dict[str, str] = {
    "SendsEventuallyComplete": props.sends_completed.__doc__ or "",
}

#: The client drains, retries, times out requests, resolves sequences and bumps epochs when it can; the
#: leader handles every request; every response arrives; followers catch up (weak fairness, per request,
#: response and client: TLA+'s \\A r: WF(Handle(r))). The clock and
#: delivery.timeout.ms are strongly fair: the clock ticks only while the network is quiet and a batch
#: expires only while it waits for a retry, so both are enabled on and off in a retry loop, and weak
#: fairness would let the loop starve them (a producer retrying forever at one instant). Lost responses,
#: retention, failovers and producer-id expiry may happen, never must.
FAIRNESS: tuple[Fairness, ...] = (
    # per request and per batch: the leader serving one request must not count as serving another
    WF("HandleProduce", per=lambda step: step[1:3], per_name="request (client, record)"),
    WF("HandleProduceResponse", per=lambda step: step[1:3], per_name="response (client, record)"),
    SF("ExpireBatch", per=lambda step: step[1:3], per_name="batch (client, record)"),
    WF("Drain", "RequestTimeout", "ResolveSequences", "BumpEpoch", "InitProducerId", per=lambda step: step[1],
       per_name="client"),
    WF("PropagateLogStartOffset"), SF("Tick"))

PROPERTY_DOCS: dict[str, str] = {
    "NoDuplicates": props.no_duplicates.__doc__ or "",
    "SendOrderNoLoss": props.send_order_no_loss.__doc__ or "",
    "OutOfOrderOnlyOnDataLoss": props.out_of_order_only_on_data_loss.__doc__ or "",
    "FencedEpochNeverWrites": props.fenced_epoch_never_writes.__doc__ or "",
}

_new = tuple.__new__

#: a client's own step: (step, new client id, request it sends or None, producer ids it takes)
ClientMove = tuple[tuple, int, "ProduceRequest | None", int]
#: a leader's step: (step, partition id, follower id, response or None)
LeaderMove = tuple[tuple, int, int, "ProduceResponse | None"]

# what a replica step spends (its fault counter) and whether it elects a new leader
PROPAGATE, FAILOVER, REBUILT_FAILOVER, SNAPSHOT_FAILOVER = 0, 1, 2, 3
_FAULT_OF = {FAILOVER: FAILOVERS, REBUILT_FAILOVER: REBUILT, SNAPSHOT_FAILOVER: SNAPSHOT}


class ClientMoves(NamedTuple):
    """Everything client ``c`` can do on its own, in the machine's step order."""

    before: tuple[ClientMove, ...]  # Send, Drain, ExpireBatch
    #: the records of its in-flight batches: RequestTimeout is possible if one has no request or
    #: response left on the open connection (which depends on the network, so it is not decided here)
    in_flight: frozenset[int]
    connection: int  # the open connection
    after: tuple[ClientMove, ...]  # InitProducerId, ResolveSequences or BumpEpoch


_NOTHING: frozenset[int] = frozenset()


class Network(NamedTuple):
    """What the messages in flight allow (a part rule of the requests and responses together)."""

    #: the requests the leader may handle next (the oldest of each connection), each with the id of
    #: the requests left once it is taken
    requests: tuple[tuple[ProduceRequest, int], ...]
    #: every response (all may be lost) as (response, id of the rest, whether the client may read it
    #: next: the oldest of its connection)
    responses: tuple[tuple[ProduceResponse, int, bool], ...]
    #: (client, connection) -> records with a request or response in flight on it
    waiting: dict[tuple[int, int], frozenset[int]]


class _NoMemo(dict):
    """A cache that keeps nothing (``memoize=False``)."""

    def get(self, key: Any, default: Any = None) -> Any:
        return default

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


class IdempotentProduceMachine(Machine):
    actions: Mapping[str, tuple[str, ...]] = {
        "Send": ("client",),
        "Drain": ("client", "record", "seq", "epoch"),
        "HandleProduce": ("client", "record", "seq", "epoch", "error"),
        "LoseResponse": ("client", "record"),
        "HandleProduceResponse": ("client", "record", "error", "outcome"),
        "RequestTimeout": ("client",),
        "ExpireBatch": ("client", "record"),
        "ResolveSequences": ("client",),
        "BumpEpoch": ("client",),
        "InitProducerId": ("client", "producer_id"),
        "DeleteRecords": ("offset",),
        "PropagateLogStartOffset": ("offset",),
        "LeaderFailover": ("rebuilt",),
        "ExpireProducerIds": ("replica",),
        "Tick": ("now",),
    }
    # The flat state holds bounded non-negative counters and interned ids in [0, 2**61-1)
    # (``checker.intern``): every leaf is in the domain where ``hash`` is injective.
    fingerprint_kind = "hash"

    def __init__(self, switches: Mapping[str, Any], bounds: Mapping[str, int], memoize: bool = True) -> None:
        self.unknown_producer = str(switches["broker_unknown_producer"])
        self.retain_state = bool(switches["broker_retain_producer_state"])
        self.cache_size = int(switches["broker_batch_cache"])
        self.old_duplicate_error = bool(switches["broker_duplicate_sequence_error"])
        self.late_delivery = bool(bounds.get("late_delivery", 0))
        self.clock_skew = bounds.get("clock_skew", 0)
        self.cfg = ClientConfig(version=str(switches["client_version"]), epoch_bump=str(switches["client_epoch_bump"]),
                                max_in_flight=bounds["max_in_flight"], delivery_timeout=bounds["delivery_timeout"],
                                max_seq=bounds["max_seq"], max_epoch=bounds["max_epoch"],
                                in_flight_expiry=self.late_delivery)
        self.n_clients = bounds["clients"]
        self.prefix = bounds["acked_prefix"]
        self.records = self.prefix + bounds["records"]
        self.expiration = bounds["producer_id_expiration"]
        self.max_ticks = bounds["max_ticks"]
        self.max_lost = bounds["lost_responses"]
        self.max_transient = bounds["transient_errors"]
        self.max_deletes = bounds["delete_records"]
        self.max_failovers = bounds["leader_failovers"]
        self.max_rebuilt = bounds["restarted_replica_failovers"]
        self.max_snapshot = bounds.get("snapshot_restored_failovers", 0)
        self.max_replica_faults = {FAILOVER: self.max_failovers, REBUILT_FAILOVER: self.max_rebuilt,
                                   SNAPSHOT_FAILOVER: self.max_snapshot}
        self.max_pids = self.n_clients + bounds["new_producer_ids"]
        self.memoize = memoize
        self.no_requests = REQUESTS.intern(())
        self.no_responses = RESPONSES.intern(())
        self._props = self._build_properties()
        self._symmetry = ClientSymmetry(self.n_clients)
        if self.n_clients > 1:
            self.symmetry = self._symmetry.declared()
        self.clear_caches()

    def disabled_actions(self) -> frozenset[str]:
        """Actions this configuration switches off: fault budgets of 0, client versions without the
        step, and everything that needs time to pass when the clock may not tick."""
        off = set()
        if self.max_lost == 0:
            off |= {"LoseResponse", "RequestTimeout"}  # a request times out only when unanswered
        if self.max_deletes == 0:
            off |= {"DeleteRecords", "PropagateLogStartOffset"}
        if self.max_failovers + self.max_rebuilt + self.max_snapshot == 0:
            off |= {"LeaderFailover", "PropagateLogStartOffset"}  # no follower
        if self.max_ticks == 0:
            off |= {"Tick", "ExpireProducerIds"}
            if self.cfg.delivery_timeout > 0:
                off |= {"ExpireBatch", "ResolveSequences"}  # unresolved sequences come from expiry
        if self.cfg.version not in ("pre-kip360", "0.11") and self.cfg.max_epoch >= 256:
            # only a 0.11 or pre-KIP-360 client resets its producer id; a KIP-360 client does so
            # only at an exhausted epoch, out of reach of any bounded run below 256
            off.add("InitProducerId")
        if self.cfg.version != "kip360":
            off.add("BumpEpoch")
        if self.cfg.epoch_bump == "fail_inflight":
            off.add("ResolveSequences")  # the KIP's design fails the later batches: no unresolved sequence
        return frozenset(off)

    def clear_caches(self) -> None:
        """Forget every memoised part rule (they are rebuilt on demand)."""
        cache: Callable[[], dict] = dict if self.memoize else _NoMemo
        self._client_moves: dict[tuple, ClientMoves] = cache()
        self._timeouts: dict[tuple, tuple[tuple, int, int]] = cache()
        self._network: dict[tuple[int, int], Network] = cache()
        self._with_request: dict[tuple, int] = cache()
        self._with_response: dict[tuple, int] = cache()
        self._produce: dict[tuple, LeaderMove] = cache()
        self._responses: dict[tuple, tuple[tuple, int]] = cache()
        self._deletes: dict[int, tuple] = cache()
        self._replica: dict[tuple, tuple] = cache()
        self._expiry: dict[tuple, Any] = cache()
        for memo in self._invariant_caches:
            memo.clear()
        self._symmetry.clear()

    @property
    def _invariant_caches(self) -> list[dict]:
        return [p.check.memo for p in self._props.values() if isinstance(p.check, (LogInvariant, SendOrderNoLoss))]

    def __getstate__(self) -> dict[str, Any]:
        # Shipped to other processes (Spark) without its caches: their values hold ids of parts the
        # receiving process has not interned (and a warm cache would be sent to every executor).
        state = self.__dict__.copy()
        for key in [k for k, v in state.items() if isinstance(v, dict) and k.startswith("_") and k != "_props"]:
            state[key] = type(state[key])()
        return state

    # --- structure -------------------------------------------------------------------------

    def init_states(self) -> Iterator[PackedIdempotentState]:
        """Each client starts with producer id = its index, epoch 0, and ``acked_prefix`` records
        already written and acknowledged (a producer that has been running for a while). The
        clients' earlier records lie in the log one client after another, in every order of the
        clients: no client is privileged, so the initial states are closed under renaming clients
        (``idempotent_symmetry``)."""
        orders = itertools.permutations(range(self.n_clients)) if self.prefix else [range(self.n_clients)]
        for order in orders:
            partition = PartitionState(log=(), log_start_offset=0, producers=())
            clients = [cl.new_client(c) for c in range(self.n_clients)]
            for c in order:
                client = clients[c]
                for r in range(self.prefix):
                    partition, offset = append_batch(partition, LogRecord(c, r, c, 0, r, 0), self.cache_size)
                    client = client._replace(last_acked_seq=r, last_acked_offset=offset, acked=client.acked | 1 << r)
                clients[c] = client._replace(sent=self.prefix, next_seq=self.prefix % (self.cfg.max_seq + 1))
            follower = ((FollowerState(0, partition.producers),)
                        if self.max_failovers + self.max_rebuilt + self.max_snapshot else ())
            yield pack(IdempotentState(now=0, next_producer_id=self.n_clients, partition=partition, follower=follower,
                                       leader_epoch=0, clients=tuple(clients), requests=(), responses=(),
                                       faults=IdempotentFaults(0, 0, 0, 0, 0, 0)))

    def has_symmetry(self) -> bool:
        return self.n_clients > 1

    def export_states(self, states: list[PackedIdempotentState]) -> Any:
        return export_batch(states)

    def import_states(self, exported: Any) -> list[PackedIdempotentState]:
        return import_batch(exported)

    def canonical(self, s: PackedIdempotentState) -> PackedIdempotentState:
        """Clients are interchangeable (``idempotent_symmetry``)."""
        return self._symmetry.canonical(s) if self.n_clients > 1 else s

    def within_bounds(self, s: PackedIdempotentState) -> bool:
        return s[NEXT_PID] <= self.max_pids

    def is_terminal(self, s: PackedIdempotentState) -> bool:
        if s.requests or s.responses:
            return False
        return all(c.fatal or (c.sent == self.records and not c.batches) for c in s.clients)

    def temporal_properties(self) -> dict[str, TemporalProperty]:
        return {"SendsEventuallyComplete": leads_to("SendsEventuallyComplete", TEMPORAL_DOCS["SendsEventuallyComplete"],
                                                    props.sends_outstanding, props.sends_completed)}

    def fairness(self) -> tuple[Fairness, ...]:
        return FAIRNESS

    def properties(self) -> dict[str, Property]:
        return dict(self._props)

    def _build_properties(self) -> dict[str, Property]:
        # Invariants are memoised on the parts they read (the log; the log and one client).
        no_duplicates = LogInvariant(props.no_duplicates, self.memoize)
        fenced = LogInvariant(props.fenced_epoch_never_writes, self.memoize)
        send_order = SendOrderNoLoss(self.n_clients, self.memoize)
        return {
            "NoDuplicates": Property("NoDuplicates", PROPERTY_DOCS["NoDuplicates"], "invariant", no_duplicates),
            "SendOrderNoLoss": Property("SendOrderNoLoss", PROPERTY_DOCS["SendOrderNoLoss"], "invariant", send_order),
            "OutOfOrderOnlyOnDataLoss": Property("OutOfOrderOnlyOnDataLoss", PROPERTY_DOCS["OutOfOrderOnlyOnDataLoss"],
                                                 "transition", props.out_of_order_only_on_data_loss),
            "FencedEpochNeverWrites": Property("FencedEpochNeverWrites", PROPERTY_DOCS["FencedEpochNeverWrites"],
                                               "invariant", fenced),
        }

    # --- composition: part rules (memoised) into flat successor states ------------------------------

    def successors(self, s: PackedIdempotentState) -> Iterator[tuple[tuple, PackedIdempotentState]]:
        now, next_pid, leader_epoch = s[NOW], s[NEXT_PID], s[LEADER_EPOCH]
        reqs, resps, part, follower = s[REQS], s[RESPS], s[PART], s[FOLLOWER]
        clients = CLIENTS.values
        net = self._network.get((reqs, resps))
        if net is None:
            net = self._network[(reqs, resps)] = self._network_part(reqs, resps)
        client_moves = self._client_moves
        with_request, with_response = self._with_request, self._with_response
        # each memo below has its own key shape; a miss in a response memo reads None
        key: tuple[Any, ...]
        new_resps: int | None

        for c in range(self.n_clients):
            k = CLIENT0 + c
            cid = s[k]
            key = (cid, c, now, next_pid)
            moves = client_moves.get(key)
            if moves is None:
                moves = client_moves[key] = self._client_part(c, clients[cid], now, next_pid)
            for step, new_cid, req, pids in moves.before:
                t = list(s)
                t[k] = new_cid
                if req is not None:  # the cache hit is inlined (most successors); _appended fills a miss
                    new_reqs = with_request.get((reqs, req))
                    if new_reqs is None:
                        new_reqs = self._appended(with_request, REQUESTS, reqs, req)
                    t[REQS] = new_reqs
                yield step, _new(PackedIdempotentState, t)
            if moves.in_flight:
                unanswered = moves.in_flight - net.waiting.get((c, moves.connection), _NOTHING)
                if unanswered:
                    key = (cid, c, resps)
                    timeout = self._timeouts.get(key)
                    if timeout is None:
                        timeout = self._timeouts[key] = self._request_timeout(c, clients[cid], resps)
                    step, new_cid, new_resps = timeout
                    t = list(s)
                    t[k] = new_cid
                    t[RESPS] = new_resps
                    yield step, _new(PackedIdempotentState, t)
            for step, new_cid, req, pids in moves.after:
                t = list(s)
                t[k] = new_cid
                t[NEXT_PID] = next_pid + pids
                yield step, _new(PackedIdempotentState, t)

        transient_left = s[TRANSIENT] < self.max_transient
        for req, rest in net.requests:
            open_conn = req.connection == clients[s[CLIENT0 + req.client]].connection
            key = (part, follower, req, open_conn, leader_epoch)
            move = self._produce.get(key)
            if move is None:
                move = self._produce[key] = self._handle_produce(part, follower, req, open_conn, leader_epoch)
            step, new_part, new_follower, resp = move
            t = list(s)
            t[PART] = new_part
            t[FOLLOWER] = new_follower
            t[REQS] = rest
            if resp is not None:
                new_resps = with_response.get((resps, resp))
                if new_resps is None:
                    new_resps = self._appended(with_response, RESPONSES, resps, resp)
                t[RESPS] = new_resps
            yield step, _new(PackedIdempotentState, t)
            if transient_left and req.leader_epoch == leader_epoch:
                step, resp = self._transient_error(req, PARTITIONS.values[part], open_conn)
                t = list(s)
                t[REQS] = rest
                t[TRANSIENT] += 1
                if resp is not None:
                    t[RESPS] = self._appended(self._with_response, RESPONSES, resps, resp)
                yield step, _new(PackedIdempotentState, t)

        slots = net.responses
        for resp, rest, first in slots:
            if not first:
                continue
            k = CLIENT0 + resp.client
            key = (s[k], resp, now, leader_epoch)
            handled = self._responses.get(key)
            if handled is None:
                handled = self._responses[key] = self._handle_response(clients[s[k]], resp, now, leader_epoch)
            step, new_cid = handled
            t = list(s)
            t[k] = new_cid
            t[RESPS] = rest
            yield step, _new(PackedIdempotentState, t)
        if s[LOST] < self.max_lost:
            for resp, rest, first in slots:
                t = list(s)
                t[RESPS] = rest
                t[LOST] += 1
                yield ("LoseResponse", resp.client, resp.record), _new(PackedIdempotentState, t)

        if s[DELETES] < self.max_deletes:
            deletes = self._deletes.get(part)
            if deletes is None:
                deletes = self._deletes[part] = self._delete_records(PARTITIONS.values[part])
            for step, new_part in deletes:
                t = list(s)
                t[PART] = new_part
                t[DELETES] += 1
                yield step, _new(PackedIdempotentState, t)
        if self.max_failovers + self.max_rebuilt + self.max_snapshot:
            key = (part, follower)
            replica = self._replica.get(key)
            if replica is None:
                replica = self._replica[key] = self._replica_part(part, FOLLOWERS.values[follower][0])
            for step, new_part, new_follower, kind in replica:
                if kind != PROPAGATE and s[_FAULT_OF[kind]] >= self.max_replica_faults[kind]:
                    continue
                t = list(s)
                t[PART] = new_part
                t[FOLLOWER] = new_follower
                if kind != PROPAGATE:
                    t[LEADER_EPOCH] += 1
                    t[_FAULT_OF[kind]] += 1
                yield step, _new(PackedIdempotentState, t)
        key = (part, follower, now)
        expiry = self._expiry.get(key)
        if expiry is None:
            expiry = self._expiry[key] = self._expire_producer_ids(PARTITIONS.values[part],
                                                                   FOLLOWERS.values[follower], now)
        for step, new_part, new_follower in expiry:
            t = list(s)
            t[PART], t[FOLLOWER] = new_part, new_follower
            yield step, _new(PackedIdempotentState, t)
        if now < self.max_ticks and (self.late_delivery or (reqs == self.no_requests and resps == self.no_responses)):
            t = list(s)
            t[NOW] = now + 1
            yield ("Tick", now + 1), _new(PackedIdempotentState, t)

    @staticmethod
    def _appended(memo: dict[tuple, int], table: Any, messages: int, message: Any) -> int:
        """The id of the message tuple ``messages`` with ``message`` appended (memoised)."""
        key = (messages, message)
        ident = memo.get(key)
        if ident is None:
            ident = memo[key] = table.intern(table.values[messages] + (message,))
        return ident

    def _network_part(self, reqs: int, resps: int) -> Network:
        requests, responses = REQUESTS.values[reqs], RESPONSES.values[resps]
        key = lambda m: (m.client, m.connection)  # one channel per connection
        first = {i for i, _ in deliverable(responses, key, 0)}
        waiting: dict[tuple[int, int], set[int]] = {}
        for m in requests + responses:
            waiting.setdefault(key(m), set()).add(m.record)
        return Network(
            tuple((requests[i], REQUESTS.intern(remove_at(requests, i))) for i, _ in deliverable(requests, key, 0)),
            tuple((r, RESPONSES.intern(remove_at(responses, i)), i in first) for i, r in enumerate(responses)),
            {k: frozenset(v) for k, v in waiting.items()})

    # --- part rules: what one part of the state can do, over the readable records ----------------

    def _client_part(self, c: int, client: IdempotentClient, now: int, next_pid: int) -> ClientMoves:
        """The steps client ``c`` takes on its own (the application, accumulator, Sender and
        TransactionManager), in the machine's order."""
        cfg = self.cfg
        intern = CLIENTS.intern
        before: list[ClientMove] = []
        after: list[ClientMove] = []
        if client.sent < self.records and not client.fatal:
            before.append((("Send", c), intern(cl.send(client, now)), None, 0))
        drained = cl.drain(client, c, now, cfg)
        if drained is not None:
            new_client, req = drained
            req = req._replace(leader_epoch=client.known_leader_epoch)  # the leader in the client's metadata
            before.append((("Drain", c, req.record, req.seq, req.epoch), intern(new_client), req, 0))
        in_flight: frozenset[int] = frozenset()
        if client.batches and (now - client.batches[0].created >= cfg.delivery_timeout
                               or any(b.status == INFLIGHT for b in client.batches)):
            for i, b in enumerate(client.batches):
                if b.status != INFLIGHT and cl.is_expired(b, now, cfg):
                    before.append((("ExpireBatch", c, b.record), intern(cl.expire_batch(client, i, cfg)), None, 0))
                    break  # the accumulator expires batches oldest first
            if self.late_delivery:  # Sender.getExpiredInflightBatches (only reachable if time passes in flight)
                for i, b in enumerate(client.batches):
                    if b.status == INFLIGHT and cl.is_expired(b, now, cfg):
                        before.append((("ExpireBatch", c, b.record),
                                       intern(cl.expire_in_flight_batch(client, i, cfg)), None, 0))
                        break
            in_flight = frozenset(b.record for b in client.batches if b.status == INFLIGHT)
        if client.producer_id < 0 and not client.fatal:
            after.append((("InitProducerId", c, next_pid), intern(cl.init_producer_id(client, next_pid)), None, 1))
        elif client.unresolved >= 0 and not any(b.status != QUEUED for b in client.batches):
            after.append((("ResolveSequences", c), intern(cl.resolve_sequences(client, cfg)), None, 0))
        elif client.epoch_bump_required and cfg.version == "kip360" and (
                cfg.epoch_bump == "resequence_inflight" or not any(b.status == INFLIGHT for b in client.batches)):
            # as shipped the bump does not wait for in-flight requests (review finding 8); the KIP's
            # design keeps sequences, so its bump waits until the old epoch's requests are answered
            after.append((("BumpEpoch", c), intern(cl.bump_epoch(client, cfg)), None, 0))
        return ClientMoves(tuple(before), in_flight, client.connection, tuple(after))

    def _request_timeout(self, c: int, client: IdempotentClient, resps: int) -> tuple[tuple, int, int]:
        """request.timeout.ms, once a request has really gone unanswered (its response lost; the
        caller checks that): the connection is closed, and the client's responses still in flight
        with it."""
        responses = tuple(r for r in RESPONSES.values[resps] if r.client != c)
        return (("RequestTimeout", c), CLIENTS.intern(cl.connection_closed(client, self.late_delivery)),
                RESPONSES.intern(responses))

    def _handle_produce(self, part_id: int, follower_id: int, req: ProduceRequest, open_conn: bool,
                        leader_epoch: int) -> LeaderMove:
        """The leader handles a produce request; the response is lost if the client closed that
        connection on a timeout (``open_conn`` false)."""
        if req.leader_epoch != leader_epoch:
            # sent to the previous leader: refused, the client retries against the new one
            error = int(Errors.NOT_LEADER_OR_FOLLOWER)
            resp = ProduceResponse(req.client, req.connection, req.record, error, -1, -1)
            step = ("HandleProduce", req.client, req.record, req.seq, req.epoch, error)
            return step, part_id, follower_id, resp if open_conn else None
        part = PARTITIONS.values[part_id]
        follower = FOLLOWERS.values[follower_id]
        decision = validate_produce(find_entry(part.producers, req.producer_id), epoch=req.epoch, seq=req.seq,
                                    max_seq=self.cfg.max_seq, unknown_producer=self.unknown_producer,
                                    old_duplicate_error=self.old_duplicate_error)
        offset = decision.duplicate_offset
        if decision.append:
            record = LogRecord(req.client, req.record, req.producer_id, req.epoch, req.seq, req.created)
            part, offset = append_batch(part, record, self.cache_size)
            part_id = PARTITIONS.intern(part)
            if follower:  # replicated before the ack (acks=all); the follower skips sequence checks
                f = follower[0]
                follower_id = FOLLOWERS.intern(
                    (f._replace(producers=record_batch(f.producers, record, offset, self.cache_size)),))
        resp = ProduceResponse(req.client, req.connection, req.record, int(decision.error), offset,
                               part.log_start_offset)
        step = ("HandleProduce", req.client, req.record, req.seq, req.epoch, int(decision.error))
        return step, part_id, follower_id, resp if open_conn else None

    @staticmethod
    def _transient_error(req: ProduceRequest, part: PartitionState,
                         open_conn: bool) -> tuple[tuple, ProduceResponse | None]:
        """The leader refuses the batch with a retriable error (e.g. NOT_ENOUGH_REPLICAS while the
        ISR is too small): nothing is appended."""
        error = int(Errors.NOT_ENOUGH_REPLICAS)
        resp = ProduceResponse(req.client, req.connection, req.record, error, -1, part.log_start_offset)
        return ("HandleProduce", req.client, req.record, req.seq, req.epoch, error), resp if open_conn else None

    def _handle_response(self, client: IdempotentClient, resp: ProduceResponse, now: int,
                         leader_epoch: int) -> tuple[tuple, int]:
        new_client, outcome = cl.handle_produce_response(client, resp, now, self.cfg)
        if resp.error == Errors.NOT_LEADER_OR_FOLLOWER:
            new_client = new_client._replace(known_leader_epoch=leader_epoch)  # metadata refresh
        return ("HandleProduceResponse", resp.client, resp.record, resp.error, outcome), CLIENTS.intern(new_client)

    def _delete_records(self, part: PartitionState) -> tuple[tuple[tuple, int], ...]:
        """Retention or DeleteRecords to any offset above the log start offset."""
        return tuple((("DeleteRecords", offset), PARTITIONS.intern(advance_log_start_offset(part, offset,
                                                                                             self.retain_state)))
                     for offset in range(part.log_start_offset + 1, len(part.log) + 1))

    def _replica_part(self, part_id: int, f: FollowerState) -> tuple[tuple[tuple, int, int, int], ...]:
        """The follower's steps: catching up on the log start offset, and the two kinds of leader
        failover (each spends its own fault budget, checked by the caller)."""
        moves = []
        part = PARTITIONS.values[part_id]
        if f.log_start_offset < part.log_start_offset:
            # a fetch response carries the leader's log start offset to the follower
            lso = part.log_start_offset
            producers = f.producers if self.retain_state else truncate_head(f.producers, lso)
            moves.append((("PropagateLogStartOffset", lso), part_id,
                          FOLLOWERS.intern((FollowerState(lso, producers),)), PROPAGATE))
        old = FOLLOWERS.intern((FollowerState(part.log_start_offset, part.producers),))
        # to the in-sync follower, with the producer state it built by replication
        moves.append((("LeaderFailover", 0), PARTITIONS.intern(PartitionState(part.log, f.log_start_offset,
                                                                              f.producers)), old, FAILOVER))
        # to a replica that restarted without its producer-state snapshots: state rebuilt from its log
        producers = rebuild_producer_state(part.log, f.log_start_offset, self.cache_size)
        moves.append((("LeaderFailover", 1), PARTITIONS.intern(PartitionState(part.log, f.log_start_offset,
                                                                              producers)), old, REBUILT_FAILOVER))
        # to a replica restarted from the producer-state snapshot it took at its log end (clean
        # shutdown; UnifiedLog.close): ProducerStateManager.writeSnapshot keeps one BatchMetadata per
        # producer, so the reloaded state knows only each producer's last batch (fidelity audit B4)
        producers = tuple(e._replace(batches=e.batches[-1:]) for e in f.producers)
        moves.append((("LeaderFailover", 2), PARTITIONS.intern(PartitionState(part.log, f.log_start_offset,
                                                                              producers)), old, SNAPSHOT_FAILOVER))
        return tuple(moves)

    def _expire_producer_ids(self, part: PartitionState, follower: tuple[FollowerState, ...],
                             now: int) -> tuple[tuple[tuple, int, int], ...]:
        """Each replica runs its own periodic check (``PeriodicProducerExpirationCheck`` per
        ``UnifiedLog``), so the leader and the follower expire a producer in separate steps, in either
        order (the earlier review's finding 22): ``ExpireProducerIds(0)`` on the leader,
        ``ExpireProducerIds(1)`` on the follower. The stored timestamps are the batches' CreateTime
        (client clock); the broker compares them with its own clock, ``clock_skew`` ticks ahead of the
        client's (fidelity audit B5)."""
        now += self.clock_skew
        moves = []
        part_id, follower_id = PARTITIONS.intern(part), FOLLOWERS.intern(follower)
        if any(is_producer_expired(e, now, self.expiration) for e in part.producers):
            moves.append((("ExpireProducerIds", 0), PARTITIONS.intern(expire_producers(part, now, self.expiration)),
                          follower_id))
        if follower and any(is_producer_expired(e, now, self.expiration) for e in follower[0].producers):
            f = follower[0]
            moves.append((("ExpireProducerIds", 1), part_id, FOLLOWERS.intern(
                (f._replace(producers=remove_expired_producers(f.producers, now, self.expiration)),))))
        return tuple(moves)

    # --- presentation ----------------------------------------------------------------------------

    def format_step(self, step: tuple) -> str:
        name = step[0]
        if name == "HandleProduce":
            _, c, r, seq, epoch, err = step
            return f"HandleProduce(client={c}, record={r}, epoch={epoch}, seq={seq}) -> {error_name(err)}"
        if name == "HandleProduceResponse":
            _, c, r, err, outcome = step
            return f"HandleProduceResponse(client={c}, record={r}, {error_name(err)}) -> {cl.OUTCOME_NAMES[outcome]}"
        return super().format_step(step)

    def chart_step(self, step: tuple, before: PackedIdempotentState, after: PackedIdempotentState) -> Any:
        from .idempotent_chart import chart_step
        return chart_step(self, step, before, after)

    def chart_lanes(self) -> list[str]:
        from .idempotent_chart import lanes
        return lanes(self.n_clients)

    def itf_fields(self, s: IdempotentState) -> dict[str, Any]:
        from .itf_data import idempotent_fields
        return idempotent_fields(self, s)

    def fields(self, s: IdempotentState) -> dict[str, Any]:
        part = s.partition
        out: dict[str, Any] = {
            "time.now": s.now,
            "allocator.next_producer_id": s.next_producer_id,
            "leader.log": [f"{o}: client{r.client}/r{r.record} (pid {r.producer_id}, epoch {r.epoch}, seq {r.seq})"
                           for o, r in enumerate(part.log)],
            "leader.log_start_offset": part.log_start_offset,
            "leader.producers": [f"pid {e.producer_id}: epoch {e.epoch}, batches "
                                 f"{[(b.seq, b.offset) for b in e.batches]} (seq, offset), lastTimestamp {e.last_timestamp}"
                                 for e in part.producers],
        }
        for c, client in enumerate(s.clients):
            p = f"client[{c}]."
            out[p + "producer_id"] = client.producer_id
            out[p + "epoch"] = client.epoch
            out[p + "next_seq"] = client.next_seq
            out[p + "last_acked_seq"] = client.last_acked_seq
            out[p + "last_acked_offset"] = client.last_acked_offset
            out[p + "sent"] = client.sent
            out[p + "batches"] = [f"r{b.record} {BATCH_STATUS_NAMES[b.status]} (pid {b.producer_id}, epoch {b.epoch}, "
                                  f"seq {b.seq}{', reset' if b.sequence_reset else ''}, created {b.created})"
                                  for b in client.batches]
            out[p + "acked"] = [r for r in range(client.sent) if client.acked >> r & 1]
            out[p + "failed"] = [r for r in range(client.sent) if client.failed >> r & 1]
            out[p + "connection"] = client.connection
            out[p + "epoch_bump_required"] = client.epoch_bump_required
            out[p + "unresolved"] = client.unresolved
            out[p + "fatal"] = client.fatal
        if s.follower:
            f = s.follower[0]
            out["leader.leader_epoch"] = s.leader_epoch
            out["follower.log_start_offset"] = f.log_start_offset
            out["follower.producers"] = [f"pid {e.producer_id}: epoch {e.epoch}, batches "
                                         f"{[(b.seq, b.offset) for b in e.batches]} (seq, offset), lastTimestamp "
                                         f"{e.last_timestamp}" for e in f.producers]
        out["network.requests"] = [f"Produce(client{r.client}/r{r.record}, pid {r.producer_id}, epoch {r.epoch}, "
                                   f"seq {r.seq}, conn {r.connection}, leader epoch {r.leader_epoch})"
                                   for r in s.requests]
        out["network.responses"] = [f"ProduceResponse(client{r.client}/r{r.record}, {error_name(r.error)}, offset "
                                    f"{r.base_offset}, logStartOffset {r.log_start_offset})" for r in s.responses]
        out["faults.lost_responses"] = s.faults.lost_responses
        out["faults.transient_errors"] = s.faults.transient_errors
        out["faults.delete_records"] = s.faults.delete_records
        out["faults.leader_failovers"] = s.faults.leader_failovers
        out["faults.restarted_replica_failovers"] = s.faults.restarted_replica_failovers
        out["faults.snapshot_restored_failovers"] = s.faults.snapshot_restored_failovers
        return out

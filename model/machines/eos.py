"""Machine ``kafka.eos``: transactional producers with sequence numbers, their transaction coordinator
and two or more output partition leaders, in one machine, on one typed protocol (``model.protocol``).

Parts: the producers (``producer.transactional``: per-partition sequences and in-flight window from
``producer.client``), the transaction coordinator (``coordinator.handler`` InitProducerId,
``transactions`` AddPartitionsToTxn, EndTxn TV1/TV2, the timeout abort, markers), the partition
leaders (``partition.txn_produce``: the 5-batch cache, sequence and transactional validation, KIP-890
verification, markers, LSO; ``partition.producer_state``: DeleteRecords / retention and producer-id
expiry), the produce requests and responses in flight (ordered per connection, ``network``), a clock
and the fault budgets.

Each rule below is declared once with ``@rule``: its name, its step parameters and the bounds that
switch it on (a zero budget removes the rule, so a small spec stays small); its body is the guard
and one call into the room that owns the decision, composed into the next state. Calls into rooms
are memoised on their arguments (``PureRule``).

Abstractions (beyond those of the rooms): requests to the coordinator (InitProducerId,
AddPartitionsToTxn, EndTxn) and the coordinator's log appends are atomic with their answer; markers
are written partition by partition and a refused marker is not retried; every transaction of a
producer writes ``batches`` records to every output partition; a TV2 client still sends
AddPartitionsToTxn; no coordinator failover, group coordinator or consumer offsets yet.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from eoscheck.checker.machine import Machine, Property

from .. import properties as props
from ..coordinator.handler import CoordinatorConfig, handle_init_producer_id
from ..coordinator.txn_log import NO_LOG_VALUE, NO_METADATA, to_log_value
from ..errors import Errors, error_name
from ..network import deliverable, remove_at
from ..partition.producer_state import (
    is_producer_expired,
    remove_expired_producers,
    truncate_head,
)
from ..partition.txn_produce import (
    handle_txn_produce,
    needs_verification,
    producer_state_lso,
    write_marker,
)
from ..producer import transactional as tx
from ..producer.config import ClientConfig
from ..protocol import (
    DECISIONS,
    ClientVersion,
    InitProducerIdMode,
    Protocol,
    Support,
    TransactionVersion,
    from_switches,
    refusal,
)
from ..state import (
    BATCH_STATUS_NAMES,
    INFLIGHT,
    TXN_BUMP,
    TXN_INIT,
    TXN_PHASE_NAMES,
    TXN_READY,
    EosFaults,
    EosState,
    ProduceRequest,
    ProduceResponse,
    TxnMetadata,
    TxnPartitionState,
    TxnProducer,
)
from ..transactions.add_partitions import add_partitions_to_txn, verify_partition
from ..transactions.codes import NO_PENDING, TxnResult, TxnState
from ..transactions.end_txn import end_txn, end_txn_tv2
from ..transactions.log import EntryKind, last_stable_offset
from ..transactions.markers import complete_if_done, markers_to_send, on_marker_response
from ..transactions.states import is_valid_transition
from ..transactions.timeout import abort_timed_out
from .pure_rule import PureRule

Successor = tuple[tuple, EosState]


@dataclass(frozen=True)
class RuleDecl:
    """One declared rule: the step name, its parameters, the bounds that must be non-zero for it to
    exist, and the method yielding its enabled steps."""

    name: str
    params: tuple[str, ...]
    needs: tuple[str, ...]
    method: Callable[[Any, EosState], Iterator[Successor]]


RULES: list[RuleDecl] = []


def rule(name: str, *params: str, needs: tuple[str, ...] = ()) -> Callable[[Callable], Callable]:
    def declare(method: Callable) -> Callable:
        RULES.append(RuleDecl(name, params, needs, method))
        return method
    return declare


#: what kafka.eos models of the protocol; decisions not listed (the group's, the deployment) are ignored
SUPPORT = Support(
    machine="kafka.eos",
    honours={"client_version": frozenset(ClientVersion),
             "transaction_version": frozenset(TransactionVersion),
             "init_producer_id": frozenset(InitProducerIdMode)},
)


def _set(tup: tuple, i: int, value: Any) -> tuple:
    return tup[:i] + (value,) + tup[i + 1:]


def _produce(leader: TxnPartitionState, producer_id: int, epoch: int, seq: int, value: int, timestamp: int,
             verification_error: int, **fixed: Any) -> Any:
    """``handle_txn_produce`` with positional arguments (what ``PureRule`` memoises on)."""
    return handle_txn_produce(leader, producer_id=producer_id, epoch=epoch, seq=seq, value=value, timestamp=timestamp,
                              verification_error=verification_error, **fixed)


def _marker(leader: TxnPartitionState, marker: Any, timestamp: int, *, check_coordinator_epoch: bool) -> Any:
    return write_marker(leader, marker, timestamp=timestamp, check_coordinator_epoch=check_coordinator_epoch)


class EosMachine(Machine):
    """``kafka.eos``; see the module doc."""

    def __init__(self, protocol: Protocol, bounds: Mapping[str, int]) -> None:
        why = refusal(protocol, SUPPORT)
        if why is not None:
            raise ValueError(why)
        self.protocol = p = protocol
        self.n_producers, self.n_partitions = bounds["producers"], bounds["partitions"]
        self.transactions, self.batches = bounds["transactions"], bounds["batches"]
        self.bounds = dict(bounds)
        self.max_epoch = bounds["max_epoch"]
        self.tv2 = p.transaction_version == TransactionVersion.TV2
        self.cfg = ClientConfig(version=p.client_version.value, epoch_bump=p.client_epoch_bump.value,
                                max_in_flight=bounds["max_in_flight"], delivery_timeout=1 << 30,
                                max_seq=bounds["max_seq"], max_epoch=self.max_epoch)
        self.coordinator = CoordinatorConfig(
            kip360=p.init_producer_id != InitProducerIdMode.PRE_KIP360,
            shipped=p.init_producer_id == InitProducerIdMode.KIP360_SHIPPED, max_epoch=self.max_epoch,
            persist_last_epoch=p.persist_last_epoch, persist_prev_producer_id=p.persist_prev_producer_id,
            tv2=self.tv2)
        self.rules = [r for r in RULES if all(bounds[b] > 0 for b in r.needs)]
        self.actions = {r.name: r.params for r in self.rules}
        # rooms' rules memoised on their arguments
        self._init_pid = PureRule(handle_init_producer_id, cfg=self.coordinator)
        self._end_txn = PureRule(end_txn_tv2 if self.tv2 else end_txn)
        self._log_value = PureRule(to_log_value, persist_last_epoch=p.persist_last_epoch,
                                   persist_prev_producer_id=p.persist_prev_producer_id)
        self._produce = PureRule(_produce, max_seq=bounds["max_seq"], cache_size=p.broker_batch_cache,
                                 unknown_producer=p.broker_unknown_producer.value,
                                 old_duplicate_error=p.broker_duplicate_sequence_error)
        self._marker = PureRule(_marker, check_coordinator_epoch=p.marker_coordinator_epoch_check)
        self._response = PureRule(tx.on_produce_response, cfg=self.cfg)
        self._drain = PureRule(tx.drain, cfg=self.cfg)
        self._timeout_abort = PureRule(abort_timed_out, max_epoch=self.max_epoch,
                                       bump_epoch=p.timeout_abort_bumps_epoch, tv2=self.tv2)
        self._props = self._build_properties()

    # --- structure ---------------------------------------------------------------------------------

    def init_states(self) -> Iterator[EosState]:
        leader = TxnPartitionState((), 0, ())
        yield EosState(now=0, next_producer_id=0, coordinator_epoch=0, txns=(NO_METADATA,) * self.n_producers,
                       txn_log=(NO_LOG_VALUE,) * self.n_producers, leaders=(leader,) * self.n_partitions,
                       producers=(tx.new_producer(self.n_partitions),) * self.n_producers, requests=(),
                       responses=(), faults=EosFaults(0, 0, 0, 0))

    def within_bounds(self, s: EosState) -> bool:
        return all(m.epoch <= self.max_epoch for m in s.txns)

    def is_terminal(self, s: EosState) -> bool:
        return not s.requests and not s.responses and all(tx.is_done(p, self.transactions) for p in s.producers)

    def successors(self, s: EosState) -> Iterator[Successor]:
        for r in self.rules:
            yield from r.method(self, s)

    # --- helpers -----------------------------------------------------------------------------------

    def _producer(self, s: EosState, t: int, producer: TxnProducer) -> EosState:
        return s._replace(producers=_set(s.producers, t, producer))

    def _coordinator(self, s: EosState, t: int, meta: TxnMetadata, *, write: bool = True) -> EosState:
        """The coordinator's new metadata for transactional id ``t``, appended to __transaction_state
        when ``write`` (a marker acknowledgement changes memory only)."""
        s = s._replace(txns=_set(s.txns, t, meta))
        return s._replace(txn_log=_set(s.txn_log, t, self._log_value(meta))) if write else s

    def _leader(self, s: EosState, p: int, leader: TxnPartitionState) -> EosState:
        return s._replace(leaders=_set(s.leaders, p, leader))

    def _faults(self, s: EosState, **spent: int) -> EosState:
        return s._replace(faults=s.faults._replace(**{k: getattr(s.faults, k) + v for k, v in spent.items()}))

    @staticmethod
    def _awaited(s: EosState, p: int, req: ProduceRequest) -> bool:
        """Whether the client still waits for this request (the batch is in flight on its connection)."""
        part = s.producers[req.client].parts[p]
        return req.connection == part.connection and any(
            b.record == req.record and b.status == INFLIGHT for b in part.batches)

    # --- the producer client -----------------------------------------------------------------------

    @rule("InitProducerId", "producer", "error")
    def init_producer_id(self, s: EosState) -> Iterator[Successor]:
        """initTransactions, or the KIP-360 bump after an abort: InitProducerId to the coordinator."""
        for t, producer in enumerate(s.producers):
            if producer.phase not in (TXN_INIT, TXN_BUMP):
                continue
            req_pid, req_epoch = tx.init_request(producer)
            meta = s.txns[t]
            r = self._init_pid(meta, meta.pending_state != NO_PENDING, req_pid, req_epoch, s.next_producer_id)
            if r.fenced is not None:  # an Ongoing transaction is fenced and aborted; the client retries
                yield ("InitProducerId", t, int(r.error)), self._coordinator(s, t, r.fenced)
                continue
            if r.transit is None:
                client = tx.on_init_producer_id(producer, r.error, -1, -1)
                if client is not None:
                    yield ("InitProducerId", t, int(r.error)), self._producer(s, t, client)
                continue
            out = r.transit
            if meta.exists:
                out = meta._replace(producer_id=out.producer_id, epoch=out.epoch, last_epoch=out.last_epoch,
                                    prev_producer_id=out.prev_producer_id, state=int(TxnState.EMPTY), partitions=())
            nxt = self._coordinator(s, t, out)
            if r.used_new_producer_id:
                nxt = nxt._replace(next_producer_id=s.next_producer_id + 1)
            client = tx.on_init_producer_id(producer, int(Errors.NONE), out.producer_id, out.epoch)
            assert client is not None
            yield ("InitProducerId", t, int(Errors.NONE)), self._producer(nxt, t, client)

    @rule("BeginTransaction", "producer", "txn")
    def begin_transaction(self, s: EosState) -> Iterator[Successor]:
        for t, producer in enumerate(s.producers):
            if producer.phase == TXN_READY and producer.txn < self.transactions:
                yield (("BeginTransaction", t, producer.txn),
                       self._producer(s, t, tx.begin_transaction(producer, self.batches, s.now)))

    @rule("AddPartitionsToTxn", "producer", "partition", "error")
    def add_partitions(self, s: EosState) -> Iterator[Successor]:
        for t, producer in enumerate(s.producers):
            for p in tx.partitions_to_add(producer):
                out = add_partitions_to_txn(s.txns[t], producer.producer_id, producer.epoch, (p,))
                client = tx.on_add_partitions(producer, p, out.error)
                if client is None:
                    continue  # CONCURRENT_TRANSACTIONS: retried later, nothing changes
                nxt = self._coordinator(s, t, out.meta) if out.wrote else s
                yield ("AddPartitionsToTxn", t, p, int(out.error)), self._producer(nxt, t, client)

    @rule("Drain", "producer", "partition", "record", "seq", "epoch")
    def drain(self, s: EosState) -> Iterator[Successor]:
        for t, producer in enumerate(s.producers):
            for p in range(self.n_partitions):
                drained = self._drain(producer, t, p, s.now)
                if drained is not None:
                    client, req = drained
                    nxt = s._replace(requests=s.requests + ((p, req),))
                    yield ("Drain", t, p, req.record, req.seq, req.epoch), self._producer(nxt, t, client)

    @rule("DeliveryTimeout", "producer", "partition", needs=("produce_timeouts",))
    def delivery_timeout(self, s: EosState) -> Iterator[Successor]:
        """delivery.timeout.ms passes for an in-flight batch; its request stays on the network."""
        if s.faults.produce_timeouts >= self.bounds["produce_timeouts"]:
            return
        for t, producer in enumerate(s.producers):
            for p in range(self.n_partitions):
                client = tx.give_up_in_flight(producer, p, self.cfg)
                if client is not None:
                    yield ("DeliveryTimeout", t, p), self._producer(self._faults(s, produce_timeouts=1), t, client)

    @rule("RequestTimeout", "producer", "partition", needs=("lost_responses",))
    def request_timeout(self, s: EosState) -> Iterator[Successor]:
        """request.timeout.ms for a batch whose request and response are both gone (a lost response)."""
        for t, producer in enumerate(s.producers):
            for p, part in enumerate(producer.parts):
                waiting = {m.record for q, m in s.requests + s.responses
                           if q == p and m.client == t and m.connection == part.connection}
                if any(b.status == INFLIGHT and b.record not in waiting for b in part.batches):
                    yield ("RequestTimeout", t, p), self._producer(s, t, tx.connection_closed(producer, p))

    @rule("EndTxn", "producer", "result", "error")
    def end_transaction(self, s: EosState) -> Iterator[Successor]:
        for t, producer in enumerate(s.producers):
            if tx.ready_to_commit(producer):
                commit = True
            elif tx.ready_to_abort(producer):
                commit = False
                producer = tx.abort_undrained(producer)
                if not producer.added:  # nothing reached a partition: abort locally, no EndTxn
                    client = tx.finish_transaction(producer, False, producer.epoch,
                                                   bump_after_abort=self.protocol.client_epoch_bump_after_abort,
                                                   cfg=self.cfg)
                    yield ("EndTxn", t, "ABORT", -1), self._producer(s, t, client)
                    continue
            else:
                continue
            result = TxnResult.COMMIT if commit else TxnResult.ABORT
            out = self._end_txn(s.txns[t], producer.producer_id, producer.epoch, int(result))
            answered = tx.on_end_txn(producer, commit, out.error, out.meta.epoch, tv2=self.tv2,
                                     bump_after_abort=self.protocol.client_epoch_bump_after_abort, cfg=self.cfg)
            if answered is None:
                continue  # CONCURRENT_TRANSACTIONS: retried
            nxt = self._coordinator(s, t, out.meta) if out.wrote else s
            yield ("EndTxn", t, result.name, int(out.error)), self._producer(nxt, t, answered)

    # --- the network -------------------------------------------------------------------------------

    @rule("HandleProduce", "partition", "producer", "record", "seq", "epoch", "error")
    def handle_produce(self, s: EosState) -> Iterator[Successor]:
        """The leader handles the oldest request of a connection; the answer goes back unless the
        client closed that connection."""
        for i, _ in deliverable(s.requests, lambda m: (m[0], m[1].client, m[1].connection), 0):
            p, req = s.requests[i]
            leader = s.leaders[p]
            verification = int(Errors.NONE)
            if self.protocol.partition_verification and needs_verification(leader, req.producer_id):
                verification = verify_partition(s.txns[req.client], req.producer_id, req.epoch, p)
            value = props.record_value(req.client, req.record)
            out = self._produce(leader, req.producer_id, req.epoch, req.seq, value, req.created, verification)
            nxt = self._leader(s, p, out.partition)._replace(requests=remove_at(s.requests, i))
            if req.connection == s.producers[req.client].parts[p].connection:
                resp = ProduceResponse(req.client, req.connection, req.record, out.error, out.offset,
                                       out.partition.log_start_offset)
                nxt = nxt._replace(responses=nxt.responses + ((p, resp),))
            yield ("HandleProduce", p, req.client, req.record, req.seq, req.epoch, out.error), nxt

    @rule("HandleProduceResponse", "partition", "producer", "record", "error", "outcome")
    def handle_response(self, s: EosState) -> Iterator[Successor]:
        for i, _ in deliverable(s.responses, lambda m: (m[0], m[1].client, m[1].connection), 0):
            p, resp = s.responses[i]
            t = resp.client
            client, outcome = self._response(s.producers[t], p, resp, s.now)
            nxt = self._producer(s, t, client)._replace(responses=remove_at(s.responses, i))
            yield ("HandleProduceResponse", p, t, resp.record, resp.error, outcome), nxt

    @rule("LoseResponse", "partition", "producer", "record", needs=("lost_responses",))
    def lose_response(self, s: EosState) -> Iterator[Successor]:
        if s.faults.lost_responses >= self.bounds["lost_responses"]:
            return
        for i, (p, resp) in enumerate(s.responses):
            yield (("LoseResponse", p, resp.client, resp.record),
                   self._faults(s, lost_responses=1)._replace(responses=remove_at(s.responses, i)))

    # --- the transaction coordinator ---------------------------------------------------------------

    @rule("AbortTimedOutTransaction", "producer", needs=("txn_timeouts",))
    def timeout_abort(self, s: EosState) -> Iterator[Successor]:
        if s.faults.txn_timeouts >= self.bounds["txn_timeouts"]:
            return
        for t, meta in enumerate(s.txns):
            out = self._timeout_abort(meta)
            if out.wrote:
                yield ("AbortTimedOutTransaction", t), self._coordinator(self._faults(s, txn_timeouts=1), t, out.meta)

    @rule("WriteTxnMarker", "producer", "partition", "result")
    def write_txn_marker(self, s: EosState) -> Iterator[Successor]:
        """The coordinator's marker reaches the leader and is appended; the coordinator completes the
        transaction once every partition acknowledged (a refused marker is abandoned)."""
        for t, meta in enumerate(s.txns):
            for marker in markers_to_send(meta, s.coordinator_epoch):
                p = marker.partition
                error, leader = self._marker(s.leaders[p], marker, s.now)
                if error != Errors.NONE:
                    continue
                acked = on_marker_response(meta, p, int(Errors.NONE)).meta
                done, wrote = complete_if_done(acked)
                nxt = self._coordinator(self._leader(s, p, leader), t, done, write=wrote)
                yield ("WriteTxnMarker", t, p, TxnResult(marker.result).name), nxt

    @rule("CompleteTransaction", "producer")
    def complete_transaction(self, s: EosState) -> Iterator[Successor]:
        """TV2: an abort with no partitions completes without markers."""
        for t, meta in enumerate(s.txns):
            done, wrote = complete_if_done(meta)
            if wrote and not meta.partitions:
                yield ("CompleteTransaction", t), self._coordinator(s, t, done)

    # --- partition leaders: producer-state loss ---------------------------------------------------

    @rule("DeleteRecords", "partition", "offset", needs=("delete_records",))
    def delete_records(self, s: EosState) -> Iterator[Successor]:
        """Retention or DeleteRecords moves the log start offset (up to the high watermark); before
        KAFKA-7190 producers whose last batch falls below it are evicted."""
        if s.faults.delete_records >= self.bounds["delete_records"]:
            return
        for p, leader in enumerate(s.leaders):
            for offset in range(leader.log_start_offset + 1, len(leader.log) + 1):
                producers = (leader.producers if self.protocol.broker_retain_producer_state
                             else truncate_head(leader.producers, offset))
                moved = leader._replace(log_start_offset=offset, producers=producers)
                yield ("DeleteRecords", p, offset), self._leader(self._faults(s, delete_records=1), p, moved)

    @rule("ExpireProducerIds", "partition", needs=("max_ticks",))
    def expire_producer_ids(self, s: EosState) -> Iterator[Successor]:
        """producer.id.expiration.ms (KIP-854): idle producers with no open transaction are forgotten."""
        expiration = self.bounds["producer_id_expiration"]
        for p, leader in enumerate(s.leaders):
            if any(is_producer_expired(e, s.now, expiration) for e in leader.producers):
                kept = remove_expired_producers(leader.producers, s.now, expiration)
                yield ("ExpireProducerIds", p), self._leader(s, p, leader._replace(producers=kept))

    @rule("Tick", "now", needs=("max_ticks",))
    def tick(self, s: EosState) -> Iterator[Successor]:
        """Time passes while nothing the clients wait for is in flight (a late request may be)."""
        if s.now >= self.bounds["max_ticks"] or s.responses:
            return
        if any(self._awaited(s, p, req) for p, req in s.requests):
            return
        yield ("Tick", s.now + 1), s._replace(now=s.now + 1)

    # --- properties --------------------------------------------------------------------------------

    def properties(self) -> dict[str, Property]:
        return dict(self._props)

    def _build_properties(self) -> dict[str, Property]:
        b = self.batches
        checks: dict[str, tuple[str, Callable[..., bool]]] = {
            "NoDuplicate": ("invariant", props.eos_no_duplicate),
            "NoLoss": ("invariant", partial(props.eos_no_loss, batches=b)),
            "AtomicTransactions": ("invariant", partial(props.eos_atomic_transactions, batches=b)),
            "NoAbortedRead": ("invariant", props.eos_no_aborted_read),
            "NoHangingTransaction": ("invariant", props.eos_no_hanging_transaction),
            "PerPartitionOrder": ("invariant", props.eos_per_partition_order),
            "NoZombieWrite": ("invariant", props.eos_no_zombie_write),
            "OutOfOrderOnlyOnLoss": ("transition", props.eos_out_of_order_only_on_loss),
            "FencedGetsFencingError": ("transition", props.eos_fenced_gets_fencing_error),
            "EpochInRange": ("invariant", partial(props.eos_epoch_in_range, max_epoch=self.max_epoch)),
            "ValidTxnTransitions": ("transition", self._valid_transitions),
        }
        return {name: Property(name, PROPERTY_DOCS[name], kind, check) for name, (kind, check) in checks.items()}

    def _valid_transitions(self, s: EosState, step: tuple, t: EosState) -> bool:
        return all(a.state == b.state or not a.exists or is_valid_transition(a.state, b.state, tv2=self.tv2)
                   for a, b in zip(s.txns, t.txns))

    # --- presentation ------------------------------------------------------------------------------

    def format_step(self, step: tuple) -> str:
        name = step[0]
        if name == "HandleProduce":
            _, p, t, r, seq, epoch, err = step
            return f"HandleProduce(partition={p}, producer={t}, record={r}, epoch={epoch}, seq={seq}) -> {error_name(err)}"
        if name == "HandleProduceResponse":
            _, p, t, r, err, outcome = step
            return (f"HandleProduceResponse(partition={p}, producer={t}, record={r}, {error_name(err)}) -> "
                    f"{tx.OUTCOME_NAMES[outcome]}")
        if name in ("InitProducerId", "AddPartitionsToTxn", "EndTxn"):
            names = self.actions.get(name, ())[:-1]
            inner = ", ".join(f"{n}={v}" for n, v in zip(names, step[1:-1]))
            return f"{name}({inner})" + (f" -> {error_name(step[-1])}" if step[-1] != -1 else " (no partition: local)")
        return super().format_step(step)

    def fields(self, s: EosState) -> dict[str, Any]:
        out: dict[str, Any] = {"time.now": s.now, "coordinator.next_producer_id": s.next_producer_id,
                               "coordinator.epoch": s.coordinator_epoch}
        for t, m in enumerate(s.txns):
            c = f"coordinator.txn[{t}]."
            out[c + "state"] = TxnState(m.state).name if m.exists else "none"
            out[c + "producer_id"] = m.producer_id
            out[c + "epoch"] = m.epoch
            out[c + "partitions"] = list(m.partitions)
        for p, leader in enumerate(s.leaders):
            lp = f"leader[{p}]."
            log = []
            for e in leader.log:
                if e.kind == EntryKind.TXN_DATA:
                    t, r = props.record_of(e.value)
                    log.append(f"data producer{t}/r{r} (pid {e.producer_id}, epoch {e.producer_epoch})")
                else:
                    log.append(f"{EntryKind(e.kind).name} (pid {e.producer_id}, epoch {e.producer_epoch}, "
                               f"coordinator epoch {e.value})")
            out[lp + "log"] = log
            out[lp + "log_start_offset"] = leader.log_start_offset
            out[lp + "lso"] = last_stable_offset(leader.log)
            out[lp + "producer_state_lso"] = producer_state_lso(leader)
            out[lp + "producers"] = [f"pid {e.producer_id}: epoch {e.epoch}, batches {[(b.seq, b.offset) for b in e.batches]}"
                                     f" (seq, offset), txn first offset {e.current_txn_first_offset}, coordinator "
                                     f"epoch {e.coordinator_epoch}, lastTimestamp {e.last_timestamp}"
                                     for e in leader.producers]
        for t, producer in enumerate(s.producers):
            c = f"producer[{t}]."
            out[c + "phase"] = TXN_PHASE_NAMES[producer.phase]
            out[c + "producer_id"] = producer.producer_id
            out[c + "epoch"] = producer.epoch
            out[c + "txn"] = producer.txn
            out[c + "added"] = [p for p in range(self.n_partitions) if producer.added >> p & 1]
            out[c + "committed"] = [x for x in range(producer.txn) if producer.committed >> x & 1]
            out[c + "aborted"] = [x for x in range(producer.txn) if producer.aborted >> x & 1]
            if producer.fatal_error:
                out[c + "error"] = error_name(producer.fatal_error)
            for p, part in enumerate(producer.parts):
                out[c + f"partition[{p}]"] = (
                    f"next seq {part.next_seq}, last acked seq {part.last_acked_seq}, batches "
                    + str([f"r{b.record} {BATCH_STATUS_NAMES[b.status]} seq {b.seq}" for b in part.batches]))
        out["network.requests"] = [f"Produce(partition {p}, producer{r.client}/r{r.record}, pid {r.producer_id}, "
                                   f"epoch {r.epoch}, seq {r.seq}, conn {r.connection})" for p, r in s.requests]
        out["network.responses"] = [f"ProduceResponse(partition {p}, producer{r.client}/r{r.record}, "
                                    f"{error_name(r.error)}, offset {r.base_offset})" for p, r in s.responses]
        for name, value in s.faults._asdict().items():
            out[f"faults.{name}"] = value
        return out


PROPERTY_DOCS: dict[str, str] = {
    "NoDuplicate": props.eos_no_duplicate.__doc__ or "",
    "NoLoss": props.eos_no_loss.__doc__ or "",
    "AtomicTransactions": props.eos_atomic_transactions.__doc__ or "",
    "NoAbortedRead": props.eos_no_aborted_read.__doc__ or "",
    "NoHangingTransaction": props.eos_no_hanging_transaction.__doc__ or "",
    "PerPartitionOrder": props.eos_per_partition_order.__doc__ or "",
    "NoZombieWrite": props.eos_no_zombie_write.__doc__ or "",
    "OutOfOrderOnlyOnLoss": props.eos_out_of_order_only_on_loss.__doc__ or "",
    "FencedGetsFencingError": props.eos_fenced_gets_fencing_error.__doc__ or "",
    "EpochInRange": props.eos_epoch_in_range.__doc__ or "",
    "ValidTxnTransitions": "the transaction coordinator only makes transitions Kafka's state table allows",
}


def build(switches: Mapping[str, Any], bounds: Mapping[str, int]) -> EosMachine:
    return EosMachine(from_switches({k: v for k, v in switches.items() if k in DECISIONS}), bounds)

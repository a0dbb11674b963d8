"""Machine ``kafka.init_producer_id``: producer instances sharing one transactional id, its
transaction coordinator (InitProducerId, the transaction log, failover, transactional-id expiry,
fencing of an open transaction) and the producer id allocator.

The InitProducerId success is a transition to Empty whose ``__transaction_state`` append is its own
step (``CompleteAppend``): meanwhile the metadata has a pending state and other requests get
CONCURRENT_TRANSACTIONS; a coordinator failover drops the pending append. Responses may be lost;
the client then times out and retries with the same producer id and epoch. Requests may be
processed in any order (an old attempt can still arrive after a retry). AddPartitionsToTxn and
EndTxn are atomic request/response steps using the part-2 rules (``model.transactions``).

The KIP-360 abortable error (``AbortableError``, kafka-semantics.md §2.6) happens only inside a
transaction (IN_TXN, after a successful AddPartitionsToTxn: a failed batch): the client's
EndTxn(ABORT, pid, epoch) is processed in the same step, and only if it succeeds is
InitProducerId(pid, epoch) queued as a separate request; a fenced abort makes the client fenced.
INVALID_PRODUCER_ID_MAPPING on AddPartitionsToTxn/EndTxn skips the abort and sends
InitProducerId(pid, epoch) directly. Each abortable error therefore needs a transaction
(``transactions`` bound) as well as an ``abortable_errors`` unit.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from eoscheck.checker.liveness.temporal import WF, Fairness, TemporalProperty, leads_to
from eoscheck.checker.machine import Machine, Property
from eoscheck.checker.ops import CONCRETE

from .. import properties as props
from ..coordinator.handler import (
    CoordinatorConfig,
    complete_transaction,
    handle_init_producer_id,
    transaction_transition,
)
from ..coordinator.txn_log import NO_LOG_VALUE, NO_METADATA, load_metadata, to_log_value
from ..errors import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, Errors, error_name
from ..network import remove_at
from ..producer import txn_client as tc
from ..state import (
    CLIENT_PHASE_NAMES,
    INIT_IDLE,
    INIT_IN_TXN,
    INIT_INITIALIZING,
    INIT_READY,
    InitPidFaults,
    InitPidResponse,
    InitPidState,
    PendingAppend,
    TxnClient,
    TxnMetadata,
)
from ..transactions.add_partitions import add_partitions_error
from ..transactions.codes import NO_PENDING, TxnResult, TxnState
from ..transactions.end_txn import end_txn_decision
from ..transactions.states import EXPIRATION_ALLOWED
from . import init_pid_symmetry
from .pure_rule import PureRule

PROPERTY_DOCS: dict[str, str] = {
    "UniqueProducerIdEpoch": props.unique_producer_id_epoch.__doc__ or "",
    "CoordinatorEpochMonotonic": props.coordinator_epoch_monotonic.__doc__ or "",
    "SoleInstanceNeverFenced": props.sole_instance_never_fenced.__doc__ or "",
    "NewestInstanceNeverFenced": props.newest_instance_never_fenced.__doc__ or "",
    "NoUnexpectedServerError": props.no_unexpected_server_error.__doc__ or "",
    "CoordinatorLegalState": props.coordinator_legal_state.__doc__ or "",
}

#: liveness properties (checked when a spec names them), under ``FAIRNESS``
TEMPORAL_DOCS: dict[str, str] = {
    "InitEventuallyCompletes": props.init_settled.__doc__ or "",
}

#: The coordinator handles every request it holds, completes its log appends and transactions; the
#: network delivers responses; a client whose request went unanswered times out and resends; a client in a
#: transaction eventually ends it. Starting, restarting, errors inside a transaction, lost responses,
#: failovers and expiry may happen, never must.
FAIRNESS: tuple[Fairness, ...] = tuple(WF(a) for a in (
    "HandleInitProducerId", "CompleteAppend", "HandleInitProducerIdResponse", "RequestTimeout",
    "CompleteTransaction", "EndTxn"))

_MODES = {"pre-kip360": (False, False), "kip360-designed": (True, False), "kip360-shipped": (True, True)}


class InitProducerIdMachine(Machine):
    actions: Mapping[str, tuple[str, ...]] = {
        "StartInstance": ("client",),
        "RestartInstance": ("client",),
        "AbortableError": ("client", "error"),
        "HandleInitProducerId": ("client", "attempt", "producer_id", "epoch", "error"),
        "CompleteAppend": ("client", "producer_id", "epoch"),
        "HandleInitProducerIdResponse": ("client", "attempt", "error"),
        "LoseResponse": ("client", "attempt"),
        "RequestTimeout": ("client",),
        "CoordinatorFailover": (),
        "ExpireTransactionalId": (),
        "AddPartitionsToTxn": ("client", "error"),
        "EndTxn": ("client", "error"),
        "CompleteTransaction": (),
    }
    # Every leaf is a bool in a bool field or a small int (counters, ids, epochs, offsets; -1 is the
    # only negative value): the domain where ``hash`` is injective (``checker.fingerprint``),
    # checked over whole reachable spaces by tests/test_fingerprint.py.
    fingerprint_kind = "hash"

    def __init__(self, switches: Mapping[str, Any], bounds: Mapping[str, int]) -> None:
        kip360, shipped = _MODES[str(switches["init_producer_id"])]
        self.cfg = CoordinatorConfig(kip360=kip360, shipped=shipped, max_epoch=bounds["max_epoch"],
                                     persist_last_epoch=bool(switches["persist_last_epoch"]),
                                     persist_prev_producer_id=bool(switches["persist_prev_producer_id"]),
                                     prev_pid_every_transition=switches.get("previous_producer_id_update",
                                                                            "scala") == "every-transition")
        self.n_clients = bounds["clients"]
        self.max_pids = bounds["new_producer_ids"]
        self.limits = InitPidFaults(lost_responses=bounds["lost_responses"], failovers=bounds["failovers"],
                                    abortable_errors=bounds["abortable_errors"], restarts=bounds["restarts"],
                                    expirations=bounds["expirations"], transactions=bounds["transactions"])
        if self.n_clients > 1:
            self.symmetry = init_pid_symmetry.slot_symmetry(self.n_clients)
        # The coordinator's rules are pure functions of a few values (the metadata, the request's
        # pair, the allocator) that recur in most states: each distinct call is computed once.
        self._handle_init_producer_id = PureRule(handle_init_producer_id, cfg=self.cfg)
        self._to_log_value = PureRule(to_log_value, persist_last_epoch=self.cfg.persist_last_epoch,
                                      persist_prev_producer_id=self.cfg.persist_prev_producer_id)

    def init_states(self) -> Iterator[InitPidState]:
        idle = TxnClient(INIT_IDLE, -1, -1, 0, -1, -1, 0)
        yield InitPidState(next_producer_id=0, metadata=NO_METADATA, txn_log=NO_LOG_VALUE, pending=(),
                           clients=(idle,) * self.n_clients, requests=(), responses=(),
                           faults=InitPidFaults(0, 0, 0, 0, 0, 0))

    def has_symmetry(self) -> bool:
        return self.n_clients > 1

    def disabled_actions(self) -> frozenset[str]:
        """Fault actions whose budget is 0 (RequestTimeout follows a lost response), transactions
        when there are none, and the abortable error without a KIP-360 client (it needs both)."""
        budgets = {"RestartInstance": "restarts", "AbortableError": "abortable_errors",
                   "LoseResponse": "lost_responses", "RequestTimeout": "lost_responses",
                   "CoordinatorFailover": "failovers", "ExpireTransactionalId": "expirations",
                   "AddPartitionsToTxn": "transactions", "EndTxn": "transactions",
                   "CompleteTransaction": "transactions"}
        off = {a for a, b in budgets.items() if getattr(self.limits, b) == 0}
        if not self.cfg.kip360:
            off.add("AbortableError")
        return frozenset(off)

    def canonical(self, s: InitPidState) -> InitPidState:
        """The instance slots are interchangeable (``init_pid_symmetry``)."""
        return init_pid_symmetry.canonical(s) if self.n_clients > 1 else s

    def within_bounds(self, s: InitPidState) -> bool:
        return s.next_producer_id <= self.max_pids

    def is_terminal(self, s: InitPidState) -> bool:
        return not s.requests and not s.responses and not s.pending and all(
            c.phase != INIT_INITIALIZING for c in s.clients)

    def properties(self) -> dict[str, Property]:
        def p(name: str, kind: str, check: Any) -> Property:
            return Property(name, PROPERTY_DOCS[name], kind, check)  # type: ignore[arg-type]
        return {
            "UniqueProducerIdEpoch": p("UniqueProducerIdEpoch", "invariant", props.unique_producer_id_epoch),
            "CoordinatorEpochMonotonic": p("CoordinatorEpochMonotonic", "transition",
                                           props.coordinator_epoch_monotonic_within(self.cfg.max_epoch)),
            "SoleInstanceNeverFenced": p("SoleInstanceNeverFenced", "invariant", props.sole_instance_never_fenced),
            "NewestInstanceNeverFenced": p("NewestInstanceNeverFenced", "invariant",
                                           props.newest_instance_never_fenced),
            "NoUnexpectedServerError": p("NoUnexpectedServerError", "transition", props.no_unexpected_server_error),
            "CoordinatorLegalState": p("CoordinatorLegalState", "transition", props.coordinator_legal_state),
        }

    def temporal_properties(self) -> dict[str, TemporalProperty]:
        return {"InitEventuallyCompletes": leads_to("InitEventuallyCompletes", TEMPORAL_DOCS["InitEventuallyCompletes"],
                                                    props.init_pending, props.init_settled)}

    def fairness(self) -> tuple[Fairness, ...]:
        return FAIRNESS

    # --- helpers ---------------------------------------------------------------------------------

    def _transition(self, meta: TxnMetadata, state: TxnState) -> TxnMetadata:
        return transaction_transition(meta, state, every_transition=self.cfg.shipped and self.cfg.prev_pid_every_transition)

    def _persist(self, meta: TxnMetadata) -> Any:
        return self._to_log_value(meta)

    @staticmethod
    def _with_client(s: InitPidState, c: int, client: TxnClient, **changes: Any) -> InitPidState:
        return s._replace(clients=s.clients[:c] + (client,) + s.clients[c + 1:], **changes)

    def _spend(self, s: InitPidState, fault: str) -> InitPidFaults | None:
        used = getattr(s.faults, fault)
        if used >= getattr(self.limits, fault):
            return None
        return s.faults._replace(**{fault: used + 1})

    # --- transitions -----------------------------------------------------------------------------

    def successors(self, s: InitPidState) -> Iterator[tuple[tuple, InitPidState]]:
        yield from self._client_steps(s)
        yield from self._coordinator_steps(s)
        yield from self._network_steps(s)

    def _client_steps(self, s: InitPidState) -> Iterator[tuple[tuple, InitPidState]]:
        for c, client in enumerate(s.clients):
            if client.phase == INIT_IDLE and not client.started:
                new, req = tc.begin_init(client, c, -1, -1, new_instance=True)
                yield ("StartInstance", c), self._with_client(s, c, new, requests=s.requests + (req,))
            elif client.started:
                faults = self._spend(s, "restarts")
                if faults is not None:
                    fresh = client._replace(producer_id=-1, epoch=-1)
                    new, req = tc.begin_init(fresh, c, -1, -1, new_instance=True)
                    yield ("RestartInstance", c), self._with_client(s, c, new, requests=s.requests + (req,),
                                                                    faults=faults)
            if client.phase == INIT_READY:
                faults = self._spend(s, "transactions")
                if faults is not None:
                    yield from self._add_partitions(s._replace(faults=faults), c, client)
            elif client.phase == INIT_IN_TXN:
                yield from self._end_txn(s, c, client)
                if self.cfg.kip360:
                    faults = self._spend(s, "abortable_errors")
                    if faults is not None:
                        yield from self._end_txn(s._replace(faults=faults), c, client, abort=True)
            if client.phase == INIT_INITIALIZING:
                attempt = client.attempt
                busy = (any(r.client == c and r.attempt == attempt for r in s.requests)
                        or any(r.client == c and r.attempt == attempt for r in s.responses)
                        or any(p.client == c and p.attempt == attempt for p in s.pending))
                if not busy:
                    new, req = tc.resend(client, c, new_connection=True)
                    yield ("RequestTimeout", c), self._with_client(s, c, new, requests=s.requests + (req,))

    def _txn_error_reaction(self, s: InitPidState, c: int, client: TxnClient, error: int) -> tuple[TxnClient, Any]:
        return tc.on_txn_error(client, c, error, kip360=self.cfg.kip360)

    def _add_partitions(self, s: InitPidState, c: int, client: TxnClient) -> Iterator[tuple[tuple, InitPidState]]:
        meta = s.metadata
        error = int(add_partitions_error(
            CONCRETE, meta_exists=meta.exists, meta_producer_id=meta.producer_id, meta_epoch=meta.epoch,
            meta_state=meta.state, meta_pending=int(TxnState.EMPTY) if s.pending else NO_PENDING,
            req_producer_id=client.producer_id, req_epoch=client.epoch))
        if error == Errors.CONCURRENT_TRANSACTIONS:
            return  # the client retries later; nothing changes
        if error == Errors.NONE:
            new_meta = self._transition(meta, TxnState.ONGOING)
            yield ("AddPartitionsToTxn", c, error), self._with_client(
                s, c, client._replace(phase=INIT_IN_TXN), metadata=new_meta, txn_log=self._persist(new_meta))
            return
        new, req = self._txn_error_reaction(s, c, client, error)
        requests = s.requests + (req,) if req is not None else s.requests
        yield ("AddPartitionsToTxn", c, error), self._with_client(s, c, new, requests=requests)

    def _end_txn(self, s: InitPidState, c: int, client: TxnClient,
                 abort: bool = False) -> Iterator[tuple[tuple, InitPidState]]:
        """EndTxn(COMMIT) from IN_TXN, or with ``abort`` the KIP-360 abortable error (a failed batch
        with epochBumpRequired, kafka-semantics.md §2.6): the user's abortTransaction() sends
        EndTxn(ABORT, pid, epoch) and only on its success InitProducerId(pid, epoch) (a separate,
        queued request). A fenced EndTxn(ABORT) is fatal (PRODUCER_FENCED); INVALID_PRODUCER_ID_MAPPING
        goes straight to InitProducerId (``_txn_error_reaction``)."""
        name = "AbortableError" if abort else "EndTxn"
        meta = s.metadata
        d = end_txn_decision(CONCRETE, is_from_client=True, meta_exists=meta.exists,
                             meta_producer_id=meta.producer_id, meta_epoch=meta.epoch, meta_state=meta.state,
                             meta_pending=int(TxnState.EMPTY) if s.pending else NO_PENDING,
                             req_producer_id=client.producer_id, req_epoch=client.epoch,
                             req_result=int(TxnResult.ABORT if abort else TxnResult.COMMIT))
        error = int(d.error)
        if error == Errors.CONCURRENT_TRANSACTIONS:
            return
        if error == Errors.NONE:
            new_meta = self._transition(meta, TxnState(int(d.next_state))) if d.next_state != meta.state else meta
            requests = s.requests
            if abort:  # the epoch bump: InitProducerId(pid, epoch) after the successful abort
                new, req = tc.begin_init(client, c, client.producer_id, client.epoch)
                requests = requests + (req,)
            else:
                new = client._replace(phase=INIT_READY)
            yield (name, c, error), self._with_client(s, c, new, metadata=new_meta, txn_log=self._persist(new_meta),
                                                      requests=requests)
            return
        new, req = self._txn_error_reaction(s, c, client, error)
        requests = s.requests + (req,) if req is not None else s.requests
        yield (name, c, error), self._with_client(s, c, new, requests=requests)

    @staticmethod
    def _arrived(s: InitPidState, c: int, req_producer_id: int) -> tuple[TxnClient, ...]:
        """Ghost bookkeeping: the coordinator handles an InitProducerId without producer id/epoch,
        i.e. from an instance announcing itself as new (a first call or its retry): that instance is
        now the newest one. (Requests carry no instance identity, so a dead predecessor's delayed
        request counts for the slot's current instance: check NewestInstanceNeverFenced without
        restarts.)"""
        if req_producer_id != -1:
            return s.clients
        order = max(max(o.started for o in s.clients), 0) + 1
        clients = s.clients[:c] + (s.clients[c]._replace(started=order),) + s.clients[c + 1:]
        # only the relative order matters: renumber 1..n so the ghost stays bounded
        ranks = {v: r + 1 for r, v in enumerate(sorted({o.started for o in clients if o.started > 0}))}
        return tuple(o._replace(started=ranks[o.started]) if o.started > 0 else o for o in clients)

    def _coordinator_steps(self, s: InitPidState) -> Iterator[tuple[tuple, InitPidState]]:
        meta = s.metadata
        for i, req in enumerate(s.requests):
            s_req = s._replace(clients=self._arrived(s, req.client, req.producer_id))
            result = self._handle_init_producer_id(meta, bool(s.pending), req.producer_id, req.epoch,
                                                   s.next_producer_id)
            rest = remove_at(s.requests, i)
            step = ("HandleInitProducerId", req.client, req.attempt, req.producer_id, req.epoch, int(result.error))
            next_pid = s.next_producer_id + (1 if result.used_new_producer_id else 0)
            if result.transit is not None:
                yield step, s_req._replace(requests=rest, next_producer_id=next_pid,
                                       pending=(PendingAppend(req.client, req.attempt, result.transit),))
            else:
                new_meta = result.fenced if result.fenced is not None else meta
                # an error answer carries no producer id and epoch (Kafka's initTransactionError: -1, -1)
                resp = InitPidResponse(req.client, req.attempt, int(result.error), NO_PRODUCER_ID, NO_PRODUCER_EPOCH)
                changes: dict[str, Any] = {}
                if result.fenced is not None:
                    changes = {"metadata": new_meta, "txn_log": self._persist(new_meta)}
                yield step, s_req._replace(requests=rest, responses=s.responses + (resp,), next_producer_id=next_pid,
                                       **changes)
        if s.pending:
            p = s.pending[0]
            t = p.metadata
            resp = InitPidResponse(p.client, p.attempt, int(Errors.NONE), t.producer_id, t.epoch)
            yield ("CompleteAppend", p.client, t.producer_id, t.epoch), s._replace(
                metadata=t, txn_log=self._persist(t), pending=(), responses=s.responses + (resp,))
        if meta.exists and not s.pending and meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            done = complete_transaction(meta, shipped=self.cfg.shipped and self.cfg.prev_pid_every_transition)
            yield ("CompleteTransaction",), s._replace(metadata=done, txn_log=self._persist(done))
        faults = self._spend(s, "failovers")
        if faults is not None:
            yield ("CoordinatorFailover",), s._replace(metadata=load_metadata(s.txn_log), pending=(), faults=faults)
        if meta.exists and not s.pending and meta.state in EXPIRATION_ALLOWED:
            faults = self._spend(s, "expirations")
            if faults is not None:
                yield ("ExpireTransactionalId",), s._replace(metadata=NO_METADATA, txn_log=NO_LOG_VALUE,
                                                              faults=faults)

    def _network_steps(self, s: InitPidState) -> Iterator[tuple[tuple, InitPidState]]:
        for i, resp in enumerate(s.responses):
            c = resp.client
            client = s.clients[c]
            rest = remove_at(s.responses, i)
            step = ("HandleInitProducerIdResponse", c, resp.attempt, resp.error)
            if client.phase != INIT_INITIALIZING or resp.attempt != client.attempt:
                yield step, s._replace(responses=rest)  # a stale response: its connection is gone
                continue
            new = tc.on_init_response(client, resp.error, resp.producer_id, resp.epoch)
            if new is None:
                new, req = tc.resend(client, c, new_connection=False)
                yield step, self._with_client(s, c, new, responses=rest, requests=s.requests + (req,))
            else:
                yield step, self._with_client(s, c, new, responses=rest)
        faults = self._spend(s, "lost_responses")
        if faults is not None:
            for i, resp in enumerate(s.responses):
                yield ("LoseResponse", resp.client, resp.attempt), s._replace(
                    responses=remove_at(s.responses, i), faults=faults)

    # --- presentation ----------------------------------------------------------------------------

    def format_step(self, step: tuple) -> str:
        name = step[0]
        if name == "HandleInitProducerId":
            _, c, attempt, pid, epoch, err = step
            return (f"HandleInitProducerId(client={c}, attempt={attempt}, producerId={pid}, epoch={epoch}) "
                    f"-> {error_name(err)}")
        if name in ("HandleInitProducerIdResponse",):
            _, c, attempt, err = step
            return f"{name}(client={c}, attempt={attempt}, {error_name(err)})"
        if name in ("AddPartitionsToTxn", "EndTxn"):
            return f"{name}(client={step[1]}) -> {error_name(step[2])}"
        if name == "AbortableError":
            then = ", then InitProducerId(producerId, epoch) sent" if step[2] == Errors.NONE else ""
            return f"AbortableError(client={step[1]}): failed batch, EndTxn(ABORT) -> {error_name(step[2])}{then}"
        return super().format_step(step)

    def chart_step(self, step: tuple, before: InitPidState, after: InitPidState) -> Any:
        from .init_pid_chart import chart_step
        return chart_step(self, step, before, after)

    def chart_lanes(self) -> list[str]:
        from .init_pid_chart import lanes
        return lanes(self.n_clients)

    def itf_fields(self, s: InitPidState) -> dict[str, Any]:
        from .itf_data import init_pid_fields
        return init_pid_fields(self, s)

    def fields(self, s: InitPidState) -> dict[str, Any]:
        m, log = s.metadata, s.txn_log
        out: dict[str, Any] = {
            "allocator.next_producer_id": s.next_producer_id,
            "coordinator.metadata": (f"producerId {m.producer_id}, epoch {m.epoch}, lastProducerEpoch {m.last_epoch}, "
                                     f"previousProducerId {m.prev_producer_id}, {TxnState(m.state).name}"
                                     if m.exists else "none"),
            "coordinator.pending": [f"{TxnState(p.metadata.state).name} producerId {p.metadata.producer_id} epoch "
                                    f"{p.metadata.epoch} lastProducerEpoch {p.metadata.last_epoch} (for client "
                                    f"{p.client})" for p in s.pending],
            "txn_log.record": (f"producerId {log.producer_id}, epoch {log.epoch}, lastProducerEpoch {log.last_epoch}, "
                               f"previousProducerId {log.prev_producer_id}, {TxnState(log.state).name}"
                               if log.exists else "none"),
        }
        for c, client in enumerate(s.clients):
            p = f"client[{c}]."
            out[p + "phase"] = CLIENT_PHASE_NAMES[client.phase]
            out[p + "instance"] = client.started
            out[p + "producer_id"] = client.producer_id
            out[p + "epoch"] = client.epoch
            out[p + "attempt"] = client.attempt
            out[p + "request"] = f"InitProducerId(producerId {client.req_producer_id}, epoch {client.req_epoch})"
        out["network.requests"] = [f"InitProducerId(client{r.client}, attempt {r.attempt}, producerId {r.producer_id}, "
                                   f"epoch {r.epoch})" for r in s.requests]
        out["network.responses"] = [f"InitProducerIdResponse(client{r.client}, attempt {r.attempt}, "
                                    f"{error_name(r.error)}, producerId {r.producer_id}, epoch {r.epoch})"
                                    for r in s.responses]
        for name in InitPidFaults._fields:
            out[f"faults.{name}"] = getattr(s.faults, name)
        return out

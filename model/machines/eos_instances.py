"""``kafka.eos``'s producer instances: several instances of one more transactional id race
InitProducerId against the coordinator (KIP-360 cases 1a-2c), with retries carrying their
(producerId, epoch), lost responses, transactions without data (AddPartitionsToTxn, EndTxn, the
abortable error of KIP-360), coordinator failover, transactional-id expiry, epoch overflow and
producer-id rotation. A mixin of ``EosMachine``: compose collects its parts and rules over the MRO.

The mechanism is on with ``instances`` > 0 and off (no bindings, no actions, no fields) with 0. Its
transactional id is one beside the data producers' (``instances_txn``, ``instances_txn_log``); it
shares the coordinator's producer id allocator, its failovers (``TxnCoordinatorFailover`` drops the
pending append) and the ``restarts`` and ``lost_responses`` budgets with the rest of the machine.

Unlike ``EosMachine.init_producer_id`` (atomic with its answer), InitProducerId here is a request
on an unordered network: the coordinator's success is a transition to Empty whose
``__transaction_state`` append completes as its own step (``CompleteAppend``; meanwhile other
requests get CONCURRENT_TRANSACTIONS), and the response may be lost, after which the client times
out and retries with the same producer id and epoch on a new connection. The decisions are the
rooms': ``coordinator.handler`` (InitProducerId, the transaction transitions, completion),
``transactions`` (AddPartitionsToTxn's and EndTxn's checks, what may expire) and
``producer.txn_client`` (the client's reactions). Which instance is the newest is a ghost
(``TxnClient.started``), kept here because only the properties read it.

This is the machine ``kafka.init_producer_id`` modelled; its preset (``preset_init_pid``) runs
that machine's specs on ``kafka.eos``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, NamedTuple, cast

from eoscheck.checker.compose import (
    Actors,
    Budget,
    Channel,
    Delivery,
    Network,
    Part,
    Projection,
    invariant,
    precondition,
    rule,
    transition,
)
from eoscheck.checker.liveness.temporal import WF, Fairness, TemporalProperty, leads_to
from eoscheck.checker.ops import CONCRETE

from .. import properties as props
from ..coordinator.handler import (
    complete_transaction,
    handle_init_producer_id,
    transaction_transition,
)
from ..coordinator.txn_log import NO_LOG_VALUE, NO_METADATA, to_log_value
from ..errors import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, Errors, error_name
from ..producer import txn_client as tc
from ..state import (
    CLIENT_PHASE_NAMES,
    INIT_IDLE,
    INIT_IN_TXN,
    INIT_INITIALIZING,
    INIT_READY,
    InitPidRequest,
    InitPidResponse,
    PendingAppend,
    TxnClient,
    TxnLogValue,
    TxnMetadata,
)
from ..transactions.add_partitions import add_partitions_error
from ..transactions.codes import NO_PENDING, TxnResult, TxnState
from ..transactions.end_txn import end_txn_decision
from ..transactions.states import EXPIRATION_ALLOWED

#: the bounds of the mechanism (kafka.eos names); ``instances`` = 0 switches it off
BOUND_NAMES = ("instances", "abortable_errors", "instance_transactions", "txn_id_expirations")
#: the mechanism's parts (hidden from ``fields`` while it is off)
PARTS = ("instance", "instances_txn", "instances_txn_log", "init_pending", "init_requests", "init_responses",
         "abortable_errors", "instance_transactions", "txn_id_expirations")
#: its actions
ACTIONS = frozenset({"StartInstance", "RestartInstance", "InstanceAddPartitionsToTxn", "InstanceEndTxn",
                     "AbortableError", "InitProducerIdTimeout", "HandleInitProducerId", "CompleteAppend",
                     "HandleInitProducerIdResponse", "LoseInitProducerIdResponse", "CompleteTransaction",
                     "ExpireTransactionalId", "InstanceFenceAppendFails"})
#: the steps that change the instances' transactional id's metadata or its log record
COORDINATOR_ACTIONS = ("HandleInitProducerId", "InstanceFenceAppendFails", "CompleteAppend", "CompleteTransaction", "InstanceAddPartitionsToTxn",
                       "InstanceEndTxn", "AbortableError", "TxnCoordinatorFailover", "ExpireTransactionalId")


#: the instances' parts on the chart's lanes (``checker.compose.chart``): the coordinator's, and one per instance
INSTANCE_CHART_PARTS = {"instance": "instance[]", "instances_txn": "txn coordinator",
                        "instances_txn_log": "txn coordinator", "init_pending": "txn coordinator"}

IDLE = TxnClient(INIT_IDLE, -1, -1, 0, -1, -1, 0)

#: The coordinator handles every request it holds, completes its log appends and transactions; the
#: network delivers responses; a client whose request went unanswered times out and resends; a client
#: in a transaction eventually ends it. Starting, restarting, errors, lost responses, failovers and
#: expiry may happen, never must (``kafka.init_producer_id``'s fairness under kafka.eos's action names).
FAIRNESS: tuple[Fairness, ...] = tuple(WF(a) for a in (
    "HandleInitProducerId", "CompleteAppend", "HandleInitProducerIdResponse", "InitProducerIdTimeout",
    "CompleteTransaction", "InstanceEndTxn"))


#: the liveness property (checked when a spec names it)
TEMPORAL_DOCS: dict[str, str] = {"InitEventuallyCompletes": props.init_settled.__doc__ or ""}
#: ``fields`` keys of the mechanism's non-actor parts, hidden while it is off
_HIDDEN = frozenset({"instances_txn", "instances_txn_log", "init_pending", "init_requests", "init_responses",
                     "faults.abortable_errors", "faults.instance_transactions", "faults.txn_id_expirations"})
#: ``fields`` prefixes of the data mechanisms, constant (hidden) without data producers
_DATA = ("leader[", "offsets_leader", "group", "requests", "responses", "stale_markers", "now",
         "faults.produce_timeouts", "faults.txn_timeouts", "faults.delete_records")


def _doc_of(check: Any) -> Any:
    """Give a property method the doc of the ``model.properties`` function it applies (its one line)."""
    def mark(fn: Any) -> Any:
        fn.__doc__ = check.__doc__
        return fn
    return mark


class _Restarts(NamedTuple):
    restarts: int


class InstancesView(NamedTuple):
    """The instances' parts under ``kafka.init_producer_id``'s state names, for its properties
    (``model.properties`` takes them so)."""

    clients: tuple[TxnClient, ...]
    metadata: TxnMetadata
    txn_log: TxnLogValue
    faults: _Restarts


def _rename_client(messages: tuple, perm: tuple[int, ...]) -> tuple:
    """Messages and pending appends name their instance first (``client``)."""
    return tuple(m._replace(client=perm[m.client]) for m in messages)


def _tx_steps(machine: Any) -> range:
    """The instances that may begin transactions (a binding only with a transaction budget)."""
    return range(machine.n_instances) if machine.bounds.get("instance_transactions", 0) else range(0)


def _kip360_instances(machine: Any) -> range:
    """The abortable error needs a KIP-360 client (it re-initialises with its pair)."""
    return _tx_steps(machine) if machine.coordinator.kip360 else range(0)


def _coordinator_on(machine: Any) -> tuple[int, ...]:
    return (0,) if machine.n_instances else ()


def _show_client(c: TxnClient) -> dict[str, Any]:
    return {"phase": CLIENT_PHASE_NAMES[c.phase], "instance": c.started, "producer_id": c.producer_id,
            "epoch": c.epoch, "attempt": c.attempt,
            "request": f"InitProducerId(producerId {c.req_producer_id}, epoch {c.req_epoch})"}


def _show_meta(m: TxnMetadata | TxnLogValue) -> str:
    if not m.exists:
        return "none"
    return (f"producerId {m.producer_id}, epoch {m.epoch}, lastProducerEpoch {m.last_epoch}, previousProducerId "
            f"{m.prev_producer_id}, {TxnState(m.state).name}")


def _show_requests(rs: tuple[InitPidRequest, ...]) -> list[str]:
    return [f"InitProducerId(instance {r.client}, attempt {r.attempt}, producerId {r.producer_id}, epoch {r.epoch})"
            for r in rs]


def _show_responses(rs: tuple[InitPidResponse, ...]) -> list[str]:
    return [f"InitProducerIdResponse(instance {r.client}, attempt {r.attempt}, {error_name(r.error)}, producerId "
            f"{r.producer_id}, epoch {r.epoch})" for r in rs]


def _show_pending(ps: tuple[PendingAppend, ...]) -> list[str]:
    return [f"{TxnState(p.metadata.state).name} producerId {p.metadata.producer_id} epoch {p.metadata.epoch} "
            f"lastProducerEpoch {p.metadata.last_epoch} (for instance {p.client})" for p in ps]


def arrived(clients: tuple[TxnClient, ...], c: int, req_producer_id: int) -> tuple[TxnClient, ...]:
    """Ghost bookkeeping: the coordinator handles an InitProducerId without producer id/epoch, i.e.
    from an instance announcing itself as new (a first call or its retry): that instance is now the
    newest one. Requests carry no instance identity, so a dead predecessor's delayed request counts
    for the slot's current instance (check NewestInstanceNeverFenced without restarts). Only the
    relative order matters: ranks are renumbered 1..n so the ghost stays bounded."""
    if req_producer_id != -1:
        return clients
    order = max(max(o.started for o in clients), 0) + 1
    clients = clients[:c] + (clients[c]._replace(started=order),) + clients[c + 1:]
    ranks = {v: r + 1 for r, v in enumerate(sorted({o.started for o in clients if o.started > 0}))}
    return tuple(o._replace(started=ranks[o.started]) if o.started > 0 else o for o in clients)


def arrived_ranks(started: tuple[int, ...], c: int) -> tuple[int, ...]:
    """``arrived`` on the instances' ``started`` ranks alone (what HandleInitProducerId reads and
    writes of them, through the ``started`` projection): instance ``c`` is now the newest one."""
    order = max(max(started), 0) + 1
    started = started[:c] + (order,) + started[c + 1:]
    ranks = {v: r + 1 for r, v in enumerate(sorted({o for o in started if o > 0}))}
    return tuple(ranks[o] if o > 0 else o for o in started)


def _started(c: TxnClient) -> int:
    return c.started


def _with_started(c: TxnClient, started: int) -> TxnClient:
    return c if c.started == started else c._replace(started=started)


def _later_attempt_first(c: TxnClient) -> int:
    """The instances' canonical order (``Actors.order``): the one further in its InitProducerId attempts
    first. A BFS takes instance 0's steps before instance 1's, so the state it keeps of an orbit is
    mostly the one where instance 0 is further: ordered so, 79% of kafka.init_producer_id's successors
    are their own canonical form (58% by id alone), and the others cost a renamed image each."""
    return -c.attempt


def _waiting(messages: tuple[InitPidRequest | InitPidResponse | PendingAppend, ...]) -> tuple[tuple[int, int], ...]:
    """Per instance with a message here, the latest attempt a channel or the pending append holds, as
    (instance, attempt) pairs: all InitProducerIdTimeout asks of them (their producer ids, epochs and
    errors, and the older attempts beside the latest, moving cost it no miss). An instance's attempt
    only grows (``txn_client.begin_init`` and ``resend``) and a message carries the attempt it was sent
    in, so its current attempt is in flight exactly when it is the latest one here."""
    latest: dict[int, int] = {}
    for m in messages:
        if latest.get(m.client, -1) < m.attempt:
            latest[m.client] = m.attempt
    return tuple(sorted(latest.items()))


def _retry(c: TxnClient) -> TxnClient:
    """What InitProducerIdTimeout reads and writes of its instance (``txn_client.resend``: the attempt
    and the request's producer id and epoch), the other fields set as IDLE's: a written projection,
    so the instance's phase (its gate reads it whole), held producer id, epoch and ``started`` rank
    moving cost it no miss."""
    return IDLE._replace(attempt=c.attempt, req_producer_id=c.req_producer_id, req_epoch=c.req_epoch)


def _with_retry(c: TxnClient, r: TxnClient) -> TxnClient:
    return c._replace(attempt=r.attempt, req_producer_id=r.req_producer_id, req_epoch=r.req_epoch)


def _held(c: TxnClient) -> tuple[int, int] | tuple[()]:
    """The (producer id, epoch) an instance holds (ready or in a transaction; () if none): all
    UniqueProducerIdEpoch asks of it (its attempts, requests and ``started`` rank moving cost it no miss)."""
    return (c.producer_id, c.epoch) if c.phase in (INIT_READY, INIT_IN_TXN) else ()


def _busy(pending: tuple[PendingAppend, ...]) -> bool:
    """Whether an InitProducerId transition is being appended: all the coordinator's other handlers
    ask of ``init_pending`` (its transition and instance moving cost them no miss)."""
    return bool(pending)


# HandleInitProducerId reads the instances only for ``arrived`` (their ``started`` ranks, a written
# projection), while the coordinator's decision and the ghost's renumbering take few distinct
# arguments: both are pure and memoised (bounded: a miss of the rule then costs a dict lookup, not the
# decision's case analysis).
_decide = lru_cache(maxsize=1 << 16)(handle_init_producer_id)
_arrived = lru_cache(maxsize=1 << 16)(arrived_ranks)
#: what the coordinator's handlers read only for a request without producer id/epoch (``read_if``)
_FRESH_READS = {"instance": lambda producer_id: producer_id == -1}


def _arrives(started: tuple[int, ...], client: int) -> tuple[int, ...]:
    """HandleInitProducerId's write of the ``started`` ranks (``arrived``), computed apart from its
    effect (``rule``'s ``passed``): the effect decides nothing on them."""
    return _arrived(started, client)


class InstancesMixin:
    """The parts, rules and properties of producer instances racing InitProducerId (module doc).
    ``EosMachine`` calls ``_instances_setup`` before compiling and ``_instances_idle`` after."""

    n_instances: int
    bounds: dict[str, int]
    coordinator: Any
    protocol: Any
    #: ``EosMachine.txn_errors``: canBumpEpoch and KAFKA-18019, the client's table switches
    txn_errors: dict[str, bool]
    #: ``FailedFenceAppends.failed_fence``: the metadata a fence-abort with a failed append leaves
    failed_fence: Callable[[TxnMetadata], TxnMetadata]

    instance = Actors(count="instances", init=IDLE, symmetric="instance", show=_show_client, order=_later_attempt_first,
                      projections={"started": Projection(_started, _with_started), "held": _held,
                                   "retry": Projection(_retry, _with_retry)},
                      doc="producer instances sharing the instances' transactional id")
    instances_txn = Part(init=NO_METADATA, show=_show_meta,
                         doc="the coordinator's metadata of the instances' transactional id")
    instances_txn_log = Part(init=NO_LOG_VALUE, show=_show_meta,
                             doc="the last __transaction_state record of the instances' transactional id")
    init_pending = Part(init=(), show=_show_pending, rename={"instance": _rename_client},
                        projections={"waiting": _waiting, "busy": _busy},
                        doc="the InitProducerId transition being appended to the transaction log (one at most)")
    init_requests = Channel(network=Network(Delivery.UNORDERED), show=_show_requests,
                            rename={"instance": _rename_client}, projections={"waiting": _waiting}, doc="InitProducerId requests in flight")
    init_responses = Channel(network=Network(Delivery.UNORDERED, loss="lost_responses"), label=("client", "attempt"),
                             drop="LoseInitProducerIdResponse", show=_show_responses,
                             rename={"instance": _rename_client}, projections={"waiting": _waiting},
                             doc="InitProducerId responses in flight")
    abortable_errors = Budget("abortable_errors", doc="abortable errors inside an instance's transaction")
    instance_transactions = Budget("instance_transactions", doc="transactions the instances begin in total")
    txn_id_expirations = Budget("txn_id_expirations", doc="expirations of transactional ids (the instances' and the data producers')")

    def _instances_setup(self, bounds: Mapping[str, int], config: dict[str, Any]) -> None:
        self.n_instances = bounds.get("instances", 0)
        #: no data producers at all (transactional or idempotent): their parts never change
        self.no_data = not bounds.get("producers", 1) and not bounds.get("idempotent_producers", 0)
        if not self.n_instances and self.no_data:
            raise ValueError("producers = 0 needs instances > 0 or idempotent producers (nothing would run)")
        self.max_producer_ids = bounds.get("instance_producer_ids", 2**31 - 1)
        config.update({name: bounds.get(name, 0) for name in BOUND_NAMES})

    def _instances_idle(self, listed: Mapping[str, tuple[str, ...]]) -> set[str]:
        """Actions that cannot fire: the mechanism's own while it is off, those needing a budget it
        lacks, and every other (data) action when the machine has no data producers."""
        if not self.n_instances:
            return set(ACTIONS)
        idle = set() if self.bounds.get("instance_transactions") else {"InstanceEndTxn", "CompleteTransaction"}
        if not self.coordinator.kip360 or not self.bounds.get("instance_transactions"):
            idle.add("AbortableError")
        if not self.bounds.get("failed_fence_appends"):
            idle.add("InstanceFenceAppendFails")
        if not self.bounds.get("lost_responses") and not self.bounds.get("coordinator_failovers"):
            idle.add("InitProducerIdTimeout")  # nothing else leaves a request unanswered
        if self.no_data:
            idle |= set(listed) - ACTIONS - {"TxnCoordinatorFailover"}
        return idle

    def _instances_compiled(self) -> None:
        self._pid_slot = self.slot("next_producer_id")  # type: ignore[attr-defined]

    def _instances_within_bounds(self, s: tuple) -> bool:
        """The producer ids the allocator may hand out (``instance_producer_ids``); ``s``: the logical state."""
        return not self.n_instances or s[self._pid_slot] <= self.max_producer_ids

    def _instances_terminal(self, s: tuple) -> bool:
        v = self.view(s)  # type: ignore[attr-defined]
        return not v.init_requests and not v.init_responses and not v.init_pending and all(
            c.phase != INIT_INITIALIZING for c in v.instance)

    def fields(self, s: tuple) -> dict[str, Any]:
        """Every part by name (``Composed.fields``), without the parts of a mechanism that is off: the
        instances' while there are none, the data producers' (constant) while there are none."""
        out: dict[str, Any] = super().fields(s)  # type: ignore[misc]
        if not self.n_instances:
            # the expiry budget is the data producers' too when their ids may expire (``eos_txn_id_expiry``)
            shown = {"faults.txn_id_expirations"} if getattr(self, "data_txn_id_expiry", False) else set()
            out = {k: v for k, v in out.items() if k not in _HIDDEN or k in shown}
        if self.no_data:
            out = {k: v for k, v in out.items() if not k.startswith(_DATA)}
        return out

    def _instances_itf(self, s: tuple) -> dict[str, Any]:
        """``itf_fields``' records for the instances' parts (ITF consumers need the data)."""
        if not self.n_instances:
            return {}
        from .itf_data import log_record, record
        v = self.view(s)  # type: ignore[attr-defined]

        def meta(m: Any) -> Any:
            return record(m, state=TxnState(m.state).name) if m.exists else {"exists": False}

        out: dict[str, Any] = {
            "instances_txn": meta(v.instances_txn), "instances_txn_log": log_record(v.instances_txn_log) if v.instances_txn_log.exists else {"exists": False},
            "init_pending": [record(p, metadata=meta(p.metadata)) for p in v.init_pending],
            "init_requests": [record(r) for r in v.init_requests],
            "init_responses": [record(r, error=error_name(r.error)) for r in v.init_responses]}
        for c, client in enumerate(v.instance):
            out[f"instance[{c}].request"] = {"producer_id": client.req_producer_id, "epoch": client.req_epoch}
        return out

    def _log(self, meta: TxnMetadata) -> TxnLogValue:
        return to_log_value(meta, persist_last_epoch=self.protocol.persist_last_epoch,
                            persist_prev_producer_id=self.protocol.persist_prev_producer_id)

    def _transit(self, meta: TxnMetadata, state: int) -> TxnMetadata:
        c = self.coordinator
        return transaction_transition(meta, state, every_transition=c.shipped and c.prev_pid_every_transition)

    # --- the instances (the producer client, ``producer.txn_client``) -------------------------------

    @precondition(lambda self, instance: instance.phase == INIT_IDLE and not instance.started)
    @rule("StartInstance", params={"client": "instance"}, reads=("instance[client]",), writes=("instance[client]",),
          sends=("init_requests",))
    def start_instance(self, client: int, instance: TxnClient) -> Any:
        """initTransactions of the slot's first instance: InitProducerId without producer id/epoch."""
        new, req = tc.begin_init(instance, client, -1, -1, new_instance=True)
        return {"instance": new, "init_requests": req}

    @precondition(lambda self, instance: instance.started != 0)
    @rule("RestartInstance", params={"client": "instance"}, reads=("instance[client]",), writes=("instance[client]",),
          sends=("init_requests",), spends="restarts")
    def restart_instance(self, client: int, instance: TxnClient) -> Any:
        """A new instance in the slot (the old one is gone): it starts from initTransactions."""
        new, req = tc.begin_init(instance._replace(producer_id=-1, epoch=-1), client, -1, -1, new_instance=True)
        return {"instance": new, "init_requests": req}

    # ``shapes`` (here and on InstanceEndTxn, AbortableError): the outcomes' usual writes, most frequent
    # first, built in place with no builder call. A success writes the instance and the metadata (and
    # AbortableError's also queues the epoch bump's request); an error writes the instance alone, its
    # request sent only where the client retries. kafka.init_producer_id's first 60,000 states:
    # AddPartitionsToTxn 3,930 successes and 3,147 errors, EndTxn 2,587 and 2,617, AbortableError 2,587
    # and 2,617 (the machine's own picks, every write with and without the send, took only the successes)
    @precondition(lambda self, instance: instance.phase == INIT_READY)
    @rule("InstanceAddPartitionsToTxn", params={"client": _tx_steps},
          reads=("instance[client]", "instances_txn", "init_pending:busy"),
          writes=("instance[client]", "instances_txn", "instances_txn_log"), sends=("init_requests",),
          results=("error",), spends="instance_transactions", show={"error": error_name},
          shapes=(("instance", "instances_txn", "instances_txn_log"), ("instance",)))
    def instance_add_partitions(self, client: int, instance: TxnClient, instances_txn: TxnMetadata,
                                init_pending: bool) -> Any:
        """The instance begins a transaction: AddPartitionsToTxn (its partitions are not modelled)."""
        meta = instances_txn
        error = int(add_partitions_error(
            CONCRETE, meta_exists=meta.exists, meta_producer_id=meta.producer_id, meta_epoch=meta.epoch,
            meta_state=meta.state, meta_pending=int(TxnState.EMPTY) if init_pending else NO_PENDING,
            req_producer_id=instance.producer_id, req_epoch=instance.epoch))
        if error == Errors.CONCURRENT_TRANSACTIONS:
            return None  # the client retries later; nothing changes
        if error == Errors.NONE:
            new_meta = self._transit(meta, TxnState.ONGOING)
            return {"instance": instance._replace(phase=INIT_IN_TXN), "instances_txn": new_meta,
                    "instances_txn_log": self._log(new_meta), "error": error}
        return self._on_txn_error(client, instance, error, "AddPartitionsToTxn")

    @precondition(lambda self, instance: instance.phase == INIT_IN_TXN)
    @rule("InstanceEndTxn", params={"client": _tx_steps},
          reads=("instance[client]", "instances_txn", "init_pending:busy"),
          writes=("instance[client]", "instances_txn", "instances_txn_log"), sends=("init_requests",),
          results=("error",), show={"error": error_name},
          shapes=(("instance",), ("instance", "instances_txn", "instances_txn_log")))
    def instance_end_txn(self, client: int, instance: TxnClient, instances_txn: TxnMetadata,
                         init_pending: bool) -> Any:
        """commitTransaction: EndTxn(COMMIT)."""
        return self._end_txn(client, instance, instances_txn, init_pending, abort=False)

    @precondition(lambda self, instance: instance.phase == INIT_IN_TXN)
    @rule("AbortableError", params={"client": _kip360_instances},
          reads=("instance[client]", "instances_txn", "init_pending:busy"),
          writes=("instance[client]", "instances_txn", "instances_txn_log"), sends=("init_requests",),
          results=("error",), spends="abortable_errors", show={"error": error_name},
          shapes=(("instance",), ("instance", "instances_txn", "instances_txn_log", "init_requests")))
    def abortable_error(self, client: int, instance: TxnClient, instances_txn: TxnMetadata,
                        init_pending: bool) -> Any:
        """A failed batch with epochBumpRequired (KIP-360, kafka-semantics.md §2.6): abortTransaction
        sends EndTxn(ABORT, pid, epoch), and only on its success InitProducerId(pid, epoch), queued."""
        return self._end_txn(client, instance, instances_txn, init_pending, abort=True)

    def _end_txn(self, client: int, instance: TxnClient, meta: TxnMetadata, init_pending: bool, abort: bool) -> Any:
        d = end_txn_decision(CONCRETE, is_from_client=True, meta_exists=meta.exists,
                             meta_producer_id=meta.producer_id, meta_epoch=meta.epoch, meta_state=meta.state,
                             meta_pending=int(TxnState.EMPTY) if init_pending else NO_PENDING,
                             req_producer_id=instance.producer_id, req_epoch=instance.epoch,
                             req_result=int(TxnResult.ABORT if abort else TxnResult.COMMIT))
        error = int(cast(int, d.error))  # CONCRETE ops decide with ints
        if error == Errors.CONCURRENT_TRANSACTIONS:
            return None
        if error != Errors.NONE:
            return self._on_txn_error(client, instance, error)
        new_meta = self._transit(meta, int(cast(int, d.next_state))) if d.next_state != meta.state else meta
        out: dict[str, Any] = {"instances_txn": new_meta, "instances_txn_log": self._log(new_meta), "error": error}
        if abort:  # the epoch bump: InitProducerId(pid, epoch) after the successful abort
            out["instance"], out["init_requests"] = tc.begin_init(instance, client, instance.producer_id,
                                                                  instance.epoch)
        else:
            out["instance"] = instance._replace(phase=INIT_READY)
        return out

    def _on_txn_error(self, client: int, instance: TxnClient, error: int, api: str = "EndTxn") -> dict[str, Any]:
        # the data producers' table and switches (``EosMachine.txn_errors``): one client per version
        errs = self.txn_errors
        new, req = tc.on_txn_error(instance, client, error, kip360=errs["can_bump_epoch"],
                                   pid_mapping_fatal=errs["pid_mapping_fatal"], api=api)
        return {"instance": new, "error": error, **({"init_requests": req} if req is not None else {})}

    # the effect reads the latest attempts in flight (projections: the messages' other fields and
    # older attempts moving cost no miss) and the instance's ``retry`` fields (written back). The gate is the phase alone, on instance[client]'s slot as the other
    # instance rules' gates are, so that compose can look them up as one group; a gate on the requests
    # in flight too took a lookup of its own per state and instance. The effect tells an attempt in flight.
    @precondition(lambda self, whole: whole.phase == INIT_INITIALIZING)
    @rule("InitProducerIdTimeout", params={"client": "instance"},
          reads=("instance[client]:retry", "init_requests:waiting", "init_responses:waiting", "init_pending:waiting",
                 "whole=instance[client]"),
          writes=("instance[client]:retry",), sends=("init_requests",))
    def instance_request_timeout(self, client: int, instance: TxnClient, init_requests: tuple[tuple[int, int], ...],
                                 init_responses: tuple[tuple[int, int], ...],
                                 init_pending: tuple[tuple[int, int], ...]) -> Any:
        """request.timeout.ms: nothing of the current attempt is left (its response was lost, or a
        failover dropped its append); the retry carries the same producer id and epoch, on a new
        connection."""
        mine = (client, instance.attempt)
        if mine in init_requests or mine in init_responses or mine in init_pending:
            return None
        new, req = tc.resend(instance, client, new_connection=True)
        return {"instance": new, "init_requests": req}

    @rule("HandleInitProducerIdResponse", receive="init_responses", params=("client", "attempt", "error"),
          reads=("instance[client]",), writes=("instance[client]",), sends=("init_requests",),
          show={"error": error_name})
    def instance_response(self, client: int, msg: InitPidResponse, instance: TxnClient) -> Any:
        """The client reads the answer to its current attempt (an older attempt's connection is gone:
        dropped); a retriable error resends the same request."""
        if instance.phase != INIT_INITIALIZING or msg.attempt != instance.attempt:
            return {}
        new = tc.on_init_response(instance, msg.error, msg.producer_id, msg.epoch)
        if new is None:
            new, req = tc.resend(instance, client, new_connection=False)
            return {"instance": new, "init_requests": req}
        return {"instance": new}

    # --- the coordinator (``coordinator.handler``) for the instances' transactional id --------------

    # only a request without producer id/epoch (a fresh instance's) reads the ``started`` ranks, and
    # only to write them back renumbered (``_arrives``, on every outcome): ``passed`` computes that
    # write per state apart from the memoised effect, so no memo key holds the ranks (perf29a: they
    # multiplied the rule's misses, perf28b). ``shapes``: the outcomes' usual writes, most
    # frequent first (kafka.init_producer_id's first 60,000 states: a fresh request's queued append
    # 10,909 successors, its error answer 10,449, a retry's answer 3,655, a fresh request's append
    # with a new producer id 1,762, a fence 1,678, a retry's queued append 1,504, others 101): built
    # in place, with no builder call; the five writes' subsets with and without the send are too many
    # for the machine to try on every successor
    @rule("HandleInitProducerId", receive="init_requests", params=("client", "attempt", "producer_id", "epoch"),
          reads=("instance:started", "instances_txn", "init_pending:busy", "next_producer_id"),
          writes=("instances_txn", "instances_txn_log", "init_pending", "next_producer_id", "instance:started"),
          sends=("init_responses",), results=("error",), show={"error": error_name}, read_if=_FRESH_READS,
          passed={"instance": _arrives},
          shapes=(("init_pending", "instance"), ("instance", "init_responses"), ("init_responses",),
                  ("init_pending", "next_producer_id", "instance"),
                  ("instances_txn", "instances_txn_log", "instance", "init_responses"), ("init_pending",)))
    def coordinator_init_producer_id(self, client: int, msg: InitPidRequest, instances_txn: TxnMetadata,
                                     init_pending: bool, next_producer_id: int) -> Any:
        """The coordinator handles a request (any one in flight): success queues the transition's log
        append; an Ongoing transaction is fenced and aborted (CONCURRENT_TRANSACTIONS); other errors are
        answered at once with no producer id and epoch."""
        r = _decide(instances_txn, init_pending, msg.producer_id, msg.epoch, next_producer_id, self.coordinator)
        out: dict[str, Any] = {"error": int(r.error)}
        # parts left as they are are not written (the same successor, fewer values to encode on a miss)
        if r.used_new_producer_id:
            out["next_producer_id"] = next_producer_id + 1
        if r.transit is not None:
            out["init_pending"] = (PendingAppend(client, msg.attempt, r.transit),)
            return out
        out["init_responses"] = InitPidResponse(client, msg.attempt, int(r.error), NO_PRODUCER_ID, NO_PRODUCER_EPOCH)
        if r.fenced is not None:
            out.update(instances_txn=r.fenced, instances_txn_log=self._log(r.fenced))
        return out

    @rule("InstanceFenceAppendFails", receive="init_requests", params=("client", "attempt", "producer_id", "epoch"),
          reads=("instance:started", "instances_txn", "init_pending:busy", "next_producer_id"),
          writes=("instances_txn", "instance:started"), sends=("init_responses",), results=("epoch",),
          spends="failed_fence_appends", read_if=_FRESH_READS)
    def instance_fence_append_fails(self, client: int, msg: InitPidRequest, instance: tuple[int, ...],
                                    instances_txn: TxnMetadata, init_pending: bool, next_producer_id: int) -> Any:
        """HandleInitProducerId on an Ongoing transaction whose fence's PrepareAbort append fails
        (``eos_fence_faults``, review 21): the fenced epoch stays in memory, the transaction Ongoing,
        nothing is written (``transactions.timeout.fence_write_failed``, with KAFKA-9666's
        ``failed_fence_keeps_epoch``; with TV2 after KAFKA-19367 the metadata is left as it was,
        ``tv2_failed_fence_leaves_epoch``), and the request is answered with the append's error as
        COORDINATOR_NOT_AVAILABLE, on which the client resends it unchanged."""
        r = _decide(instances_txn, init_pending, msg.producer_id, msg.epoch, next_producer_id, self.coordinator)
        if r.fenced is None:
            return None  # no fence: nothing to fail
        failed = self.failed_fence(instances_txn)
        out: dict[str, Any] = {"instances_txn": failed, "epoch": failed.epoch,
                               "init_responses": InitPidResponse(client, msg.attempt, int(Errors.COORDINATOR_NOT_AVAILABLE),
                                                                 NO_PRODUCER_ID, NO_PRODUCER_EPOCH)}
        if msg.producer_id == -1:
            out["instance"] = _arrived(instance, client)  # the request reached the coordinator, as a handled one
        return out

    @precondition(lambda self, init_pending: bool(init_pending))
    @rule("CompleteAppend", params={"coordinator": _coordinator_on}, reads=("init_pending",),
          writes=("instances_txn", "instances_txn_log", "init_pending"), sends=("init_responses",),
          results=("client", "producer_id", "epoch"))
    def complete_append(self, init_pending: tuple[PendingAppend, ...]) -> Any:
        """The transaction log append completes: the transition is visible and answered."""
        p = init_pending[0]
        t = p.metadata
        return {"instances_txn": t, "instances_txn_log": self._log(t), "init_pending": (),
                "init_responses": InitPidResponse(p.client, p.attempt, int(Errors.NONE), t.producer_id, t.epoch),
                "client": p.client, "producer_id": t.producer_id, "epoch": t.epoch}

    # gated on the metadata alone (a PrepareX to complete): a state without one costs a lookup of its
    # slot, not of (metadata, busy)
    @precondition(lambda self, instances_txn, init_pending: instances_txn.exists and not init_pending
                  and instances_txn.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT))
    @precondition(lambda self, instances_txn: instances_txn.exists
                  and instances_txn.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT))
    @rule("CompleteTransaction", params={"coordinator": lambda m: _coordinator_on(m) if _tx_steps(m) else ()},
          reads=("instances_txn", "init_pending:busy"), writes=("instances_txn", "instances_txn_log"))
    def complete(self, instances_txn: TxnMetadata) -> Any:
        """Every marker of the PrepareX landed (partitions are not modelled): CompleteX is written."""
        c = self.coordinator
        done = complete_transaction(instances_txn, shipped=c.shipped and c.prev_pid_every_transition)
        return {"instances_txn": done, "instances_txn_log": self._log(done)}

    @precondition(lambda self, instances_txn, init_pending: instances_txn.exists and not init_pending
                  and instances_txn.state in EXPIRATION_ALLOWED)
    @rule("ExpireTransactionalId", params={"coordinator": _coordinator_on}, reads=("instances_txn", "init_pending:busy"),
          writes=("instances_txn", "instances_txn_log"), spends="txn_id_expirations")
    def expire(self) -> Any:
        """transactional.id.expiration.ms: the idle transactional id's metadata is removed."""
        return {"instances_txn": NO_METADATA, "instances_txn_log": NO_LOG_VALUE}

    # --- properties (``model.properties``, over the instances' parts) -------------------------------

    @staticmethod
    def _as_init(instance: tuple[TxnClient, ...], meta: TxnMetadata = NO_METADATA,
                 log: TxnLogValue = NO_LOG_VALUE, restarts: int = 0) -> InstancesView:
        return InstancesView(instance, meta, log, _Restarts(restarts))

    # on a projection (``_held``): ``props.unique_producer_id_epoch`` on the pairs it collects
    @invariant("UniqueProducerIdEpoch", params={"coordinator": _coordinator_on}, reads=("instance:held",))
    @_doc_of(props.unique_producer_id_epoch)
    def unique_pid_epoch(self, instance: tuple[tuple[int, int] | tuple[()], ...]) -> bool:
        held = [h for h in instance if h]
        return len(set(held)) == len(held)

    @invariant("SoleInstanceNeverFenced", params={"coordinator": _coordinator_on}, reads=("instance", "restarts"))
    @_doc_of(props.sole_instance_never_fenced)
    def sole_never_fenced(self, instance: tuple[TxnClient, ...], restarts: int) -> bool:
        return props.sole_instance_never_fenced(self._as_init(instance, restarts=restarts))  # type: ignore[arg-type]

    @invariant("NewestInstanceNeverFenced", params={"coordinator": _coordinator_on}, reads=("instance",))
    @_doc_of(props.newest_instance_never_fenced)
    def newest_never_fenced(self, instance: tuple[TxnClient, ...]) -> bool:
        return props.newest_instance_never_fenced(self._as_init(instance))  # type: ignore[arg-type]

    # it fails exactly on the steps answered UNKNOWN_SERVER_ERROR (-1): the others need no memo key
    @transition("NoUnexpectedServerError", actions=("HandleInitProducerId",), when=lambda step: step[-1] == -1)
    @_doc_of(props.no_unexpected_server_error)
    def no_server_error(self, step: tuple, before: Any, after: Any) -> bool:
        return props.no_unexpected_server_error(before, step, after)

    @transition("CoordinatorEpochMonotonic", reads=("instances_txn", "instances_txn_log"), actions=COORDINATOR_ACTIONS,
                stuttering=True)
    @_doc_of(props.coordinator_epoch_monotonic)
    def epoch_monotonic(self, step: tuple, before: Any, after: Any) -> bool:
        check = props.coordinator_epoch_monotonic_within(self.coordinator.max_epoch)
        return bool(check(self._as_init((), before.instances_txn, before.instances_txn_log), step,
                          self._as_init((), after.instances_txn, after.instances_txn_log)))

    @transition("CoordinatorLegalState", reads=("instances_txn",), actions=COORDINATOR_ACTIONS, stuttering=True)
    @_doc_of(props.coordinator_legal_state)
    def legal_state(self, step: tuple, before: Any, after: Any) -> bool:
        legal: Any = props.coordinator_legal_state  # takes the instances' parts under the old machine's names
        return bool(legal(self._as_init((), before.instances_txn), step, self._as_init((), after.instances_txn)))

    # --- liveness (``kafka.init_producer_id``'s, under ``FAIRNESS``) ---------------------------------

    def temporal_properties(self) -> dict[str, TemporalProperty]:
        others: dict[str, TemporalProperty] = super().temporal_properties()  # type: ignore[misc]
        if not self.n_instances:
            return others
        view = self.view  # type: ignore[attr-defined]

        def pending(s: tuple) -> bool:
            return bool(props.init_pending(self._as_init(view(s).instance)))  # type: ignore[arg-type]

        def settled(s: tuple) -> bool:
            return bool(props.init_settled(self._as_init(view(s).instance)))  # type: ignore[arg-type]

        return {**others, "InitEventuallyCompletes": leads_to("InitEventuallyCompletes", TEMPORAL_DOCS["InitEventuallyCompletes"],
                                                    pending, settled)}

    def fairness(self) -> tuple[Fairness, ...]:
        others: tuple[Fairness, ...] = super().fairness()  # type: ignore[misc]
        return others + (FAIRNESS if self.n_instances else ())


__all__ = [
    "ACTIONS",
    "BOUND_NAMES",
    "FAIRNESS",
    "INSTANCE_CHART_PARTS",
    "TEMPORAL_DOCS",
    "InstancesMixin",
    "InstancesView",
    "arrived",
]

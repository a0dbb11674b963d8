"""kafka.eos's liveness of transactions and the group (model/machines/eos_liveness.py): which properties
and fairness it declares, its predicates against the parts they read, Rejoin cut at the bound (so it
counts as enabled), and small runs that hold and violate."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

from eoscheck.checker.explore import explore
from eoscheck.checker.explore.options import ExploreOptions
from eoscheck.model.group.metadata import GroupState
from eoscheck.model.machines.eos import EosMachine, machine
from eoscheck.model.machines.eos_liveness import FAIRNESS, TEMPORAL_DOCS
from eoscheck.model.machines.eos_model import BOUNDS, MODEL
from eoscheck.model.protocol import VARIANTS
from eoscheck.model.transactions.codes import TxnState
from eoscheck.model.transactions.log import open_transactions

GROUP = {"producers": 1, "members": 1, "input_records": 1, "partitions": 1, "rebalances": 1, "transactions": 2,
         "txn_timeouts": 1, "max_epoch": 4}
NAMES = {"TransactionsComplete", "MarkersComplete", "RebalanceSettles"}


def _states(m: EosMachine, limit: int = 30_000) -> Iterator[Any]:
    seen = set(m.init_states())
    queue = deque(seen)
    while queue and len(seen) < limit:
        s = queue.popleft()
        yield s
        for _, t in m.successors(s):
            if m.within_bounds(t) and t not in seen:
                seen.add(t)
                queue.append(t)


def test_declared_with_transactional_producers_only() -> None:
    assert NAMES <= set(machine("kafka-3.0-3.5").temporal_properties())
    idempotent_only = machine("kafka-3.0-3.5", producers=0, partitions=0, idempotent_producers=1)
    assert not NAMES & set(idempotent_only.temporal_properties())
    # the idempotent producers' fairness alone (their HandleProduce is fair per request, not as one action)
    assert not set(idempotent_only.fairness()) & set(FAIRNESS)
    assert set(FAIRNESS) <= set(machine("kafka-3.0-3.5").fairness())


def test_the_model_lists_them_with_docs() -> None:
    assert all(MODEL.temporal[name] == TEMPORAL_DOCS[name] and TEMPORAL_DOCS[name] for name in NAMES)


def test_the_protocols_steps_are_weakly_fair_and_the_faults_are_not() -> None:
    fair = {(f.kind, a) for f in machine("kafka-3.0-3.5", **GROUP).fairness() for a in f.actions}
    assert {("WF", a) for a in ("InitProducerId", "Drain", "HandleProduce", "EndTxn", "WriteTxnMarker",
                                "AbortTimedOutTransaction", "Rebalance", "Rejoin")} <= fair
    names = {a for _, a in fair}
    assert not names & {"SessionTimeout", "DeliveryTimeout", "LoseResponse", "TxnCoordinatorFailover",
                        "DeleteRecords", "Restart"}


def test_the_predicates_read_the_leaders_the_coordinator_and_the_group() -> None:
    m = machine("kafka-2.4", **GROUP)
    props = m.temporal_properties()
    complete, markers, settles = (props[n] for n in ("TransactionsComplete", "MarkersComplete", "RebalanceSettles"))
    seen = {True: 0, False: 0}
    for s in _states(m):
        v = m.view(s)
        none_open = not any(open_transactions(p.log) for p in (*v.leader, v.offsets_leader))
        assert complete.p(s) == none_open
        preparing = any(x.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT) for x in v.txn)
        assert markers.p(s) == preparing and markers.q is not None and markers.q(s) == (not preparing)
        assert settles.p(s) == (v.group.state == GroupState.PREPARING_REBALANCE)
        seen[none_open] += 1
    assert seen[True] and seen[False]


def test_rejoin_is_cut_at_the_bound_not_removed() -> None:
    m = machine("kafka-2.4", **GROUP)  # rejoins = 0
    assert "Rejoin" not in m.actions  # not listed: it never fires within the bounds
    cut = 0
    for s in _states(m):
        for step, t in m.successors(s):
            if step[0] == "Rejoin":
                assert not m.within_bounds(t)
                cut += 1
    assert cut  # ...but enabled where a member must rejoin, as liveness needs


def _liveness(timeout_abort_bumps_epoch: bool) -> Any:
    protocol = VARIANTS["kafka-2.4"].protocol.with_(timeout_abort_bumps_epoch=timeout_abort_bumps_epoch)
    m = EosMachine(protocol, {**{k: b.default for k, b in BOUNDS.items()}, **GROUP})
    return explore(m, ExploreOptions(properties=(), temporal=tuple(sorted(NAMES)), check_deadlock=False))


def test_with_kafka_6119_transactions_complete_and_without_one_stays_open() -> None:
    assert _liveness(True).verdict == "holds"
    stuck = _liveness(False)  # 0.11.0.0-0.11.0.1: the timeout abort keeps the epoch
    assert stuck.verdict == "violated" and stuck.violations[0].property == "TransactionsComplete"

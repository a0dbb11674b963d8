"""kafka.eos's gates and transition filters leave the steps and verdicts alone.

A gate is a precondition on some of a rule's reads (``checker.compose`` memoises it on those slots
and looks it up before the full key); a transition property's ``when=`` skips steps without a memo
lookup, and so does ``stuttering=True`` for a step that leaves the property's reads alone. Both are shortcuts only if they are exact: a closed gate where the effect would still fire
drops steps, a filtered step on which the property fails hides a violation. Here every reachable
state of a few configurations (first states of a BFS) is checked directly: where a gate is closed,
the effect (with the rule's other preconditions) yields nothing; where ``when`` skips a step of a
property's actions, the property holds on it.
"""

from __future__ import annotations

from typing import Any

import pytest
from eoscheck.checker.compose.properties import _Parts, _Transition
from eoscheck.checker.compose.rules import _Rule
from eoscheck.checker.registry import find_model
from eoscheck.model.machines.eos import machine
from eoscheck.model.producer.transactional import FENCING_ERRORS
from reachable_states import first_expanded

#: (variant, bounds) of kafka.eos, or (preset model, variant, bounds)
CONFIGS: list[tuple[str, str, dict[str, int]]] = [
    ("kafka.eos", "kafka-3.0-3.5", {"producers": 2, "lost_responses": 1, "txn_timeouts": 1}),
    ("kafka.eos", "kafka-4.0", {"producers": 2, "lost_responses": 1, "produce_timeouts": 1}),
    # a pre-KIP-360 client: an EndTxn answered NONE may still fail the producer (unresolved sequence)
    ("kafka.eos", "kafka-2.4", {"producers": 2, "lost_responses": 1, "produce_timeouts": 1, "txn_timeouts": 1}),
    ("kafka.eos", "kafka-4.0", {"restarts": 1, "transactions": 2, "input_records": 1, "max_ticks": 2}),
    ("kafka.eos", "kafka-3.0-3.5", {"producers": 2, "members": 2, "input_records": 1, "partitions": 1,
                                    "transactions": 2, "rebalances": 2, "rejoins": 1, "max_epoch": 4}),
    ("kafka.init_producer_id", "kafka-shipped", {"clients": 2, "max_epoch": 3, "lost_responses": 1, "failovers": 1,
                                                 "abortable_errors": 2, "transactions": 2, "restarts": 1,
                                                 "new_producer_ids": 3}),
    ("kafka.eos.idempotent_produce", "kafka-shipped", {"records": 5, "max_in_flight": 3, "lost_responses": 1,
                                                       "delivery_timeout": 4, "producer_id_expiration": 4,
                                                       "max_ticks": 6}),
]
LIMIT = 6000


def _build(model: str, variant: str, bounds: dict[str, int]) -> Any:
    if model == "kafka.eos":
        return machine(variant, **bounds)
    return find_model(model).machine(variant, bounds=bounds)


#: the rules whose gate restates their effect's own "nothing to do" test (not a guard of the rule's
#: meaning), with the reads that gate takes
REDUNDANT: dict[str, frozenset[str]] = {
    "AddPartitionsToTxn": frozenset({"producer"}), "Drain": frozenset({"producer"}),
    "EndTxn": frozenset({"producer"}), "RequestTimeout": frozenset({"producer"}),
    "WriteTxnMarker": frozenset({"p", "txn"}), "WriteOffsetsMarker": frozenset({"txn"}),
    # gates on projections (the producer's phase, the group's membership fields), on one key: one lookup
    "Rejoin": frozenset({"me", "group", "phase"}), "OnAssignment": frozenset({"member", "group", "phase"}),
    "IdempotentRequestTimeout": frozenset({"c", "client", "on_way", "back"}),
    "ExpireBatch": frozenset({"timing", "now"}),
}


def _redundant(m: Any) -> list[tuple[Any, list[Any], list[Any]]]:
    """(rule, its redundant gates, its other guards) for the rules of ``REDUNDANT`` with bindings."""
    out = []
    for r in m._plan.rules:
        if isinstance(r, _Rule) and r.action in REDUNDANT and r.bindings:
            mine = [call for call, (_, names) in zip(r.guard_calls, r.guards) if frozenset(names) == REDUNDANT[r.action]]
            assert mine, f"{r.action} has no gate on {sorted(REDUNDANT[r.action])}"
            out.append((r, mine, [g for g in r.guard_calls if g not in mine]))
    return out


#: the init_producer_id preset's gates are all guards of their rules' meaning (the instance's phase), none
#: a restated "nothing to do" test
GATED = [c for c in CONFIGS if c[0] != "kafka.init_producer_id"]


@pytest.mark.parametrize("model, variant, bounds", GATED)
def test_a_closed_gate_hides_no_step(model: str, variant: str, bounds: dict[str, int]) -> None:
    m = _build(model, variant, bounds)
    rules = _redundant(m)
    assert rules, "no such gate in this configuration"
    closed: dict[str, int] = {}
    for s in first_expanded(m, LIMIT):
        for rule, mine, others in rules:
            for b in rule.bindings:
                kwargs = b.decode(s, dict(b.params))
                if all(gate(m, kwargs) for gate in mine) or not all(g(m, kwargs) for g in others):
                    continue
                closed[rule.action] = closed.get(rule.action, 0) + 1
                result = rule.fn_call(m, kwargs)
                assert not result, f"{rule.action} {b.params}: gate closed, effect gives {result!r}"
    assert closed, "no state closes a gate: the test checks nothing"
    for projected in ("Rejoin", "OnAssignment", "IdempotentRequestTimeout", "ExpireBatch"):  # the gates on projections close too (where bound)
        assert closed.get(projected) or not any(r.action == projected for r, _, _ in rules), projected


def _moved(m: Any, obj: _Transition, s: tuple, t: tuple) -> bool:
    """Whether a stuttering property's terms differ between ``s`` and ``t``: its reads' slots, or the
    terms of ``stuttering=(terms)`` (a projected term by the projected values, decoded here)."""
    before, after = m.logical(s), m.logical(t)
    for k in obj.moved_terms:
        if type(k) is int:
            if before[k] != after[k]:
                return True
        elif k[1].values[before[k[0]]] != k[1].values[after[k[0]]]:
            return True
    return False


@pytest.mark.parametrize("model, variant, bounds", CONFIGS)
def test_a_filtered_step_breaks_no_transition_property(model: str, variant: str, bounds: dict[str, int]) -> None:
    m = _build(model, variant, bounds)
    plan = m._plan
    filtered = [o for o in plan.property_objs.values()
                if isinstance(o, _Transition) and (o.spec.when is not None or o.spec.stuttering)]
    assert filtered
    skipped: dict[str, int] = {}
    for s in first_expanded(m, LIMIT):
        for step, t in m.successors(s):
            for obj in filtered:
                if obj.actions and step[0] not in obj.actions:
                    continue
                if obj.spec.when is not None and obj.spec.when(step):
                    continue  # checked
                if obj.spec.stuttering and _moved(m, obj, s, t):
                    continue  # checked
                skipped[obj.spec.name] = skipped.get(obj.spec.name, 0) + 1
                before, after = _Parts(plan.decode_reads(s, obj.reads)), _Parts(plan.decode_reads(t, obj.reads))
                if obj.each:  # ``transition(each=True)``: the function judges one actor at a time
                    part = obj.refs[0].key
                    assert all(obj.fn(m, step, _Parts({part: a}), _Parts({part: b}))
                               for a, b in zip(getattr(before, part), getattr(after, part))), \
                        f"{obj.spec.name} fails on the skipped step {step}"
                else:
                    assert obj.fn(m, step, before, after), f"{obj.spec.name} fails on the skipped step {step}"
                if obj.spec.name == "FencedGetsFencingError":
                    # the filter's own claim, superseded producer or not: no new non-fencing fatal error
                    pairs = [*zip(before.producer, after.producer),
                             *((a, b) for a, b in zip(before.zombie, after.zombie) if a and b)]
                    assert not any(b.fatal_error and not a.fatal_error and b.fatal_error not in FENCING_ERRORS
                                   for a, b in pairs), f"{step} fails a producer with a non-fencing error"
                if obj.spec.name == "NoSpuriousFencing":
                    # its filter's claim (``moves=("producer:fatal",)``): no producer's fatal error changed
                    assert [p.fatal_error for p in before.producer] == [p.fatal_error for p in after.producer], step
    assert skipped, "no step is filtered: the test checks nothing"
    if model == "kafka.eos":
        assert skipped.get("NoSpuriousFencing"), "NoSpuriousFencing's filter skips no step here"


def test_rejoin_gate_opens_for_a_fenced_producer() -> None:
    """Rejoin's gate on projections (the producer's phase, the group's membership) against its effect on
    reachable group states with each producer made fenced or fatal in turn (the first states of a BFS
    hold no fenced producer)."""
    from eoscheck.model.state import TXN_FATAL, TXN_FENCED
    model, variant, bounds = CONFIGS[4]
    m = _build(model, variant, bounds)
    (rule,) = [r for r in m._plan.rules if isinstance(r, _Rule) and r.action == "Rejoin"]
    (gate,) = [call for call, (_, names) in zip(rule.guard_calls, rule.guards) if frozenset(names) == REDUNDANT["Rejoin"]]
    opened = 0
    for s in first_expanded(m, 1500):
        view = m.view(s)
        for i, p in enumerate(view.producer):
            for phase in (TXN_FENCED, TXN_FATAL):
                t = m.state(**{name: getattr(view, name) for name in m._plan.decls}
                            | {"producer": view.producer[:i] + (p._replace(phase=phase),) + view.producer[i + 1:]})
                for b in rule.bindings:
                    kwargs = b.decode(t, dict(b.params))
                    fires = bool(rule.fn_call(m, kwargs))
                    assert gate(m, kwargs) == fires, (b.params, phase)
                    opened += fires
    assert opened


def test_the_coordinator_asks_only_whether_an_append_is_pending() -> None:
    """The rules that read ``init_pending`` through its ``busy`` projection (memoised on whether an
    InitProducerId append is pending, not on which) decide, on every reachable state with a pending
    append, as they do given the append itself: guards and effect alike."""
    model, variant, bounds = CONFIGS[5]
    m = _build(model, variant, bounds)
    busy = [r for r in m._plan.rules if isinstance(r, _Rule) and "init_pending:busy" in r.spec.reads]
    assert {r.action for r in busy} >= {"InstanceAddPartitionsToTxn", "InstanceEndTxn", "AbortableError",
                                        "CompleteTransaction", "HandleInitProducerId"}
    compared: dict[str, int] = {}
    fired: dict[str, int] = {}
    for s in first_expanded(m, LIMIT):
        view = m.view(s)
        if not view.init_pending:
            continue
        for rule in busy:
            if rule.receive is None:
                cases = [(b, {}) for b in rule.bindings]
            else:
                cases = [(b, {"msg": msg}) for msg in set(view.init_requests) for b in rule._msg_bindings(msg)]
            for b, extra in cases:
                seen = {**b.decode(s, dict(b.params)), **extra}
                whole = {**seen, "init_pending": view.init_pending}
                assert seen["init_pending"] is True
                decided = [all(g(m, kw) for g in rule.guard_calls) for kw in (seen, whole)]
                assert decided[0] == decided[1], (rule.action, b.params)
                if decided[0]:
                    assert rule.fn_call(m, seen) == rule.fn_call(m, whole), (rule.action, b.params)
                compared[rule.action] = compared.get(rule.action, 0) + 1
                fired[rule.action] = fired.get(rule.action, 0) + decided[0]
    assert all(compared.get(r.action) for r in busy if r.bindings or r.receive is not None), compared
    # CompleteTransaction waits for the append (its guard says no on all of these states)
    assert set(fired) >= {"InstanceAddPartitionsToTxn", "InstanceEndTxn", "AbortableError", "HandleInitProducerId"}
    assert all(fired[a] for a in ("InstanceAddPartitionsToTxn", "AbortableError", "HandleInitProducerId")), fired


def test_idempotent_drain_is_the_senders_drain_at_the_states_time() -> None:
    """IdempotentDrain's gate is part of its meaning: it refuses a batch past its delivery timeout, and
    the effect (which compose keys without the clock) drains as if at the batch's creation. Together
    they are ``producer.client.drain`` on the whole client at the state's time, on every reachable
    state: no step where the Sender drains nothing, the same client and request where it drains."""
    from eoscheck.model.machines.eos_idempotent import _P, shape
    from eoscheck.model.producer import client as cl
    from eoscheck.model.state import Routed
    model, variant, bounds = CONFIGS[6]
    m = _build(model, variant, bounds)
    (rule,) = [r for r in m._plan.rules if isinstance(r, _Rule) and r.action == "IdempotentDrain"]
    assert "now" in rule.gate_only and all(t != m._plan.slots["now"][0] for t in rule.bindings[0].key_slots)
    drained = refused = expired = 0
    for s in first_expanded(m, LIMIT):
        view = m.view(s)
        for b in rule.bindings:
            c = b.params["c"]
            kwargs = b.decode(s, dict(b.params))
            want = cl.drain(view.client[c], c, view.now, m.idem_cfg)
            if not all(g(m, kwargs) for g in rule.guard_calls):
                assert want is None, (c, view.client[c], view.now)
                refused += 1
                nxt = kwargs["timing"][0]
                expired += nxt is not None and view.now - nxt[0] >= m.idem_cfg.delivery_timeout
                continue
            got = rule.fn_call(m, kwargs)
            assert want is not None and got is not None, (c, view.client[c], view.now)
            new_client, req = want
            req = req._replace(leader_epoch=new_client.known_leader_epoch)
            assert got["client"] == shape(new_client) and got["idem_requests"] == Routed(_P, c, req.connection,
                                                                                         req.record, req)
            drained += 1
    assert drained and refused and expired  # the gate's own refusal, a batch past its timeout, among them


def test_unique_producer_id_epoch_reads_the_held_pairs_alone() -> None:
    """UniqueProducerIdEpoch reads each instance's held (producer id, epoch) (``instance:held``), so an
    instance's attempt, request or rank moving costs it no miss: on every reachable state of the
    init_producer_id preset, and on those states with the second instance made to hold the first's
    pair (some ready or in a transaction, some not), it says what ``props.unique_producer_id_epoch``
    says of the whole instances."""
    from eoscheck.model import properties as props
    from eoscheck.model.state import INIT_IN_TXN, INIT_READY
    model, variant, bounds = CONFIGS[5]
    m = _build(model, variant, bounds)
    check = m.properties()["UniqueProducerIdEpoch"].check
    verdicts: dict[bool, int] = {}
    for s in first_expanded(m, LIMIT):
        view = m.view(s)
        cases = [s]
        first, second = view.instance[0], view.instance[1]
        if first.phase in (INIT_READY, INIT_IN_TXN):
            for phase in (INIT_READY, INIT_IN_TXN, second.phase):
                twin = second._replace(producer_id=first.producer_id, epoch=first.epoch, phase=phase)
                cases.append(m.state(**{name: getattr(view, name) for name in m._plan.decls}
                                     | {"instance": (first, twin)}))
        for t in cases:
            want = props.unique_producer_id_epoch(m._as_init(m.view(t).instance))
            assert check(t) == want, m.view(t).instance
            verdicts[want] = verdicts.get(want, 0) + 1
    assert verdicts.get(True, 0) > 100 and verdicts.get(False, 0) > 10, verdicts

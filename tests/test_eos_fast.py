"""kafka.eos's generated hot paths (``model/machines/eos_fast.py``) agree with the generic ones: the
state constraint with ``EosMachine.within_bounds``, the canonical form with ``Composed.canonical``, the
terminal test with ``EosMachine.is_terminal``,
on every successor of an exploration, and pruning the clock's rule keeps every successor."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from eoscheck.checker.compose import Composed
from eoscheck.checker.explore import explore
from eoscheck.checker.explore.options import ExploreOptions
from eoscheck.checker.registry import find_model
from eoscheck.model.machines import eos_fast
from eoscheck.model.machines.eos import EosMachine, machine

CONFIGS: list[tuple[str, dict[str, int]]] = [
    ("kafka-4.0", {"producers": 2, "txn_timeouts": 1, "max_epoch": 1, "transactions": 2}),
    ("kafka-3.0-3.5", {"producers": 2, "input_records": 1, "restarts": 1, "max_ticks": 1}),
    ("kafka-3.0-3.5", {"producers": 2, "members": 2, "input_records": 1, "partitions": 1, "rebalances": 1,
                       "max_epoch": 2}),
    # the pipeline shape: generations and rejoins cut by the constraint (one flag per group and member slot)
    ("kafka-3.0-3.5", {"producers": 2, "members": 2, "input_records": 1, "partitions": 1, "transactions": 2,
                       "rebalances": 2, "rejoins": 1, "max_epoch": 4}),
]


def _walk(m: Any, limit: int) -> list[tuple]:
    """Every successor (inside the constraint or not) of the first ``limit`` states of a BFS."""
    seen = set()
    frontier = list(m.init_states())
    out: list[tuple] = list(frontier)
    while frontier and len(seen) < limit:
        nxt = []
        for s in frontier:
            for _step, t in m.successors(s):
                out.append(t)
                if EosMachine.within_bounds(m, t) and t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    return out


@pytest.mark.parametrize(("variant", "bounds"), CONFIGS)
def test_constraint_and_canonical_agree(variant: str, bounds: dict[str, int]) -> None:
    m = machine(variant, **bounds)
    states = _walk(m, 3000)
    assert any(not EosMachine.within_bounds(m, s) for s in states) or not bounds.get("max_epoch")
    if bounds.get("members"):  # some successors are cut by the group's bounds (generation, rejoins)
        assert any(not m.group_within_bounds(m.view(s).group, m.view(s).member) for s in states)
    assert [m.within_bounds(s) for s in states] == [EosMachine.within_bounds(m, s) for s in states]
    assert [m.is_terminal(s) for s in states] == [EosMachine.is_terminal(m, s) for s in states]
    if not m.has_symmetry():
        return  # group members: explored without reduction
    fast = [m.canonical(s) for s in states]
    assert fast == [Composed.canonical(m, s) for s in states]
    assert len(set(fast)) < len(set(states))  # two producers: some states are renamed


def test_presets_agree() -> None:
    """The instances' (init_producer_id preset) and the idempotent producers' scalarsets."""
    found: set[bool] = set()
    for name, variant, bounds in [
        ("kafka.init_producer_id", "kafka-shipped", {"clients": 2, "max_epoch": 3, "lost_responses": 1,
                                                     "transactions": 1, "new_producer_ids": 2}),
        ("kafka.eos.idempotent_produce", "kafka-shipped", {"clients": 2, "records": 2, "lost_responses": 1,
                                                           "new_producer_ids": 1})]:
        m = find_model(name).machine(variant, bounds=bounds)
        states = _walk(m, 2000)
        assert [m.within_bounds(s) for s in states] == [EosMachine.within_bounds(m, s) for s in states]
        terminal = [m.is_terminal(s) for s in states]  # memoised on the parts it reads
        assert terminal == [EosMachine.is_terminal(m, s) for s in states]
        found.update(terminal)
        assert [m.canonical(s) for s in states] == [Composed.canonical(m, s) for s in states]
    assert found == {True, False}  # both answers of the terminal test occur


def test_tick_pruned_without_time_and_kept_with() -> None:
    assert "Tick" not in {r.action for r in machine("kafka-4.0")._plan.rules}
    assert "Tick" in {r.action for r in machine("kafka-4.0", max_ticks=1)._plan.rules}


def test_pickled_and_cleared_machine_keeps_its_fast_paths() -> None:
    m = machine("kafka-4.0", producers=2)
    copy = pickle.loads(pickle.dumps(m))
    assert "within_bounds" in vars(copy) and "canonical" in vars(copy) and "is_terminal" in vars(copy)
    copy.clear_caches()
    opts = ExploreOptions(stop_at_first=False)
    a, b = explore(m, opts).stats, explore(copy, opts).stats
    assert (a.distinct, a.generated, a.depth) == (b.distinct, b.generated, b.depth)


def test_per_producer_rules_keep_their_step_fields() -> None:
    """AddPartitionsToTxn, Drain, DeliveryTimeout and RequestTimeout are one binding per producer; their
    steps still name the partition right after the producer, and every partition gets its step."""
    m = machine("kafka-4.0", partitions=3, lost_responses=1, produce_timeouts=1)
    assert m.actions["Drain"] == ("t", "p", "record", "seq", "epoch")
    assert m.actions["AddPartitionsToTxn"] == ("t", "p", "error")
    assert m.actions["DeliveryTimeout"] == ("t", "p")
    assert m.actions["RequestTimeout"] == ("t", "p")
    seen: dict[str, set[int]] = {}
    for s in _walk(m, 2000):
        for step, _ in m.successors(s):
            if step[0] in ("Drain", "AddPartitionsToTxn", "DeliveryTimeout", "RequestTimeout"):
                seen.setdefault(step[0], set()).add(step[2])
    assert seen == {a: {0, 1, 2} for a in ("Drain", "AddPartitionsToTxn", "DeliveryTimeout", "RequestTimeout")}


@pytest.mark.parametrize("display", [0, 1000])
def test_pair_form_on_ties(display: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two instances in the same state: the swapped image differs only in the parts that name them
    (the generated form compares those slots without building the image unless it is smaller), and
    the form is still the least of the two images, as ``Composed.canonical`` takes it; the image
    built either way (a list copy or a tuple display, by the state's width)."""
    monkeypatch.setattr(eos_fast, "DISPLAY_WIDTH", display)
    m = find_model("kafka.init_producer_id").machine(
        "kafka-shipped", bounds={"clients": 2, "max_epoch": 3, "lost_responses": 1, "transactions": 1,
                                 "new_producer_ids": 2})
    base, count = m._plan.slots["instance"]
    assert count == 2
    first, second = m._plan.pos[base], m._plan.pos[base + 1]  # their places in a state
    ties = []
    for s in _walk(m, 2000):
        for a, b in ((first, second), (second, first)):
            t = list(s)
            t[b] = s[a]
            ties.append(tuple(t))
    forms = [m.canonical(s) for s in ties]
    assert forms == [Composed.canonical(m, s) for s in ties]
    walk = _walk(m, 2000)  # and off the ties, both orders of the instances
    assert [m.canonical(s) for s in walk] == [Composed.canonical(m, s) for s in walk]
    swapped = [s for s, f in zip(ties, forms) if f != s]
    kept = [s for s, f in zip(ties, forms) if f == s and m._plan.permuters["instance"](s, (1, 0)) != s]
    assert swapped and kept  # both outcomes of the comparison occur


def test_instances_ordered_by_attempt_latest_first() -> None:
    """``Actors(order=...)``: the instances' form puts the one further in its attempts first (ties by
    id), the same form for both states of an orbit, and another state than the ids alone pick."""
    m = find_model("kafka.init_producer_id").machine(
        "kafka-shipped", bounds={"clients": 2, "max_epoch": 3, "lost_responses": 1, "transactions": 1,
                                 "new_producer_ids": 2})
    plan = m._plan
    base, _ = plan.slots["instance"]
    first, second = plan.pos[base], plan.pos[base + 1]
    values = plan.tables["instance"].values
    swap = plan.permuters["instance"]
    walk = _walk(m, 2000)
    forms = [m.canonical(s) for s in walk]
    assert forms == [Composed.canonical(m, s) for s in walk]
    assert forms == [m.canonical(swap(s, (1, 0))) for s in walk]  # one form per orbit
    for f in forms:
        a, b = values[f[first]], values[f[second]]
        assert (a.attempt, -f[first]) >= (b.attempt, -f[second])
    assert any(values[s[first]].attempt != values[s[second]].attempt for s in forms)
    by_id = plan.orders.pop("instance")
    try:
        assert [Composed.canonical(m, s) for s in walk] != forms
    finally:
        plan.orders["instance"] = by_id


def test_constraint_reads_plain_maps_filled_by_its_flags() -> None:
    """The generated constraint reads each flag map's ``plain`` dict (a dict subclass's subscript is
    slower) and falls back to the maps, which compute a missing flag, on first sight of a content:
    the same answers on first sight and on every later hit, and ``plain`` holds exactly the flags."""
    variant, bounds = CONFIGS[3]
    m = machine(variant, **bounds)
    states = _walk(m, 3000)
    env = m.within_bounds.__globals__
    maps = [env[n] for n in ("E", "G", "M")]
    assert all(isinstance(f, eos_fast._FirstSight) and type(env[n + "s"]) is dict and env[n + "s"] is f.plain
               for n, f in zip(("E", "G", "M"), maps))
    want = [EosMachine.within_bounds(m, s) for s in states]
    assert [m.within_bounds(s) for s in states] == want  # first sight: through the maps
    assert all(f.plain == dict(f) and f for f in maps)
    assert False in want and [m.within_bounds(s) for s in states] == want  # hits: through ``plain``


def _place_test(test: Any, unknown: Any) -> Any:
    """A ``PlaceTest`` as a function of the whole state: its value, or ``unknown`` where it raises
    ``KeyError`` (a content its dicts have not seen)."""
    fn = eval(f"lambda s: {test.test.format(*(f's[{p}]' for p in test.places))}", dict(test.env))

    def asked(s: tuple) -> Any:
        try:
            return fn(s)
        except KeyError:
            return unknown
    return asked


PLACE_CONFIGS = [*CONFIGS, ("kafka-shipped", {"clients": 2, "max_epoch": 2, "lost_responses": 1, "failovers": 1,
                                              "abortable_errors": 1, "transactions": 1, "new_producer_ids": 2})]


@pytest.mark.parametrize(("variant", "bounds"), PLACE_CONFIGS)
def test_the_place_tests_answer_as_the_functions_do(variant: str, bounds: dict[str, int]) -> None:
    """The constraint's ``place_test`` (offered only where it reads no dict: the producer id
    allocators alone) is its answer; the canonical form's ``own_form``, where true, names a state
    that is its own form. Asked before the walk (contents not seen yet: unknown) and after it."""
    m = (machine(variant, **bounds) if "clients" not in bounds
         else find_model("kafka.init_producer_id").machine(variant, bounds=bounds))
    test = getattr(m.within_bounds, "place_test", None)
    assert (test is not None) == ("clients" in bounds)  # the others' constraints read the epochs' flags
    inside = _place_test(test, None) if test is not None else None
    # (a canonical form other than the two-identity pair offers none: the idempotent producers')
    form = getattr(m.canonical, "own_form", None) if m.has_symmetry() else None
    own = _place_test(form, False) if form is not None else None
    states = _walk(m, 3000)
    if inside is not None:
        answers = [inside(s) for s in states]
        assert answers == [m.within_bounds(s) for s in states]
        assert True in answers and False in answers
    if own is not None:
        assert not any(own(s) for s in states[:1])  # no sort key computed yet: unknown, false
        [m.canonical(s) for s in states]  # every content's sort key computed
        yes = [s for s in states if own(s)]
        assert yes and all(m.canonical(s) == s for s in yes)
        assert any(m.canonical(s) != s for s in states if not own(s))

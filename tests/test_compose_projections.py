"""Reads through a part's projection (``Part(projections={...})``, ``reads=("x[i]:name",)``): the
memo key holds the projection's id, so states that differ only in fields it drops share an entry.
Sound only if the function sees the projection and nothing else of the part: checked here, with
the successors and verdicts of a machine whose rules and properties read projections against the
same machine reading whole parts, and the one-line errors of bad declarations."""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest
from eoscheck.checker.compose import (
    Actors,
    Composed,
    ComposeError,
    Part,
    Projection,
    Scalar,
    constraint,
    invariant,
    precondition,
    rule,
    transition,
)
from eoscheck.checker.compose.testing import compare_memo, reachable_steps
from eoscheck.checker.explore import ExploreOptions, explore


class Node(NamedTuple):
    phase: int
    count: int  # changes often; no decision below but Tick's reads it


def _phase(node: Node) -> int:
    return node.phase


class Nodes(Composed):
    """Nodes cycle through phases 0..2 and count ticks; a node may advance only while no other
    node is in phase 2 (a decision on the phases alone, read either whole or projected)."""

    node = Actors(count="nodes", init=Node(0, 0), projections={"phase": _phase, "busy": lambda n: n.phase == 2})
    rounds = Scalar(init=0, projections={"parity": lambda r: r % 2})
    log = Part(init=())

    def __init__(self, nodes: int = 3, ticks: int = 2, projected: bool = True, memoize: bool = True) -> None:
        self.n, self.ticks, self.projected = nodes, ticks, projected
        super().__init__({"nodes": nodes}, memoize=memoize)

    @rule("Tick", params={"i": "node"}, reads=("node[i]",), writes=("node[i]",))
    def tick(self, node: Node) -> Any:
        return {"node": node._replace(count=node.count + 1)} if node.count < self.ticks else None

    @rule("Reset", params={"i": "node"}, reads=("node[i]", "rounds"), writes=("node[i]", "rounds"))
    def reset(self, node: Node, rounds: int) -> Any:
        return {"node": Node(0, 0), "rounds": rounds + 1} if node.phase == 2 and rounds < 2 else None


class Whole(Nodes):
    """The decisions on the whole parts."""

    @precondition(lambda self, node: node.phase < 2)
    @rule("Advance", params={"i": "node"}, reads=("node[i]", "all=node", "rounds"), writes=("node[i]", "log"),
          results=("to",))
    def advance(self, i: int, node: Node, all: tuple[Node, ...], rounds: int) -> Any:
        if any(n.phase == 2 for j, n in enumerate(all) if j != i) or (node.phase == 1 and rounds % 2):
            return None
        return {"node": node._replace(phase=node.phase + 1), "log": (), "to": node.phase + 1}

    @invariant("AtMostOneBusy", reads=("node",))
    def one_busy(self, node: tuple[Node, ...]) -> bool:
        """at most one node in phase 2"""
        return sum(n.phase == 2 for n in node) <= 1

    @constraint(reads=("node",))
    def bounded(self, node: tuple[Node, ...]) -> bool:
        return sum(n.phase for n in node) <= 4

    @transition("PhasesGrowByOne", reads=("node",), actions=("Advance",))
    def grows(self, step: tuple, before: Any, after: Any) -> bool:
        """an Advance moves one phase up by one"""
        return sum(b.phase - a.phase for a, b in zip(before.node, after.node)) == 1


class Projected(Nodes):
    """The same decisions, each on projections of the parts."""

    @precondition(lambda self, node: node < 2)
    @rule("Advance", params={"i": "node"}, reads=("node[i]:phase", "all=node:busy", "rounds:parity"),
          writes=("node[i]", "log"), results=("to",))
    def advance(self, i: int, node: int, all: tuple[bool, ...], rounds: int) -> Any:
        if any(b for j, b in enumerate(all) if j != i) or (node == 1 and rounds):
            return None
        return {"node": Node(node + 1, 0), "log": (), "to": node + 1}

    @invariant("AtMostOneBusy", reads=("node:busy",))
    def one_busy(self, node: tuple[bool, ...]) -> bool:
        """at most one node in phase 2"""
        return sum(node) <= 1

    @constraint(reads=("node:phase",))
    def bounded(self, node: tuple[int, ...]) -> bool:
        return sum(node) <= 4

    @transition("PhasesGrowByOne", reads=("node:phase",), actions=("Advance",))
    def grows(self, step: tuple, before: Any, after: Any) -> bool:
        """an Advance moves one phase up by one"""
        return sum(after.node) - sum(before.node) == 1


def _graph(m: Composed) -> tuple[int, int, str]:
    result = explore(m, ExploreOptions(stop_at_first=False, check_deadlock=False))
    return result.stats.distinct, result.stats.generated, result.verdict


def test_projected_reads_give_the_steps_of_whole_reads_where_the_effect_keeps_the_rest() -> None:
    class WholeReset(Whole):
        @precondition(lambda self, node: node.phase < 2)
        @rule("Advance", params={"i": "node"}, reads=("node[i]", "all=node", "rounds"), writes=("node[i]", "log"),
              results=("to",))
        def advance(self, i: int, node: Node, all: tuple[Node, ...], rounds: int) -> Any:
            if any(n.phase == 2 for j, n in enumerate(all) if j != i) or (node.phase == 1 and rounds % 2):
                return None
            return {"node": Node(node.phase + 1, 0), "log": (), "to": node.phase + 1}

    whole, projected = WholeReset(), Projected()
    a = sorted(reachable_steps(whole))
    b = sorted(reachable_steps(projected))
    assert a == b and len(a) > 100
    assert _graph(WholeReset()) == _graph(Projected())
    assert _graph(Projected())[2] == "holds"


def test_projected_memos_share_entries_across_unread_fields() -> None:
    whole, projected = Whole(), Projected()
    _graph(whole), _graph(projected)

    def entries(m: Composed) -> int:
        (r,) = [r for r in m._plan.rules if r.action == "Advance"]
        return sum(len(b.memo) for b in r.bindings)

    assert entries(projected) * 3 < entries(whole)
    inv_whole = whole._plan.property_objs["AtMostOneBusy"].bindings[0][3]
    inv_proj = projected._plan.property_objs["AtMostOneBusy"].bindings[0][3]
    assert len(inv_proj) <= 8 < len(inv_whole)  # 3 nodes busy or not


@pytest.mark.parametrize("cls", [Whole, Projected])
def test_memoised_and_recomputed_agree(cls: type[Nodes]) -> None:
    report = compare_memo(lambda memo: cls(memoize=memo))
    assert report.complete and report.states > 50


def test_a_projection_violation_is_found_as_with_whole_reads() -> None:
    class WholeBad(Whole):
        @invariant("AtMostOneBusy", reads=("node",))
        def one_busy(self, node: tuple[Node, ...]) -> bool:
            """never two nodes in phase 1 or more"""
            return sum(n.phase >= 1 for n in node) <= 1

    class ProjectedBad(Projected):
        @invariant("AtMostOneBusy", reads=("node:phase",))
        def one_busy(self, node: tuple[int, ...]) -> bool:
            """never two nodes in phase 1 or more"""
            return sum(p >= 1 for p in node) <= 1

    assert _graph(Whole())[2] == "holds"
    a = explore(WholeBad(), ExploreOptions(check_deadlock=False))
    b = explore(ProjectedBad(), ExploreOptions(check_deadlock=False))
    assert a.verdict == b.verdict == "violated"
    (va,), (vb,) = a.violations, b.violations
    assert va.property == vb.property == "AtMostOneBusy"
    assert [t.step for t in va.trace] == [t.step for t in vb.trace] and len(va.trace) >= 2


def test_the_function_sees_the_projection_only() -> None:
    seen: list[Any] = []

    class Spy(Nodes):
        @rule("Look", params={"i": "node"}, reads=("node[i]:phase", "rounds:parity"), writes=("log",))
        def look(self, node: Any, rounds: Any) -> Any:
            seen.append((node, rounds))
            return None

        @invariant("Looks", reads=("all=node:busy",))
        def looks(self, all: Any) -> bool:
            """."""
            seen.append(all)
            return True

        @transition("LooksToo", reads=("node:phase",))
        def looks_too(self, step: tuple, before: Any, after: Any) -> bool:
            """."""
            seen.append((vars(before), vars(after)))
            return True

    _graph(Spy())
    assert seen
    for x in seen:
        if isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], dict):
            assert all(type(v) is int for v in x[0]["node"] + x[1]["node"])
        elif len(x) == 2 and type(x[0]) is int:
            assert type(x[1]) is int and 0 <= x[1] <= 1 and 0 <= x[0] <= 2
        else:
            assert all(type(v) is bool for v in x)
    assert not any(isinstance(v, Node) for x in seen for v in (x if isinstance(x, tuple) else (x,)))


def test_slot_contents_with_equal_projections_share_one_projected_object() -> None:
    from eoscheck.checker.compose.rules import _Projection
    proj = _Projection("x:pair", lambda v: (v % 2, "odd" if v % 2 else "even"), None)
    assert [proj.ids[v] for v in range(6)] == [0, 1, 0, 1, 0, 1]
    assert proj.values[0] == (0, "even") and proj.values[0] is proj.values[2] is proj.values[4]
    assert proj.values[1] is proj.values[3] is proj.values[5] and len(proj.shared) == 2
    proj.clear()
    assert not proj.shared and proj.values[3] == (1, "odd") and proj.ids[3] == 0


def test_clear_caches_forgets_projection_ids_with_the_memos() -> None:
    m = Projected()
    first = _graph(m)
    proj = m._plan.projections[("node", "phase")]
    assert proj.by_value
    m.clear_caches()
    assert not proj.by_value and not proj.ids and not proj.shared
    assert _graph(m) == first


class _Bad(Composed):
    node = Actors(count=2, init=Node(0, 0), projections={"phase": _phase, "fields": lambda n: [n.phase],
                                                         "lens": Projection(_phase, lambda n, p: n._replace(phase=p))})


@pytest.mark.parametrize("reads, writes, message", [
    (("node[i]:speed",), (), "part 'node' has no projection 'speed' (its projections: phase, fields, lens)"),
    (("node[i]:phase",), ("node[i]:phase",), "projection node:phase is read only"),
    (("node[i]:phase",), ("node[i]", "n=node[i]:lens"), "writes node both whole and through a projection"),
    (("node[i]:phase:more",), (), "is not a part name"),
])
def test_a_bad_projection_declaration_is_one_compose_error(reads: tuple[str, ...], writes: tuple[str, ...],
                                                           message: str) -> None:
    class Bad(_Bad):
        @rule("Go", params={"i": 2}, reads=reads, writes=writes)
        def go(self, **parts: Any) -> Any:
            return None

    with pytest.raises(ComposeError, match="rule Go .*" + message.replace("(", r"\(").replace(")", r"\)")) as exc:
        Bad({})
    assert "\n" not in str(exc.value)


def test_a_projection_of_a_part_without_projections_is_a_compose_error() -> None:
    class Bad(Composed):
        rounds = Scalar(init=0)

        @invariant("I", reads=("rounds:parity",))
        def i(self, rounds: int) -> bool:
            return True

    with pytest.raises(ComposeError, match=r"invariant I: part 'rounds' has no projection 'parity' \(its projections: none\)"):
        Bad({})


def test_an_unhashable_projection_is_a_compose_error_on_first_use() -> None:
    class Bad(_Bad):
        @rule("Go", params={"i": 2}, reads=("node[i]:fields",))
        def go(self, node: Any) -> Any:
            return None

    m = Bad({})
    with pytest.raises(ComposeError, match="projection node:fields returned an unhashable list"):
        m.successors(next(iter(m.init_states())))


def test_a_gate_on_a_projection_of_a_part_the_effect_reads_whole() -> None:
    class Gated(Nodes):
        @precondition(lambda self, phase: phase < 2)
        @rule("Advance", params={"i": "node"}, reads=("node[i]", "phase=node[i]:phase"), writes=("node[i]",))
        def advance(self, node: Node) -> Any:
            return {"node": node._replace(phase=node.phase + 1)}

    class Plain(Nodes):
        @rule("Advance", params={"i": "node"}, reads=("node[i]",), writes=("node[i]",))
        def advance(self, node: Node) -> Any:
            return {"node": node._replace(phase=node.phase + 1)} if node.phase < 2 else None

    gated = Gated()
    (rule_,) = [r for r in gated._plan.rules if r.action == "Advance"]
    b = rule_.bindings[0]
    slot = gated.slot("node")
    # the gate is memoised on the projection; the full key holds the slot once (its projection is implied)
    assert b.key_slots == [slot] and b.gate_slots == [(slot, gated._plan.projections[("node", "phase")])]
    assert sorted(reachable_steps(gated)) == sorted(reachable_steps(Plain()))
    assert compare_memo(lambda memo: Gated(memoize=memo)).complete
    assert len(b.gate_memo) <= 3  # one entry per phase, however the counts move


def test_a_projection_read_twice_per_state_is_looked_up_once() -> None:
    class Twice(Projected):
        @rule("Peek", params={"i": "node"}, reads=("node[i]:phase",))
        def peek(self, node: int) -> Any:
            return None

    twice = Twice()
    source = twice._plan.source
    phase = twice._plan.projections[("node", "phase")]
    base = twice.slot("node")
    top = [x for x in source.splitlines() if x.startswith("    ") and not x.startswith("     ")]
    for i in range(3):  # read by Advance's gate and by Peek: at most once per state
        term = f"P{id(phase)}[s{base + i}]"  # the place's local (``_Plan.compile`` unpacks the state)
        assert term in source
        # both lookups are answered by the host keyed on node[i] (which decides the projection):
        # the projection is read only where a place is filled, never on every state
        assert not [x for x in top if term in x], source
    assert source.count("H0 = hm0.get(k)") == 1 and "H3" not in source
    assert _graph(twice) == _graph(Projected())


class Lensed(Nodes):
    """Whole's Advance through a written projection: it sees and writes the phase alone; the count is
    kept by ``put``."""

    node = Actors(count="nodes", init=Node(0, 0), projections={
        "phase": Projection(_phase, lambda n, p: n._replace(phase=p)), "busy": lambda n: n.phase == 2})

    @precondition(lambda self, node: node < 2)
    @rule("Advance", params={"i": "node"}, reads=("node[i]:phase", "all=node:busy", "rounds:parity"),
          writes=("node[i]:phase", "log"), results=("to",))
    def advance(self, i: int, node: int, all: tuple[bool, ...], rounds: int) -> Any:
        if any(b for j, b in enumerate(all) if j != i) or (node == 1 and rounds):
            return None
        return {"node": node + 1, "log": (), "to": node + 1}

    one_busy = Whole.one_busy
    bounded = Whole.bounded
    grows = Whole.grows


def test_a_write_through_a_projection_keeps_the_other_fields() -> None:
    lensed, whole = Lensed(), Whole()
    a, b = sorted(reachable_steps(lensed)), sorted(reachable_steps(whole))
    assert a == b and any(Node(1, 1) == v for _, _, t in a for v in lensed.view(t).node)
    assert _graph(Lensed()) == _graph(Whole())
    assert compare_memo(lambda memo: Lensed(memoize=memo)).complete
    (rule_,) = [r for r in lensed._plan.rules if r.action == "Advance"]
    # memoised on projections only: far fewer entries than the states it was applied in
    assert sum(len(b.memo) for b in rule_.bindings) * 3 < sum(len(b.memo) for r in whole._plan.rules
                                                              if r.action == "Advance" for b in r.bindings)

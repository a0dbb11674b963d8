"""The expansion core: its counting and checking contract, the edges it hands out for analyses of
the explored graph (liveness), and stores swapped behind their interfaces."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import pytest
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.explore import bfs as bfs_module
from eoscheck.checker.explore.expand import Expander
from eoscheck.checker.explore.options import STRATEGIES
from eoscheck.checker.explore.visited import VisitedSet
from eoscheck.checker.machine import Machine, Property
from eoscheck.checker.registry import find_model


class Mod(Machine):
    """x in 0..n-1; +1 and +2 (mod n), and a step to n (outside the constraint)."""

    actions: Mapping[str, tuple[str, ...]] = MappingProxyType({"One": (), "Two": (), "Out": ()})

    def __init__(self, n: int = 7) -> None:
        self.n = n

    def init_states(self):
        yield (0,)

    def successors(self, s):
        yield ("One",), ((s[0] + 1) % self.n,)
        yield ("Two",), ((s[0] + 2) % self.n,)
        yield ("Out",), (self.n,)

    def within_bounds(self, s):
        return s[0] < self.n

    def properties(self):
        return {"NoBigJump": Property("NoBigJump", "never from 5 to 0", "transition",
                                      lambda a, step, b: not (a[0] == 5 and b[0] == 0))}

    def fields(self, s):
        return {"x": s[0]}


def test_chunk_counts_checks_dedups_and_records_edges():
    m = Mod()
    ex = Expander(m, stop_at_first=False)

    edges: list = []
    seen: set[int] = set()
    cand = ex.expand_chunk([(3,), (5,)], [11, 22], 4, known={ex.fp.fn((4,))}, seen=seen, edges=edges)
    # generated counts every successor, the one outside the constraint included
    assert cand.generated == 6 and cand.gen_cov == {"One": 2, "Two": 2, "Out": 2}
    # (4,) is known, (5,) from 3 and (6,) from 5 ... in discovery order, each once
    assert cand.states == [(5,), (6,), (0,)]
    assert cand.parents == [11, 22, 22]
    assert [s[0] for s in cand.steps] == ["Two", "One", "Two"]
    # every successor inside the constraint is an edge, duplicates and known ones included
    assert [(p, a[0]) for p, _, a in edges] == [(11, "One"), (11, "Two"), (22, "One"), (22, "Two")]
    assert [h for _, h, _ in edges] == [ex.fp.fn((4,)), ex.fp.fn((5,)), ex.fp.fn((6,)), ex.fp.fn((0,))]
    # the transition 5 -> 0 is reported once, naming the source's reference and level
    (p,) = ex.found
    assert (p.name, p.kind, p.ref, p.level, p.step, p.state, p.length) == \
        ("NoBigJump", "transition", 22, 4, ("Two",), (0,), 5)


def test_a_successor_seen_before_skips_the_constraint_but_not_the_transition_checks():
    asked: list[tuple] = []

    class Counting(Mod):
        fingerprint_kind = "hash"  # the engines' usual loop (hash fingerprints, no view or symmetry)

        def within_bounds(self, s):
            asked.append(s)
            return super().within_bounds(s)

    ex = Expander(Counting(), stop_at_first=False)
    # 3 -> 4, 5, out; 5 -> 6, 0, out: (4,) is known and (0,) was kept from an earlier chunk
    seen = {ex.fp.fn((0,))}
    cand = ex.expand_chunk([(3,), (5,)], [11, 22], 4, known={ex.fp.fn((4,))}, seen=seen)
    assert asked == [(5,), (7,), (6,), (7,)]  # the known and seen successors are inside already
    assert cand.states == [(5,), (6,)] and cand.outside == {"Out": 2}
    assert cand.generated == 6 and cand.gen_cov == {"One": 2, "Two": 2, "Out": 2}
    # 5 -> 0 leads to a state seen before: the step is still checked (before dedup)
    assert [(p.name, p.ref, p.state) for p in ex.found] == [("NoBigJump", 22, (0,))]


def test_expand_one_hands_out_steps_leaving_the_constraint_only_when_asked():
    ex = Expander(Mod(), stop_at_first=False)
    inside = [(step[0], nxt, h) for step, nxt, h in ex.expand_one((3,))]
    assert inside == [("One", (4,), ex.fp.fn((4,))), ("Two", (5,), ex.fp.fn((5,)))]
    # liveness counts an action enabled where its step leaves the constraint: the step comes in the
    # machine's order among the others, unfingerprinted, and no transition check sees it
    every = [(step[0], nxt, h) for step, nxt, h in ex.expand_one((3,), out_of_bounds=True)]
    assert every == inside + [("Out", (7,), None)]
    cov: dict[str, int] = {}
    assert [step[0] for step, _, _ in ex.expand_one((5,), gen_cov=cov, out_of_bounds=True)] == ["One", "Two", "Out"]
    assert cov == {"One": 1, "Two": 1, "Out": 1}
    assert [p.name for p in ex.found] == ["NoBigJump"]  # 5 -> 0, still checked inside the constraint


def test_stop_at_first_stops_at_the_violating_step():
    ex = Expander(Mod(), stop_at_first=True)
    cand = ex.expand_chunk([(5,), (1,)], [1, 2], 1)
    assert cand.stopped and cand.generated == 2  # One, then Two (the violation); nothing after
    assert cand.states == [(6,)]


def test_deadlock_is_no_successor_at_all():
    class Stuck(Mod):
        def successors(self, s):
            if s[0] == 0:
                yield ("Out",), (self.n,)  # a successor, outside the constraint: not a deadlock

    ex = Expander(Stuck(), stop_at_first=False)
    ex.expand_chunk([(0,), (3,)], [1, 2], 2)
    assert [(p.kind, p.ref) for p in ex.found] == [("deadlock", 2)]


def test_expand_one_is_lazy_and_counts_what_it_generated():
    ex = Expander(Mod(), stop_at_first=False)
    cov: dict[str, int] = {}
    it = ex.expand_one((1,), 0, 1, cov)
    step, nxt, h = next(it)
    assert (step, nxt, h) == (("One",), (2,), ex.fp.fn((2,))) and cov == {"One": 1}
    assert [n for _, n, _ in it] == [(3,)] and cov == {"One": 1, "Two": 1, "Out": 1}


def test_bfs_on_the_plain_python_store_gives_the_same_run(monkeypatch):
    machine = find_model("examples.twophase").machine(variant="tla", bounds={"rms": 4})
    compact = explore(machine, ExploreOptions(stop_at_first=False))
    monkeypatch.setattr(bfs_module, "STORE", VisitedSet)
    plain = explore(machine, ExploreOptions(stop_at_first=False))
    assert (plain.stats.distinct, plain.stats.generated, plain.stats.depth) == \
        (compact.stats.distinct, compact.stats.generated, compact.stats.depth)
    assert plain.stats.observed_collision == compact.stats.observed_collision


def test_registry_drives_the_cli_and_the_spec_validator():
    from eoscheck.checker import cli

    assert cli.ENGINES == tuple(STRATEGIES) == ("bfs", "dfs", "simulate", "parallel", "spark")
    with pytest.raises(ValueError, match="valid strategies: bfs, dfs, simulate, parallel, spark"):
        explore(Mod(), ExploreOptions(strategy="nope"))


def test_a_new_engine_is_one_module_and_one_registry_line(monkeypatch):
    import sys
    import types

    from eoscheck.checker.explore.expand import Expander as Core
    from eoscheck.checker.explore.options import Strategy
    from eoscheck.checker.result import Result, Stats

    def explore_count(machine, options, progress=None):
        # a toy engine: level by level on the expansion core, counting states
        core = Core(machine, options.properties, stop_at_first=False)
        generated, states, fps = core.init_states()
        seen = set(fps)
        while states:
            cand = core.expand_chunk(states, fps, 0, known=seen)
            generated += cand.generated
            seen.update(cand.fps)
            states, fps = cand.states, cand.fps
        return Result("holds", "toy", Stats(distinct=len(seen), generated=generated))

    module = types.ModuleType("eoscheck_toy.engine")
    module.explore_count = explore_count
    monkeypatch.setitem(sys.modules, "eoscheck_toy", types.ModuleType("eoscheck_toy"))
    monkeypatch.setitem(sys.modules, "eoscheck_toy.engine", module)
    monkeypatch.setitem(STRATEGIES, "toy", Strategy("toy", "eoscheck_toy.engine", "explore_count", "a toy"))
    toy = explore(Mod(), ExploreOptions(strategy="toy"))
    bfs = explore(Mod(), ExploreOptions(stop_at_first=False))
    assert (toy.stats.distinct, toy.stats.generated) == (bfs.stats.distinct, bfs.stats.generated) == (7, 22)


def test_bfs_records_the_explored_edges_when_asked():
    result = explore(Mod(), ExploreOptions(stop_at_first=False, record_edges=True))
    parents, children, actions = result.edges.arrays()
    # every successor inside the constraint: 7 states x (One, Two); Out leaves the constraint
    assert len(result.edges) == 14 == result.stats.generated - 1 - 7
    ex = Expander(Mod())
    fp = {x: ex.fp.fn((x,)) & ((1 << 64) - 1) for x in range(7)}
    got = {(int(p), int(c), result.edges.names[a]) for p, c, a in zip(parents, children, actions)}
    assert got == {(fp[x], fp[(x + d) % 7], name) for x in range(7) for d, name in ((1, "One"), (2, "Two"))}
    assert explore(Mod(), ExploreOptions(stop_at_first=False)).edges is None


def test_every_engine_counts_the_successors_the_constraint_cut() -> None:
    # each of Mod's 7 states has one "Out" step to x = 7, outside the constraint: generated, never
    # explored, and reported per action (fidelity review finding 23: a bound may cut runs silently)
    results = {s: explore(Mod(), ExploreOptions(strategy=s, stop_at_first=False, workers=2))
               for s in ("bfs", "dfs", "parallel")}
    for strategy, r in results.items():
        cov = r.stats.coverage
        assert (cov["Out"].generated, cov["Out"].outside, cov["Out"].distinct) == (7, 7, 0), strategy
        assert cov["One"].outside == cov["Two"].outside == 0, strategy
        assert r.stats.outside == 7, strategy
    walk = explore(Mod(), ExploreOptions(strategy="simulate", stop_at_first=False, walks=5, walk_depth=10, seed=1))
    assert walk.stats.coverage["Out"].outside == walk.stats.coverage["Out"].generated > 0


def test_the_reports_show_the_cut_successors() -> None:
    from eoscheck.checker.report import stats_json

    r = explore(Mod(), ExploreOptions(stop_at_first=False))
    out = stats_json(r.stats, list(Mod.actions))
    assert out["outside_constraint"] == 7
    assert out["coverage"]["Out"] == {"generated": 7, "distinct": 0, "outside": 7}
    # an action the machine's list leaves out still shows when the constraint cut its steps
    assert stats_json(r.stats, ["One", "Two"])["coverage"]["Out"]["outside"] == 7

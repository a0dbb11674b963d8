"""Views (TLC's VIEW): deduplication on a projection, chosen by the machine, a spec or --view,
independent of symmetry, and named in the report."""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Mapping
from pathlib import Path

import pytest
from eoscheck.checker.cli import main
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.machine import Machine, Property
from eoscheck.checker.registry import Bound, ModelDef, Variant
from eoscheck.checker.spec import load_spec, spec_to_options
from eoscheck.checker.state_view import UnknownViewError, View


class Pairs(Machine):
    """(x, y, steps): x and y count to ``top`` independently (and are symmetric); ``steps``
    records how many steps were taken, a history field that multiplies the space. The view
    ``no-history`` drops it."""

    actions: Mapping[str, tuple[str, ...]] = {"IncX": (), "IncY": ()}

    def __init__(self, top: int = 3, default: str | None = None) -> None:
        self.top = top
        self.default_view = default  # type: ignore[misc]

    def init_states(self):
        yield (0, 0, 0)

    def successors(self, s):
        x, y, n = s
        if x < self.top:
            yield ("IncX",), (x + 1, y, n + 1)
        if y < self.top:
            yield ("IncY",), (x, y + 1, n + 1)

    def is_terminal(self, s):
        return s[0] == s[1] == self.top

    def canonical(self, s):
        return (min(s[0], s[1]), max(s[0], s[1]), s[2])

    def properties(self):
        return {"SumBounded": Property("SumBounded", "x + y <= 2 top", "invariant",
                                       lambda s: s[0] + s[1] <= 2 * self.top)}

    def views(self):
        return {"no-history": View("no-history", "x and y without the step count", lambda s: s[:2]),
                "x": View("x", "x only", lambda s: s[0])}

    def fields(self, s):
        return {"x": s[0], "y": s[1], "steps": s[2]}


def test_without_a_view_history_does_not_multiply_here_but_the_view_is_named():
    # steps == x + y, so the history field adds no states: the view keeps the count
    full = explore(Pairs(), ExploreOptions(symmetry=False))
    viewed = explore(Pairs(), ExploreOptions(symmetry=False, view="no-history"))
    assert full.stats.distinct == viewed.stats.distinct == 16
    assert full.view is None
    assert viewed.view == "no-history (x and y without the step count)"


def test_a_view_merges_states_and_symmetry_is_independent():
    x_only = explore(Pairs(), ExploreOptions(symmetry=False, view="x"))
    assert x_only.stats.distinct == 4  # x in 0..3
    # generated still counts every successor of each kept state
    assert x_only.stats.generated > x_only.stats.distinct
    # symmetry on top of the view: canonical first, then the view (unordered {x, y})
    both = explore(Pairs(), ExploreOptions(symmetry=True, view="no-history"))
    assert both.stats.distinct == 10 and both.view.startswith("no-history ")
    # a view can hide progress, as TLC's does: the canonical form's x is min(x, y), which no
    # single step from (0, 0) raises, so every successor is "old"
    assert explore(Pairs(), ExploreOptions(symmetry=True, view="x")).stats.distinct == 1
    sym = explore(Pairs(), ExploreOptions(symmetry=True))
    assert sym.stats.distinct == 10 and sym.view is None


@pytest.mark.parametrize("strategy", ["bfs", "dfs", "parallel"])
def test_machine_default_view_survives_no_symmetry_and_none_turns_it_off(strategy):
    machine = Pairs(default="x")
    on = explore(machine, ExploreOptions(strategy=strategy, symmetry=False))
    assert on.stats.distinct == 4 and on.view.startswith("x ")
    off = explore(machine, ExploreOptions(strategy=strategy, symmetry=False, view="none"))
    assert off.stats.distinct == 16 and off.view is None


def test_unknown_view_is_refused_before_running():
    with pytest.raises(UnknownViewError, match="unknown view 'nope'; valid views: no-history, x, none"):
        explore(Pairs(), ExploreOptions(view="nope"))


def test_violation_trace_under_a_view_is_a_real_trace():
    class Broken(Pairs):
        def properties(self):
            return {"XBelow2": Property("XBelow2", "x < 2", "invariant", lambda s: s[0] < 2)}

    result = explore(Broken(), ExploreOptions(symmetry=False, view="no-history"))
    (v,) = result.violations
    assert [t.state[0] for t in v.trace] == [0, 1, 2] and v.length == 3


PAIRS = ModelDef(name="toy.pairs", doc="pairs", variants={"plain": Variant("plain")},
                 default_variant="plain", switches={}, bounds={"top": Bound("top", 3, 1, 9)},
                 properties={"SumBounded": "x + y <= 2 top"},
                 build=lambda switches, bounds: Pairs(bounds["top"]))


@pytest.fixture
def pairs_spec(monkeypatch, tmp_path):
    module = types.ModuleType("eoscheck_toy_views")
    module.MODELS = [PAIRS]
    monkeypatch.setitem(sys.modules, "eoscheck_toy_views", module)

    def write(extra: str) -> Path:
        path = tmp_path / "pairs.toml"
        path.write_text('model = "eoscheck_toy_views:MODELS"\n[check]\nsymmetry = false\n' + extra)
        return path
    return write


def test_spec_names_the_view_and_the_summary_reports_it(pairs_spec, tmp_path, capsys):
    path = pairs_spec('view = "x"\n')
    assert spec_to_options(load_spec(path)).view == "x"
    code = main(["check", str(path), "--out", str(tmp_path / "cx"), "--json", str(tmp_path / "s.json"),
                 "--no-progress", "-v"])  # statistics (and the view under them) are shown on -v
    out = capsys.readouterr().out
    assert code == 0
    assert "View: x (x only)" in out
    assert "Based on the actual fingerprints: " in out  # TLC's second collision estimate
    entry = json.loads((tmp_path / "s.json").read_text())["specs"][0]
    assert entry["view"] == "x (x only)" and entry["stats"]["distinct"] == 4
    assert 0 < entry["stats"]["observed_collision_probability"] < 1e-6
    # --view overrides the spec; --no-symmetry does not touch it
    code = main(["check", str(path), "--out", str(tmp_path / "cx"), "--json", str(tmp_path / "s.json"),
                 "--no-progress", "--quiet", "--view", "none", "--no-symmetry"])
    assert code == 0
    assert json.loads((tmp_path / "s.json").read_text())["specs"][0]["stats"]["distinct"] == 16


def test_unknown_view_on_the_command_line_is_one_line_exit_2(pairs_spec, tmp_path, capsys):
    code = main(["check", str(pairs_spec("")), "--out", str(tmp_path / "cx"), "--view", "nope"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "unknown view 'nope'" in err

"""The "action(s) never fired" warning: silent for actions a configuration switches off
(Machine.disabled_actions), still raised for an action whose guard is never true."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest
from eoscheck.checker.cli import main
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.machine import Machine, Property
from eoscheck.checker.report import make_outcome
from eoscheck.checker.spec import build_machine, load_spec, spec_to_options

REPO = Path(__file__).resolve().parents[1]
SPECS = sorted((REPO / "specs").glob("*.toml"))


class Counter(Machine):
    """Counts to 3. ``Jump`` needs a count of 5: a dead guard. ``Reset`` is switched off."""

    actions: Mapping[str, tuple[str, ...]] = {"Inc": (), "Jump": (), "Reset": ()}

    def __init__(self, declare: frozenset[str] = frozenset()) -> None:
        self.declare = declare

    def init_states(self) -> Iterable[int]:
        return [0]

    def successors(self, s: int) -> Iterable[tuple[tuple, int]]:
        if s < 3:
            yield ("Inc",), s + 1
        if s == 5:
            yield ("Jump",), 0

    def properties(self) -> Mapping[str, Property]:
        return {"Small": Property("Small", "below 4", "invariant", lambda s: s < 4)}

    def is_terminal(self, s: int) -> bool:
        return s == 3

    def fields(self, s: int) -> dict:
        return {"n": s}

    def disabled_actions(self) -> frozenset[str]:
        return self.declare


def never_fired(machine: Machine) -> list[str]:
    result = explore(machine, ExploreOptions())
    from eoscheck.checker.spec import CheckOptions, Expect, Spec

    spec = Spec(Path("x.toml"), "x", "", "m", "v", {}, {}, {}, CheckOptions(), Expect())
    return make_outcome(spec, result, list(machine.actions), machine.disabled_actions()).never_fired()


def test_dead_guard_warns_and_a_declared_switch_does_not():
    assert never_fired(Counter()) == ["Jump", "Reset"]
    assert never_fired(Counter(frozenset({"Reset"}))) == ["Jump"]  # Jump is still reported


def test_an_incomplete_run_does_not_warn():
    machine = Counter()
    result = explore(machine, ExploreOptions(max_states=2))
    from eoscheck.checker.spec import CheckOptions, Expect, Spec

    spec = Spec(Path("x.toml"), "x", "", "m", "v", {}, {}, {}, CheckOptions(), Expect())
    assert result.limit_hit and make_outcome(spec, result, list(machine.actions)).never_fired() == []


@pytest.mark.parametrize("name", ["eos-beta-kip447", "epoch-overflow-shipped", "kip890-tv2",
                                  "coordinator-failover", "first-write-reorder-designed"])
def test_shipped_specs_do_not_warn(name, capsys):
    assert main(["check", str(REPO / "specs" / f"{name}.toml"), "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert "never fired" not in out + err


@pytest.mark.slow
@pytest.mark.parametrize("path", SPECS, ids=[p.stem for p in SPECS])
def test_a_disabled_action_never_fires(path):
    """Soundness: what a machine declares switched off does not fire in the whole (bounded) space."""
    spec = load_spec(path)
    machine = build_machine(spec)
    options = spec_to_options(spec, {"stop_at_first": False, "properties": None, "max_states": 200_000})
    result = explore(machine, options)
    fired = {a for a, c in result.stats.coverage.items() if c.generated}
    assert not fired & machine.disabled_actions()

"""Spec loading and validation: every error is one line that starts with the file path."""

from __future__ import annotations

import sys
import types
from collections.abc import Mapping
from pathlib import Path

import pytest
from eoscheck.checker.explore.options import ExploreOptions
from eoscheck.checker.machine import Machine, Property
from eoscheck.checker.registry import Bound, ModelDef, Switch, Variant
from eoscheck.checker.spec import SpecError, build_machine, load_spec, spec_to_options


class Counter(Machine):
    """Counts up to ``limit``; the invariant ``Small`` fails at ``bad``."""

    actions: Mapping[str, tuple[str, ...]] = {"Inc": ("by",)}

    def __init__(self, limit: int, bad: int, mode: str) -> None:
        self.limit, self.bad, self.mode = limit, bad, mode

    def init_states(self):
        return [(0,)]

    def successors(self, state):
        if state[0] < self.limit:
            yield ("Inc", 1), (state[0] + 1,)

    def properties(self):
        return {"Small": Property("Small", "x stays below bad", "invariant",
                                  lambda s: s[0] < self.bad),
                "Up": Property("Up", "x never decreases", "transition",
                               lambda s, step, t: t[0] >= s[0])}

    def fields(self, state):
        return {"counter.x": state[0]}


def _build(switches, bounds):
    if bounds["limit"] < bounds["bad"] and switches["strict"]:
        raise ValueError("strict mode needs limit >= bad")
    return Counter(bounds["limit"], bounds["bad"], switches["mode"])


TOY = ModelDef(
    name="toy.counter", doc="a counter",
    variants={"plain": Variant("defaults"), "fast": Variant("fast mode", {"mode": "fast"})},
    default_variant="plain",
    switches={"mode": Switch("how to count", "slow", ("slow", "fast")),
              "strict": Switch("reject impossible bounds", False),
              "step": Switch("increment", 1)},
    bounds={"limit": Bound("largest value", 5, 1, 10), "bad": Bound("first bad value", 3, 0, 10)},
    properties={"Small": "x stays below bad", "Up": "x never decreases"},
    build=_build,
)
MODEL = "eoscheck_toy_spec:MODELS"


@pytest.fixture(autouse=True)
def toy_module(monkeypatch):
    module = types.ModuleType("eoscheck_toy_spec")
    module.MODELS = [TOY]
    monkeypatch.setitem(sys.modules, "eoscheck_toy_spec", module)


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


GOOD = f'''
description = "counter breaks at 3"
model = "{MODEL}"
variant = "fast"

[switches]
strict = true

[bounds]
limit = 6

[check]
properties = ["Small"]
strategy = "dfs"
deadlock = false
max_states = 100
max_seconds = 2
seed = 4

[expect]
verdict = "violates"
property = "Small"
length = 4
'''


def test_good_spec_loads_with_resolved_switches_and_bounds(tmp_path):
    spec = load_spec(write(tmp_path, GOOD, "counter-bug.toml"))
    assert spec.name == "counter-bug"
    assert spec.description == "counter breaks at 3"
    assert spec.variant == "fast"
    assert dict(spec.switches) == {"mode": "fast", "strict": True, "step": 1}
    assert dict(spec.switch_overrides) == {"strict": True}
    assert dict(spec.bounds) == {"limit": 6, "bad": 3}
    assert spec.check.properties == ("Small",)
    assert spec.check.max_seconds == 2.0
    assert (spec.expect.verdict, spec.expect.property, spec.expect.length) == ("violates", "Small", 4)
    assert spec.prove is None


def test_minimal_spec_defaults(tmp_path):
    spec = load_spec(write(tmp_path, f'model = "{MODEL}"\n', "m.toml"))
    assert spec.name == "m" and spec.variant == "plain"
    assert spec.expect.verdict == "holds" and spec.expect.property is None
    assert spec.check.strategy == "bfs" and spec.check.deadlock is True


def test_options_combine_engine_defaults_spec_and_cli(tmp_path):
    spec = load_spec(write(tmp_path, GOOD))
    opts = spec_to_options(spec)
    assert isinstance(opts, ExploreOptions)
    assert opts.strategy == "dfs" and opts.properties == ("Small",)
    assert opts.check_deadlock is False and opts.max_states == 100 and opts.seed == 4
    assert opts.walks == ExploreOptions().walks  # not in the spec: engine default
    cli = spec_to_options(spec, {"strategy": "bfs", "max_states": None, "seed": 9})
    assert cli.strategy == "bfs" and cli.max_states == 100 and cli.seed == 9


def test_build_machine_and_model_rejection(tmp_path):
    spec = load_spec(write(tmp_path, GOOD))
    machine = build_machine(spec)
    assert isinstance(machine, Counter) and machine.limit == 6 and machine.mode == "fast"
    bad = load_spec(write(tmp_path, GOOD.replace("limit = 6", "limit = 2"), "b.toml"))
    with pytest.raises(SpecError) as err:
        build_machine(bad)
    assert str(err.value).startswith(f"{tmp_path / 'b.toml'}: model toy.counter rejected")


def test_prove_table_is_kept_raw(tmp_path):
    spec = load_spec(write(tmp_path, f'model = "{MODEL}"\n[prove]\nobligations = ["a", "b"]\ndepth = 3\n'))
    assert spec.prove == {"obligations": ["a", "b"], "depth": 3}


# (spec text, expected message fragment, expected line or None)
BAD = [
    ('model = "x\n', "invalid TOML", 1),
    (f'model = "{MODEL}"\n\n[bounds]\nlimit = = 3\n', "invalid TOML", 4),
    (f'model = "{MODEL}"\nfoo = 1\n', "unknown key 'foo' at top level; valid keys: bounds, check", 2),
    (f'model = "{MODEL}"\n\n[checks]\nmax_states = 3\n', "unknown key 'checks' at top level", 3),
    ('description = "no model"\n', "missing 'model'", None),
    ('model = "no.such.model"\n', "unknown model 'no.such.model'; valid models:", 1),
    ('model = "nosuchmodule_xyz:MODELS"\n', "cannot import model", 1),
    (f'model = "{MODEL}"\nvariant = "turbo"\n', "unknown variant 'turbo' of model toy.counter; valid variants: fast, plain", 2),
    (f'model = "{MODEL}"\n[switches]\nspeed = 1\n', "unknown switch 'speed' of model toy.counter; valid switches: mode, step, strict", 3),
    (f'model = "{MODEL}"\n[switches]\nstrict = 1\n', "switch 'strict' must be true or false, got 1", 3),
    (f'model = "{MODEL}"\n[switches]\nstep = true\n', "switch 'step' must be an integer, got true", 3),
    (f'model = "{MODEL}"\n[switches]\nmode = "warp"\n', 'switch \'mode\' = "warp" is not one of "slow", "fast"', 3),
    (f'model = "{MODEL}"\n[bounds]\nlimit = 11\n', "bound 'limit' = 11 is out of range 1..10", 3),
    (f'model = "{MODEL}"\n[bounds]\nlimit = 0\n', "out of range 1..10", 3),
    (f'model = "{MODEL}"\n[bounds]\nlimit = "3"\n', "bound 'limit' must be an integer in 1..10", 3),
    (f'model = "{MODEL}"\n[bounds]\nlimit = 2.5\n', "must be an integer in 1..10", 3),
    (f'model = "{MODEL}"\n[bounds]\nclients = 2\n', "unknown bound 'clients' of model toy.counter; valid bounds: bad, limit", 3),
    (f'model = "{MODEL}"\nbounds = 3\n', "'bounds' must be a table", 2),
    (f'model = "{MODEL}"\n[check]\nstrategy = "astar"\n', "unknown strategy 'astar'; valid strategies: bfs, dfs", 3),
    (f'model = "{MODEL}"\n[check]\nmax_states = "many"\n', 'check.max_states must be an integer, got "many"', 3),
    (f'model = "{MODEL}"\n[check]\nmax_states = 0\n', "check.max_states must be at least 1", 3),
    (f'model = "{MODEL}"\n[check]\ndeadlock = "no"\n', "check.deadlock must be true or false", 3),
    (f'model = "{MODEL}"\n[check]\nmax_seconds = -1\n', "check.max_seconds must be positive", 3),
    (f'model = "{MODEL}"\n[check]\nproperties = ["Big"]\n', "unknown property 'Big' of model toy.counter; valid properties: Small, Up", 3),
    (f'model = "{MODEL}"\n[check]\nproperties = []\n', "check.properties is empty", 3),
    (f'model = "{MODEL}"\n[check]\nspeed = 1\n', "unknown key 'speed' in [check]; valid keys:", 3),
    (f'model = "{MODEL}"\n[expect]\nverdict = "fails"\n', 'expect.verdict must be "holds" or "violates", got "fails"', 3),
    (f'model = "{MODEL}"\n[expect]\nverdict = "violates"\n', "needs expect.property", 3),
    (f'model = "{MODEL}"\n[expect]\nverdict = "violates"\nproperty = "Nope"\n', "unknown property 'Nope' of model toy.counter; valid properties: Small, Up, deadlock", 4),
    (f'model = "{MODEL}"\n[check]\nproperties = ["Up"]\n[expect]\nverdict = "violates"\nproperty = "Small"\n',
     "expect.property 'Small' is not checked", 6),
    (f'model = "{MODEL}"\n[check]\ndeadlock = false\n[expect]\nverdict = "violates"\nproperty = "deadlock"\n',
     'expect.property = "deadlock" but check.deadlock = false', 6),
    (f'model = "{MODEL}"\n[expect]\nverdict = "violates"\nproperty = "Small"\nlength = 0\n', "expect.length must be a positive integer", 5),
    (f'model = "{MODEL}"\n[expect]\nlength = 3\n', "expect.length is only meaningful with verdict", 3),
    (f'model = "{MODEL}"\n[expect]\nwhen = 3\n', "unknown key 'when' in [expect]", 3),
    (f'name = "has space"\nmodel = "{MODEL}"\n', "name 'has space' must be letters", 1),
    (f'model = "{MODEL}"\nprove = 1\n', "'prove' must be a table", 2),
]


@pytest.mark.parametrize("text,fragment,line", BAD)
def test_bad_specs_give_one_line_with_path_and_line(tmp_path, text, fragment, line):
    path = write(tmp_path, text)
    with pytest.raises(SpecError) as err:
        load_spec(path)
    message = str(err.value)
    assert "\n" not in message
    assert fragment in message
    prefix = f"{path}:{line}: " if line else f"{path}: "
    assert message.startswith(prefix), message


def test_missing_file_directory_and_binary(tmp_path):
    for target, fragment in [(tmp_path / "nope.toml", "no such file"), (tmp_path, "not a file")]:
        with pytest.raises(SpecError, match=fragment):
            load_spec(target)
    binary = tmp_path / "bin.toml"
    binary.write_bytes(b"\xff\xfe\x00model")
    with pytest.raises(SpecError) as err:
        load_spec(binary)
    assert str(err.value).startswith(f"{binary}: not a UTF-8 text file")

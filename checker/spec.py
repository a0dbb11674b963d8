"""Spec files: load a TOML spec, validate every key against the model's declaration, build the run.

A spec names a model, a variant, switch overrides, bounds, check options and the verdict it
expects. Everything is validated before anything runs, against the ``ModelDef`` the model publishes
(so validation never builds a machine). Every problem is a ``SpecError`` whose message is one line
that starts with the file path (and the line, when we can find it), because the CLI prints it as
is and exits 2.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from .explore.options import MAX_WORKERS, STRATEGIES, ExploreOptions
from .explore.spark_config import SparkConfigError, SparkSettings, parse_table
from .machine import Machine
from .pathmodel import is_path_model
from .pathmodel import resolve as resolve_model_path
from .registry import ModelDef, SwitchValue, UnknownModelError, find_model

VERDICTS = ("holds", "violates")
#: the pseudo-property a deadlock violation carries (see checker.result.ViolationKind)
DEADLOCK = "deadlock"

TOP_KEYS = ("name", "description", "model", "variant", "switches", "bounds", "check", "expect",
            "prove")
EXPECT_KEYS = ("verdict", "property", "length")
# Spec names become file names (counterexamples/<spec>.<property>.json), so keep them plain.
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class SpecError(ValueError):
    """A spec file is malformed or names something that does not exist. One line, path first."""


@dataclass(frozen=True)
class CheckOptions:
    """The ``[check]`` table; ``None`` means "not set in the spec" (the engine default applies)."""

    properties: tuple[str, ...] | None = None
    strategy: str = "bfs"
    deadlock: bool = True
    continue_: bool = False
    max_states: int | None = None
    max_depth: int | None = None
    max_seconds: float | None = None
    symmetry: bool = True
    view: str | None = None
    walks: int | None = None
    walk_depth: int | None = None
    seed: int | None = None
    workers: int | None = None
    #: the ``[check.spark]`` table (read by the Spark engine only)
    spark: SparkSettings = field(default_factory=SparkSettings)


@dataclass(frozen=True)
class Expect:
    verdict: str = "holds"  # "holds" | "violates"
    property: str | None = None  # required with "violates"
    length: int | None = None  # expected shortest trace length in states (TLC's count)


@dataclass(frozen=True)
class Spec:
    path: Path
    name: str
    description: str
    model: str
    variant: str
    #: complete switch values: model defaults, then the variant's, then the spec's overrides
    switches: Mapping[str, SwitchValue]
    #: only the switches the spec overrides (for reports)
    switch_overrides: Mapping[str, SwitchValue]
    #: complete bounds: model defaults, then the spec's values
    bounds: Mapping[str, int]
    check: CheckOptions
    expect: Expect
    #: the raw ``[prove]`` table for ``eoscheck prove`` (validated by the prover)
    prove: Mapping[str, Any] | None = None


# [check] key -> (CheckOptions field, accepted types, description for errors, minimum or None)
_CHECK_KEYS: dict[str, tuple[str, tuple[type, ...], str, float | None]] = {
    "properties": ("properties", (list,), "a list of property names", None),
    "strategy": ("strategy", (str,), "a string", None),
    "deadlock": ("deadlock", (bool,), "true or false", None),
    "continue": ("continue_", (bool,), "true or false", None),
    "max_states": ("max_states", (int,), "an integer", 1),
    "max_depth": ("max_depth", (int,), "an integer", 1),
    "max_seconds": ("max_seconds", (int, float), "a number", 0),
    "symmetry": ("symmetry", (bool,), "true or false", None),
    "view": ("view", (str,), "a view name", None),
    "walks": ("walks", (int,), "an integer", 1),
    "walk_depth": ("walk_depth", (int,), "an integer", 1),
    "seed": ("seed", (int,), "an integer", 0),
    "workers": ("workers", (int,), "an integer", 1),
}


def _type_ok(value: Any, types: tuple[type, ...]) -> bool:
    # TOML booleans are Python bools, which are also ints: never accept one for the other.
    if isinstance(value, bool):
        return bool in types
    return isinstance(value, types)


def _one_of(names: Any) -> str:
    names = sorted(str(n) for n in names)
    return ", ".join(names) if names else "(none)"


class _Locator:
    """Finds the line of ``key`` inside ``[table]`` in the raw text, so errors can point at it.

    Best effort: plain ``key = value`` lines under a ``[table]`` header (or at top level). Inline
    tables and dotted keys fall back to no line number.
    """

    def __init__(self, text: str) -> None:
        self._lines = text.splitlines()

    def line(self, table: str | None, key: str | None = None) -> int | None:
        current: str | None = None
        header = re.compile(r"^\s*\[\s*([A-Za-z0-9_.\-\"' ]+?)\s*\]\s*(#.*)?$")
        assign = re.compile(r"^\s*[\"']?([A-Za-z0-9_\-\[\]. ]+?)[\"']?\s*=")
        for number, raw in enumerate(self._lines, start=1):
            m = header.match(raw)
            if m:
                current = m.group(1).strip("\"' ")
                if (key is None and current == table) or (table is None and current == key):
                    return number  # the table itself, e.g. a misspelt [checks]
                continue
            if key is None or current != table:
                continue
            m = assign.match(raw)
            if m and m.group(1).strip() == key:
                return number
        return None


class _Validator:
    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.locate = _Locator(text)

    def error(self, message: str, table: str | None = None, key: str | None = None) -> SpecError:
        line = self.locate.line(table, key) if (table is not None or key is not None) else None
        where = f"{self.path}:{line}" if line else str(self.path)
        return SpecError(f"{where}: {message}")

    def table(self, data: dict[str, Any], key: str) -> dict[str, Any]:
        value = data.get(key, {})
        if not isinstance(value, dict):
            raise self.error(f"'{key}' must be a table ([{key}])", None, key)
        return value

    def no_unknown(self, table: dict[str, Any], valid: Any, where: str | None) -> None:
        for key in table:
            if key not in valid:
                label = f"in [{where}]" if where else "at top level"
                raise self.error(f"unknown key '{key}' {label}; valid keys: {_one_of(valid)}",
                                 where, key)


def _read(path: Path) -> tuple[str, dict[str, Any]]:
    if not path.exists():
        raise SpecError(f"{path}: no such file")
    if not path.is_file():
        raise SpecError(f"{path}: not a file")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(f"{path}: not a UTF-8 text file ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise SpecError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        m = re.search(r"\(at line (\d+), column \d+\)", message)
        if m:
            where = f"{path}:{m.group(1)}"
        elif "(at end of document)" in message:
            where = f"{path}:{max(len(text.splitlines()), 1)}"
        else:
            where = str(path)
        raise SpecError(f"{where}: invalid TOML: {message}") from None
    except RecursionError:  # tomllib parses nested arrays and tables recursively
        raise SpecError(f"{path}: invalid TOML: nested too deeply") from None
    return text, data


def load_spec(path: str | Path) -> Spec:
    """Load and fully validate a spec; raises ``SpecError`` (one line, path first)."""
    path = Path(path)
    text, data = _read(path)
    v = _Validator(path, text)
    v.no_unknown(data, TOP_KEYS, None)

    name = data.get("name", path.name.removesuffix(".toml"))
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise v.error(f"name {name!r} must be letters, digits, '.', '_' or '-' "
                      "(it names the counterexample files)", None, "name")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise v.error("description must be a string", None, "description")

    if "model" not in data:
        raise v.error("missing 'model' (a registered model name, 'module:ATTR' or 'file.py:ATTR'; see "
                      "eoscheck list)")
    model_name = data["model"]
    if not isinstance(model_name, str):
        raise v.error("model must be a string", None, "model")
    # a model file is named relative to the spec; from here on it is named independently of it
    model_name = resolve_model_path(model_name, path.parent)
    try:
        md = find_model(model_name)
    except UnknownModelError as exc:
        raise v.error(str(exc), None, "model") from None
    except Exception as exc:  # noqa: BLE001 - a broken model package, named in one line
        raise v.error(f"loading models failed ({type(exc).__name__}: {exc}); is a model package "
                      "half-installed?", None, "model") from None

    variant = data.get("variant", md.default_variant)
    if not isinstance(variant, str):
        raise v.error("variant must be a string", None, "variant")
    if variant not in md.variants:
        raise v.error(f"unknown variant {variant!r} of model {md.name}; valid variants: "
                      f"{_one_of(md.variants)}", None, "variant")

    overrides = _switches(v, md, v.table(data, "switches"))
    bounds = _bounds(v, md, v.table(data, "bounds"))
    check = _check(v, md, v.table(data, "check"))
    expect = _expect(v, md, check, v.table(data, "expect"))
    prove = data.get("prove")
    if prove is not None and not isinstance(prove, dict):
        raise v.error("'prove' must be a table ([prove])", None, "prove")

    return Spec(path=path, name=name, description=description.strip(), model=model_name,
                variant=variant, switches=md.resolve_switches(variant, overrides),
                switch_overrides=overrides, bounds=bounds, check=check, expect=expect, prove=prove)


def _switches(v: _Validator, md: ModelDef, table: dict[str, Any]) -> dict[str, SwitchValue]:
    out: dict[str, SwitchValue] = {}
    for key, value in table.items():
        if key not in md.switches:
            raise v.error(f"unknown switch '{key}' of model {md.name}; valid switches: "
                          f"{_one_of(md.switches)}", "switches", key)
        sw = md.switches[key]
        kind = type(sw.default)
        if type(value) is not kind:
            raise v.error(f"switch '{key}' must be {_type_name(kind)}, got {_show(value)}",
                          "switches", key)
        if sw.choices and value not in sw.choices:
            raise v.error(f"switch '{key}' = {_show(value)} is not one of "
                          f"{', '.join(_show(c) for c in sw.choices)}", "switches", key)
        out[key] = value
    return out


def _bounds(v: _Validator, md: ModelDef, table: dict[str, Any]) -> dict[str, int]:
    out = {name: b.default for name, b in md.bounds.items()}
    for key, value in table.items():
        if key not in md.bounds:
            raise v.error(f"unknown bound '{key}' of model {md.name}; valid bounds: "
                          f"{_one_of(md.bounds)}", "bounds", key)
        b = md.bounds[key]
        if not _type_ok(value, (int,)):
            raise v.error(f"bound '{key}' must be an integer in {b.min}..{b.max}, got "
                          f"{_show(value)}", "bounds", key)
        if not b.min <= value <= b.max:
            raise v.error(f"bound '{key}' = {value} is out of range {b.min}..{b.max}",
                          "bounds", key)
        out[key] = value
    return out


def _check(v: _Validator, md: ModelDef, table: dict[str, Any]) -> CheckOptions:
    table = dict(table)
    spark_table = table.pop("spark", None)
    v.no_unknown(table, [*_CHECK_KEYS, "spark"], "check")
    values: dict[str, Any] = {}
    if spark_table is not None:
        if not isinstance(spark_table, dict):
            raise v.error("'check.spark' must be a table ([check.spark])", "check", "spark")
        try:
            values["spark"] = parse_table(spark_table)
        except SparkConfigError as exc:
            named = re.search(r"check\.spark\.(\w+)", str(exc))
            raise v.error(str(exc), "check.spark", named.group(1) if named else None) from None
    for key, value in table.items():
        attr, types, described, minimum = _CHECK_KEYS[key]
        # nan passes every comparison with a minimum, and no limit of nan ever stops a run
        if not _type_ok(value, types) or (isinstance(value, float) and math.isnan(value)):
            raise v.error(f"check.{key} must be {described}, got {_show(value)}", "check", key)
        if minimum is not None and value < minimum:
            raise v.error(f"check.{key} must be at least {minimum}, got {value}"
                          if minimum else f"check.{key} must be positive, got {value}",
                          "check", key)
        if key == "workers" and value > MAX_WORKERS:
            raise v.error(f"check.workers must be at most {MAX_WORKERS}, got {value}", "check", key)
        values[attr] = value
    if "strategy" in values and values["strategy"] not in STRATEGIES:
        raise v.error(f"unknown strategy {values['strategy']!r}; valid strategies: "
                      f"{', '.join(STRATEGIES)}", "check", "strategy")
    if "properties" in values:
        props = values["properties"]
        for p in props:
            if not isinstance(p, str):
                raise v.error(f"check.properties must list property names, got {_show(p)}",
                              "check", "properties")
            if p not in md.properties and p not in md.temporal:
                raise v.error(f"unknown property '{p}' of model {md.name}; valid properties: "
                              f"{_one_of(list(md.properties) + list(md.temporal))}", "check", "properties")
        twice = next((p for i, p in enumerate(props) if p in props[:i]), None)
        if twice is not None:
            raise v.error(f"check.properties lists '{twice}' twice", "check", "properties")
        if not props:
            raise v.error("check.properties is empty; omit it to check every property",
                          "check", "properties")
        values["properties"] = tuple(dict.fromkeys(props))
    if "max_seconds" in values:
        values["max_seconds"] = float(values["max_seconds"])
    return CheckOptions(**values)


def _expect(v: _Validator, md: ModelDef, check: CheckOptions, table: dict[str, Any]) -> Expect:
    v.no_unknown(table, EXPECT_KEYS, "expect")
    verdict = table.get("verdict", "holds")
    if verdict not in VERDICTS:
        raise v.error(f"expect.verdict must be \"holds\" or \"violates\", got {_show(verdict)}",
                      "expect", "verdict")
    prop = table.get("property")
    if prop is not None and not isinstance(prop, str):
        raise v.error(f"expect.property must be a property name, got {_show(prop)}",
                      "expect", "property")
    if verdict == "violates" and prop is None:
        raise v.error("expect.verdict = \"violates\" needs expect.property (the property, or "
                      "\"deadlock\")", "expect", "verdict")
    if verdict == "holds" and prop is not None:
        raise v.error("expect.property is only meaningful with verdict = \"violates\"",
                      "expect", "property")
    if prop is not None:
        checked = check.properties if check.properties is not None else tuple(md.properties)
        if prop in md.temporal and prop not in checked:
            raise v.error(f"expect.property '{prop}' is a temporal property: name it in check.properties "
                          "(temporal properties are checked only when named)", "expect", "property")
        if prop == DEADLOCK:
            if not check.deadlock:
                raise v.error("expect.property = \"deadlock\" but check.deadlock = false",
                              "expect", "property")
        elif prop not in md.properties and prop not in md.temporal:
            raise v.error(f"unknown property '{prop}' of model {md.name}; valid properties: "
                          f"{_one_of(list(md.properties) + list(md.temporal) + [DEADLOCK])}",
                          "expect", "property")
        elif prop not in checked:
            raise v.error(f"expect.property '{prop}' is not checked; check.properties = "
                          f"{list(checked)}", "expect", "property")
    length = table.get("length")
    if length is not None:
        if verdict != "violates":
            raise v.error("expect.length is only meaningful with verdict = \"violates\"",
                          "expect", "length")
        if not _type_ok(length, (int,)) or length < 1:
            raise v.error(f"expect.length must be a positive integer (states in the trace), got "
                          f"{_show(length)}", "expect", "length")
    return Expect(verdict=verdict, property=prop, length=length)


def _type_name(kind: type) -> str:
    return {bool: "true or false", int: "an integer", str: "a string"}.get(kind, kind.__name__)


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return str(value)


# Options the CLI may override; a None value means "the flag was not given".
_OPTION_NAMES = {f.name for f in fields(ExploreOptions)}


def spec_to_options(spec: Spec, cli_overrides: Mapping[str, Any] | None = None) -> ExploreOptions:
    """The engine options for a spec: engine defaults, then the spec's [check], then CLI flags.

    ``cli_overrides`` uses ExploreOptions field names; entries whose value is None are ignored.
    """
    c = spec.check
    safety = c.properties
    temporal: tuple[str, ...] = ()
    if c.properties is not None:
        # Temporal properties are checked on the state graph, the rest by the engine.
        named = set(find_model(spec.model).temporal)
        temporal = tuple(p for p in c.properties if p in named)
        safety = tuple(p for p in c.properties if p not in named)
    from_spec: dict[str, Any] = {
        "strategy": c.strategy,
        "properties": safety,
        "temporal": temporal,
        "check_deadlock": c.deadlock,
        "stop_at_first": not c.continue_,
        "symmetry": c.symmetry,
        "view": c.view,
        "max_states": c.max_states,
        "max_depth": c.max_depth,
        "max_seconds": c.max_seconds,
    }
    for attr in ("walks", "walk_depth", "seed", "workers"):
        if getattr(c, attr) is not None:
            from_spec[attr] = getattr(c, attr)
    sp = c.spark
    for attr, value in (("spark_master", sp.master), ("checkpoint_dir", sp.checkpoint),
                        ("spark_partitions", sp.partitions),
                        ("spark_executor_memory", sp.executor_memory),
                        ("spark_driver_memory", sp.driver_memory),
                        ("spark_executor_timeout", sp.executor_timeout),
                        ("spark_driver_states", sp.driver_states)):
        if value is not None:
            from_spec[attr] = value
    if sp.conf:
        from_spec["spark_conf"] = sp.conf
    options = replace(ExploreOptions(), **from_spec)
    overrides = {k: val for k, val in (cli_overrides or {}).items() if val is not None}
    unknown = set(overrides) - _OPTION_NAMES
    if unknown:
        raise TypeError(f"unknown ExploreOptions fields: {sorted(unknown)}")
    return replace(options, **overrides)


def build_machine(spec: Spec) -> Machine:
    """Build the spec's machine (switches and bounds are complete and validated)."""
    try:
        md = find_model(spec.model)
    except UnknownModelError as exc:
        raise SpecError(f"{spec.path}: {exc}") from None
    try:
        return md.build(dict(spec.switches), dict(spec.bounds))
    except ValueError as exc:
        # A model may reject a combination its declaration cannot express (e.g. two bounds).
        raise SpecError(f"{spec.path}: model {md.name} rejected this configuration: {exc}") from None
    except Exception as exc:
        if not is_path_model(spec.model):
            raise  # an installed model's bug keeps its traceback
        # the user's own model file: its failure is their input, named in one line
        raise SpecError(f"{spec.path}: model {spec.model} failed to build its machine: "
                        f"{type(exc).__name__}: {exc}") from None


def model_of(spec: Spec) -> ModelDef:
    return find_model(spec.model)


def collect_spec_paths(paths: Sequence[str]) -> list[Path]:
    """SPEC files as given; a DIR contributes its *.toml files (not recursive), sorted; each once."""
    found: list[Path] = []
    for text in paths:
        if not text.strip():
            # Path("") is ".", which would run every spec of the working directory
            raise SpecError("an empty argument names no spec file or directory")
        p = Path(text)
        if p.is_dir():
            tomls = sorted(q for q in p.glob("*.toml") if q.is_file())
            if not tomls:
                raise SpecError(f"{p}: no *.toml spec files in this directory")
            found.extend(tomls)
        elif p.exists():
            found.append(p)
        else:
            raise SpecError(f"{p}: no such file or directory")
    return list(dict.fromkeys(found))

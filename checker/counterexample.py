"""Counterexample files: a versioned JSON schema, atomic writes, and validating loads.

``<spec>.<property>.json`` is ours (schema below); ``<spec>.<property>.itf.json`` is the same trace
in the Informal Trace Format (see ``checker.itf``) for Apalache/Quint tooling. Layout, version 1::

    {"format": "eoscheck-counterexample", "version": 1,
     "spec": str, "model": str, "variant": str, "switches": {..}, "bounds": {..},
     "property": str, "property_doc": str, "kind": "invariant"|"transition"|"deadlock",
     "engine": {"strategy": str, ...}, "length": int, "found_length": int, "shortened_by": str,
     "steps": [{"index": int, "action": str|null, "label": str, "params": {..}, "state": {..}}],
     "loop": int}

``loop`` is written only for a lasso (a temporal property's violation, kind "temporal"): the last
state is followed by ``steps[loop]`` forever, as ITF's ``loop`` field says. When
``steps[loop - 1]`` equals the last state, steps ``loop``..end are the repeating cycle; otherwise
(``loop`` is the last index) the behaviour stays in the last state forever (stutters).

``length`` is redundant with ``steps`` (it is written for people and jq) and checked on load.
No timestamps: the same run writes byte-identical files.
"""

from __future__ import annotations

import builtins
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .machine import Machine
from .outfile import OutputError, write_output
from .result import Result, Violation

if TYPE_CHECKING:
    from .spec import Spec

FORMAT = "eoscheck-counterexample"
VERSION = 1
DEADLOCK_DOC = "a reachable state has no successors and is not marked terminal"


class CounterexampleError(ValueError):
    """A counterexample file is missing, corrupt or not ours. One line, path first."""


@dataclass
class CexStep:
    index: int
    action: str | None  # None for the initial state
    label: str  # e.g. "InitProducerId(client=0, tid=1)", or "Initial state"
    params: dict[str, Any]
    state: dict[str, Any]  # named fields, as Machine.fields returns them
    #: the same fields as typed data for the ITF file (Machine.itf_fields), None: ``state``
    data: dict[str, Any] | None = None


@dataclass
class Counterexample:
    spec: str
    model: str
    variant: str
    switches: dict[str, Any]
    bounds: dict[str, Any]
    property: str
    property_doc: str
    kind: str
    engine: dict[str, Any]
    found_length: int
    shortened_by: str
    steps: list[CexStep] = field(default_factory=list)
    #: a lasso's loop: the index of the state the last one steps back to (liveness); None: none
    loop: int | None = None

    @builtins.property  # the field named "property" hides the builtin from type checkers
    def length(self) -> int:
        """States in the trace, the initial state included (TLC's count)."""
        return len(self.steps)


def counterexample_from_violation(machine: Machine, spec: Spec, violation: Violation,
                                  result: Result) -> Counterexample:
    """Turn an engine violation into a counterexample, naming every step and field."""
    props = machine.properties()
    temporal = machine.temporal_properties() if violation.kind == "temporal" else {}
    if violation.property in props:
        doc = props[violation.property].doc
    elif violation.property in temporal:
        t = temporal[violation.property]
        doc = f"{t.doc.rstrip('.')}; temporal formula {t.formula()}"
    elif violation.kind == "deadlock":
        doc = DEADLOCK_DOC
    else:
        doc = ""
    steps: list[CexStep] = []
    for i, ts in enumerate(violation.trace):
        data = machine.itf_fields(ts.state)
        if ts.step is None:
            steps.append(CexStep(i, None, "Initial state", {}, machine.fields(ts.state), data))
        else:
            steps.append(CexStep(i, str(ts.step[0]), machine.format_step(ts.step),
                                 machine.step_params(ts.step), machine.fields(ts.state), data))
    s = result.stats
    engine = {"name": "eoscheck", "version": _version(), "strategy": result.strategy,
              "distinct": s.distinct, "generated": s.generated, "depth": s.depth}
    return Counterexample(spec=spec.name, model=spec.model, variant=spec.variant,
                          switches=dict(spec.switches), bounds=dict(spec.bounds),
                          property=violation.property, property_doc=doc, kind=violation.kind,
                          engine=engine, found_length=violation.found_length,
                          shortened_by=violation.shortened_by, steps=steps,
                          loop=getattr(violation, "loop", None))


def _version() -> str:
    try:
        from eoscheck import __version__
        return __version__
    except ImportError:  # running from a source tree without the namespace package
        return "unknown"


def to_json(cex: Counterexample) -> dict[str, Any]:
    data = {
        "format": FORMAT, "version": VERSION,
        "spec": cex.spec, "model": cex.model, "variant": cex.variant,
        "switches": cex.switches, "bounds": cex.bounds,
        "property": cex.property, "property_doc": cex.property_doc, "kind": cex.kind,
        "engine": cex.engine, "length": cex.length, "found_length": cex.found_length,
        "shortened_by": cex.shortened_by,
        "steps": [{"index": s.index, "action": s.action, "label": s.label, "params": s.params,
                   "state": s.state} for s in cex.steps],
    }
    if cex.loop is not None:  # only lassos carry it: finite traces stay byte-identical
        data["loop"] = cex.loop
    return data


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def file_stem(cex: Counterexample) -> str:
    return stem_for(cex.spec, cex.property)


def stem_for(spec: str, prop: str) -> str:
    return f"{_UNSAFE.sub('_', spec)}.{_UNSAFE.sub('_', prop)}"


def counterexample_paths(spec: str, prop: str, directory: str | Path) -> tuple[Path, Path]:
    """Where a violation of ``prop`` by ``spec`` is written: the .json and the .itf.json."""
    directory = Path(directory)
    stem = stem_for(spec, prop)
    return directory / f"{stem}.json", directory / f"{stem}.itf.json"


def paths_for(cex: Counterexample, directory: str | Path) -> tuple[Path, Path]:
    return counterexample_paths(cex.spec, cex.property, directory)


def write_counterexample(cex: Counterexample, directory: str | Path) -> list[Path]:
    """Write ``<spec>.<property>.json`` and ``.itf.json`` into ``directory``; returns both paths.

    Written through ``checker.outfile`` (temporary file and rename, the mode kept, links and
    special files written through, read-only files refused). An existing file is replaced only
    when it is one of ours: a user's file is never overwritten.
    """
    from .itf import to_itf

    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CounterexampleError(f"{directory}: cannot create directory: {exc.strerror}") from None
    json_path, itf_path = paths_for(cex, directory)
    for path in (json_path, itf_path):
        if path.exists() and not is_ours(path):
            raise CounterexampleError(f"{path}: exists and is not an eoscheck counterexample; "
                                      "not overwriting it (move it or choose another --out)")
    _atomic_write(json_path, to_json(cex))
    _atomic_write(itf_path, to_itf(cex, loop=cex.loop))
    return [json_path, itf_path]


def is_ours(path: Path) -> bool:
    """Whether an existing counterexample file was written by eoscheck (so it may be replaced)."""
    from .itf import ITF_GENERATOR

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    if not isinstance(data, dict):
        return False
    if path.name.endswith(".itf.json"):
        meta = data.get("#meta")
        return isinstance(meta, dict) and meta.get("generator") == ITF_GENERATOR
    return data.get("format") == FORMAT


def _atomic_write(path: Path, data: Any) -> None:
    try:
        write_output(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    except OutputError as exc:
        raise CounterexampleError(str(exc)) from None


# ---------------------------------------------------------------------------------------- load


def load_counterexample(path: str | Path) -> Counterexample:
    """Load a counterexample (ours, or any ITF trace); ``CounterexampleError`` on anything else."""
    path = Path(path)
    if not path.exists():
        raise CounterexampleError(f"{path}: no such file")
    if not path.is_file():
        raise CounterexampleError(f"{path}: not a file")
    try:
        text = path.read_bytes().decode("utf-8")
        data = json.loads(text)
    except UnicodeDecodeError:
        raise CounterexampleError(f"{path}: not a JSON file (not UTF-8 text)") from None
    except json.JSONDecodeError as exc:
        raise CounterexampleError(f"{path}: not a JSON file ({exc.msg} at line {exc.lineno}, "
                                  f"column {exc.colno})") from None
    except RecursionError:
        raise CounterexampleError(f"{path}: not a counterexample (JSON nested too deeply)") from None
    except ValueError as exc:  # e.g. an integer literal of more digits than Python converts
        raise CounterexampleError(f"{path}: not a readable JSON file ({_first_line(exc)})") from None
    except OSError as exc:
        raise CounterexampleError(f"{path}: cannot read: {exc.strerror}") from None
    if not isinstance(data, dict):
        raise CounterexampleError(f"{path}: not an eoscheck counterexample (the top level is "
                                  f"a {type(data).__name__}, not an object)")
    if "format" not in data and "states" in data and "vars" in data:
        from .itf import from_itf
        return from_itf(data, path)
    return from_json(data, path)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


class _Fields:
    """Reads typed fields from a parsed file, raising one-line errors that name the field."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def get(self, obj: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str = "",
            optional: bool = False) -> Any:
        name = f"{where}{key}"
        if key not in obj:
            if optional:
                return None
            raise CounterexampleError(f"{self.path}: missing field '{name}'")
        value = obj[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if optional and value is None:
            return None
        bad_bool = isinstance(value, bool) and bool not in kinds
        if bad_bool or not isinstance(value, kinds):
            raise CounterexampleError(f"{self.path}: field '{name}' must be "
                                      f"{_kind_name(kinds)}, got {_json_type(value)}")
        return value


def _kind_name(kinds: tuple[type, ...]) -> str:
    names = {str: "a string", int: "an integer", dict: "an object", list: "an array",
             bool: "a boolean"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "an array", dict: "an object"}.get(type(value), type(value).__name__)


def from_json(data: dict[str, Any], path: Path) -> Counterexample:
    fmt = data.get("format")
    if fmt != FORMAT:
        got = f"format {fmt!r}" if fmt is not None else "no \"format\" field"
        raise CounterexampleError(f"{path}: not an eoscheck counterexample ({got}; expected "
                                  f"\"format\": \"{FORMAT}\")")
    version = data.get("version")
    if version != VERSION:
        raise CounterexampleError(f"{path}: unsupported counterexample version {version!r} "
                                  f"(this eoscheck reads version {VERSION})")
    f = _Fields(path)
    steps_raw = f.get(data, "steps", list)
    if not steps_raw:
        raise CounterexampleError(f"{path}: field 'steps' is empty (a trace has at least one state)")
    steps: list[CexStep] = []
    for i, raw in enumerate(steps_raw):
        where = f"steps[{i}]."
        if not isinstance(raw, dict):
            raise CounterexampleError(f"{path}: field 'steps[{i}]' must be an object, got "
                                      f"{_json_type(raw)}")
        index = f.get(raw, "index", int, where)
        if index != i:
            raise CounterexampleError(f"{path}: field '{where}index' is {index}, expected {i}")
        action = f.get(raw, "action", str, where, optional=True)
        if (action is None) != (i == 0):
            raise CounterexampleError(f"{path}: field '{where}action' must be "
                                      + ("null for the initial state" if i == 0 else "a string"))
        steps.append(CexStep(index=index, action=action, label=f.get(raw, "label", str, where),
                             params=f.get(raw, "params", dict, where),
                             state=f.get(raw, "state", dict, where)))
    cex = Counterexample(
        spec=f.get(data, "spec", str), model=f.get(data, "model", str),
        variant=f.get(data, "variant", str), switches=f.get(data, "switches", dict),
        bounds=f.get(data, "bounds", dict), property=f.get(data, "property", str),
        property_doc=f.get(data, "property_doc", str), kind=f.get(data, "kind", str),
        engine=f.get(data, "engine", dict), found_length=f.get(data, "found_length", int),
        shortened_by=f.get(data, "shortened_by", str), steps=steps,
        loop=f.get(data, "loop", int, optional=True))
    if cex.loop is not None and not 0 <= cex.loop < len(steps):
        raise CounterexampleError(f"{path}: field 'loop' is {cex.loop}, outside the {len(steps)} states")
    length = f.get(data, "length", int, optional=True)
    if length is not None and length != len(steps):
        raise CounterexampleError(f"{path}: field 'length' is {length} but 'steps' holds "
                                  f"{len(steps)} states")
    return cex

"""Informal Trace Format (ITF) export and import: the trace format of Apalache and Quint.

Format: https://apalache-mc.org/docs/adr/015adr-trace.html. A trace is an object with ``#meta``,
``vars`` (variable names) and ``states`` (one object per state, each with ``#meta: {index}``).
Values: JSON booleans and strings as themselves; integers as JSON numbers when they fit a double
exactly (|n| < 2^53), else ``{"#bigint": "digits"}``; a Python list (a TLA+ sequence) as a JSON
array; a tuple as ``{"#tup": [...]}``; a set as ``{"#set": [...]}``; a dict with string keys as a
record (JSON object), with other keys as ``{"#map": [[k, v], ...]}``; anything else (``None``) as
``{"#unserializable": "..."}``.

Our field names (``client[0].epoch``) become the ITF variables unchanged: each field is one
variable, so ITF viewers show and diff them one by one. The trace ``#meta`` carries the spec,
property and engine under ``"eoscheck"`` so that ``eoscheck show`` can render our own ITF files as
fully as the ``.json``; foreign ITF traces are shown with what they hold.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .counterexample import Counterexample

ITF_GENERATOR = "eoscheck"
ITF_SPEC_URL = "https://apalache-mc.org/docs/adr/015adr-trace.html"
MAX_SAFE_INT = (1 << 53) - 1


def encode(value: Any) -> Any:
    """A field value as an ITF value."""
    if isinstance(value, bool) or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value if -MAX_SAFE_INT <= value <= MAX_SAFE_INT else {"#bigint": str(value)}
    if isinstance(value, tuple):
        return {"#tup": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return {"#set": [encode(v) for v in sorted(value, key=repr)]}
    if isinstance(value, dict):
        if all(isinstance(k, str) and not k.startswith("#") for k in value):
            return {k: encode(v) for k, v in value.items()}
        return {"#map": [[encode(k), encode(v)] for k, v in value.items()]}
    return {"#unserializable": repr(value)}


def decode(value: Any) -> Any:
    """An ITF value as a plain JSON-style value (for the viewer; tuples and sets become lists)."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict):
        if "#bigint" in value:
            return int(value["#bigint"])
        if "#tup" in value:
            return [decode(v) for v in value["#tup"]]
        if "#set" in value:
            return [decode(v) for v in value["#set"]]
        if "#map" in value:
            pairs = [(decode(k), decode(v)) for k, v in value["#map"]]
            if all(isinstance(k, (str, int)) and not isinstance(k, bool) for k, _ in pairs):
                return {str(k): v for k, v in pairs}
            return [[k, v] for k, v in pairs]
        if "#unserializable" in value:
            return value["#unserializable"]
        return {k: decode(v) for k, v in value.items()}
    return value


def to_itf(cex: Counterexample, loop: int | None = None) -> dict[str, Any]:
    """``loop``: for a lasso, the index of the state that follows the last one (ITF's ``loop``)."""
    variables: dict[str, None] = {}
    for step in cex.steps:
        variables.update(dict.fromkeys(step.state))
    meta = {
        "format": "ITF",
        "format-description": ITF_SPEC_URL,
        "source": cex.spec,
        "description": f"eoscheck counterexample: {cex.spec} violates {cex.property}",
        "generator": ITF_GENERATOR,
        "eoscheck": {
            "spec": cex.spec, "model": cex.model, "variant": cex.variant,
            "switches": cex.switches, "bounds": cex.bounds, "property": cex.property,
            "property_doc": cex.property_doc, "kind": cex.kind, "engine": cex.engine,
            "found_length": cex.found_length, "shortened_by": cex.shortened_by,
        },
    }
    states = []
    for step in cex.steps:
        state: dict[str, Any] = {"#meta": {"index": step.index, "action": step.action,
                                           "label": step.label, "params": step.params}}
        for name in variables:
            if name in step.state:
                state[name] = encode(step.state[name])
        states.append(state)
    out: dict[str, Any] = {"#meta": meta, "vars": list(variables), "states": states}
    if loop is not None:
        out["loop"] = loop
    return out


def from_itf(data: dict[str, Any], path: Path) -> Counterexample:
    """Read an ITF trace (ours or another tool's) into a Counterexample for the viewer."""
    from .counterexample import CexStep, Counterexample, CounterexampleError

    def bad(message: str) -> CounterexampleError:
        return CounterexampleError(f"{path}: not a valid ITF trace ({message})")

    variables, states = data.get("vars"), data.get("states")
    if not isinstance(variables, list) or not all(isinstance(v, str) for v in variables):
        raise bad("'vars' must be an array of names")
    if not isinstance(states, list) or not states:
        raise bad("'states' must be a non-empty array")
    meta = data.get("#meta") if isinstance(data.get("#meta"), dict) else {}
    ours = meta.get("eoscheck") if isinstance(meta.get("eoscheck"), dict) else {}
    steps: list[CexStep] = []
    for i, raw in enumerate(states):
        if not isinstance(raw, dict):
            raise bad(f"states[{i}] is not an object")
        smeta = raw.get("#meta") if isinstance(raw.get("#meta"), dict) else {}
        action = smeta.get("action") if isinstance(smeta.get("action"), str) else None
        label = smeta.get("label") if isinstance(smeta.get("label"), str) else None
        if action is None and isinstance(raw.get("mbt::actionTaken"), str):
            action = raw["mbt::actionTaken"]  # Quint's model-based-testing convention
        if label is None:
            label = "Initial state" if i == 0 else (action or f"step {i}")
        params = smeta.get("params") if isinstance(smeta.get("params"), dict) else {}
        state = {k: decode(v) for k, v in raw.items() if k != "#meta"}
        steps.append(CexStep(index=i, action=None if i == 0 else action, label=label,
                             params=params, state=state))

    def text(key: str, default: str) -> str:
        value = ours.get(key)
        return value if isinstance(value, str) else default

    def table(key: str) -> dict[str, Any]:
        value = ours.get(key)
        return value if isinstance(value, dict) else {}

    found = ours.get("found_length")
    source = meta.get("source") if isinstance(meta.get("source"), str) else path.name
    return Counterexample(
        spec=text("spec", source), model=text("model", "?"), variant=text("variant", "?"),
        switches=table("switches"), bounds=table("bounds"), property=text("property", "?"),
        property_doc=text("property_doc", ""), kind=text("kind", "?"), engine=table("engine"),
        found_length=found if isinstance(found, int) and not isinstance(found, bool) else len(steps),
        shortened_by=text("shortened_by", ""), steps=steps, loop=_loop(data.get("loop"), len(steps)))


def _loop(value: Any, length: int) -> int | None:
    """ITF's optional ``loop`` (the index of the state after the last); anything else is ignored."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < length:
        return value
    return None

"""Informal Trace Format (ITF) export and import: the trace format of Apalache and Quint.

Format: https://apalache-mc.org/docs/adr/015adr-trace.html, as revised in 2023 and implemented
by ``itf-py`` 0.5 (the tests read every file we write with its parser). A trace is an object with
``#meta``, ``vars`` (variable names), ``states`` (one object per state, each with
``#meta: {index}`` and a value for *every* variable) and, for a lasso, ``loop`` (the index of the
state the last one returns to). Values are data, typed:

* booleans and strings as themselves; every integer as ``{"#bigint": "-12"}`` (plain JSON numbers
  are no longer integers in the format);
* a Python list (a TLA+ sequence) as a JSON array; a tuple as ``{"#tup": [...]}``; a set or
  frozenset as ``{"#set": [...]}`` (sorted, so a rewrite is byte-identical);
* a dict whose keys are all field names (identifiers) as a record (a JSON object); any other dict
  as ``{"#map": [[key, value], ...]}``;
* anything else (``None``), and a variable a state does not define, as
  ``{"#unserializable": "..."}``.

Which values: ``CexStep.data`` when the machine gives typed fields (``Machine.itf_fields``: records
instead of the one-line descriptions ``fields`` writes for people), else the fields themselves.
Our field names (``client[0].epoch``) become the ITF variables unchanged. The trace ``#meta``
carries the spec, property and engine under ``"eoscheck"`` so that ``eoscheck show`` renders our
own ITF files as fully as the ``.json``; foreign ITF traces are shown with what they hold.
"""

from __future__ import annotations

import keyword
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .counterexample import Counterexample

ITF_GENERATOR = "eoscheck"
ITF_SPEC_URL = "https://apalache-mc.org/docs/adr/015adr-trace.html"
UNDEFINED = {"#unserializable": "undefined: this state does not define the variable"}
# int() refuses longer digit strings (CPython's guard against quadratic conversion)
MAX_BIGINT_DIGITS = 4000


class ITFValueError(ValueError):
    """An ITF value that is not one (a bad #bigint, a #map entry that is not a pair, ...)."""


def _record_key(key: Any) -> bool:
    # itf-py turns a record into a namedtuple: its field names must be identifiers that do not
    # start with "_" and are not keywords; any other keys make a #map
    return (isinstance(key, str) and key.isidentifier() and not key.startswith("_")
            and not keyword.iskeyword(key))


def encode(value: Any) -> Any:
    """A field value as an ITF value."""
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return {"#bigint": str(value)}
    if isinstance(value, tuple):
        return {"#tup": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, (set, frozenset)):
        items = [encode(v) for v in value]
        return {"#set": sorted(items, key=_sort_key)}
    if isinstance(value, dict):
        if value and all(_record_key(k) for k in value):
            return {k: encode(v) for k, v in value.items()}
        return {"#map": [[encode(k), encode(v)] for k, v in value.items()]}
    return {"#unserializable": repr(value)}


def _sort_key(item: Any) -> str:
    import json
    return json.dumps(item, sort_keys=True)


def decode(value: Any, where: str = "value") -> Any:
    """An ITF value as a plain JSON-style value for the viewer (tuples and sets become lists, a
    #map with string or integer keys an object). ITFValueError names where a value is malformed."""
    try:
        return _decode(value, where)
    except RecursionError:
        raise ITFValueError(f"{where} is nested too deeply") from None


def _decode(value: Any, where: str) -> Any:
    if isinstance(value, list):
        return [_decode(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, dict):
        return value  # a boolean, a string (or a foreign tool's plain number), shown as it is
    if "#bigint" in value:
        digits = value["#bigint"]
        if not isinstance(digits, str) or not _is_integer_text(digits):
            raise ITFValueError(f"{where}: #bigint must be a string of decimal digits (at most {MAX_BIGINT_DIGITS}), got "
                                f"{_short(digits)}")
        return int(digits)
    if "#tup" in value or "#set" in value:
        tag = "#tup" if "#tup" in value else "#set"
        items = value[tag]
        if not isinstance(items, list):
            raise ITFValueError(f"{where}: {tag} must hold an array, got {_short(items)}")
        return [_decode(v, f"{where}{tag}[{i}]") for i, v in enumerate(items)]
    if "#map" in value:
        pairs = value["#map"]
        if not isinstance(pairs, list):
            raise ITFValueError(f"{where}: #map must hold an array of [key, value] pairs, got "
                                f"{_short(pairs)}")
        decoded = []
        for i, pair in enumerate(pairs):
            if not isinstance(pair, list) or len(pair) != 2:
                raise ITFValueError(f"{where}: #map entry {i} must be a [key, value] pair, got "
                                    f"{_short(pair)}")
            decoded.append((_decode(pair[0], f"{where}#map[{i}][0]"),
                            _decode(pair[1], f"{where}#map[{i}][1]")))
        if all(isinstance(k, (str, int)) and not isinstance(k, bool) for k, _ in decoded):
            return {str(k): v for k, v in decoded}
        return [[k, v] for k, v in decoded]
    if "#unserializable" in value:
        text = value["#unserializable"]
        return text if isinstance(text, str) else _short(text)
    return {str(k): _decode(v, f"{where}.{k}") for k, v in value.items()}


def _obj(value: Any) -> dict[str, Any]:
    """An object from a foreign file, or an empty one when it is anything else."""
    return value if isinstance(value, dict) else {}


def _is_integer_text(text: str) -> bool:
    body = text[1:] if text[:1] == "-" else text
    return body.isascii() and body.isdigit() and len(body) <= MAX_BIGINT_DIGITS


def _short(value: Any) -> str:
    import json
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        text = type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def to_itf(cex: Counterexample, loop: int | None = None) -> dict[str, Any]:
    """The trace as ITF; ``loop`` (a state index) makes it a lasso: the last state steps back to
    state ``loop`` (liveness counterexamples)."""
    if loop is not None and not 0 <= loop < len(cex.steps):
        raise ValueError(f"loop index {loop} is outside the trace (0..{len(cex.steps) - 1})")
    values = [step.data if step.data is not None else step.state for step in cex.steps]
    variables: dict[str, None] = {}
    for fields in values:
        variables.update(dict.fromkeys(fields))
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
    for step, state_values in zip(cex.steps, values):
        state: dict[str, Any] = {"#meta": {"index": step.index, "action": step.action,
                                           "label": step.label, "params": step.params}}
        for name in variables:
            state[name] = encode(state_values[name]) if name in state_values else dict(UNDEFINED)
        states.append(state)
    trace: dict[str, Any] = {"#meta": meta, "vars": list(variables), "states": states}
    if loop is not None:
        trace["loop"] = loop
    return trace


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
    loop = data.get("loop")
    if loop is not None and (isinstance(loop, bool) or not isinstance(loop, int)
                             or not 0 <= loop < len(states)):
        raise bad(f"'loop' must be the index of a state (0..{len(states) - 1}), got {_short(loop)}")
    meta = _obj(data.get("#meta"))
    ours = _obj(meta.get("eoscheck"))
    steps: list[CexStep] = []
    for i, raw in enumerate(states):
        if not isinstance(raw, dict):
            raise bad(f"states[{i}] is not an object")
        smeta = _obj(raw.get("#meta"))
        action = smeta.get("action") if isinstance(smeta.get("action"), str) else None
        label = smeta.get("label") if isinstance(smeta.get("label"), str) else None
        if action is None and isinstance(raw.get("mbt::actionTaken"), str):
            action = raw["mbt::actionTaken"]  # Quint's model-based-testing convention
        if label is None:
            label = "Initial state" if i == 0 else (action or f"step {i}")
        params = _obj(smeta.get("params"))
        try:
            state = {k: decode(v, f"states[{i}].{k}") for k, v in raw.items() if k != "#meta"}
            params = {str(k): decode(v, f"states[{i}].#meta.params.{k}") for k, v in params.items()}
        except ITFValueError as exc:
            raise bad(str(exc)) from None
        steps.append(CexStep(index=i, action=None if i == 0 else action, label=label,
                             params=params, state=state))

    def text(key: str, default: str) -> str:
        value = ours.get(key)
        return value if isinstance(value, str) else default

    def table(key: str) -> dict[str, Any]:
        value = ours.get(key)
        return value if isinstance(value, dict) else {}

    found = ours.get("found_length")
    source = meta["source"] if isinstance(meta.get("source"), str) else path.name
    return Counterexample(
        spec=text("spec", source), model=text("model", "?"), variant=text("variant", "?"),
        switches=table("switches"), bounds=table("bounds"), property=text("property", "?"),
        property_doc=text("property_doc", ""), kind=text("kind", "?"), engine=table("engine"),
        found_length=found if isinstance(found, int) and not isinstance(found, bool) else len(steps),
        shortened_by=text("shortened_by", ""), steps=steps, loop=loop)

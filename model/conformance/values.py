"""The vectors' vocabulary <-> the model's: symbolic values ('T', 'G+5', 'now - 604800000'),
error names, transaction-state names, partition and member names interned as the model's ints."""

from __future__ import annotations

import re
from typing import Any

from ..errors import Errors
from ..transactions.codes import TxnState


class NotExpressible(Exception):
    """The model cannot take this input or state: the message says which field or mechanism it
    abstracts away."""


#: values the harness binds to the vectors' symbols (any distinct, plausible values do)
SYMBOLS: dict[str, int] = {"T": 1_700_000_000_000, "now": 1_700_000_000_000, "G": 7}

_TERM = re.compile(r"\s*([+-]?)\s*([A-Za-z_][A-Za-z_0-9]*|\d+)\s*")


def value(v: Any, symbols: dict[str, int] | None = None) -> Any:
    """An int for a symbolic expression such as ``T``, ``G+5``, ``now - 604800000 + 1`` (names are
    the vectors' symbols); other values unchanged."""
    if not isinstance(v, str) or not v.strip():
        return v
    table = {**SYMBOLS, **(symbols or {})}
    pos, total, named = 0, 0, False
    text = v.strip()
    while pos < len(text):
        m = _TERM.match(text, pos)
        if not m or (pos > 0 and not m.group(1)):
            return v
        word = m.group(2)
        if word.isdigit():
            term = int(word)
        elif word in table:
            term, named = table[word], True
        else:
            return v
        total += -term if m.group(1) == "-" else term
        pos = m.end()
    return total if named else v


def integer(v: Any, what: str, symbols: dict[str, int] | None = None) -> int:
    out = value(v, symbols)
    if isinstance(out, bool) or not isinstance(out, int):
        raise NotExpressible(f"{what} = {v!r} is not a number or a known symbol")
    return out


def error_code(name: str) -> int:
    try:
        return int(Errors[name])
    except KeyError:
        raise NotExpressible(f"error {name} is not among the errors the model produces (model.errors)") from None


#: a step's observation key naming what answered the request before the model's coordinator or log saw it
#: (its other input fields are then unread for that reason)
ANSWERED_BEFORE = "__answered_before__"


def error_name(code: int) -> str:
    try:
        return Errors(code).name
    except ValueError:
        return str(code)


_STATE_NAMES = {s: "".join(w.capitalize() for w in s.name.split("_")) for s in TxnState}
_STATE_IDS = {v: k for k, v in _STATE_NAMES.items()}


def state_name(state: int) -> str:
    """``TxnState.PREPARE_COMMIT`` -> 'PrepareCommit' (Kafka's ``TransactionState`` names)."""
    return _STATE_NAMES[TxnState(state)]


def state_id(name: str) -> int:
    word = name.split()[0].strip("<>") if name.strip() else name
    if word not in _STATE_IDS:
        raise NotExpressible(f"transaction state {name!r} is not a TransactionState")
    return int(_STATE_IDS[word])


class Names:
    """Interns the vector's names (partitions, members, instance ids) as the model's ints, in the
    order they appear; ``reserve`` keeps 0 (or another value) for a sentinel such as ``""``."""

    def __init__(self, first: int = 0, fixed: dict[str, int] | None = None) -> None:
        self._ids: dict[str, int] = dict(fixed or {})
        self._next = first

    def id(self, name: str) -> int:
        if name not in self._ids:
            self._ids[name] = self._next
            self._next += 1
        return self._ids[name]

    def name(self, ident: int) -> str:
        for k, v in self._ids.items():
            if v == ident:
                return k
        return str(ident)

    def __len__(self) -> int:
        return len(self._ids)


def alternatives(state: Any) -> list[tuple[str, str]]:
    """The ``"<A|B>"`` placeholders in an initial state: (path, text) of each."""
    found: list[tuple[str, str]] = []

    def walk(v: Any, path: str) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                walk(x, f"{path}.{k}" if path else k)
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(x, f"{path}[{i}]")
        elif isinstance(v, str) and re.fullmatch(r"<[^<>|]+(\|[^<>|]+)+>", v.strip()):
            found.append((path, v.strip()))

    walk(state, "")
    return found


def expand(state: Any) -> list[tuple[str, Any]]:
    """Every instantiation of the placeholders ``"<A|B>"`` (label, state); one if there are none."""
    out: list[tuple[str, Any]] = [("", state)]
    while True:
        nxt: list[tuple[str, Any]] = []
        changed = False
        for label, st in out:
            alts = alternatives(st)
            if not alts:
                nxt.append((label, st))
                continue
            changed = True
            path, text = alts[0]
            for choice in text[1:-1].split("|"):
                nxt.append((f"{label}{' ' if label else ''}{path}={choice}", _replace(st, text, choice)))
        out = nxt
        if not changed:
            return out


def _replace(v: Any, old: str, new: str) -> Any:
    if isinstance(v, dict):
        done = False
        res = {}
        for k, x in v.items():
            if not done and isinstance(x, str) and x.strip() == old:
                res[k], done = new, True
            else:
                res[k] = _replace(x, old, new) if not done else x
        return res
    if isinstance(v, list):
        return [_replace(x, old, new) for x in v]
    return v


def acls_denied(inp: dict[str, Any]) -> frozenset[tuple[str, str, str]] | None:
    """``acls_denied``: the actions the broker's authorizer denies, each "RESOURCE_TYPE:OPERATION:name" (the cluster's
    name is kafka-cluster: "CLUSTER:CLUSTER_ACTION:kafka-cluster"), or "*" for an authorizer denying every action;
    None when the step gives none (no authorizer, every action allowed)."""
    raw = inp.get("acls_denied")
    if raw is None:
        return None
    if raw == "*":
        return frozenset({("*", "*", "*")})
    if not isinstance(raw, list) or not all(isinstance(a, str) and a.count(":") == 2 for a in raw):
        raise NotExpressible(f"acls_denied {raw!r}: give '*' or a list of 'RESOURCE_TYPE:OPERATION:name'")
    return frozenset((t, op, name) for t, op, name in (a.split(":", 2) for a in raw))

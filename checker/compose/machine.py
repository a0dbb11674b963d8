"""``Composed``: a ``Machine`` compiled from declared parts and guarded rules.

The state is a plain flat tuple: one slot per scalar part (its value) and per interned part (the
id of its value in that part's process-wide table, ``TABLES``), actors one slot each. ``_Plan``
holds what one machine compiles from its class's declarations and its configuration: the slot
layout, the channels, the rules (``rules.py``: bindings memoised on exactly the slots they read,
applied by generated code), the properties (``properties.py``) and the declared symmetry. See
``checker.compose`` for the API and ``docs/compose.md`` for the design.
"""

from __future__ import annotations

import itertools
import math
import pickle
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from operator import itemgetter
from typing import TYPE_CHECKING, Any, ClassVar

from ..fingerprint import P, _plain, check_state
from ..intern import Interner
from ..machine import Dedup, Machine, PlaceTest, Property, State, Step
from ..symmetry import Scalarset, Symmetry, canonicalize
from . import least_image
from .code_cache import run as run_code
from .declare import ComposeError, Domain, PropertySpec, RuleSpec
from .network import ChannelOps, Delivery, Network
from .parts import Actors, Budget, Channel, Clock, Decl, Projection
from .properties import _Fused, _Invariant, _Transition
from .rules import (
    _NO_MSG,
    _REF,
    OUTSIDE_BUILT,
    ReadSlots,
    Term,
    _ChannelRule,
    _implied,
    _key_source,
    _Projection,
    _Rule,
    hoist_projections,
    plain_projections,
    read_parts,
    term_slot,
)
from .subscripts import subscripted

if TYPE_CHECKING:
    from ..chart import ChartEvent

#: the interned values of each part of each composed machine class in this process, by
#: ``"module.Class.part"``. Process-wide, like ``model/machines/idempotent_packed``'s tables: a state
#: stays readable after its machine is gone. One table per part, not one for all: NamedTuples of two
#: types with equal fields are equal values, and a shared table would hand one machine's rule a
#: value of another machine's type.
TABLES: dict[str, Interner[Any]] = {}


#: each interned part's pickle, by table, in this process (``Composed.export_batch``); a table's
#: is dropped past ``PICKLED_MAX`` entries (it is only a cache)
_PICKLED: dict[str, dict[int, bytes]] = {}
PICKLED_MAX = 1 << 18


def _pickled(kind: str) -> dict[int, bytes]:
    cache = _PICKLED.get(kind)
    if cache is None or len(cache) > PICKLED_MAX:
        cache = _PICKLED[kind] = {}
    return cache


def table(key: str) -> Interner[Any]:
    """The process-wide table of the part named by ``key``, created on first use."""
    t = TABLES.get(key)
    if t is None:
        t = TABLES[key] = Interner(key)
    return t

#: how many values written to interned parts (and messages sent) are type-checked per machine
CHECKED = 2000

#: a scalarset whose actors mention its identities is canonicalised by trying every permutation
#: up to this many identities (5! = 120 images per state); beyond, by the sort heuristic (not exact)
BRUTE_FORCE = 5
#: several scalarsets are canonicalised exactly (``_Plan.product``) while the other scalarsets'
#: permutations, combined, are at most this many images per state
PRODUCT_IMAGES = 24


#: per binding of a rule, the host places of its lookups: {"outs" or "gate": (host variable, place)}
Hosted = dict[int, dict[str, tuple[str, int]]]


def _covers(key: set[Term], terms: Iterable[Term]) -> bool:
    """Does a memo key on ``key`` decide every one of ``terms`` (a term, or the slot a projected
    term projects)?"""
    return all(t in key or (type(t) is not int and t[0] in key) for t in terms)  # type: ignore[index]


def _hosts(lookups: Sequence[tuple[list[Term], bool]]) -> list[tuple[list[Term], list[int]]]:
    """Hosts for lookups given as (terms, conditional): the term sets of unconditional lookups
    that no other one covers, each with the lookups it is the first to cover (by index), kept when
    it covers two or more. A host's key takes no more values than the lookup it comes from, so
    looking it up on every state costs what that lookup did, and saves the others."""
    sets = [set(_implied(terms)) for terms, _ in lookups]
    keys: list[tuple[list[Term], set[Term]]] = []
    for (terms, conditional), key in zip(lookups, sets):
        if not conditional and all(key != k for _, k in keys):
            keys.append((_implied(terms), key))
    maximal = [(terms, key) for terms, key in keys if not any(k != key and _covers(k, key) for _, k in keys)]
    members: list[list[int]] = [[] for _ in maximal]
    for j, key in enumerate(sets):
        for h, (_, hkey) in enumerate(maximal):
            if _covers(hkey, key):
                members[h].append(j)
                break
    return [(terms, mine) for (terms, _), mine in zip(maximal, members) if len(mine) > 1]


#: a generated line appending a step and its successor: by the outcome's builder, or built in
#: place (``_Rule._apply``: a tuple display of the state's places, written values and sends)
_APPEND_STEP = re.compile(r"^(\s*)append\(\(step, (build\(s, a(?:, rest)?\)|\([\w\[\], +]*\))\)\)$")
#: a place of the state read by the generated successors, which reads it from a local instead
#: (``_Plan.compile``: the state is unpacked once per call)
_PLACE = re.compile(r"\bs\[(\d+)\]")
#: the mark ``_Plan.compile`` puts after the step lines of a rule whose steps no transition property
#: names (``_Plan._may_check``): ``_checked_source`` does not match them and leaves them as they are
_NEVER_CHECKED = "  # never checked"


def _check_lines(indent: str, check: str) -> list[str]:
    """Source lines: ``check`` (an expression, None or a check of (s, step, t)) on the step just
    made; a failure, or an error (the engine asks again where it checks), records the step."""
    return [f"{indent}c = {check}",
            f"{indent}if c is not None:",
            f"{indent}    try:",
            f"{indent}        ok = c(s, step, t)",
            f"{indent}    except Exception:",
            f"{indent}        ok = False",
            f"{indent}    if not ok:",
            f"{indent}        failed.append(step)"]


def _checked_source(source: str) -> str:
    """``successors``' source with each step checked (``_Plan.checked_successors``): an outcome's
    by its check set's entry in ``CK`` (a channel rule's outcomes are outcomes too)."""
    lines = []
    for line in source.splitlines():
        m = _APPEND_STEP.match(line)
        if m:
            indent = m.group(1)
            lines += [f"{indent}t = {m.group(2)}", f"{indent}append((step, t))", f"{indent}if ci:",
                      *_check_lines(indent + "    ", "CK[ci]")]
            continue
        lines.append(line)
    return "\n".join(lines)


#: a step line of the generated successors, checked or not (``_NEVER_CHECKED``)
_STEP_LINE = re.compile(_APPEND_STEP.pattern[:-1] + f"(?:{re.escape(_NEVER_CHECKED)})?$")
#: names ``_dedup_source`` gives the function's arguments, locals and sinks; absent from any source it rewrites
_DEDUP_NAMES = re.compile(r"\b(?:ref|seen|seen_add|known|count|cut|within|canon|keep_fp|keep_parent|keep_state"
                          r"|keep_step|h_|OUTSIDE_BUILT)\b")
#: lines of the generated successors that build the list ``_dedup_source``'s function does without
_OUT_LIST = ("    out = []", "    append = out.append", "    return out")


#: the line of the generated successors that names a state's places (``s0``, ``s1``, ...)
_UNPACK = re.compile(r"    \(((?:s\d+, )+)\) = s$")
#: an assignment to such a local (or a name ending so: a false alarm only costs the place tests)
_ASSIGNED = re.compile(r"s\d+\s*(?:[-+*/%&|^@:]|//|\*\*|<<|>>)?=(?!=)", re.ASCII)


def _test_lines(test: str, out: str, unknown: str, indent: str) -> list[str]:
    """Statements setting ``out`` to ``test``, or to ``unknown`` where it raises ``KeyError``."""
    return [f"{indent}try:", f"{indent}    {out} = {test}", f"{indent}except KeyError:", f"{indent}    {out} = {unknown}"]


def _dedup_source(source: str, actions: Sequence[str], checked: bool, symmetric: bool, bounded: bool,
                  outside: Collection[str] = (), own: PlaceTest | None = None,
                  inside: PlaceTest | None = None) -> str | None:
    """``successors``' source fused with the engine's duplicate test (``_Plan.dedup_successors``):
    ``successors(s, ref)`` makes no list; each step line counts its action (``actions[i]`` for the
    i-th step line: the line itself cannot name it), fingerprints its successor and, when the
    fingerprint is in neither ``seen`` nor ``known``, keeps it in the engine's sinks (or counts it
    as cut by the constraint, with ``bounded``); with ``checked``, each step is then checked as in
    ``_checked_source``. With ``bounded``, a builder call's line of an action in ``outside`` (its
    rule's ``outside=True``) first asks whether the outcome is marked ``OUTSIDE``
    (``rules.OUTSIDE_BUILT``): such a successor is counted and cut unbuilt and unchecked, as the
    engines' loops would count it (outside the constraint, it is no visited state or candidate,
    and a step out of the constraint is not checked). None when the source is not as expected
    (the engines then take the plain path)."""
    lines = source.splitlines()
    if (not lines or lines[0] != "def successors(s):" or lines[-1] != _OUT_LIST[2]
            or _DEDUP_NAMES.search(source)):
        return None
    out = ["def successors(s, ref):"]
    fp = "hash(canon(t))" if symmetric else "hash(t)"
    # the place tests (``PlaceTest``) of the canonical form (``own``) and of the constraint
    # (``inside``, only one that reads no dict): asked once per state on its own places (``own_``,
    # ``in_``) for the step lines whose tuple display keeps those places, else on the successor's
    # (the canonical form's in a try/except, ``o_``)
    unpack = _UNPACK.match(lines[1]) if len(lines) > 1 and (symmetric and own or bounded and inside) else None
    width = len(unpack.group(1).split(", ")) - 1 if unpack is not None else 0
    if unpack is not None and _ASSIGNED.search(source, len(lines[0]) + len(lines[1]) + 2):
        unpack = None  # a local ``s<n>`` written after the unpacking: the display's items may not be the places
    if not (symmetric and own is not None and unpack is not None and all(p < width for p in own.places)):
        own = None
    # a constraint's test that reads dicts (the eos yardstick's epoch flags) costs its lookups on every
    # state, more than the calls it saves there (perf26a: pipeline shape +1.0%): only a plain one
    if not (bounded and inside is not None and not inside.env and unpack is not None
            and all(p < width for p in inside.places)):
        inside = None
    n = 0
    for line in lines[1:]:
        m = _STEP_LINE.match(line)
        if m is None:
            if line not in _OUT_LIST:
                out.append(line)
                if line is lines[1]:
                    if own is not None:
                        expr = own.test.format(*(f"s{p}" for p in own.places))
                        out += _test_lines(expr, "own_", "False", "    ") if own.env else [f"    own_ = {expr}"]
                    if inside is not None:  # one that reads no dict (above): it cannot raise
                        out.append("    in_ = " + inside.test.format(*(f"s{p}" for p in inside.places)))
            continue
        if n >= len(actions):
            return None
        i, action = m.group(1), repr(actions[n])
        check = checked and not line.endswith(_NEVER_CHECKED)
        step_lines = []
        if bounded and actions[n] in outside and m.group(2).startswith("build("):
            # an outcome marked OUTSIDE: counted and cut, not built (the engines check no step that
            # leaves the constraint: ``Expander._slow_state``)
            step_lines += [f"{i}if build in OUTSIDE_BUILT:", f"{i}    count({action})", f"{i}    cut({action})",
                           f"{i}else:"]
            i += "    "
        items = _display_items(m.group(2), width)
        step_lines += [f"{i}t = {m.group(2)}", f"{i}count({action})"]
        if own is not None:
            if _kept(own, items):
                fp = "hash(t if own_ else canon(t))"
            elif not own.env:
                fp = f"hash(t if {_on_t(own)} else canon(t))"
            else:
                step_lines += _test_lines(_on_t(own), "o_", "False", i)
                fp = "hash(t if o_ else canon(t))"
        within = "within(t)"
        if inside is not None:
            within = "in_" if _kept(inside, items) else _on_t(inside)
        keep = ["seen_add(h_)", "keep_fp(h_)", "keep_parent(ref)", "keep_state(t)", "keep_step(step)"]
        step_lines += [f"{i}h_ = {fp}", f"{i}if h_ not in seen and h_ not in known:"]
        if bounded:
            step_lines += [f"{i}    if {within}:", *(f"{i}        {x}" for x in keep), f"{i}    else:",
                           f"{i}        cut({action})"]
        else:
            step_lines += [f"{i}    {x}" for x in keep]
        if check:
            step_lines += [f"{i}if ci:", *_check_lines(i + "    ", "CK[ci]")]
        out += step_lines
        n += 1
    return subscripted("\n".join(out)) if n == len(actions) else None


def _kept(test: PlaceTest, items: list[str] | None) -> bool:
    """Whether a step line's tuple display (``items``) keeps the test's places from the state (the
    unpacked locals ``s0``, ``s1``, ...)."""
    return items is not None and all(items[p] == f"s{p}" for p in test.places)


def _on_t(test: PlaceTest) -> str:
    """The test on the successor ``t``'s places."""
    return test.test.format(*(f"t[{p}]" for p in test.places))


def _display_items(expr: str, width: int) -> list[str] | None:
    """A step line's successor expression as its tuple display's items, or None (a builder call, or
    not ``width`` items separated by ``", "``: an item with a comma of its own changes the count)."""
    if not (expr.startswith("(") and expr.endswith(", )")):
        return None
    items = expr[1:-3].split(", ")
    return items if len(items) == width else None


def _jsonable(value: Any) -> Any:
    if hasattr(value, "_asdict"):
        return {k: _jsonable(v) for k, v in value._asdict().items()}
    if isinstance(value, (tuple, list, frozenset, set)):
        return [_jsonable(v) for v in value]
    return value


def _read_key(text: str) -> str:
    """The keyword a rule receives a read under: its alias, else its part's name."""
    m = _REF.match(text)
    return text if m is None else m.group(1) or m.group(2)


class _Plan:
    """Everything compiled from a machine's declarations and configuration (rebuilt, empty of
    memos, after unpickling; never pickled itself)."""

    def __init__(self, machine: Composed) -> None:
        self.machine = machine
        cls = type(machine)
        self.memoize = machine.memoize
        self.decls: dict[str, Decl] = dict(cls.__compose_parts__)
        self.slots: dict[str, tuple[int, int]] = {}
        self.sizes: dict[str, int] = {}
        n = 0
        for name, decl in self.decls.items():
            count = self.size(decl.count, f"part {name}: count") if isinstance(decl, Actors) else 1
            self.slots[name] = (n, count)
            n += count
        #: the logical width: one slot per part (actor); ``slots``, ``width`` and every compiled
        #: structure name logical slots, the states the machine hands out hold only the live ones
        self.width = n
        owner = f"{cls.__module__}.{cls.__qualname__}"
        self.tables: dict[str, Interner[Any]] = {name: table(f"{owner}.{name}") for name, decl in self.decls.items()
                                                 if decl.interned}
        self._set_layout({})
        self.budgets: dict[str, tuple[int, int]] = {}
        for name, decl in self.decls.items():
            if isinstance(decl, Budget):
                self.budgets[name] = (self.slots[name][0], self.size(decl.bound, f"budget {name}"))
        self.channels: dict[str, ChannelOps] = {}
        for name, decl in self.decls.items():
            if isinstance(decl, Channel):
                net: Any = decl.network
                if isinstance(net, str):
                    net = machine.config.get(net, getattr(machine, net, None))
                if not isinstance(net, Network):
                    raise ComposeError(f"channel {name}: network {decl.network!r} is not a Network "
                                       f"(give one, or a configuration entry holding one)")
                self.channels[name] = ChannelOps(name, net, self.tables[name], decl.connection, self.memoize)
        #: (part, projection name) -> the compiled projection (``projection``), shared by every reader
        self.projections: dict[tuple[str, str], _Projection] = {}
        self.rules: list[_Rule | _ChannelRule] = []
        self.actions: dict[str, tuple[str, ...]] = {}
        self.show: dict[str, dict[str, Callable[[Any], str]]] = {}
        for fn, spec, guards in cls.__compose_rules__:
            self._add_rule(_Rule(self, fn, spec, guards), spec.params, spec.results, spec.show)
        for name, decl in self.decls.items():
            if isinstance(decl, Clock) and decl.tick:
                self._add_clock(decl)
            if isinstance(decl, Channel):
                self._add_channel_rules(decl)
        #: values left to check with ``checked``
        self.unchecked = CHECKED
        #: inline values must lie where ``hash`` is injective (``checker.fingerprint``): checked as each
        #: is encoded, which is at a memo miss, an initial state or a renaming, never on a hit
        self.hash_domain = getattr(machine, "fingerprint_kind", "encoded") == "hash"
        self._symmetry_init()
        self.properties: dict[str, Property] = {}
        #: the compiled properties, by name (their generated checks are in ``properties``)
        self.property_objs: dict[str, _Invariant | _Transition] = {}
        #: the declared state constraints (``@constraint``), compiled like invariants
        self.constraints: list[_Invariant] = []
        for fn, pspec in cls.__compose_properties__:
            obj = _Transition(self, fn, pspec) if pspec.kind == "transition" else _Invariant(self, fn, pspec)
            if pspec.kind == "constraint":
                self.constraints.append(obj)  # type: ignore[arg-type]
            else:
                self.property_objs[pspec.name] = obj
            obj.compile()
        #: the sets of transition properties (names, declared order) some outcome's step may fail,
        #: by index (``check_index``); 0 is the empty set
        self.check_sets: list[tuple[str, ...]] = [()]
        self.check_ids: dict[tuple[str, ...], int] = {(): 0}
        self._transition_objs = [(name, obj) for name, obj in self.property_objs.items() if isinstance(obj, _Transition)]
        #: the ``each`` ones (``check_index`` decides their conjuncts on an outcome's fixed places)
        self._each_objs = [(name, obj) for name, obj in self._transition_objs if obj.each]
        #: (step, written places[, terms left equal]) -> its ``check_sets`` index (``check_index``)
        self._check_index: dict[tuple[Any, ...], int] = {}
        self._fuse()
        self.compile()

    def _fuse(self) -> None:
        self.fused = _Fused(self.memoize, self.pos)
        self._check_index.clear()  # keyed by places: a new layout's differ
        #: the conjunction of the constraints (None: there are none)
        self.within: Callable[[tuple], bool] | None = (
            self.fused.invariants(self.constraints, [c.check for c in self.constraints]) if self.constraints else None)
        self._fused_invariants: dict[tuple[str, ...], Callable[[tuple], bool]] = {}
        self._fused_transitions: dict[tuple[str, ...], dict[str, Callable[[tuple, Step, tuple], bool]]] = {}
        #: place -> the stuttering transition properties' terms read there (``check_index``'s ``fixed``)
        self.watched: dict[int, list[Term]] = {}
        for _, obj in self._transition_objs:
            if obj.spec.stuttering:
                for k in obj.moved_terms:
                    terms = self.watched.setdefault(self.pos[term_slot(k)], [])  # type: ignore[arg-type]
                    if k not in terms:
                        terms.append(k)

    # ---- the layout: constant slots left out of the states

    def _set_layout(self, consts: Mapping[int, Any]) -> None:
        """Keep the slots not in ``consts`` in the states, in logical order: ``pos[k]`` is logical
        slot k's place in a state (None for a constant), ``consts[k]`` a constant's content."""
        #: logical slot -> its content in every reachable state, for the slots no compiled rule writes
        #: that every initial state agrees on (``relayout``)
        self.consts: dict[int, Any] = dict(consts)
        #: the logical slots a state holds, in order
        self.live: list[int] = [k for k in range(self.width) if k not in self.consts]
        self.pos: list[int | None] = [None] * self.width
        for j, k in enumerate(self.live):
            self.pos[k] = j
        #: (place in a state, table) for every slot a state holds that holds an interned id
        self.interned_slots = [(self.pos[k], self.tables[name]) for name, (base, count) in self.slots.items()
                               if name in self.tables for k in range(base, base + count) if self.pos[k] is not None]
        env: dict[str, Any] = {}
        items = []
        for k in range(self.width):
            if k in self.consts:
                env[f"c{k}"] = self.consts[k]
                items.append(f"c{k}")
            else:
                items.append(f"s[{self.pos[k]}]")
        if self.consts:
            kept = "".join(f"s[{k}], " for k in self.live)
            src = f"def unpack(s):\n    return ({', '.join(items)},)\ndef pack(s):\n    return ({kept})\n"
            run_code(src, f"<compose {type(self.machine).__name__} layout>", env)
            #: a state -> its logical tuple (every slot), and back
            self.unpack: Callable[[tuple], tuple] = env["unpack"]
            self.pack: Callable[[tuple], tuple] = env["pack"]
        else:
            self.unpack = self.pack = tuple

    def placed(self, k: int) -> int:
        """The place in a state of logical slot ``k``, which a compiled rule writes (so not a constant)."""
        j = self.pos[k]
        if j is None:
            raise AssertionError(f"slot {k} is written by a compiled rule but laid out as a constant")
        return j

    def term(self, k: int, var: str = "s", env: dict[str, Any] | None = None) -> str:
        """Source text of logical slot ``k`` of state ``var`` in generated code: ``var[j]``, or the
        constant's content when the states leave it out: a name bound in ``env`` (the code's
        globals) when given, else a literal (an interned id or a plain scalar)."""
        j = self.pos[k]
        if j is not None:
            return f"{var}[{j}]"
        value = self.consts[k]
        if env is not None:
            env[f"c{k}"] = value
            return f"c{k}"
        # a non-interned part may hold any value: only one whose repr reads back is a literal
        if type(value) in (int, bool, str, float) or value is None:
            return repr(value)
        raise ComposeError(f"slot {k} is a constant {type(value).__name__}, which has no literal: "
                           "pass the generated code's globals (env) to bind it by name")

    def reader(self, slots: Sequence[int]) -> Callable[[tuple], tuple]:
        """A function of a state: the contents of these logical slots, as a tuple."""
        env: dict[str, Any] = {}
        src = f"lambda s: ({''.join(self.term(k, 's', env) + ', ' for k in slots)})"
        fn: Callable[[tuple], tuple] = eval(src, env)
        return fn

    def written(self) -> set[int]:
        """The logical slots some compiled rule can write (a receive rule's writes indexed by the
        message, all of the part's slots)."""
        out: set[int] = set()
        for rule in self.rules:
            if isinstance(rule, _ChannelRule):
                out.add(rule.slot)
                if rule.budget_slot >= 0:
                    out.add(rule.budget_slot)
                continue
            if rule.receive is None and not rule.bindings:
                continue  # not compiled (``compile``)
            if rule.receive is None:
                for b in rule.bindings:
                    for slots, _, _ in b.logical_writes.values():
                        out.update(slots)
            else:
                out.add(rule.receive_slot)
                for ref in rule.writes:
                    out.update(range(ref.base, ref.base + ref.count))
            out.update(slot for slot, _ in rule.sends.values())
            if rule.budget_slot >= 0:
                out.add(rule.budget_slot)
        return out

    def constants(self) -> dict[int, Any]:
        """The slots no compiled rule writes that hold one content in every initial state, and keep
        it under every renaming of the symmetry (a part an active scalarset moves: all its actors
        alike; a part it renames: a fixed point of every permutation)."""
        written = self.written()
        inits = [self.unpack(s) for s in self.machine.init_states()]
        if not inits:
            return {}
        first = inits[0]
        consts = {k: first[k] for k in range(self.width)
                  if k not in written and all(t[k] == first[k] for t in inits)}
        for ss, size in self.scalarset_sizes.items():
            if size < 2:
                continue
            for name in self.scalarsets[ss]:
                base, count = self.slots[name]
                ks = range(base, base + count)
                if not all(k in consts and consts[k] == consts[base] for k in ks):
                    for k in ks:
                        consts.pop(k, None)
            perms = list(itertools.permutations(range(size))) if size <= 6 else None
            for slots, decl, fn in self.renames.get(ss, ()):
                values = self.tables[decl.name].values if decl.interned else None
                for k in slots:
                    if k not in consts:
                        continue
                    c = consts[k]
                    value = c if values is None else values[c]
                    if perms is None or any(self.encode(decl, fn(value, perm)) != c for perm in perms):
                        del consts[k]
        return consts

    def relayout(self) -> bool:
        """Leave the constant slots (``constants``) out of the states, and regenerate every function
        that reads a state if that changed what they are (True). Only before the machine hands out
        a state: a state of the old layout means nothing in the new one."""
        if not getattr(self.machine, "pack_constants", True):
            return False
        consts = self.constants()
        if consts == self.consts:
            return False
        self._set_layout(consts)
        for rule in self.rules:
            rule.clear()
        for obj in [*self.property_objs.values(), *self.constraints]:
            obj.relayout()
            obj.compile()
        self._fuse()
        self._symmetry_init()
        for proj in self.projections.values():
            proj.clear()
        self.compile()
        self.machine._bind_within()
        return True

    def set_rules(self, rules: list[_Rule | _ChannelRule]) -> None:
        """Compile only ``rules`` (a machine's own pruning of rules that cannot fire): the slots
        only the others wrote become constant."""
        self.rules = list(rules)
        if not self.relayout():
            self.compile()

    def compile(self) -> None:
        """(Re)generate ``successors``: every rule's ``expand`` in order, one call each.

        Bindings (of any rules) that read exactly the same slots form a group, looked up once per
        state at the top: its memo maps the key to every member's outcomes (or gate: ``_groups``),
        and each member still emits its steps at its own place, so the successor order is unchanged.
        Lookups whose slots another lookup's key covers share that key's one lookup per state (a
        host, ``_groups``)."""
        env: dict[str, Any] = {}
        lines = ["def successors(s):", "    out = []", "    append = out.append"]
        grouped, gated, hosted = self._groups(env, lines)
        step_actions: list[str] = []  # the action of each step line, in order (``dedup_successors``)
        #: the actions whose rules may mark an outcome ``OUTSIDE`` (``rule``'s ``outside``)
        self._outside_actions = frozenset(rule.action for rule in self.rules
                                          if isinstance(rule, _Rule) and rule.spec.outside)
        for n, rule in enumerate(self.rules):
            if isinstance(rule, _Rule) and rule.receive is None and not rule.bindings:
                continue  # no parameter values (e.g. zero actors): nothing to call
            if isinstance(rule, _Rule):  # pasted in: one call per state, not one per rule and state
                if n in grouped or n in gated or n in hosted:
                    body, names = rule.body(rule.tag, grouped.get(n), gated.get(n), hosted.get(n))
                else:
                    body, names = rule.inline
            else:  # a channel rule: its outcomes by the channel's content, as a rule's
                body, names = rule.body(f"c{n}_")
            env.update(names)
            if not self._may_check(rule.action):
                body = [x + _NEVER_CHECKED if _APPEND_STEP.match(x) else x for x in body]
            step_actions += [rule.action] * sum(1 for x in body if _STEP_LINE.match(x))
            lines += ["    " + x for x in body]
        lines.append("    return out")
        lines = plain_projections(hoist_projections(lines, 3, lazy=True), env)
        if self.live:
            # every place in a local, unpacked once per state: ``s[k]`` costs three opcodes per read
            # (keys, the successors built in place), a local one
            lines = [lines[0], f"    ({''.join(f's{k}, ' for k in range(len(self.live)))}) = s",
                     *(_PLACE.sub(r"s\1", x) for x in lines[1:])]
        #: the generated source (profiles name its lines: ``<compose Class>:N``)
        self.source = "\n".join(lines)
        self._step_actions = step_actions
        self._env = env
        self._compiled: Callable[[tuple], list[tuple[Step, tuple]]] | None = None

        def successors(s: tuple) -> list[tuple[Step, tuple]]:
            # compiled on the first call: a machine laid out again at start-up (``relayout``,
            # ``set_rules``), or one the engine expands only by ``checked_successors``, never
            # parses this source
            return self._compile_successors()(s)

        successors.__qualname__ = "successors"  # as the compiled function's (``run_key`` reads reprs)
        self.successors: Callable[[tuple], list[tuple[Step, tuple]]] = successors
        #: ``checked_successors`` by the transition properties checked, and their tables of
        #: checks by ``check_sets`` index (extended as ``check_index`` finds new sets)
        self._checked: dict[tuple[str, ...], tuple[Callable[[tuple], list[tuple[Step, tuple]]], list[Step]]] = {}
        self._check_tables: list[tuple[tuple[str, ...], list[Any]]] = []
        self._outcome_checks: dict[tuple[str, ...], Callable[[tuple, Step, tuple], bool]] = {}
        #: ``dedup_successors`` by (transition properties checked, canonical form)
        self._dedup: dict[tuple[tuple[str, ...], Any, Any], Dedup | None] = {}
        if "successors" in vars(self.machine):  # bound on the instance (``Composed._bind_within``): rebind
            self.machine.successors = self.successors  # type: ignore[method-assign,assignment]

    def _compile_successors(self) -> Callable[[tuple], list[tuple[Step, tuple]]]:
        """The generated ``successors``, compiled from ``source`` once, and bound in place of the
        first-call stub (on the machine too, where the stub was bound)."""
        if self._compiled is None:
            stub = self.successors
            run_code(self.source, f"<compose {type(self.machine).__name__}>", self._env)
            self._compiled = self.successors = self._env["successors"]
            if vars(self.machine).get("successors") is stub:
                self.machine.successors = self._compiled  # type: ignore[method-assign,assignment]
        return self._compiled

    def _may_check(self, action: str) -> bool:
        """Can some transition property apply to a step of ``action`` (``_Transition.applies``'s
        first test)? The outcomes of a rule whose action none names always have check index 0:
        ``checked_successors`` leaves its steps as ``successors`` makes them (no local, no test of
        the index per successor)."""
        return any(not obj.actions or action in obj.actions for _, obj in self._transition_objs)

    def _groups(self, env: dict[str, Any], lines: list[str]) -> tuple[
            dict[int, dict[int, tuple[str, int]]], dict[int, dict[int, tuple[str, int]]], dict[int, Hosted]]:
        """Group the memoised lookups of rules without ``receive`` by their key slots: the outcomes
        of ungated bindings (``key_slots``) and the gates of gated ones (``gate_slots``, whose
        full lookups stay their own); emit one lookup per group of two or more into ``lines``, its
        value every member's outcomes or gate, in order (kafka.eos config 1 gates eight rules on
        producer[t]; the init_producer_id preset keys both outcomes and gates on instance[c]).
        A gate is a pure function of its slots, so evaluating it where its rule would not look (a
        spent budget) changes only the cost.

        Then hosts: a lookup made on every state whose key covers the slots of other lookups (every
        slot they read, or the slot of a projection they read) is looked up first, once, and its
        memo holds one place per covered lookup, filled where that lookup is made the first time
        it meets this key (``hosts``). The covered lookups, misses and computations happen where
        and when they did (part values are interned in the same order); a state only skips the
        lookups a place answers.

        Returns (rule index -> binding index -> (group variable, place)) for outcomes and for
        gates, and rule index -> binding index -> {"outs"/"gate": (host variable, place)}."""
        if not self.memoize:
            return {}, {}, {}
        by_key: dict[tuple[Any, ...], list[tuple[int, int, Any, bool]]] = {}
        for n, rule in enumerate(self.rules):
            if isinstance(rule, _Rule) and rule.receive is None and rule.spec.memo:
                for i, b in enumerate(rule.bindings):
                    if b.gate_slots:  # a gated binding looks up its gate first, its outcomes on their own
                        by_key.setdefault(tuple(b.gate_slots), []).append((n, i, b, True))
                    else:
                        by_key.setdefault(tuple(b.key_slots), []).append((n, i, b, False))
        groups = [(key, members) for key, members in by_key.items() if len(members) > 1]
        outs: dict[int, dict[int, tuple[str, int]]] = {}
        gates: dict[int, dict[int, tuple[str, int]]] = {}
        for g, (_, members) in enumerate(groups):
            for place, (n, i, _, gate) in enumerate(members):
                (gates if gate else outs).setdefault(n, {})[i] = (f"g{g}", place)
        # every lookup left, as (terms, conditional, kind, reference): a group's, a gate's, an
        # outcomes' (those of a gated binding are conditional, as are all of a budgeted rule's)
        lookups: list[tuple[list[Term], bool, str, Any]] = [(list(key), False, "group", g)
                                                             for g, (key, _) in enumerate(groups)]
        for n, rule in enumerate(self.rules):
            if isinstance(rule, _Rule) and rule.receive is None and rule.spec.memo:
                budgeted = rule.budget_slot >= 0
                for i, b in enumerate(rule.bindings):
                    if b.gate_slots:
                        if i not in gates.get(n, {}):
                            lookups.append((b.gate_slots, budgeted, "gate", (n, i)))
                        lookups.append((b.key_slots, True, "outs", (n, i)))
                    elif i not in outs.get(n, {}):
                        lookups.append((b.key_slots, budgeted, "outs", (n, i)))
        hosts = _hosts([(terms, cond) for terms, cond, _, _ in lookups])
        hosted_groups: dict[int, tuple[str, int]] = {}
        hosted: dict[int, Hosted] = {}
        for h, (host_key, covered) in enumerate(hosts):
            env[f"hm{h}"] = {}
            lines += [f"    k = {_key_source(host_key, 's', env, self.pos)}", f"    H{h} = hm{h}.get(k)",
                      f"    if H{h} is None:", f"        H{h} = hm{h}[k] = [None] * {len(covered)}"]
            for place, j in enumerate(covered):
                _, _, kind, ref = lookups[j]
                if kind == "group":
                    hosted_groups[ref] = (f"H{h}", place)
                else:
                    n, i = ref
                    hosted.setdefault(n, {}).setdefault(i, {})[kind] = (f"H{h}", place)
        for g, (key, members) in enumerate(groups):
            memo: dict[Any, tuple[Any, ...]] = {}
            bindings = [(b, self.rules[n], gate) for n, _, b, gate in members]

            def miss(s: tuple, key: Any, memo: dict[Any, tuple[Any, ...]] = memo,
                     bindings: list[tuple[Any, Any, bool]] = bindings) -> tuple[Any, ...]:
                values = []
                for b, rule, gate in bindings:
                    if gate:
                        o = b.gate_memo.get(key)
                        values.append(rule.gate(b, s) if o is None else o)
                    else:
                        o = b.memo.get(key)
                        values.append(rule.compute(b, s, _NO_MSG, 0) if o is None else o)
                result = memo[key] = tuple(values)
                return result

            env[f"gm{g}"], env[f"gmiss{g}"] = memo, miss
            src = _key_source(list(key), "s", env, self.pos)
            lookup = [f"k = {src}", f"g{g} = gm{g}.get(k)", f"if g{g} is None:", f"    g{g} = gmiss{g}(s, k)"]
            if g in hosted_groups:
                var, place = hosted_groups[g]
                lookup = [f"g{g} = {var}[{place}]", f"if g{g} is None:", *("    " + x for x in lookup),
                          f"    {var}[{place}] = g{g}"]
            lines += ["    " + x for x in lookup]
        return outs, gates, hosted

    def __repr__(self) -> str:  # stable: ``run_key`` hashes the machine's attributes as text
        return f"<compiled {type(self.machine).__name__}: {self.width} slots, {len(self.rules)} rules>"

    # ---- configuration

    def size(self, value: Any, what: str) -> int:
        if isinstance(value, str):
            if value in self.machine.config:
                value = self.machine.config[value]
            elif isinstance(getattr(self.machine, value, None), int):
                value = getattr(self.machine, value)
            else:
                raise ComposeError(f"{what}: no configuration entry {value!r}")
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ComposeError(f"{what}: {value!r} is not a non-negative int")
        return value

    def domain(self, d: Domain, what: str) -> tuple[Any, ...]:
        if isinstance(d, str) and d in self.decls and isinstance(self.decls[d], Actors):
            return tuple(range(self.slots[d][1]))
        if isinstance(d, (int, str)) and not isinstance(d, bool):
            return tuple(range(self.size(d, what)))
        if isinstance(d, (tuple, range, list)):
            return tuple(d)
        if callable(d):
            return tuple(d(self.machine))
        raise ComposeError(f"{what}: {d!r} is not a domain (an int, a configuration name, an Actors part, "
                           "a tuple or a function of the machine)")

    def _add_rule(self, rule: _Rule | _ChannelRule, params: Iterable[str], results: Iterable[str],
                  show: Mapping[str, Callable[[Any], str]]) -> None:
        if rule.budget_slot >= 0 and rule.budget_bound == 0:
            return  # a zero budget removes the rule
        names = (*params, *results)
        if rule.action in self.actions and self.actions[rule.action] != names:
            raise ComposeError(f"action {rule.action} declared with fields {self.actions[rule.action]} and {names}")
        self.actions[rule.action] = names
        if show:
            self.show.setdefault(rule.action, {}).update(show)
        self.rules.append(rule)

    def _add_clock(self, clock: Clock) -> None:
        name = clock.name
        top = self.size(clock.max, f"clock {name}: max")
        when = clock.when

        # a read is passed under its part's name (or alias), as to any rule: ``leader:phase`` as ``leader``
        keys = tuple(_read_key(r) for r in clock.reads)

        def tick(machine: Any, **parts: Any) -> dict[str, int] | None:
            now = parts[name]
            if now >= top or (when is not None and not when(machine, **{k: parts[k] for k in keys})):
                return None
            return {name: now + 1, "now": now + 1}

        reads = (name, *(r for r in clock.reads if r != name))
        spec = RuleSpec(str(clock.tick), {}, reads, (name,), (), None, ("now",), None, {}, True)
        rule = _Rule(self, tick, spec, [])
        if top == 0:
            # a clock stopped at 0 never ticks: its action stays listed (as a rule whose guard
            # never holds would be), but no lookup is paid for it in every state
            self._add_rule(rule, (), ("now",), {})
            self.rules.pop()
            return
        self._add_rule(rule, (), ("now",), {})

    def _add_channel_rules(self, ch: Channel) -> None:
        net = self.channels[ch.name].net
        if net.loss is not None and net.loss is not False:
            budget = (-1, 0) if net.loss is True else self._budget(str(net.loss), f"channel {ch.name}: loss")
            rule = _ChannelRule(self, ch, "drop", ch.drop or f"Drop_{ch.name}", budget)
            self._add_rule(rule, ch.label or ("msg",), (), {})
        if net.duplication is not None:
            if net.delivery is Delivery.DUPLICATING:
                raise ComposeError(f"channel {ch.name}: a DUPLICATING network already re-delivers; "
                                   "drop the duplication budget")
            budget = self._budget(net.duplication, f"channel {ch.name}: duplication")
            rule = _ChannelRule(self, ch, "duplicate", ch.duplicate or f"Duplicate_{ch.name}", budget)
            self._add_rule(rule, ch.label or ("msg",), (), {})

    def projection(self, part: str, name: str, where: str) -> _Projection:
        """Part ``part``'s projection ``name`` (``parts.Decl.projections``): one per machine, so every
        rule and property that reads it shares its maps (and its ids, in their memo keys)."""
        proj = self.projections.get((part, name))
        if proj is None:
            declared = getattr(self.decls[part], "projections", None) or {}
            declared_fn = declared.get(name)
            put: Callable[[Any, Any], Any] | None = None
            fn: Any = declared_fn
            if isinstance(declared_fn, Projection):
                fn, put = declared_fn.get, declared_fn.put
            if not callable(fn):
                raise ComposeError(f"{where}: part {part!r} has no projection {name!r} "
                                   f"(its projections: {', '.join(declared) or 'none'})")
            source = self.tables[part].values if part in self.tables else None
            proj = self.projections[(part, name)] = _Projection(f"{part}:{name}", fn, source, put,
                                                                label=f"P{len(self.projections)}")
        return proj

    def _budget(self, name: str, what: str) -> tuple[int, int]:
        if name not in self.budgets:
            raise ComposeError(f"{what}: {name!r} is not a Budget part")
        return self.budgets[name]

    # ---- symmetry

    def _symmetry_init(self) -> None:
        #: scalarset -> the Actors parts whose indices are its identities
        self.scalarsets: dict[str, list[str]] = {}
        for name, decl in self.decls.items():
            if isinstance(decl, Actors) and decl.symmetric:
                self.scalarsets.setdefault(decl.symmetric, []).append(name)
        declared = set(self.scalarsets)
        # a configuration may keep only some declared scalarsets (``Composed.scalarsets_in_force``):
        # renaming by the others is not a symmetry of it, so nothing renames by them
        kept = set(self.machine.scalarsets_in_force(tuple(self.scalarsets)))
        self.scalarsets = {ss: names for ss, names in self.scalarsets.items() if ss in kept}
        self.scalarset_sizes: dict[str, int] = {}
        for ss, names in self.scalarsets.items():
            # an Actors part with no slots (its mechanism off) moves nothing and names no size
            sizes = {self.slots[n][1] for n in names} - {0}
            if len(sizes) > 1:
                raise ComposeError(f"scalarset {ss}: its Actors parts {', '.join(names)} differ in count")
            self.scalarset_sizes[ss] = sizes.pop() if sizes else 0
            self.scalarsets[ss] = [n for n in names if self.slots[n][1]]
        #: scalarset -> per Actors part (``scalarsets``' order): its declared ``order`` (None: none), where
        #: one of them declares one
        self.orders: dict[str, list[Callable[[Any], int] | None]] = {}
        for ss, names in self.scalarsets.items():
            orders = [getattr(self.decls[n], "order", None) for n in names]
            if any(orders):
                self.orders[ss] = orders
        #: scalarset -> (slots, decl, rename) of every part whose value mentions its identities
        self.renames: dict[str, list[tuple[list[int], Decl, Callable[[Any, tuple[int, ...]], Any]]]] = {}
        for name, decl in self.decls.items():
            for ss, fn in (getattr(decl, "rename", None) or {}).items():
                if ss not in declared:
                    raise ComposeError(f"part {name}: renames {ss!r}, which no Actors part declares symmetric")
                if ss not in self.scalarsets:
                    continue
                base, count = self.slots[name]
                self.renames.setdefault(ss, []).append((list(range(base, base + count)), decl, fn))
        self.renamed: dict[tuple[str, str, Any, tuple[int, ...]], Any] = {}
        self.permuters = {ss: self._permuter(ss) for ss in self.scalarsets}
        #: scalarset -> every permutation, for the small ones without a rename-invariant sort key
        self.brute_force = {ss: tuple(itertools.permutations(range(size)))
                            for ss, size in self.scalarset_sizes.items()
                            if 1 < size <= BRUTE_FORCE and self.self_renaming(ss)}
        self.product = self._product()
        #: the generated least image over the whole group, when it is small (``least_image``)
        self.least: Callable[[tuple], tuple] | None = None
        self._least_memos: list[dict[Any, Any]] = []
        if least_image.applies(self):
            self.least, self._least_memos = least_image.least_image(self)

    def _product(self) -> tuple[str, tuple[tuple[tuple[str, tuple[int, ...]], ...], ...]] | None:
        """With two or more scalarsets of two or more identities: the one canonicalised alone
        (``sorted``) and every combination of permutations of the others (``images``, the identity
        first), or None (one at most, or too many combinations: ``canonical`` then only normalises).

        Canonicalising one scalarset after another is not one state per orbit of their product
        group: a scalarset's sort keys (its actors' slots) change when another one renames them
        (kafka.eos's leaders hold producers' records, its producers their partitions' state). The
        least of ``sorted``'s canonical forms over the images of every combination of the others
        is: renamings of different scalarsets commute, so two states of one orbit have the same
        set of images up to a renaming of ``sorted`` alone, whose canonical form is exact."""
        active = [ss for ss, size in self.scalarset_sizes.items() if size > 1]
        if len(active) < 2:
            return None
        exact_alone = [ss for ss in active if ss in self.brute_force or not self.self_renaming(ss)]
        if not exact_alone:
            return None
        # the largest group is the one not enumerated (its sort is the cheap part)
        last = max(exact_alone, key=lambda ss: self.scalarset_sizes[ss])
        others = [ss for ss in active if ss != last]
        if math.prod(math.factorial(self.scalarset_sizes[ss]) for ss in others) > PRODUCT_IMAGES:
            return None
        images = tuple(itertools.product(*([(ss, perm) for perm in itertools.permutations(range(
            self.scalarset_sizes[ss]))] for ss in others)))
        return last, images

    def permute(self, s: tuple, ss: str, perm: tuple[int, ...]) -> tuple:
        """``s`` with identity ``i`` of scalarset ``ss`` renamed ``perm[i]`` everywhere: the actors'
        slots moved, and the parts that mention identities renamed (memoised per value)."""
        s = self.unpack(s)
        t = list(s)
        for name in self.scalarsets[ss]:
            base, count = self.slots[name]
            for i in range(count):
                t[base + perm[i]] = s[base + i]
        renamed = self.renamed
        for slots, decl, fn in self.renames.get(ss, ()):
            values = self.tables[decl.name].values if decl.interned else None
            for k in slots:
                key = (ss, decl.name, t[k], perm)  # a part renamed by two scalarsets: one memo each
                new = renamed.get(key)
                if new is None:
                    value = t[k] if values is None else values[t[k]]
                    new = self.encode(decl, fn(value, perm))
                    if self.memoize:
                        renamed[key] = new
                t[k] = new
        return self.pack(tuple(t))

    def canonical(self, s: tuple) -> tuple:
        """One scalarset after another: sort its identities by their actors' slots and break ties
        by the least image (``checker.symmetry.canonicalize``); a scalarset whose actors mention
        its identities has no rename-invariant sort key, so up to ``BRUTE_FORCE`` identities its
        form is the least image over every permutation. With several scalarsets (``product``):
        the least of one's form over every renaming by the others. With a small group
        (``least_image``): the least image over all of it, by generated code."""
        if self.least is not None:
            return self.least(s)
        if self.product is not None:
            last, images = self.product
            best = None
            for image in images:
                t = s
                for ss, perm in image:
                    t = self.permute(t, ss, perm)
                t = self._canonical_one(t, last)
                if best is None or t < best:
                    best = t
            assert best is not None
            return best
        for ss in self.scalarsets:
            s = self._canonical_one(s, ss)
        return s

    def _canonical_one(self, s: tuple, ss: str) -> tuple:
        n = self.scalarset_sizes[ss]
        if n < 2:
            return s  # nothing to rename
        if ss in self.brute_force:
            apply = self.permuters[ss]
            return min(apply(s, perm) for perm in self.brute_force[ss])
        cols = [self.slots[name][0] for name in self.scalarsets[ss]]
        logical = self.unpack(s)
        orders = self.orders.get(ss)
        if orders is None:
            keys = [tuple(logical[base + i] for base in cols) for i in range(n)]
        else:
            # (the order's value, then the slot's content: equal keys are equal contents, as without an order)
            tables = [self.tables[name].values if self.decls[name].interned else None for name in self.scalarsets[ss]]
            keys = [tuple(logical[base + i] if order is None
                          else (order(logical[base + i] if values is None else values[logical[base + i]]), logical[base + i])
                          for base, order, values in zip(cols, orders, tables)) for i in range(n)]
        return canonicalize(s, keys, self.permuters[ss])

    def _permuter(self, ss: str) -> Callable[[tuple, tuple[int, ...]], tuple]:
        def apply(state: tuple, perm: tuple[int, ...]) -> tuple:
            return self.permute(state, ss, perm)
        return apply

    def self_renaming(self, ss: str) -> bool:
        """Whether an actor of scalarset ``ss`` mentions its identities (its slots then change
        under renaming and cannot be the sort key)."""
        return any(decl.name in self.scalarsets[ss] for _, decl, _ in self.renames.get(ss, ()))

    def exact_symmetry(self) -> bool:
        """Whether ``canonical`` picks one state per orbit, so that every engine and exploration
        order gives the same count: at most one scalarset with two or more identities, whose sort
        keys renaming leaves alone or which is small enough to try every permutation; or several,
        combined by ``product``; or a small group, whose least image is taken."""
        if self.least is not None:
            return True
        active = [ss for ss, size in self.scalarset_sizes.items() if size > 1]  # a smaller one renames nothing
        if len(active) != 1:
            return not active or self.product is not None
        ss = active[0]
        return ss in self.brute_force or not self.self_renaming(ss)

    # ---- values

    def encoder(self, decl: Decl) -> Callable[[Any], Any]:
        """``value -> slot content`` for part ``decl``: its id for an interned part."""
        # (the check of ``checked`` inlined: an encoder runs for every value a memo miss writes)
        name, checked = decl.name, self.checked
        if isinstance(decl, Channel):
            table, normalize = self.tables[name], self.channels[name].normalize

            def encode_channel(value: Any) -> Any:
                return table.intern(normalize(tuple(checked(value, name) if self.unchecked else value)))
            return encode_channel
        if decl.interned:
            intern = self.tables[name].intern

            def encode_interned(value: Any) -> Any:
                return intern(checked(value, name) if self.unchecked else value)
            return encode_interned
        return lambda value: self.encode(decl, value)

    def checked(self, value: Any, where: str) -> Any:
        """``value``, after checking (for the first ``CHECKED`` values written) that it holds only
        values that hash alike in every process (``fingerprint.check_state``): an interned part's
        id is its hash, and the engine only sees the id."""
        if self.unchecked:
            self.unchecked -= 1
            # the quick test first: ``check_state`` builds a path string per leaf to name a bad one
            # (about 350 bytecodes per value of kafka.init_producer_id's parts), and values pass
            if not _plain(value):
                check_state(value, where)
        return value

    def encode(self, decl: Decl, value: Any) -> Any:
        if decl.interned:
            self.checked(value, decl.name)
        if isinstance(decl, Channel):
            return self.tables[decl.name].intern(self.channels[decl.name].normalize(tuple(value)))
        if decl.interned:
            return self.tables[decl.name].intern(value)
        if not isinstance(value, int):  # bools are ints
            raise ComposeError(f"part {decl.name}: {value!r} is not an int or bool (declare it a Part to hold it)")
        if self.hash_domain and (value == -2 or not -P < value < P):
            raise ComposeError(
                f"part {decl.name}: {value} is outside the ints 'hash' fingerprints tell apart (|x| < 2**61-1, "
                f"x != -2); set fingerprint_kind = 'encoded' on {type(self.machine).__name__}")
        return value

    def fused_invariants(self, names: Sequence[str]) -> Callable[[tuple], bool]:
        key = tuple(names)
        check = self._fused_invariants.get(key)
        if check is None:
            objs = [self.property_objs[n] for n in key]
            if any(not isinstance(o, _Invariant) for o in objs):
                raise ValueError(f"not all invariants: {', '.join(key)}")
            check = self._fused_invariants[key] = self.fused.invariants(
                objs, [self.properties[n].check for n in key])  # type: ignore[arg-type]
        return check

    def fused_transitions(self, names: Sequence[str]) -> dict[str, Callable[[tuple, Step, tuple], bool]]:
        key = tuple(names)
        checks = self._fused_transitions.get(key)
        if checks is None:
            objs = [self.property_objs[n] for n in key]
            if any(not isinstance(o, _Transition) for o in objs):
                raise ValueError(f"not all transition properties: {', '.join(key)}")
            checks = self._fused_transitions[key] = self.fused.transitions(
                objs, [self.properties[n].check for n in key], list(self.actions))  # type: ignore[arg-type]
        return checks

    def check_index(self, step: Step, written: tuple[int, ...], fixed: Sequence[tuple[int, Any, Any]] = ()) -> int:
        """The index in ``check_sets`` of the transition properties that may fail on ``step``, a
        step writing the places ``written`` (``_Transition.applies``): an outcome's, computed when
        its binding's memo misses (and remembered by step and places: misses repeat steps).

        ``fixed``: (place, content before, content written) of the places in ``watched`` the outcome
        writes whole and its binding's memo key holds whole, so that every state the outcome is
        looked up for has that content there before the step. A stuttering property's term read
        there that these contents leave equal does not move on the step (kafka.eos's
        NoSpuriousFencing on a producer whose fatal error an outcome leaves as it was): the same
        answer as the property's own test, which compares the same contents."""
        still = self._still(fixed) if fixed else ()
        decided = self._decided(step, fixed) if fixed and self._each_objs else ()
        key = (step, written, still, decided) if still or decided else (step, written)
        index = self._check_index.get(key)
        if index is not None:
            return index
        places = set(written)
        names = tuple(name for name, obj in self._transition_objs
                      if obj.applies(step, places, still, [k for n, k in decided if n == name] if decided else ()))
        index = self._check_index[key] = self._check_set(names)
        return index

    def _decided(self, step: Step, fixed: Sequence[tuple[int, Any, Any]]) -> tuple[tuple[str, Term], ...]:
        """(property, term) of the ``each`` transition properties' terms at ``fixed``'s places whose
        conjunct ``step`` meets, decided on ``fixed``'s contents (every state the outcome is looked up
        for holds them before the step, and its successor after): a conjunct that fails is not
        decided, so the step is checked per successor and fails there, as it did."""
        decided: list[tuple[str, Term]] = []
        for name, obj in self._each_objs:
            if not obj.admits(step):
                continue
            for place, before, after in fixed:
                for k in obj.moved_terms:
                    if self.pos[term_slot(k)] == place and obj.decide(step, k, before, after):
                        decided.append((name, k))
        return tuple(decided)

    def _still(self, fixed: Sequence[tuple[int, Any, Any]]) -> tuple[Term, ...]:
        """The ``watched`` terms at ``fixed``'s places that its contents leave equal (a slot: the same
        content; a projection: the same projected id)."""
        still: list[Term] = []
        for place, before, after in fixed:
            for k in self.watched[place]:
                if before == after if type(k) is int else k[1].ids[before] == k[1].ids[after]:  # type: ignore[index]
                    still.append(k)
        return tuple(still)

    def _check_set(self, names: tuple[str, ...]) -> int:
        index = self.check_ids.get(names)
        if index is None:
            index = self.check_ids[names] = len(self.check_sets)
            self.check_sets.append(names)
            for checked, table in self._check_tables:
                table.append(self._outcome_check(names, checked))
        return index

    def _outcome_check(self, names: tuple[str, ...], checked: tuple[str, ...]) -> Callable[[tuple, Step, tuple], bool] | None:
        """The check of a step that may fail ``names`` when ``checked`` are checked: their common
        properties' fused check without the step filters (they hold), or None."""
        common = tuple(n for n in checked if n in names)
        if not common:
            return None
        check = self._outcome_checks.get(common)
        if check is None:
            check = self._outcome_checks[common] = self.fused._transition_check(
                [self.property_objs[n] for n in common], filters=False)  # type: ignore[misc]
        return check

    def checked_successors(self, names: Sequence[str]) -> tuple[Callable[[tuple], list[tuple[Step, tuple]]], list[Step]]:
        """``successors`` that also checks the named transition properties on each step it makes:
        (function, failed). Only a step an outcome's ``check_index`` names for them is checked;
        a step whose check fails (or raises) is appended to ``failed``, which the caller empties."""
        key = tuple(names)
        got = self._checked.get(key)
        if got is None:
            table = [self._outcome_check(names_, key) for names_ in self.check_sets]
            self._check_tables.append((key, table))
            failed: list[Step] = []
            env = dict(self._env)
            env.update(CK=table, failed=failed)
            source = _checked_source(self.source)
            run_code(source, f"<compose {type(self.machine).__name__} checked>", env)
            got = self._checked[key] = (env["successors"], failed)
        return got

    def dedup_successors(self, names: Sequence[str], canonical: Callable[[tuple], tuple] | None,
                         within: Callable[[tuple], bool] | None) -> Dedup | None:
        """``successors`` fused with the engine's duplicate test (``Machine.dedup_successors``),
        checking the named transition properties (none: nothing checked) as ``checked_successors``
        does; None when the source cannot be rewritten."""
        key = (tuple(names), canonical, within)
        if key in self._dedup:
            return self._dedup[key]
        env = dict(self._env)
        failed: list[Step] = []
        if names:
            table = [self._outcome_check(names_, key[0]) for names_ in self.check_sets]
            self._check_tables.append((key[0], table))
            env.update(CK=table)
        env.update(failed=failed, canon=canonical, within=within)
        tests = []
        for fn, attr in ((canonical, "own_form"), (within, "place_test")):
            test = getattr(fn, attr, None)
            if not isinstance(test, PlaceTest) or any(not name.startswith("OWN_") or name in env for name in test.env):
                test = None  # its names must not shadow the generated code's
            else:
                env.update(test.env)
            tests.append(test)
        source = _dedup_source(self.source, self._step_actions, bool(names), canonical is not None, within is not None,
                               self._outside_actions, *tests)
        env["OUTSIDE_BUILT"] = OUTSIDE_BUILT
        got = None
        if source is not None:
            run_code(source, f"<compose {type(self.machine).__name__} dedup>", env)

            def bind(seen: set[int], known: Any, actions: list[str], cut: list[str], fps: list[int],
                     parents: list[Any], states: list[Any], steps: list[Any]) -> None:
                env.update(seen=seen, seen_add=seen.add, known=known, count=actions.append, cut=cut.append,
                           keep_fp=fps.append, keep_parent=parents.append, keep_state=states.append,
                           keep_step=steps.append)

            got = Dedup(env["successors"], failed, bind)
        self._dedup[key] = got
        return got

    def decode_reads(self, s: tuple, reads: list[ReadSlots]) -> dict[str, Any]:
        return read_parts(self.unpack(s), reads, {})

    def clear(self) -> None:
        for ops in self.channels.values():
            ops.clear()
        for rule in self.rules:
            rule.clear()
        for obj in [*self.property_objs.values(), *self.constraints]:
            obj.clear()
        self.fused.clear()
        self.renamed.clear()
        for memo in self._least_memos:
            memo.clear()
        for proj in self.projections.values():  # after every memo keyed by its ids
            proj.clear()
        self.compile()


class View:
    """A flat state read by part name: ``view.log``, ``view.client`` (a tuple of actors)."""

    __slots__ = ("_plan", "_state")

    def __init__(self, plan: _Plan, state: tuple) -> None:
        self._plan, self._state = plan, state

    def __repr__(self) -> str:
        return "View(" + ", ".join(f"{name}={getattr(self, name)!r}" for name in self._plan.slots) + ")"

    def __getattr__(self, name: str) -> Any:
        plan = self._plan
        if name not in plan.slots:
            raise AttributeError(name)
        base, count = plan.slots[name]
        decl = plan.decls[name]
        s, pos, consts = self._state, plan.pos, plan.consts
        # the slots' contents (a state leaves the constant ones out)
        contents = [s[j] if (j := pos[k]) is not None else consts[k] for k in range(base, base + count)]
        if decl.interned:
            values = plan.tables[name].values
            contents = [values[x] for x in contents]
        return tuple(contents) if isinstance(decl, Actors) else contents[0]


def _collect(cls: type) -> None:
    parts: dict[str, Decl] = {}
    rules: dict[str, Callable[..., Any]] = {}
    props: dict[str, Callable[..., Any]] = {}
    for klass in reversed(cls.__mro__):
        for attr, value in vars(klass).items():
            # an override keeps the overridden declaration's place (slot order, successor order)
            if isinstance(value, Decl):
                parts[attr] = value
            elif hasattr(value, "__compose_rules__"):
                rules[attr] = value
            elif hasattr(value, "__compose_property__"):
                props[attr] = value
            elif attr in rules or attr in props:  # overridden by a plain attribute: removed
                rules.pop(attr, None)
                props.pop(attr, None)
    cls.__compose_parts__ = tuple(parts.items())  # type: ignore[attr-defined]
    cls.__compose_rules__ = tuple((fn, spec, list(getattr(fn, "__compose_guards__", ())))  # type: ignore[attr-defined]
                                  for fn in rules.values() for spec in fn.__compose_rules__)  # type: ignore[attr-defined]
    cls.__compose_properties__ = tuple((fn, fn.__compose_property__) for fn in props.values())  # type: ignore[attr-defined]
    names = [spec.name for _, spec in cls.__compose_properties__]  # type: ignore[attr-defined]
    if len(names) != len(set(names)):
        raise ComposeError(f"{cls.__name__}: two properties share a name: {sorted(names)}")


class Composed(Machine):
    """A machine declared as parts and guarded rules; see ``checker.compose``.

    Subclasses declare parts as class attributes and rules/properties as decorated methods, set
    their own attributes in ``__init__`` and then call ``super().__init__(config, memoize=...)``.
    ``config`` holds what the declarations name: sizes, bounds, networks."""

    __compose_parts__: tuple[tuple[str, Decl], ...] = ()
    __compose_rules__: tuple[tuple[Callable[..., Any], RuleSpec, list[Callable[..., bool]]], ...] = ()
    __compose_properties__: tuple[tuple[Callable[..., Any], PropertySpec], ...] = ()

    #: part -> the chart lane it is drawn on (``checker.compose.chart``): ``"coordinator"`` puts
    #: every actor of the part on one lane, ``"producer[]"`` actor i on lane ``producer[i]``;
    #: an unmapped part is a lane of its own
    chart_parts: ClassVar[Mapping[str, str]] = {}
    chart_source: ClassVar[str] = "compose"
    #: leave the constant slots out of the states (``_Plan.relayout``): the slots no compiled rule
    #: writes that every initial state agrees on; False keeps every slot (a test compares the two)
    pack_constants: ClassVar[bool] = True
    #: the fast fingerprint is sound here by construction: a slot holds an interned id (a content hash
    #: reduced below 2**61-1), a clock, a budget, or an inline int that ``_Plan.encode`` refuses outside
    #: the domain where ``hash`` is injective. True and 1 hash alike, but they are equal keys in every
    #: memo too, so a composed machine already treats them as one value. ``"encoded"`` opts out.
    fingerprint_kind: ClassVar[str] = "hash"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _collect(cls)
        constrained = any(spec.kind == "constraint" for _, spec in cls.__compose_properties__)
        if constrained and cls.within_bounds is Machine.within_bounds:
            # the engines call within_bounds only on a class that overrides it (``overrides``); the
            # instance attribute set in ``__init__`` (the generated check itself) shadows this one
            cls.within_bounds = Composed.declared_within_bounds  # type: ignore[method-assign,assignment]

    def __init__(self, config: Mapping[str, Any] | None = None, *, memoize: bool = True) -> None:
        self.config = dict(config or {})
        self.memoize = memoize
        self._plan = _Plan(self)
        self.actions = dict(self._plan.actions)
        self._bind_within()
        self._plan.relayout()

    def _bind_within(self) -> None:
        within = self._plan.within
        if within is not None and type(self).within_bounds is Composed.declared_within_bounds:
            self.within_bounds = within  # type: ignore[method-assign,assignment]  # no bound-method call per successor
        if type(self).successors is Composed.successors:
            # the generated function itself, not a method that calls it: one call per state fewer
            # (``_Plan.compile`` rebinds it when it regenerates the function)
            self.successors = self._plan.successors  # type: ignore[method-assign, assignment]

    def declared_within_bounds(self, state: tuple) -> bool:
        """The conjunction of the declared ``@constraint``s (True when there are none)."""
        within = self._plan.within
        return within is None or within(state)

    # ---- pickling: the compiled plan (and its memos) stays behind; it is rebuilt on arrival

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("_plan", "within_bounds", "successors")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._plan = _Plan(self)
        self._bind_within()
        self._plan.relayout()

    def clear_caches(self) -> None:
        """Forget every memoised rule, channel operation and property result."""
        self._plan.clear()

    # ---- declarations, for registries (no machine needed)

    @classmethod
    def property_docs(cls) -> dict[str, str]:
        """Property name -> its doc (``ModelDef.properties``)."""
        return {spec.name: spec.doc for _, spec in cls.__compose_properties__ if spec.kind != "constraint"}

    # ---- states

    def slot(self, name: str) -> int:
        """The first slot of part ``name`` in the logical state (``logical``): a state leaves the
        constant slots out, so read a state through ``slot_reader`` or ``logical``."""
        return self._plan.slots[name][0]

    def logical(self, state: tuple) -> tuple:
        """``state`` with every slot, the constant ones included (``slot`` names its places)."""
        return self._plan.unpack(state)

    def slot_reader(self, slots: Sequence[int]) -> Callable[[tuple], tuple]:
        """A function of a state: the contents of these logical slots (``slot``), as a tuple."""
        return self._plan.reader(slots)

    def slot_place(self, k: int) -> int | None:
        """Logical slot ``k``'s place in a state (None: the states leave it out, a constant)."""
        return self._plan.pos[k]

    def constant_slots(self) -> dict[int, Any]:
        """Logical slot -> its content, for the slots the states leave out (the same in every state)."""
        return dict(self._plan.consts)

    def slot_source(self, k: int, var: str = "s", env: dict[str, Any] | None = None) -> str:
        """Source text reading logical slot ``k`` of state ``var``, for generated code: ``var[j]``,
        or, for a slot the states leave out, its constant content: a name bound in ``env`` (the
        generated code's globals) when given, else a literal (ComposeError if it has none)."""
        return self._plan.term(k, var, env)

    def part_values(self, name: str) -> dict[int, Any]:
        """Interned part ``name``'s table, id -> value: ``part_values("log")[s[slot("log")]]`` reads
        the part in hot code. (Fetch it per call rather than keeping it on the machine, which would
        pickle the table with it.)"""
        return self._plan.tables[name].values

    def view(self, state: tuple) -> View:
        return View(self._plan, state)

    def state(self, **parts: Any) -> tuple:
        """The flat state with these part values (the others at their initial values)."""
        plan = self._plan
        unknown = set(parts) - set(plan.decls)
        if unknown:
            raise ComposeError(f"no parts named {', '.join(sorted(unknown))}")
        t: list[Any] = [None] * plan.width
        for name, decl in plan.decls.items():
            base, count = plan.slots[name]
            if isinstance(decl, Actors):
                values = parts[name] if name in parts else tuple(decl.initial(self, i) for i in range(count))
                if len(values) != count:
                    raise ComposeError(f"part {name}: {count} actors, given {len(values)} values")
                for i, v in enumerate(values):
                    t[base + i] = plan.encode(decl, v)
            else:
                t[base] = plan.encode(decl, parts[name] if name in parts else decl.initial(self))
        for k, c in plan.consts.items():
            if t[k] != c:
                name = next(n for n, (base, count) in plan.slots.items() if base <= k < base + count)
                raise ComposeError(f"part {name}: no compiled rule writes it, so it keeps its initial value "
                                   f"in every state (a machine with pack_constants = False holds any value)")
        return plan.pack(tuple(t))

    def init_parts(self) -> Iterable[Mapping[str, Any]]:
        """The initial states as part values (parts left out take their declared ``init``).
        Override for several initial states."""
        return ({},)

    def init_states(self) -> Iterator[tuple]:
        for parts in self.init_parts():
            yield self.state(**parts)

    def successors(self, state: tuple) -> list[tuple[Step, tuple]]:
        return self._plan.successors(state)

    def properties(self) -> dict[str, Property]:
        return dict(self._plan.properties)

    def fused_invariants(self, names: Sequence[str]) -> Callable[[tuple], bool] | None:
        """The conjunction of the named invariants as one check, memoised on the union of the slots
        they read (see ``Machine.fused_invariants``)."""
        declared = self._declared_names(names)
        return self._plan.fused_invariants(declared) if declared else None

    def fused_transitions(self, names: Sequence[str]) -> Mapping[str, Callable[[tuple, Step, tuple], bool]] | None:
        """action -> the conjunction of the named transition properties that apply to its steps
        (see ``Machine.fused_transitions``)."""
        declared = self._declared_names(names)
        return self._plan.fused_transitions(declared) if declared else None

    def checked_successors(self, names: Sequence[str]) -> tuple[Callable[[tuple], list[tuple[Step, tuple]]],
                                                                  list[Step]] | None:
        """``successors`` checking the named transition properties as it makes each step (see
        ``Machine.checked_successors``): only the steps whose outcome may fail one of them are
        checked. None where the class changes ``successors`` (the generated function is not the
        machine's) or a name is not a declared property's."""
        declared = self._declared_names(names)
        if not declared or vars(self).get("successors") is not self._plan.successors:
            return None
        return self._plan.checked_successors(declared)

    def dedup_successors(self, names: Sequence[str], canonical: Callable[[tuple], tuple] | None,
                         within: Callable[[tuple], bool] | None) -> Dedup | None:
        """The generated ``successors`` fused with the engines' duplicate test (see
        ``Machine.dedup_successors``), checking the named transition properties as
        ``checked_successors`` does. None where the class changes ``successors`` or a name is not
        a declared property's."""
        declared = self._declared_names(names)
        if declared is None or vars(self).get("successors") is not self._plan.successors:
            return None
        return self._plan.dedup_successors(declared, canonical, within)

    def _declared_names(self, names: Sequence[str]) -> list[str] | None:
        """The declared properties behind ``properties()``'s ``names``, found by their compiled check
        (a subclass may rename them, as kafka.eos's presets do); None when one is not a declared
        property's check (a subclass wrapped it): the engines then check them one by one."""
        own = self.properties()
        by_check = {id(p.check): n for n, p in self._plan.properties.items()}
        declared = []
        for name in names:
            prop = own.get(name)
            found = by_check.get(id(prop.check)) if prop is not None else None
            if found is None:
                return None
            declared.append(found)
        return declared

    # ---- symmetry (``Actors(symmetric=...)``, ``rename=``)

    def scalarsets_in_force(self, declared: tuple[str, ...]) -> Iterable[str]:
        """The declared scalarsets that are symmetries of this configuration (all of them unless a
        machine says otherwise; asked once, when the plan is compiled): a configuration in which
        renaming some kind of identity does not map runs to runs leaves it out, and nothing is
        renamed by it."""
        return declared

    def has_symmetry(self) -> bool:
        plan = self._plan
        if type(self).canonical is not Composed.canonical:
            return True  # the machine's own canonical form
        return any(n > 1 for n in plan.scalarset_sizes.values())

    def canonical(self, state: tuple) -> tuple:
        """The representative of ``state``'s orbit under the declared scalarsets."""
        return self._plan.canonical(state)

    @property
    def symmetry(self) -> Symmetry | None:
        """The declared symmetry, for ``checker.symmetry.check_symmetry`` (None: none declared)."""
        plan = self._plan
        if not plan.scalarsets:
            return None
        names = list(plan.scalarsets)

        def apply(state: tuple, perms: tuple[tuple[int, ...], ...]) -> tuple:
            for ss, perm in zip(names, perms):
                state = plan.permute(state, ss, perm)
            return state

        return Symmetry(tuple(Scalarset(ss, plan.scalarset_sizes[ss]) for ss in names), apply,
                        exact=plan.exact_symmetry())

    # ---- the parallel engine's batches: each interned part once per batch

    def _batch_ids(self, states: list[State]) -> dict[str, list[int]]:
        """The ids of interned parts that ``states`` hold, by table."""
        # One pass over the states for every interned slot at once, then each table picks its ids
        # from the union: a pass per slot cost several times more (each pass touches every state
        # again, and a batch of states does not stay in the cache), 5 us per state on the Kafka
        # presets. An id that two tables both hold travels in both: harmless, they agree on it.
        slots = self._plan.interned_slots
        if not slots:
            return {}
        pick = itemgetter(*(k for k, _ in slots))
        ids = set(map(pick, states)) if len(slots) == 1 else set(itertools.chain.from_iterable(map(pick, states)))
        out: dict[str, list[int]] = {}
        for _, t in slots:
            if t.kind not in out:
                values = t.values
                out[t.kind] = [i for i in ids if i in values]
        return out

    def export_states(self, states: list[State]) -> tuple[list[tuple], dict[str, dict[int, Any]]]:
        parts = {kind: {i: TABLES[kind].values[i] for i in ids}
                 for kind, ids in self._batch_ids(states).items()}
        return list(map(tuple, states)), parts

    def export_batch(self, states: list[State]) -> bytes:
        """Like ``export_states``, with each part as its own pickle, kept in this process
        (``_PICKLED``): a part is pickled once per process, not once per batch, and the receiving
        process unpickles only the parts it does not hold already (most, after a few levels).
        Pickling and unpickling the parts was a third of a Spark level's time on the Kafka presets
        (278k parts for 739k states on kip854-expiry-at-least-delivery-timeout-large)."""
        parts: dict[str, dict[int, bytes]] = {}
        for kind, ids in self._batch_ids(states).items():
            values = TABLES[kind].values
            cache = _pickled(kind)
            out = parts[kind] = {}
            for i in ids:
                b = cache.get(i)
                if b is None:
                    b = cache[i] = pickle.dumps(values[i], protocol=5)
                out[i] = b
        return pickle.dumps((list(map(tuple, states)), parts), protocol=5)

    def import_batch(self, blob: bytes) -> list[State]:
        flat, parts = pickle.loads(blob)
        for kind, blobs in parts.items():
            t = table(kind)
            known = t.values
            cache = _pickled(kind)
            # A part held here under the same bytes is the same part; any other is unpickled and
            # adopted, which checks that a known id holds an equal value.
            fresh = {i: b for i, b in blobs.items() if i not in known or cache.get(i) != b}
            if fresh:
                t.adopt({i: pickle.loads(b) for i, b in fresh.items()})
                cache.update(fresh)
        return flat

    def import_states(self, exported: Any) -> list[State]:
        flat, parts = exported
        for kind, values in parts.items():
            table(kind).adopt(values)
        return list(flat)

    # ---- presentation

    def chart_step(self, step: Step, before: State, after: State) -> list[ChartEvent] | None:
        from .chart import step_events
        return step_events(self, step, before, after)

    def chart_lanes(self) -> Sequence[str]:
        from .chart import lanes
        return lanes(self)

    def format_step(self, step: Step) -> str:
        shows = self._plan.show.get(step[0])
        if not shows:
            return super().format_step(step)
        names = self.actions.get(step[0], ())
        params = step[1:]
        if len(names) != len(params):
            return super().format_step(step)
        inner = ", ".join(f"{n}={shows[n](v) if n in shows else v}" for n, v in zip(names, params))
        return f"{step[0]}({inner})"

    def fields(self, state: tuple) -> dict[str, Any]:
        """Every part by name (actors as ``name[i]``; NamedTuple parts field by field), JSON-ready."""
        plan = self._plan
        view = self.view(state)
        out: dict[str, Any] = {}
        for name, decl in plan.decls.items():
            show = getattr(decl, "show", None) or _jsonable
            value = getattr(view, name)
            prefix = "faults." if isinstance(decl, Budget) else ""
            if isinstance(decl, Actors):
                for i, v in enumerate(value):
                    shown = show(v)
                    if isinstance(shown, dict):
                        out.update({f"{name}[{i}].{k}": x for k, x in shown.items()})
                    else:
                        out[f"{name}[{i}]"] = shown
            else:
                shown = show(value)
                if isinstance(shown, dict):
                    out.update({f"{name}.{k}": x for k, x in shown.items()})
                else:
                    out[prefix + name] = shown
        return out





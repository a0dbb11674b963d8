"""``Composed``: a ``Machine`` compiled from declared parts and guarded rules.

The state is a plain flat tuple: one slot per scalar part (its value) and per interned part (the
id of its value in that part's process-wide table, ``TABLES``), actors one slot each. A rule is compiled into
*bindings*, one per combination of its parameters (and, for a receive rule, per message); a
binding reads a fixed set of slots, and its outcomes -- the step, the slots it writes and the
messages it sends -- are memoised on exactly those slots. A successor is then mostly one dict
lookup and one tuple; see ``checker.compose`` for the API and ``docs/compose.md`` for the design.
"""

from __future__ import annotations

import inspect
import itertools
import re
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from operator import itemgetter
from typing import Any

from ..intern import InternCollision, Interner
from ..machine import Machine, Property, State, Step
from .declare import ComposeError, Domain, PropertySpec, RuleSpec
from .network import ChannelOps, Delivery, Network
from .parts import Actors, Budget, Channel, Clock, Decl

#: the interned values of each part of each composed machine class in this process, by
#: ``"module.Class.part"``. Process-wide, like ``model/machines/idempotent_packed``'s tables: a state
#: stays readable after its machine is gone. One table per part, not one for all: NamedTuples of two
#: types with equal fields are equal values, and a shared table would hand one machine's rule a
#: value of another machine's type.
TABLES: dict[str, Interner[Any]] = {}


def table(key: str) -> Interner[Any]:
    """The process-wide table of the part named by ``key``, created on first use."""
    t = TABLES.get(key)
    if t is None:
        t = TABLES[key] = Interner(key)
    return t

_NO_MSG = object()
_REF = re.compile(r"^(?:([A-Za-z_]\w*)=)?([A-Za-z_]\w*)(?:\[([A-Za-z_]\w*)\])?$")

#: how a part is read: (keyword name, slots, its table's values or None for a scalar, all actors?)
ReadSlots = tuple[str, list[int], "dict[int, Any] | None", bool]
#: one outcome of a binding: (step, ((slot, value), ...) written, ((slot, send, msgs), ...) sent)
Outcome = tuple[Step, tuple[tuple[int, Any], ...], tuple[tuple[int, Callable[[int, Any], int], tuple[Any, ...]], ...]]


class _NoMemo(dict):  # type: ignore[type-arg]
    """A memo that keeps nothing (``memoize=False``): every lookup misses."""

    def get(self, key: Any, default: Any = None) -> Any:
        return default

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


def _accepts(fn: Callable[..., Any], available: Iterable[str], what: str, skip: int = 1) -> tuple[str, ...] | None:
    """The keyword arguments ``fn`` takes out of ``available`` (None: all, it has ``**kwargs``)."""
    available = set(available)
    params = list(inspect.signature(fn).parameters.values())[skip:]
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    names = tuple(p.name for p in params if p.kind is not inspect.Parameter.VAR_POSITIONAL)
    unknown = [n for n in names if n not in available]
    if unknown:
        raise ComposeError(f"{what} takes {', '.join(unknown)}, which it does not declare "
                           f"(it may take: {', '.join(sorted(available)) or 'nothing'})")
    return names


def _pick(names: tuple[str, ...] | None, kwargs: dict[str, Any]) -> dict[str, Any]:
    return kwargs if names is None else {n: kwargs[n] for n in names}


def _getter(slots: list[int]) -> Callable[[tuple], Hashable]:
    if not slots:
        return lambda s: ()
    return itemgetter(*slots)


def _key_source(slots: list[int], var: str = "s") -> str:
    """Python source for ``_getter(slots)(var)``, to inline in generated code (the same key)."""
    if not slots:
        return "()"
    if len(slots) == 1:
        return f"{var}[{slots[0]}]"
    return "(" + ", ".join(f"{var}[{k}]" for k in slots) + ")"


def _jsonable(value: Any) -> Any:
    if hasattr(value, "_asdict"):
        return {k: _jsonable(v) for k, v in value._asdict().items()}
    if isinstance(value, (tuple, list, frozenset, set)):
        return [_jsonable(v) for v in value]
    return value


class _Ref:
    """A part as a rule names it: ``name`` (one slot, or all of an actor kind) or ``name[param]``,
    optionally under an alias, ``alias=name[param]`` (to read two actors of one kind)."""

    __slots__ = ("base", "count", "decl", "key", "name", "param", "text", "values")

    def __init__(self, text: str, plan: _Plan, where: str, params: Iterable[str]) -> None:
        m = _REF.match(text)
        if not m:
            raise ComposeError(f"{where}: {text!r} is not a part name, name[param] or alias=name[param]")
        self.text, self.name, self.param = text, m.group(2), m.group(3)
        #: the keyword argument (and returned key) the rule uses for it
        self.key = m.group(1) or self.name
        if self.name not in plan.decls:
            raise ComposeError(f"{where}: no part named {self.name!r} (parts: {', '.join(plan.decls)})")
        self.decl = plan.decls[self.name]
        self.base, self.count = plan.slots[self.name]
        #: the part's table's values (id -> value), or None for a scalar part
        self.values = plan.tables[self.name].values if self.name in plan.tables else None
        if self.param is not None:
            if not isinstance(self.decl, Actors):
                raise ComposeError(f"{where}: {self.name!r} is not an Actors part and cannot be indexed")
            if self.param not in params:
                raise ComposeError(f"{where}: {text!r} indexes by {self.param!r}, which is not a parameter")

    def slots(self, params: Mapping[str, Any]) -> list[int]:
        if self.param is not None:
            i = params[self.param]
            if not 0 <= i < self.count:
                raise ComposeError(f"{self.text}: index {i} out of range 0..{self.count - 1}")
            return [self.base + i]
        return list(range(self.base, self.base + self.count))

    @property
    def whole(self) -> bool:
        """All the actors of a kind, as a tuple."""
        return isinstance(self.decl, Actors) and self.param is None


class _Binding:
    """One rule at one combination of parameter values: the slots it reads, its memo."""

    __slots__ = ("getter", "key_slots", "memo", "params", "prefix", "reads", "writes")

    def __init__(self, rule: _Rule, params: dict[str, Any]) -> None:
        self.params = params
        self.reads: list[ReadSlots] = []
        key_slots: list[int] = []
        for ref in rule.reads:
            slots = ref.slots(params)
            key_slots.extend(slots)
            self.reads.append((ref.key, slots, ref.values, ref.whole))
        #: the memo key's slots (a test drops one to show the memo-equivalence check catches it)
        self.key_slots = key_slots
        self.getter = _getter(key_slots)
        self.writes = {ref.key: (ref.slots(params), ref.whole, rule.plan.encoder(ref.decl)) for ref in rule.writes}
        self.prefix = (rule.action, *(params[p] for p in rule.param_names))
        self.memo: dict[Hashable, tuple[Outcome, ...]] = {} if rule.plan.memoize and rule.spec.memo else _NoMemo()


class _Rule:
    """A compiled ``@rule``: its bindings and how to expand them on a state."""

    #: appends this rule's steps from a state (generated by ``compile``)
    expand: Callable[[tuple, list[tuple[Step, tuple]]], None]

    def __init__(self, plan: _Plan, fn: Callable[..., Any], spec: RuleSpec, guards: list[Callable[..., bool]]) -> None:
        self.plan, self.fn, self.spec, self.action = plan, fn, spec, spec.action
        where = f"rule {spec.action} ({getattr(fn, '__qualname__', fn)})"
        self.where = where
        self.receive: ChannelOps | None = None
        self.receive_slot = -1
        from_msg = [p for p, d in spec.params.items() if d is None]
        if spec.receive is not None:
            if spec.receive not in plan.channels:
                raise ComposeError(f"{where}: receives from {spec.receive!r}, which is not a Channel")
            self.receive = plan.channels[spec.receive]
            self.receive_slot = plan.slots[spec.receive][0]
        elif from_msg or spec.match is not None:
            raise ComposeError(f"{where}: parameters without a domain ({', '.join(from_msg)}) or match= "
                               "need receive= (only a receive rule reads its message)")
        self.from_msg = tuple(from_msg)
        self.param_names = tuple(spec.params)
        self.static = {p: plan.domain(d, f"{where}, parameter {p}") for p, d in spec.params.items() if d is not None}
        self.reads = [_Ref(r, plan, where, spec.params) for r in spec.reads]
        self.writes = [_Ref(w, plan, where, spec.params) for w in spec.writes]
        #: the keyword under which a receive rule reads its own channel (None: it does not)
        self.channel_key = next((r.key for r in self.reads if r.name == spec.receive), None)
        for ch in spec.sends:
            if ch not in plan.channels:
                raise ComposeError(f"{where}: sends to {ch!r}, which is not a Channel")
        self.sends = {ch: (plan.slots[ch][0], plan.channels[ch]) for ch in spec.sends}
        self.budget_slot, self.budget_bound = -1, 0
        if spec.spends is not None:
            if spec.spends not in plan.budgets:
                raise ComposeError(f"{where}: spends {spec.spends!r}, which is not a Budget")
            self.budget_slot, self.budget_bound = plan.budgets[spec.spends]
        names = [*spec.params, *(r.key for r in self.reads)] + (["msg"] if self.receive else [])
        dupes = {n for n in names if names.count(n) > 1}
        if dupes:
            raise ComposeError(f"{where}: {', '.join(sorted(dupes))} named twice among parameters and reads")
        self.allowed = {r.key for r in self.writes} | set(spec.sends) | set(spec.results)
        self.fn_args = _accepts(fn, names, where)
        self.guards = [(g, _accepts(g, names, f"precondition of {where}")) for g in guards]
        combos = [dict(zip(self.static, values)) for values in itertools.product(*self.static.values())]
        self.combos = combos
        self.bindings: list[_Binding] = []
        self.by_msg: dict[Any, list[_Binding]] = {}
        self.clear()

    def __repr__(self) -> str:
        return f"<rule {self.action}>"

    def clear(self) -> None:
        if self.receive is None:
            self.bindings = [_Binding(self, combo) for combo in self.combos]
        self.by_msg = {}
        #: channel id -> ((msg, rest id, ((binding, getter, memo), ...)), ...) for the messages this
        #: rule handles
        self.per_channel: dict[int, tuple[tuple[Any, int, tuple[Any, ...]], ...]] = (
            {} if self.plan.memoize else _NoMemo())
        self.compile()

    def _msg_bindings(self, msg: Any) -> list[_Binding]:
        bindings = self.by_msg.get(msg)
        if bindings is None:
            match = self.spec.match
            if match is not None and not match(msg):
                bindings = self.by_msg[msg] = []
                return bindings
            if len(self.from_msg) == 1 and not hasattr(msg, self.from_msg[0]):
                values = {self.from_msg[0]: msg}  # a message that is not a record: the value itself
            else:
                try:
                    values = {p: getattr(msg, p) for p in self.from_msg}
                except AttributeError as exc:
                    raise ComposeError(f"{self.where}: message {msg!r} has no field {exc.name!r}") from None
            bindings = self.by_msg[msg] = [_Binding(self, {**values, **combo}) for combo in self.combos]
        return bindings

    def channel_plan(self, ident: int) -> tuple[tuple[Any, int, tuple[Any, ...]], ...]:
        """What this rule can receive from the channel with id ``ident`` (memoised on it)."""
        assert self.receive is not None
        plan = []
        for msg, rest in self.receive.deliverable(ident):
            bindings = self._msg_bindings(msg)
            if bindings:
                plan.append((msg, rest, tuple((b, b.getter, b.memo) for b in bindings)))
        out = self.per_channel[ident] = tuple(plan)
        return out

    # ---- the hot path: generated per rule, with its slots and bindings as constants

    def compile(self) -> None:
        """(Re)generate ``expand(state, out)``, which appends this rule's steps from ``state``."""
        env: dict[str, Any] = {"compute": self.compute, "NO": _NO_MSG, "rule": self}
        bslot = self.budget_slot
        lines = ["def expand(s, out):"]
        if bslot >= 0:
            lines.append(f"    if s[{bslot}] >= {self.budget_bound}: return")
        apply = ["t = list(s)"]
        if self.receive is not None:
            apply.append(f"t[{self.receive_slot}] = rest")
        apply += ["for k, v in writes: t[k] = v",
                  "if sends:",
                  "    for k, send, msgs in sends:",
                  "        i = t[k]",
                  "        for m in msgs: i = send(i, m)",
                  "        t[k] = i"]
        if bslot >= 0:
            apply.append(f"t[{bslot}] += 1")
        apply.append("out.append((step, tuple(t)))")
        if self.receive is None:
            for n, b in enumerate(self.bindings):
                env[f"b{n}"], env[f"m{n}"] = b, b.memo
                lines += [f"    outs = m{n}.get({_key_source(b.key_slots)})",
                          "    if outs is None:",
                          f"        outs = compute(b{n}, s, NO, 0)",
                          "    for step, writes, sends in outs:"]
                lines += [" " * 8 + x for x in apply]
        else:
            env["per_channel"] = self.per_channel
            env["channel_plan"] = self.channel_plan
            lines += [f"    ident = s[{self.receive_slot}]",
                      "    plan = per_channel.get(ident)",
                      "    if plan is None:",
                      "        plan = channel_plan(ident)",
                      "    for msg, rest, bindings in plan:",
                      "        for b, getter, memo in bindings:",
                      "            outs = memo.get(getter(s))",
                      "            if outs is None:",
                      "                outs = compute(b, s, msg, rest)",
                      "            for step, writes, sends in outs:"]
            lines += [" " * 16 + x for x in apply]
        lines.append("    return")  # a rule without bindings (zero actors) has no other body
        exec(compile("\n".join(lines), f"<compose rule {self.action}>", "exec"), env)  # noqa: S102
        self.expand = env["expand"]

    # ---- a memo miss: run the guard and the effect over the readable parts

    def compute(self, b: _Binding, s: tuple, msg: Any, rest: int) -> tuple[Outcome, ...]:
        kwargs: dict[str, Any] = dict(b.params)
        for name, slots, values, whole in b.reads:
            if whole:
                kwargs[name] = tuple([s[k] for k in slots] if values is None else [values[s[k]] for k in slots])
            else:
                kwargs[name] = s[slots[0]] if values is None else values[s[slots[0]]]
        if msg is not _NO_MSG:
            kwargs["msg"] = msg
            if self.channel_key is not None and self.receive is not None:
                # a receive rule that reads its channel sees it without the message being delivered
                kwargs[self.channel_key] = self.receive.table.values[rest]
        machine = self.plan.machine
        outs: tuple[Outcome, ...] = ()
        for guard, names in self.guards:
            if not guard(machine, **(kwargs if names is None else {n: kwargs[n] for n in names})):
                break
        else:
            names = self.fn_args
            result = self.fn(machine, **(kwargs if names is None else {n: kwargs[n] for n in names}))
            if result is not None:
                if isinstance(result, Mapping):
                    outs = (self._outcome(b, result),)
                elif isinstance(result, list):
                    outs = tuple(self._outcome(b, d) for d in result)
                else:
                    raise ComposeError(f"{self.where} returned a {type(result).__name__}; "
                                       "an effect returns None, a dict or a list of dicts")
        b.memo[b.getter(s)] = outs
        return outs

    def _outcome(self, b: _Binding, d: Mapping[str, Any]) -> Outcome:
        if not self.allowed.issuperset(d):
            extra = set(d) - self.allowed
            raise ComposeError(f"{self.where} returned {', '.join(sorted(extra))}, which it does not declare "
                               f"in writes, sends or results")
        try:
            step = b.prefix + tuple(d[r] for r in self.spec.results) if self.spec.results else b.prefix
        except KeyError as exc:
            raise ComposeError(f"{self.where} did not return its result {exc.args[0]!r}") from None
        writes: list[tuple[int, Any]] = []
        for name, (slots, whole, encode) in b.writes.items():
            if name not in d:
                continue
            value = d[name]
            if whole:
                if not isinstance(value, tuple) or len(value) != len(slots):
                    raise ComposeError(f"{self.where}: {name} is {len(slots)} actors; write a tuple of that length")
                writes.extend((k, encode(v)) for k, v in zip(slots, value))
            else:
                writes.append((slots[0], encode(value)))
        sends = []
        for ch, (slot, ops) in self.sends.items():
            msgs = d.get(ch)
            if msgs is not None:
                sends.append((slot, ops.send, tuple(msgs) if isinstance(msgs, list) else (msgs,)))
        return step, tuple(writes), tuple(sends)


class _ChannelRule:
    """A rule generated from a channel's network semantics: lose or duplicate one message."""

    def __init__(self, plan: _Plan, ch: Channel, kind: str, action: str, budget: tuple[int, int]) -> None:
        self.plan, self.kind, self.action = plan, kind, action
        self.ops = plan.channels[ch.name]
        self.slot = plan.slots[ch.name][0]
        self.budget_slot, self.budget_bound = budget
        self.label = tuple(ch.label)
        self.steps: dict[Any, Step] = {}

    def __repr__(self) -> str:
        return f"<rule {self.action}>"

    def clear(self) -> None:
        self.steps = {}

    def step(self, msg: Any) -> Step:
        step = self.steps.get(msg)
        if step is None:
            label = self.label
            step = self.steps[msg] = (self.action, *(getattr(msg, f) for f in label)) if label else (self.action, msg)
        return step

    def expand(self, s: tuple, out: list[tuple[Step, tuple]]) -> None:
        bslot = self.budget_slot
        if bslot >= 0 and s[bslot] >= self.budget_bound:
            return
        moves = self.ops.droppable(s[self.slot]) if self.kind == "drop" else self.ops.duplicable(s[self.slot])
        for msg, new in moves:
            t = list(s)
            t[self.slot] = new
            if bslot >= 0:
                t[bslot] += 1
            out.append((self.step(msg), tuple(t)))


class _Invariant:
    """A compiled ``@invariant``: memoised per parameter combination on the slots it reads. Its
    check is generated code with the key slots inlined (``compile``); memos are cleared in place,
    so a check handed to an engine stays valid."""

    def __init__(self, plan: _Plan, fn: Callable[..., Any], spec: PropertySpec) -> None:
        self.plan, self.fn, self.spec = plan, fn, spec
        where = f"invariant {spec.name}"
        for p, d in spec.params.items():
            if d is None:
                raise ComposeError(f"{where}: parameter {p} has no domain")
        domains = {p: plan.domain(d, f"{where}, parameter {p}") for p, d in spec.params.items()}
        self.reads = [_Ref(r, plan, where, spec.params) for r in spec.reads]
        self.fn_args = _accepts(fn, [*spec.params, *(r.key for r in self.reads)], where)
        #: per parameter combination: (combo, reads, the memo key's slots, memo)
        self.bindings: list[tuple[dict[str, Any], list[ReadSlots], list[int], dict[Hashable, bool]]] = []
        for values in itertools.product(*domains.values()):
            combo = dict(zip(domains, values))
            reads = [(r.key, r.slots(combo), r.values, r.whole) for r in self.reads]
            memo: dict[Hashable, bool] = {} if plan.memoize else _NoMemo()
            self.bindings.append((combo, reads, [k for _, ks, _, _ in reads for k in ks], memo))

    def __repr__(self) -> str:
        return f"<invariant {self.spec.name}>"

    def clear(self) -> None:
        for _, _, _, memo in self.bindings:
            memo.clear()

    def miss(self, i: int, s: tuple) -> bool:
        combo, reads, key_slots, memo = self.bindings[i]
        kwargs = dict(combo)
        kwargs.update(self.plan.decode_reads(s, reads))
        names = self.fn_args
        ok = bool(self.fn(self.plan.machine, **(kwargs if names is None else {n: kwargs[n] for n in names})))
        memo[_getter(key_slots)(s)] = ok
        return ok

    def compile(self) -> Callable[[tuple], bool]:
        """Generate the check and register it as the machine's property."""
        env: dict[str, Any] = {"miss": self.miss}
        lines = ["def check(s):"]
        for i, (_, _, key_slots, memo) in enumerate(self.bindings):
            env[f"m{i}"] = memo
            lines += [f"    ok = m{i}.get({_key_source(key_slots)})",
                      "    if ok is None:",
                      f"        ok = miss({i}, s)",
                      "    if not ok:",
                      "        return False"]
        lines.append("    return True")
        exec(compile("\n".join(lines), f"<compose invariant {self.spec.name}>", "exec"), env)  # noqa: S102
        check: Callable[[tuple], bool] = env["check"]
        self.plan.properties[self.spec.name] = Property(self.spec.name, self.spec.doc, "invariant", check)
        return check


class _Parts:
    """The parts a transition property reads, as attributes."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)

    def __repr__(self) -> str:
        return f"_Parts({self.__dict__!r})"


class _Transition:
    """A compiled ``@transition``: memoised on (step, read slots before, read slots after)."""

    def __init__(self, plan: _Plan, fn: Callable[..., Any], spec: PropertySpec) -> None:
        self.plan, self.fn, self.spec = plan, fn, spec
        where = f"transition {spec.name}"
        refs = [_Ref(r, plan, where, ()) for r in spec.reads]
        self.reads = [(r.key, r.slots({}), r.values, r.whole) for r in refs]
        self.key_slots = [k for _, ks, _, _ in self.reads for k in ks]
        self.actions = frozenset(spec.actions)
        self.memo: dict[Hashable, bool] = {} if plan.memoize else _NoMemo()

    def __repr__(self) -> str:
        return f"<transition {self.spec.name}>"

    def clear(self) -> None:
        self.memo.clear()

    def miss(self, s: tuple, step: Step, t: tuple, key: Hashable) -> bool:
        before = _Parts(self.plan.decode_reads(s, self.reads))
        after = _Parts(self.plan.decode_reads(t, self.reads))
        ok = self.memo[key] = bool(self.fn(self.plan.machine, step, before, after))
        return ok

    def compile(self) -> Callable[[tuple, Step, tuple], bool]:
        env: dict[str, Any] = {"miss": self.miss, "memo": self.memo, "actions": self.actions}
        lines = ["def check(s, step, t):"]
        if self.actions:
            lines.append("    if step[0] not in actions: return True")
        lines += [f"    key = (step, {_key_source(self.key_slots)}, {_key_source(self.key_slots, 't')})",
                  "    ok = memo.get(key)",
                  "    if ok is None:",
                  "        ok = miss(s, step, t, key)",
                  "    return ok"]
        exec(compile("\n".join(lines), f"<compose transition {self.spec.name}>", "exec"), env)  # noqa: S102
        check: Callable[[tuple, Step, tuple], bool] = env["check"]
        self.plan.properties[self.spec.name] = Property(self.spec.name, self.spec.doc, "transition", check)
        return check


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
        self.width = n
        owner = f"{cls.__module__}.{cls.__qualname__}"
        self.tables: dict[str, Interner[Any]] = {name: table(f"{owner}.{name}") for name, decl in self.decls.items()
                                                 if decl.interned}
        #: (slot, table) for every slot that holds an interned id
        self.interned_slots = [(k, self.tables[name]) for name, (base, count) in self.slots.items()
                               if name in self.tables for k in range(base, base + count)]
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
        self.properties: dict[str, Property] = {}
        #: the compiled properties, by name (their generated checks are in ``properties``)
        self.property_objs: dict[str, _Invariant | _Transition] = {}
        for fn, pspec in cls.__compose_properties__:
            obj = _Invariant(self, fn, pspec) if pspec.kind == "invariant" else _Transition(self, fn, pspec)
            self.property_objs[pspec.name] = obj
            obj.compile()
        self.compile()

    def compile(self) -> None:
        """(Re)generate ``successors``: every rule's ``expand`` in order, one call each."""
        env: dict[str, Any] = {}
        lines = ["def successors(s):", "    out = []"]
        for n, rule in enumerate(self.rules):
            if isinstance(rule, _Rule) and rule.receive is None and not rule.bindings:
                continue  # no parameter values (e.g. zero actors): nothing to call
            env[f"e{n}"] = rule.expand
            lines.append(f"    e{n}(s, out)")
        lines.append("    return out")
        exec(compile("\n".join(lines), f"<compose {type(self.machine).__name__}>", "exec"), env)  # noqa: S102
        self.successors: Callable[[tuple], list[tuple[Step, tuple]]] = env["successors"]

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

        def tick(machine: Any, **parts: Any) -> dict[str, int] | None:
            now = parts[name]
            if now >= top or (when is not None and not when(machine, **{r: parts[r] for r in clock.reads})):
                return None
            return {name: now + 1, "now": now + 1}

        reads = (name, *(r for r in clock.reads if r != name))
        spec = RuleSpec(str(clock.tick), {}, reads, (name,), (), None, ("now",), None, {}, True)
        self._add_rule(_Rule(self, tick, spec, []), (), ("now",), {})

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

    def _budget(self, name: str, what: str) -> tuple[int, int]:
        if name not in self.budgets:
            raise ComposeError(f"{what}: {name!r} is not a Budget part")
        return self.budgets[name]

    # ---- values

    def encoder(self, decl: Decl) -> Callable[[Any], Any]:
        """``value -> slot content`` for part ``decl``: its id for an interned part."""
        if isinstance(decl, Channel):
            table, normalize = self.tables[decl.name], self.channels[decl.name].normalize
            return lambda value: table.intern(normalize(tuple(value)))
        if decl.interned:
            return self.tables[decl.name].intern
        return lambda value: self.encode(decl, value)

    def encode(self, decl: Decl, value: Any) -> Any:
        if isinstance(decl, Channel):
            return self.tables[decl.name].intern(self.channels[decl.name].normalize(tuple(value)))
        if decl.interned:
            return self.tables[decl.name].intern(value)
        if not isinstance(value, int):  # bools are ints
            raise ComposeError(f"part {decl.name}: {value!r} is not an int or bool (declare it a Part to hold it)")
        return value

    def decode_reads(self, s: tuple, reads: list[ReadSlots]) -> dict[str, Any]:
        out = {}
        for name, slots, values, whole in reads:
            if whole:
                out[name] = tuple([s[k] for k in slots] if values is None else [values[s[k]] for k in slots])
            else:
                out[name] = s[slots[0]] if values is None else values[s[slots[0]]]
        return out

    def clear(self) -> None:
        for ops in self.channels.values():
            ops.clear()
        for rule in self.rules:
            rule.clear()
        for obj in self.property_objs.values():
            obj.clear()
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
        s = self._state
        if not decl.interned:
            return tuple(s[base:base + count]) if isinstance(decl, Actors) else s[base]
        values = plan.tables[name].values
        if isinstance(decl, Actors):
            return tuple(values[s[k]] for k in range(base, base + count))
        return values[s[base]]


def _collect(cls: type) -> None:
    parts: dict[str, Decl] = {}
    rules: dict[str, Callable[..., Any]] = {}
    props: dict[str, Callable[..., Any]] = {}
    for klass in reversed(cls.__mro__):
        for attr, value in vars(klass).items():
            if isinstance(value, Decl):
                parts.pop(attr, None)
                parts[attr] = value
            elif hasattr(value, "__compose_rules__"):
                rules.pop(attr, None)
                rules[attr] = value
            elif hasattr(value, "__compose_property__"):
                props.pop(attr, None)
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

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _collect(cls)

    def __init__(self, config: Mapping[str, Any] | None = None, *, memoize: bool = True) -> None:
        self.config = dict(config or {})
        self.memoize = memoize
        self._plan = _Plan(self)
        self.actions = dict(self._plan.actions)

    # ---- pickling: the compiled plan (and its memos) stays behind; it is rebuilt on arrival

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_plan"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._plan = _Plan(self)

    def clear_caches(self) -> None:
        """Forget every memoised rule, channel operation and property result."""
        self._plan.clear()

    # ---- declarations, for registries (no machine needed)

    @classmethod
    def property_docs(cls) -> dict[str, str]:
        """Property name -> its doc (``ModelDef.properties``)."""
        return {spec.name: spec.doc for _, spec in cls.__compose_properties__}

    # ---- states

    def slot(self, name: str) -> int:
        """The first slot of part ``name`` in the flat state."""
        return self._plan.slots[name][0]

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
        return tuple(t)

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

    # ---- the parallel engine's batches: each interned part once per batch

    def export_states(self, states: list[State]) -> tuple[list[tuple], dict[str, dict[int, Any]]]:
        by_table: dict[str, set[int]] = {}
        for k, t in self._plan.interned_slots:
            by_table.setdefault(t.kind, set()).update(s[k] for s in states)
        return [tuple(s) for s in states], {kind: {i: TABLES[kind].values[i] for i in ids}
                                            for kind, ids in by_table.items()}

    def import_states(self, exported: Any) -> list[State]:
        flat, parts = exported
        for kind, values in parts.items():
            t = table(kind)
            known = t.values
            for ident, value in values.items():
                old = known.get(ident)
                if old is None:
                    if t.intern(value) != ident:  # ids are content hashes: equal in every process
                        raise InternCollision(f"{kind} part {value!r} hashes differently in this process")
                elif old != value:
                    raise InternCollision(f"two different {kind} values share the id {ident}: {old!r} and {value!r}")
        return list(flat)

    # ---- presentation

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





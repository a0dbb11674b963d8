"""Compiled properties: ``@invariant`` and ``@transition`` as generated checks memoised on the
slots they read."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection, Hashable, Sequence
from typing import TYPE_CHECKING, Any

from ..machine import Property, Step
from .code_cache import run as run_code
from .declare import ComposeError, PropertySpec
from .rules import (
    ReadSlots,
    Term,
    _accepts,
    _caller,
    _decoder,
    _implied,
    _key_source,
    _live_terms,
    _NoMemo,
    _plain,
    _Ref,
    _term_order,
    _unknown_part,
    hoist_projections,
    plain_projections,
    term_slot,
)
from .subscripts import subscripted

if TYPE_CHECKING:
    from .machine import _Plan


def _transition_key(key_slots: list[Term], env: dict[str, Any], pos: Sequence[int | None]) -> str:
    """Source of a transition property's memo key: the step, then the read terms before and after
    it in one flat tuple (one tuple built and hashed per check, not three)."""
    if not key_slots:
        return "step"
    terms = [_key_source([k], "s", env, pos) for k in key_slots] + [_key_source([k], "t", env, pos) for k in key_slots]
    return "(step, " + ", ".join(terms) + ")"


def _moved_source(key_slots: list[Term], pos: Sequence[int | None]) -> str:
    """Source of "a read slot differs between ``s`` and ``t``" (a term through a projection is
    decided by its slot: equal slot contents give equal projections)."""
    slots = sorted({pos[term_slot(k)] for k in key_slots})  # type: ignore[type-var]
    return " or ".join(f"s[{k}] != t[{k}]" for k in slots) if slots else "False"


def _moved_test(terms: list[Term], env: dict[str, Any], pos: Sequence[int | None]) -> tuple[list[str], str]:
    """Generated statements and the condition of "a stuttering property's term differs between ``s``
    and ``t``". Slots alone: ``_moved_source`` (its slots' ids compared). With a projected term
    (``stuttering=("part:projection",)``): the projection's ids before and after, compared as two
    tuples in one assignment, so that ``plain_projections`` reads them through the plain dicts (equal
    ids are equal projections: a projection's ids are interned by value)."""
    if all(type(k) is int for k in terms):
        return [], _moved_source(terms, pos)
    return [f"moved = {_key_source(terms, 's', env, pos)} != {_key_source(terms, 't', env, pos)}"], "moved"


def _each_lines(terms: list[Term], memo: str, miss: str, env: dict[str, Any], pos: Sequence[int | None]) -> list[str]:
    """Generated lines: an ``each`` transition property's conjunct for every actor whose term moves
    between ``s`` and ``t``, looked up on (step, term before, after); False returned where one fails."""
    lines: list[str] = []
    for k in terms:
        lines += [f"a = {_key_source([k], 's', env, pos)}",
                  f"b = {_key_source([k], 't', env, pos)}",
                  "if a != b:",
                  "    key = (step, a, b)",
                  f"    ok = {memo}.get(key)",
                  "    if ok is None:",
                  f"        ok = {miss}(a, step, b, key)",
                  "    if not ok:",
                  "        return False"]
    return lines


def _binding_check(memo: str, key_slots: list[Term], miss: str, env: dict[str, Any],
                   pos: Sequence[int | None]) -> list[str]:
    """Generated lines: one binding's memoised check on ``s``, returning False where it fails (the
    same lookup in a property's own check and in the fused conjunction). ``miss`` is called with
    the state and the key (``_Invariant.misses``)."""
    return [f"    k = {_key_source(key_slots, 's', env, pos)}",
            f"    ok = {memo}.get(k)",
            "    if ok is None:",
            f"        ok = {miss}(s, k)",
            "    if not ok:",
            "        return False"]


def _miss_function(plan: _Plan, fn: Callable[..., Any], names: tuple[str, ...] | None, combo: dict[str, Any],
                   reads: list[ReadSlots], memo: dict[Hashable, bool]) -> Callable[[tuple, Hashable], bool] | None:
    """A binding's memo miss as one generated function of (state, key): each read decoded straight
    from its places into a local, in the order of the reads (as ``_decoder`` does), and ``fn``
    called positionally, with no keyword dict, decoder call or second key built. None where ``fn``
    cannot be called so (it takes ``**kwargs``, or is wrapped): the generic miss then serves."""
    if names is None or not _plain(fn, names):
        return None
    env: dict[str, Any] = {"memo": memo, "plan": plan, "fn": fn, "unknown": _unknown_part}
    pos, consts = plan.pos, plan.consts
    tables: dict[int, str] = {}

    def term(k: int, values: Any) -> str:
        j = pos[k]
        if j is None:  # a constant slot: its content (through its table or projection, which may change)
            x = f"K{len(env)}"
            env[x] = consts[k]
        else:
            x = f"s[{j}]"
        if values is None:
            return x
        # one name per table, numbered in order of first use (not ``id()``: equal code, equal text)
        name = tables.setdefault(id(values), f"V{len(tables)}")
        env[name] = values
        return f"{name}[{x}]"

    local: dict[str, str] = {}
    body: list[str] = []
    for n, (name, slots, values, whole) in enumerate(reads):
        expr = "(" + "".join(term(k, values) + ", " for k in slots) + ")" if whole else term(slots[0], values)
        body.append(f"        r{n} = {expr}")
        local[name] = f"r{n}"
    for n, (p, value) in enumerate(combo.items()):
        env[f"A{n}"] = value
        local[p] = f"A{n}"
    args = ", ".join(["plan.machine", *(local[x] for x in names)])
    # a table's KeyError is a part id this process never interned (``_decoder``'s message); the
    # function's own errors pass unchanged
    lines = ["def miss(s, k):", "    try:", *(body or ["        pass"]),
             "    except KeyError as exc:", "        raise unknown(exc) from None",
             f"    ok = memo[k] = bool(fn({args}))", "    return ok"]
    run_code("\n".join(lines), "<compose invariant miss>", env)
    miss: Callable[[tuple, Hashable], bool] = env["miss"]
    return miss


class _Invariant:
    """A compiled ``@invariant``: memoised per parameter combination on the slots it reads. Its
    check is generated code with the key slots inlined (``compile``); memos are cleared in place,
    so a check handed to an engine stays valid."""

    def __init__(self, plan: _Plan, fn: Callable[..., Any], spec: PropertySpec) -> None:
        self.plan, self.fn, self.spec = plan, fn, spec
        where = f"{spec.kind} {spec.name}"
        for p, d in spec.params.items():
            if d is None:
                raise ComposeError(f"{where}: parameter {p} has no domain")
        self.domains = {p: plan.domain(d, f"{where}, parameter {p}") for p, d in spec.params.items()}
        self.reads = [_Ref(r, plan, where, spec.params) for r in spec.reads]
        self.fn_args = _accepts(fn, [*spec.params, *(r.key for r in self.reads)], where)
        self.fn_call = _caller(fn, self.fn_args)
        self.relayout()

    def relayout(self) -> None:
        """(Re)build the bindings for the plan's layout (their memos start empty)."""
        plan, domains = self.plan, self.domains
        #: per parameter combination: (combo, reads, the memo key's terms, memo)
        self.bindings: list[tuple[dict[str, Any], list[ReadSlots], list[Term], dict[Hashable, bool]]] = []
        #: per binding: its reads' decoder (``rules._decoder``)
        self.decoders: list[Callable[[tuple, dict[str, Any]], dict[str, Any]]] = []
        for values in itertools.product(*domains.values()):
            combo = dict(zip(domains, values))
            reads = [(r.key, r.slots(combo), r.values, r.whole) for r in self.reads]
            memo: dict[Hashable, bool] = {} if plan.memoize else _NoMemo()
            terms = _live_terms(_implied([k for r in self.reads for k in r.terms(combo)]), plan.consts)
            self.bindings.append((combo, reads, terms, memo))
            self.decoders.append(_decoder(reads, plan.pos, plan.consts))

    def __repr__(self) -> str:
        return f"<invariant {self.spec.name}>"

    def clear(self) -> None:
        for _, _, _, memo in self.bindings:
            memo.clear()

    def keyed_miss(self, i: int) -> Callable[[tuple, Hashable], bool]:
        """Binding ``i``'s miss as a function of (state, key), for generic calls (``_miss_function``
        could not generate one)."""
        combo, _reads, _key_slots, memo = self.bindings[i]
        decode, call, plan = self.decoders[i], self.fn_call, self.plan

        def miss(s: tuple, k: Hashable) -> bool:
            ok = memo[k] = bool(call(plan.machine, decode(s, dict(combo))))
            return ok

        return miss

    def make_misses(self) -> list[Callable[[tuple, Hashable], bool]]:
        """Every binding's miss (``bench/profile_eos.py`` wraps them to count misses)."""
        return [_miss_function(self.plan, self.fn, self.fn_args, combo, reads, memo) or self.keyed_miss(i)
                for i, (combo, reads, _, memo) in enumerate(self.bindings)]

    def compile(self) -> Callable[[tuple], bool]:
        """Generate the check and register it as the machine's property (a constraint is not one)."""
        env: dict[str, Any] = {}
        pos = self.plan.pos
        #: each binding's miss, a function of (state, key) that stores and returns the verdict
        self.misses = self.make_misses()
        lines = ["def check(s):"]
        for i, (_, _, key_slots, memo) in enumerate(self.bindings):
            env[f"m{i}"], env[f"miss{i}"] = memo, self.misses[i]
            lines += _binding_check(f"m{i}", key_slots, f"miss{i}", env, pos)
        lines.append("    return True")
        # projected key terms through the projections' plain dicts first, as the fused checks read
        # them (``plain_projections``): an engine calls this check itself where it is the only
        # invariant left unviolated (``_Fused.invariants``), once per new state (kafka.init_producer_id's
        # UniqueProducerIdEpoch on its preset row, two projected terms)
        lines = plain_projections(lines, env)
        run_code("\n".join(lines), f"<compose {self.spec.kind} {self.spec.name}>", env)
        check: Callable[[tuple], bool] = env["check"]
        self.check = check
        if self.spec.kind == "invariant":
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
        self.refs = refs = [_Ref(r, plan, where, ()) for r in spec.reads]
        self.reads = [(r.key, r.slots({}), r.values, r.whole) for r in refs]
        self.actions = frozenset(spec.actions)
        #: ``stuttering=(terms)``: those terms' parts, else None (True: the reads')
        self.moved_refs = ([_Ref(r, plan, f"{where}, stuttering", ()) for r in spec.stuttering]
                           if isinstance(spec.stuttering, tuple) else None)
        self.memo: dict[Hashable, bool] = {} if plan.memoize else _NoMemo()
        #: ``each=True``: the property is a conjunction per actor of its one read, memoised on
        #: (step, that actor's term before, after) (``_each_lines``)
        self.each = spec.each
        if self.each and not (len(refs) == 1 and refs[0].whole):
            raise ComposeError(f"{where}: each=True reads one whole Actors part (not {', '.join(spec.reads)})")
        self.relayout()

    def relayout(self) -> None:
        #: the memo key's terms (slots, or slots through a projection), before and after the step,
        #: without the constant slots
        self.key_slots: list[Term] = _live_terms(_implied([k for r in self.refs for k in r.terms({})]),
                                                 self.plan.consts)
        #: a stuttering property's terms: a step that leaves them all equal passes (constant
        #: slots never move)
        self.moved_terms: list[Term] = (self.key_slots if self.moved_refs is None else
                                        _live_terms([k for r in self.moved_refs for k in r.terms({})],
                                                    self.plan.consts))
        self.memo.clear()

    def __repr__(self) -> str:
        return f"<transition {self.spec.name}>"

    def applies(self, step: Step, written: Collection[int], still: Collection[Term] = (),
                decided: Collection[Term] = ()) -> bool:
        """Can this property fail on ``step``, by what the step alone decides (its action, its
        ``when``) and, for a stuttering property, whether the step writes a place it reads (a
        step that writes none leaves them equal: the property holds)? ``written``: the places of a
        state the step writes; ``still``: terms the step is known to leave equal where it writes
        their place (``_Plan.check_index``); ``decided``: terms of an ``each`` property whose
        conjunct the step is known to meet (``decide``)."""
        spec = self.spec
        if self.actions and step[0] not in self.actions:
            return False
        if spec.when is not None and not spec.when(step):
            return False
        if spec.stuttering:
            pos = self.plan.pos
            return any(pos[term_slot(k)] in written and k not in still and k not in decided for k in self.moved_terms)
        return True

    def admits(self, step: Step) -> bool:
        """Does the step pass this property's action and ``when`` filters (they decide it alone)?"""
        return (not self.actions or step[0] in self.actions) and (self.spec.when is None or bool(self.spec.when(step)))

    def decide(self, step: Step, k: Term, before: Any, after: Any) -> bool:
        """An ``each`` property's conjunct for the actor of term ``k`` on ``step``, that actor's slot
        holding ``before`` before the step and ``after`` after it (slot contents): the same memo
        entry the per-successor check looks up (``_each_lines``)."""
        if type(k) is not int:
            ids = k[1].ids  # type: ignore[index]
            before, after = ids[before], ids[after]
        if before == after:
            return True
        key = (step, before, after)
        ok = self.memo.get(key)
        return self.miss(before, step, after, key) if ok is None else ok

    def clear(self) -> None:
        self.memo.clear()

    def miss(self, s: Any, step: Step, t: Any, key: Hashable) -> bool:
        """The verdict on ``key``, computed and remembered. ``s`` and ``t`` are the states before and
        after the step; for an ``each`` property, one actor's term (its slot's content, or its
        projection's id) before and after."""
        if self.each:
            name, values = self.refs[0].key, self.refs[0].values
            try:
                a, b = (s, t) if values is None else (values[s], values[t])
            except KeyError as exc:
                raise _unknown_part(exc) from None
            ok = self.memo[key] = bool(self.fn(self.plan.machine, step, _Parts({name: a}), _Parts({name: b})))
            return ok
        before = _Parts(self.plan.decode_reads(s, self.reads))
        after = _Parts(self.plan.decode_reads(t, self.reads))
        ok = self.memo[key] = bool(self.fn(self.plan.machine, step, before, after))
        return ok

    def compile(self) -> Callable[[tuple, Step, tuple], bool]:
        env: dict[str, Any] = {"miss": self.miss, "memo": self.memo, "actions": self.actions, "when": self.spec.when}
        lines = ["def check(s, step, t):"]
        if self.actions:
            lines.append("    if step[0] not in actions: return True")
        if self.spec.when is not None:
            lines.append("    if not when(step): return True")
        pos = self.plan.pos
        if self.each:
            lines += ["    " + x for x in _each_lines(self.key_slots, "memo", "miss", env, pos)]
            lines.append("    return True")
        elif self.spec.stuttering:
            pre, moved = _moved_test(self.moved_terms, env, pos)
            lines += [*("    " + x for x in pre), f"    if not ({moved}): return True"]
        if not self.each:
            lines += [f"    key = {_transition_key(self.key_slots, env, pos)}",
                      "    ok = memo.get(key)",
                      "    if ok is None:",
                      "        ok = miss(s, step, t, key)",
                      "    return ok"]
        run_code("\n".join(lines), f"<compose transition {self.spec.name}>", env)
        check: Callable[[tuple, Step, tuple], bool] = env["check"]
        self.plan.properties[self.spec.name] = Property(self.spec.name, self.spec.doc, "transition", check)
        return check


def _covering_key(objs: Sequence[_Transition]) -> list[Term] | None:
    """The key terms of the first of ``objs`` whose terms include every other's (a term, or the
    slot of a projected term it holds whole: ``_implied``'s rule), or None when none does."""
    for obj in objs:
        mine = set(obj.key_slots)
        if all(all(k in mine or (type(k) is not int and k[0] in mine) for k in other.key_slots)  # type: ignore[index]
               for other in objs):
            return obj.key_slots
    return None


#: entries a fused invariant memo keeps before it starts afresh: its keys are wider than any one
#: property's, so unbounded it would grow with the state space (the properties' own memos stay)
FUSED_MEMO_CAP = 1 << 16
#: calls after which a fused invariant check decides whether its memo pays, and the share of misses
#: (in tenths) above which it does not
FUSED_TRIAL = 8192
FUSED_MAX_MISS_TENTHS = 4


class _Fused:
    """The conjunction of several compiled properties as one generated check, memoised on the union
    of the slots they read (``Machine.fused_invariants`` / ``fused_transitions``).

    An engine calls one function (one memo lookup) instead of one per property; only on a miss
    does it run the properties' own checks, which keep their own memos. Successors of a state
    mostly differ in slots no property reads (channels, clocks, budgets), so the union key repeats
    far more often than states do (kafka.eos: 41k union keys among 310k states)."""

    def __init__(self, memoize: bool, pos: Sequence[int | None]) -> None:
        self.memos: list[dict[Hashable, bool]] = []
        self.memoize = memoize
        #: the layout of the states checked (``_Plan.pos``)
        self.pos = pos
        #: the generated invariant checks' globals (``clear`` restarts their trial)
        self.fused_envs: list[dict[str, Any]] = []

    def memo(self) -> dict[Hashable, bool]:
        m: dict[Hashable, bool] = {} if self.memoize else _NoMemo()
        self.memos.append(m)
        return m

    def clear(self) -> None:
        for m in self.memos:
            m.clear()
        for env in self.fused_envs:
            env["counts"][:] = [0, 0]
            env["impl"] = env["counting"]
            env["check"].__code__ = env["counting"].__code__

    def invariants(self, objs: list[_Invariant], checks: list[Callable[[tuple], bool]]) -> Callable[[tuple], bool]:
        if len(checks) == 1 and len(objs[0].bindings) == 1:
            return checks[0]  # one memo lookup already
        slots = _implied(sorted({k for obj in objs for _, _, ks, _ in obj.bindings for k in ks}, key=_term_order))
        memo = self.memo()
        env: dict[str, Any] = {"memo": memo, "cap": FUSED_MEMO_CAP, "counts": [0, 0], "trial": FUSED_TRIAL}
        key = _key_source(slots, "s", env, self.pos)
        # The conjunction with every property's memo lookups inlined (one call, not one per
        # property): the same lookups, misses and order as calling each check in turn.
        inline = ["def conj(s):"]
        for i, obj in enumerate(objs):
            for j, (_, _, key_slots, bmemo) in enumerate(obj.bindings):
                env[f"m{i}_{j}"], env[f"miss{i}_{j}"] = bmemo, obj.misses[j]
                inline += _binding_check(f"m{i}_{j}", key_slots, f"miss{i}_{j}", env, self.pos)
        inline.append("    return True")
        inline = hoist_projections(inline, 1)
        conj = "conj(s)"
        # The union key repeats often in some machines (kafka.eos's first benchmark configuration:
        # 87% of lookups hit) and hardly in others (its idempotent preset: 50%), where the lookup
        # and the stored entry cost more than they save. The first ``trial`` calls count the hits;
        # then ``impl`` becomes the memoised check or the plain conjunction for good.
        src = [
            *inline,
            "plain = conj",
            "def memoised(s):",
            f"    k = {key}",
            "    ok = memo.get(k)",
            "    if ok is None:",
            f"        ok = bool({conj})",
            "        if len(memo) >= cap:",
            "            memo.clear()",
            "        memo[k] = ok",
            "    return ok",
            "def counting(s):",
            "    global impl",
            f"    k = {key}",
            "    ok = memo.get(k)",
            "    if ok is None:",
            "        counts[1] += 1",
            f"        ok = memo[k] = bool({conj})",
            "    counts[0] += 1",
            "    if counts[0] >= trial:",
            "        if counts[1] * 10 > counts[0] * MAX_MISS_TENTHS:",
            "            memo.clear()",
            "            impl = plain",
            "        else:",
            "            impl = memoised",
            "        check.__code__ = impl.__code__",
            "    return ok",
            "impl = counting",
            "def check(s):",
            "    return impl(s)",
            # the engines hold ``check``: it takes on the code of the current ``impl`` (all of them
            # read only globals), so no call per state goes through a trampoline
            "check.__code__ = counting.__code__",
        ]
        env["MAX_MISS_TENTHS"] = FUSED_MAX_MISS_TENTHS
        # the union key and the inlined keys read projections through their plain dicts first, as
        # the generated successors do (``plain_projections``): kafka.eos's pipeline shape reads 2 to
        # 12 projected terms per new state here
        src = plain_projections(src, env)
        # (its lookups are left as ``get``, not ``subscripted``: on kafka.eos's yardstick about one
        # union-key lookup in seven misses, and most of the conjunction's, called on those misses,
        # and a KeyError costs more than a ``get`` saves there: perf27a, row 0 +0.1M instructions)
        run_code("\n".join(src), "<compose fused invariants>", env)
        self.fused_envs.append(env)
        return env["check"]

    def transitions(self, objs: list[_Transition], checks: list[Callable[[tuple, Step, tuple], bool]],
                    actions: list[str]) -> dict[str, Callable[[tuple, Step, tuple], bool]]:
        """action -> the conjunction of the properties that apply to its steps (their ``actions=``);
        an action none of them applies to is absent: its steps pass."""
        out: dict[str, Callable[[tuple, Step, tuple], bool]] = {}
        by_set: dict[tuple[int, ...], Callable[[tuple, Step, tuple], bool]] = {}
        for action in actions:
            which = tuple(i for i, obj in enumerate(objs) if not obj.actions or action in obj.actions)
            if not which:
                continue
            if which not in by_set:
                by_set[which] = self._transition_check([objs[i] for i in which])
            out[action] = by_set[which]
        return out

    def _transition_check(self, objs: list[_Transition], filters: bool = True) -> Callable[[tuple, Step, tuple], bool]:
        """The properties' memo lookups in a row, inlined (as their own checks make them, minus
        the test of the step's action: the caller looked the check up by it). No memo of its
        own: a key per step (the step and the union of their slots before and after) repeats
        little, and a second memo of that size would cost more memory per state than the lookups
        it saves. ``filters`` False: without their ``when`` tests (the caller knows they hold)."""
        env: dict[str, Any] = {}
        lines = ["def check(s, step, t):"]
        # two or more ``when`` filters: their answers for a step are looked up at once (a step's
        # filters are functions of the step alone, and a run has far fewer steps than successors)
        filtered = [obj for obj in objs if obj.spec.when is not None] if filters else []
        place = {id(obj): j for j, obj in enumerate(filtered)} if len(filtered) > 1 else {}
        if place:
            whens = tuple(obj.spec.when for obj in filtered if obj.spec.when is not None)
            wmemo: dict[Hashable, tuple[bool, ...]] = self.memo()  # type: ignore[assignment]

            def wmiss(step: Step, whens: tuple[Callable[[tuple], bool], ...] = whens,
                      wmemo: dict[Hashable, tuple[bool, ...]] = wmemo) -> tuple[bool, ...]:
                out = wmemo[step] = tuple(bool(when(step)) for when in whens)
                return out

            env["wmemo"], env["wmiss"] = wmemo, wmiss
            lines += ["    w = wmemo.get(step)", "    if w is None:", "        w = wmiss(step)"]
        for i, obj in enumerate(objs):
            env[f"memo{i}"], env[f"miss{i}"], env[f"when{i}"] = obj.memo, obj.miss, obj.spec.when
            if obj.each:
                body = _each_lines(obj.key_slots, f"memo{i}", f"miss{i}", env, self.pos)
                if id(obj) in place:
                    body = [f"if w[{place[id(obj)]}]:", *("    " + x for x in body)]
                elif obj.spec.when is not None and filters:
                    body = [f"if when{i}(step):", *("    " + x for x in body)]
                lines += ["    " + x for x in body]
                continue
            body = [f"key = {_transition_key(obj.key_slots, env, self.pos)}",
                    f"ok = memo{i}.get(key)",
                    "if ok is None:",
                    f"    ok = miss{i}(s, step, t, key)",
                    "if not ok:",
                    "    return False"]
            if obj.spec.stuttering:
                pre, moved = _moved_test(obj.moved_terms, env, self.pos)
                body = [*pre, f"if {moved}:", *("    " + x for x in body)]
            if id(obj) in place:
                body = [f"if w[{place[id(obj)]}]:", *("    " + x for x in body)]
            elif obj.spec.when is not None and filters:
                body = [f"if when{i}(step):", *("    " + x for x in body)]
            lines += ["    " + x for x in body]
        lines.append("    return True")
        covering = _covering_key(objs) if self.memoize and len(objs) > 1 else None
        if covering is not None:
            # One property's key covers every other's (the coordinator's CoordinatorEpochMonotonic
            # and CoordinatorLegalState on kafka.init_producer_id: (txn, log) and txn): the
            # conjunction is a function of that key, so one lookup of it answers the step and the
            # properties' own lookups run only where it misses (the same memos filled, in the same
            # order). Its entries are that property's keys, and the steps it would skip (an
            # unmoved place, a filtered step): no more keys than that memo may hold.
            env["umemo"] = self.memo()
            lines[0] = "def conj(s, step, t):"
            lines += ["def check(s, step, t):",
                      f"    key = {_transition_key(covering, env, self.pos)}",
                      "    ok = umemo.get(key)",
                      "    if ok is None:",
                      "        ok = umemo[key] = conj(s, step, t)",
                      "    return ok"]
        # each key's projected terms of ``s`` and ``t`` through the plain dicts first (kafka.eos's
        # pipeline shape and yardstick: 8 per checked step)
        lines = plain_projections(lines, env)
        run_code(subscripted("\n".join(lines)), "<compose fused transitions>", env)
        return env["check"]

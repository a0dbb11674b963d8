"""The hot paths ``kafka.eos`` builds per configuration: its state constraint and its symmetry's
canonical form, as generated code with the configuration's slots as constants, and the removal of
rules that cannot fire in a configuration.

Both functions run once per generated successor (about three per distinct state), so the
generic versions' per-call work (method lookups, calls into the mixins' parts of the
constraint, building every identity's sort key in a generator) was a sizeable part of a
profile: ``bench/profile_eos.py`` counts the calls. The generated functions compute the same
values: ``tests/test_eos_fast.py`` compares them with the generic ones on whole explorations.

They are closures over the machine's compiled plan, so they are rebuilt rather than pickled
(``EosMachine.__getstate__``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from operator import itemgetter
from typing import Any

from eoscheck.checker.intern import ID_MODULUS
from eoscheck.checker.machine import PlaceTest
from eoscheck.checker.symmetry import canonicalize


class _FirstSight(dict[Any, Any]):
    """A map filled on first sight of a key by ``miss(key)`` (with ``memoize`` off, computed on every
    ask and never kept): a hit is one subscript, with no ``None`` test after a ``get``. kafka.eos's
    generated code keeps three kinds: a slot content's within-bound flag (``constraint``), a swap's
    renaming of a part (``_swap_lines``) and a slot content's sort key under a declared order
    (``_order_keys``).

    Each entry is also written to ``plain``, a plain dict, which the generated code reads first: a
    subscript of a dict subclass goes through its type's generic slot (``dict`` declares
    ``__getitem__`` as a method, so no subclass inherits the C subscript), about 50 ns more per hit
    than a plain dict's specialised one (``bench/results/perf15.md``)."""

    __slots__ = ("memoize", "miss", "plain")

    def __init__(self, miss: Callable[[Any], Any], memoize: bool = True) -> None:
        super().__init__()
        self.miss, self.memoize = miss, memoize
        self.plain: dict[Any, Any] = {}

    def __missing__(self, key: Any) -> Any:
        new = self.miss(key)
        if self.memoize:
            self[key] = self.plain[key] = new
        return new


def constraint(machine: Any) -> Callable[[tuple], bool]:
    """``machine.within_bounds`` as one generated function of the flat state: every coordinator epoch,
    the group's generation and every member's rejoins under their bounds (one ``_FirstSight`` hit per
    ``txn``, ``group`` and ``member`` slot, no method call), and the producer id allocator for the
    idempotent producers and the instances, each only when its mechanism is on. The same conjunction
    as ``EosMachine.within_bounds`` (``_epochs_within``, ``group_within_bounds``), slot by slot."""
    plan = machine._plan
    tables = plan.tables

    def flags(part: str, ok: Callable[[Any], bool]) -> _FirstSight:
        """Slot content (an interned id, or the value itself where the part is not interned) -> whether
        its value is within one bound: a step that changes a part in a way the bound does not see (the
        group's offsets, a member's assignment) costs no miss."""
        values = tables[part].values if part in tables else None
        return _FirstSight((lambda k: bool(ok(k))) if values is None else (lambda k: bool(ok(values[k]))))

    env: dict[str, Any] = {"E": flags("txn", machine.epoch_within)}
    # a slot the states leave out (``Composed.slot_source``: its constant content) is tested here, once
    source, consts = machine.slot_source, machine.constant_slots()

    def test(name: str, k: int) -> list[str]:
        if k in consts and env[name][consts[k]]:
            return []  # within its bound in every state
        return [f"{name}[{source(k)}]"]

    tests = [x for k in range(*machine._txn_slots) for x in test("E", k)]
    if machine.members:
        env["G"] = flags("group", machine.generation_within)
        env["M"] = flags("member", machine.rejoins_within)
        tests += test("G", machine._group_slot)
        tests += [x for k in range(*machine._member_slots) for x in test("M", k)]
    lines = ["def within_bounds(s):"]
    pid = source(machine._pid_slot)
    if machine.n_idempotent:
        lines += [f"    if {pid} > {int(machine.max_pids)}:", "        return False"]
    if machine.n_instances:
        lines += [f"    if {pid} > {int(machine.max_producer_ids)}:", "        return False"]
    # ``and`` of dict hits: a bool, as the generic method returns. The hits read each flag map's
    # ``plain``; a content seen for the first time raises KeyError there, and the same conjunction is
    # then evaluated on the maps themselves, which compute the missing flags in the order they did
    # before (the tests are pure: the flags before the miss are hits again)
    if tests:
        for name in [n for n in ("E", "G", "M") if n in env]:
            env[f"{name}s"] = env[name].plain
        fast = [re.sub(r"^([EGM])\[", r"\1s[", t) for t in tests]
        lines += ["    try:", "        return " + " and ".join(fast), "    except KeyError:",
                  "        return " + " and ".join(tests)]
    else:
        lines.append("    return True")
    exec(compile("\n".join(lines), "<kafka.eos within_bounds>", "exec"), env)  # noqa: S102
    fn: Callable[[tuple], bool] = env["within_bounds"]
    # the bounds as one expression for the engine's generated successors to ask in place of a call;
    # only where no flag test is read: a test through the flag maps raised row 6's instructions by
    # 1.0% (perf26a)
    bounds = [f"{pid} <= {int(n)}" for on, n in ((machine.n_idempotent, machine.max_pids),
                                                  (machine.n_instances, machine.max_producer_ids)) if on]
    terms = " and ".join(bounds)
    places = sorted({int(j) for j in re.findall(r"\bs\[(\d+)\]", terms)})
    if places and not tests:
        expr = re.sub(r"\bs\[(\d+)\]", lambda m: "{" + str(places.index(int(m.group(1)))) + "}", terms)
        fn.place_test = PlaceTest(tuple(places), expr, {})  # type: ignore[attr-defined]
    return fn


def terminal(machine: Any, reference: Callable[[Any, tuple], bool]) -> Callable[[tuple], bool]:
    """``reference(machine, s)`` (``EosMachine.is_terminal``) memoised on the slots of the parts it
    reads: the engines ask it of every state without successors (a deadlock unless terminal), ~28 us
    a call through the part views, and those states share a few dozen combinations of the parts."""
    plan = machine._plan
    names = ["txn", "requests", "responses", "producer", "client", "idem_requests", "idem_responses"]
    names += ["group", "member"] if machine.members else ["init_requests", "init_responses", "init_pending",
                                                           "instance"]
    # their places in a state (a slot the states leave out is the same constant in every state)
    places = [plan.pos[k] for name in names if name in plan.slots
              for k in range(plan.slots[name][0], plan.slots[name][0] + plan.slots[name][1])
              if plan.pos[k] is not None]
    key: Callable[[tuple], Any] = itemgetter(*places) if places else (lambda s: ())
    memo: dict[Any, bool] = {}

    def is_terminal(s: tuple) -> bool:
        k = key(s)
        done = memo.get(k)
        if done is None:
            if len(memo) >= 1 << 16:
                memo.clear()
            done = memo[k] = bool(reference(machine, s))
        return done
    return is_terminal


def canonical_form(machine: Any) -> Callable[[tuple], tuple]:
    """``Composed.canonical`` for ``machine``'s declared scalarsets with the same result: each
    identity's sort key read by one ``itemgetter``, and each permutation applied by generated code
    that moves the actors' slots and renames the parts that mention identities through one memo
    per (part, permutation), keyed by the part's id. The usual case, one scalarset of two
    identities, is one generated function (``checker.symmetry.canonicalize``'s two-identity case)."""
    plan = machine._plan
    least = getattr(plan, "least", None)
    if least is not None:  # compose's generated least image over a small group: already one function
        return least
    # a scalarset whose actors mention its identities (the idempotent clients) has no rename-invariant
    # sort key: ``Composed`` takes the least image over every permutation (``_Plan.brute_force``)
    active = [ss for ss in plan.scalarsets if plan.scalarset_sizes[ss] >= 2]  # a smaller one renames nothing
    if not active:
        return lambda s: s
    product = getattr(plan, "product", None)
    if product is not None:
        return _canonical_product(plan, product)
    forms = [_canonical_alone(plan, ss) for ss in active]
    if len(forms) == 1:
        return forms[0]

    def canonical(s: tuple) -> tuple:
        for form in forms:
            s = form(s)
        return s
    return canonical


def _canonical_alone(plan: Any, ss: str) -> Callable[[tuple], tuple]:
    """``_Plan._canonical_one(s, ss)`` as generated code (one scalarset of two or more identities)."""
    size = plan.scalarset_sizes[ss]
    apply = _permuter(plan, ss)
    if ss in plan.brute_force:
        images = [apply.for_perm(perm) for perm in plan.brute_force[ss]]  # type: ignore[attr-defined]
        return lambda s: min(f(s) for f in images)
    # the actors' places in a state (a part the states leave out is alike for every identity: no key)
    names = [n for n in plan.scalarsets[ss] if plan.pos[plan.slots[n][0]] is not None]
    cols = [plan.slots[n][0] for n in names]
    places = [[plan.pos[base + i] for base in cols] for i in range(size)]
    orders = plan.orders.get(ss)
    if orders is not None:
        # the generic form's keys (``_Plan._canonical_one``) with the declared orders first
        kept = dict(zip(plan.scalarsets[ss], orders))
        keys = [_order_keys(plan, n, kept[n]) for n in names]
        if size == 2:
            return _canonical_pair(plan, places, apply, keys, plan.decls[names[0]].interned)
        key_of = [(lambda x: x) if k is None else k.__getitem__ for k in keys]
        return lambda s: canonicalize(s, [tuple(k(s[j]) for k, j in zip(key_of, ps)) for ps in places], apply)
    if size == 2:
        return _canonical_pair(plan, places, apply)
    getters: list[Callable[[tuple], Any]] = [
        itemgetter(*ps) if len(ps) > 1
        else (lambda s, k=ps[0]: (s[k],)) if ps else (lambda s: ()) for ps in places]  # type: ignore[misc]
    return lambda s: canonicalize(s, [g(s) for g in getters], apply)


def _canonical_product(plan: Any, product: tuple[str, tuple[Any, ...]]) -> Callable[[tuple], tuple]:
    """``_Plan.canonical`` with several scalarsets (``_Plan.product``): the least of the last
    scalarset's form over the images of every combination of the others' permutations (the
    identity first, so that a state is compared with its own form without a copy)."""
    last, images = product
    alone = _canonical_alone(plan, last)
    chains: list[list[Callable[[tuple], tuple]]] = []
    for image in images[1:]:
        chain = []
        for ss, perm in image:
            if perm != tuple(range(len(perm))):
                chain.append(_permuter(plan, ss).for_perm(perm))  # type: ignore[attr-defined]
        chains.append(chain)

    def canonical(s: tuple) -> tuple:
        best = alone(s)
        for chain in chains:
            t = s
            for f in chain:
                t = f(t)
            t = alone(t)
            best = min(best, t)
        return best
    return canonical


def _permuter(plan: Any, ss: str) -> Callable[[tuple, tuple[int, ...]], tuple]:
    """``plan.permute(state, ss, perm)`` as generated code per permutation: the slot moves as
    constants, and the renaming memos per (part, permutation) keyed by the part's id."""
    moved: list[tuple[int, int]] = []  # (base, count) of the actors that move
    for name in plan.scalarsets[ss]:
        moved.append(plan.slots[name])
    renames = []
    for slots, decl, fn in plan.renames.get(ss, ()):
        values = plan.tables[decl.name].values if decl.interned else None
        renames.append((slots, decl, fn, values))
    compiled: dict[tuple[int, ...], Callable[[tuple], tuple]] = {}

    def for_perm(perm: tuple[int, ...]) -> Callable[[tuple], tuple]:
        fn = compiled.get(perm)
        if fn is None:
            fn = compiled[perm] = _compile_perm(plan, moved, renames, perm)
        return fn

    def apply(s: tuple, perm: tuple[int, ...]) -> tuple:
        fn = compiled.get(perm)
        if fn is None:
            fn = for_perm(perm)
        return fn(s)
    apply.for_perm = for_perm  # type: ignore[attr-defined]
    apply.moved, apply.renames = moved, renames  # type: ignore[attr-defined]
    return apply


def _perm_lines(plan: Any, moved: list[tuple[int, int]], renames: list[Any], perm: tuple[int, ...],
                env: dict[str, Any], tag: str = "") -> tuple[list[str], str]:
    """The statements and the tuple expression of ``plan.permute(s, ss, perm)`` as source (``env``
    receives the renaming memos, their names prefixed by ``tag``)."""
    source = list(range(plan.width))  # logical slot -> the logical slot its value comes from
    for base, count in moved:
        for i in range(count):
            source[base + perm[i]] = base + i
    pos = plan.pos  # a state's places (a constant slot is left out, and renaming keeps it)
    memoize = plan.memoize
    renamed: dict[int, int] = {}  # slot -> the index of its renaming memo
    for n, (slots, decl, fn, values) in enumerate(renames):
        memo: dict[Any, Any] = {}

        def miss(old: Any, memo: dict[Any, Any] = memo, decl: Any = decl, fn: Any = fn, values: Any = values) -> Any:
            new = plan.encode(decl, fn(old if values is None else values[old], perm))
            if memoize:
                memo[old] = new
            return new
        env[f"{tag}m{n}"], env[f"{tag}miss{n}"] = memo, miss
        for k in slots:
            renamed[k] = n
    lines = []
    items = []
    for k in plan.live:
        if k in renamed:
            n = renamed[k]
            lines += [f"x = s[{pos[source[k]]}]", f"v{k} = {tag}m{n}.get(x)", f"if v{k} is None:",
                      f"    v{k} = {tag}miss{n}(x)"]
            items.append(f"v{k}")
        else:
            items.append(f"s[{pos[source[k]]}]")
    return lines, "(" + ", ".join(items) + ",)"


def _compile_perm(plan: Any, moved: list[tuple[int, int]], renames: list[Any],
                  perm: tuple[int, ...]) -> Callable[[tuple], tuple]:
    env: dict[str, Any] = {}
    body, image = _perm_lines(plan, moved, renames, perm, env)
    lines = ["def permuted(s):", *("    " + x for x in body), f"    return {image}"]
    exec(compile("\n".join(lines), f"<kafka.eos permutation {perm}>", "exec"), env)  # noqa: S102
    out: Callable[[tuple], tuple] = env["permuted"]
    return out


#: a swap's image of a state of up to this many places is a tuple display of every place; of a wider
#: one, a list copy with the changed places written: per place the display costs ~15 ns (three
#: bytecodes), the copy ~2 ns, but the copy's list costs ~280 ns more (measured on the init_producer_id
#: preset's successors at 38 and 15 places, 5 of them changed)
DISPLAY_WIDTH = 20


def _swap_lines(plan: Any, moved: list[tuple[int, int]], renames: list[Any],
                env: dict[str, Any]) -> tuple[list[str], dict[int, int]]:
    """Statements that return the image of ``s`` under the swap of a scalarset's two identities:
    a tuple display, or a copy of ``s`` with only the places the swap changes written (the actors'
    moved slots and the renamed parts) when the state is wider than ``DISPLAY_WIDTH``. ``env``
    receives the renaming memos (``R0``, ``R1``, ...); the second result maps each renamed place to
    its memo's number (a slot the states leave out is a constant, and renaming keeps it)."""
    source = list(range(plan.width))  # logical slot -> the logical slot its value comes from
    for base, count in moved:
        assert count == 2, "a swap moves two slots per actor"
        source[base], source[base + 1] = base + 1, base
    pos = plan.pos  # logical slot -> its place in a state (None: left out)
    renamed: dict[int, int] = {}  # place -> the index of its renaming memo
    for n, (slots, decl, fn, values) in enumerate(renames):
        def miss(old: Any, decl: Any = decl, fn: Any = fn, values: Any = values) -> Any:
            return plan.encode(decl, fn(old if values is None else values[old], (1, 0)))
        env[f"R{n}"] = _FirstSight(miss, plan.memoize)
        for k in slots:
            if pos[k] is not None:
                renamed[pos[k]] = n
    changed: dict[int, str] = {}  # place -> its value in the image, where that is not ``s[j]``
    for k in plan.live:
        j = pos[k]
        if j in renamed:
            changed[j] = f"R{renamed[j]}[s[{pos[source[k]]}]]"
        elif source[k] != k:
            changed[j] = f"s[{pos[source[k]]}]"
    width = len(plan.live)
    if width <= DISPLAY_WIDTH:
        lines = ["return (" + "".join(changed.get(j, f"s[{j}]") + ", " for j in range(width)) + ")"]
    else:
        lines = ["t = list(s)", *(f"t[{j}] = {x}" for j, x in changed.items()), "return tuple(t)"]
    return _plain_first(lines, env, plan.memoize), renamed


_RENAMED = re.compile(r"\bR(\d+)\[")


def _plain_first(lines: list[str], env: dict[str, Any], memoize: bool) -> list[str]:
    """``lines`` (reading renaming memos ``R<n>[...]``) tried first on the memos' plain dicts
    (``F<n>``); a part seen for the first time raises KeyError there, before any memo is asked, and
    ``lines`` then run as they are (the same misses in the same order). Without memoisation the
    plain dicts stay empty: ``lines`` unchanged."""
    if not memoize or not any(_RENAMED.search(x) for x in lines):
        return lines
    for name in {f"R{n}" for x in lines for n in _RENAMED.findall(x)}:
        env["F" + name[1:]] = env[name].plain
    fast = [_RENAMED.sub(lambda m: f"F{m.group(1)}[", x) for x in lines]
    return ["try:", *("    " + x for x in fast), "except KeyError:", *("    " + x for x in lines)]


#: above every interned id
ID_SPAN = 1 << ID_MODULUS.bit_length()


def _order_keys(plan: Any, name: str, order: Callable[[Any], int] | None) -> _FirstSight | None:
    """Slot content -> its sort key under an Actors part's declared ``order`` (None: no order, the
    contents are their own keys): for an interned part one int, ``order(value) * ID_SPAN + id`` (ids
    lie in ``[0, ID_SPAN)``, so it orders as the generic key's ``(order(value), id)``), else that
    pair."""
    if order is None:
        return None
    if not plan.decls[name].interned:
        return _FirstSight(lambda key: (order(key), key))
    values = plan.tables[name].values
    return _FirstSight(lambda key: order(values[key]) * ID_SPAN + key)


def _canonical_pair(plan: Any, places: list[list[int]], apply: Any,
                    keys: list[_FirstSight | None] | None = None, int_keys: bool = False) -> Callable[[tuple], tuple]:
    """``canonicalize``'s two-identity case as one generated function: the identities' sort keys
    (their actors' slots, in order; ``places``: per identity, their places in a state) compared
    slot by slot with no key tuples built, and the swap inlined. The same result: the state if the
    first key is smaller, the swapped state if it is larger, the least of the two on a tie.

    On a tie every actor slot pair is equal (each actor has one slot per identity, and ``places``
    holds every actor's in the states), so the swapped image differs from the state only in renamed
    parts: it is built only when the first renamed place that changes gets smaller (the order
    tuples compare in), which is rare; otherwise the state is its own form."""
    env: dict[str, Any] = {}
    swap, renamed = _swap_lines(plan, apply.moved, apply.renames, env)
    lines = ["def canonical_pair(s):"]
    for n, (a, b) in enumerate(zip(*places)):
        owner = keys[n] if keys is not None else None
        if owner is not None:
            # a declared order: each content's key from a plain dict, a content seen for the first
            # time from the map that computes it (the same keys: equal keys are equal contents)
            env[f"O{n}"], env[f"Q{n}"] = owner, owner.plain
            lines += ["    try:", f"        x = Q{n}[s[{a}]]", f"        y = Q{n}[s[{b}]]", "    except KeyError:",
                      f"        x = O{n}[s[{a}]]", f"        y = O{n}[s[{b}]]"]
            kx, ky = "x", "y"
        else:
            kx, ky = f"s[{a}]", f"s[{b}]"
        lines += [f"    if {kx} < {ky}:",
                  "        return s",
                  f"    if {kx} != {ky}:",
                  *("        " + x for x in swap)]
    for j in sorted(renamed):
        # the actors' places are equal in pairs here, so a renamed place's image is its memo's value
        # of the place's own content, wherever the swap reads it from
        lines += ["    " + x for x in _plain_first([f"v = R{renamed[j]}[s[{j}]]"], env, plan.memoize)]
        lines += [f"    if v != s[{j}]:",
                  f"        if v > s[{j}]:",
                  "            return s",
                  *("        " + x for x in swap)]
    lines.append("    return s")
    exec(compile("\n".join(lines), "<kafka.eos canonical pair>", "exec"), env)  # noqa: S102
    out: Callable[[tuple], tuple] = env["canonical_pair"]
    first = keys[0] if keys is not None else None
    if places and places[0] and (first is None or int_keys):
        # the first comparison's early return, for the engine's generated successors to ask in
        # place of a call (most successors on the init_producer_id preset end there): a content
        # without a key yet raises KeyError in the plain dict, and the call computes it as before
        pair = (places[0][0], places[1][0])
        own = (PlaceTest(pair, "OWN_Q[{0}] < OWN_Q[{1}]", {"OWN_Q": first.plain})
               if first is not None else PlaceTest(pair, "{0} < {1}", {}))
        out.own_form = own  # type: ignore[attr-defined]
    return out


def prune_idle_rules(machine: Any) -> None:
    """Drop the compiled rules that cannot fire in this configuration, so that no state looks up
    their memos:

    - the clock's Tick when the clock stops at 0 (``max_ticks`` = 0: its guard ``now < max`` never
      holds);
    - KIP-890 verification's VerifyProduce / AppendVerifiedProduce without ``verification_steps``, and
      the leaders' HandleProduce with it (``eos_verification``);
    - the rules that receive from, lose or copy messages of a channel nothing can put a message
      in: empty in every initial state, and no rule that can fire sends to it or writes it (the
      idempotent producers' channels without idempotent producers, the instances' without
      instances, the stale markers without coordinator failovers or without transactional
      producers: a failover resends the markers of ``txn``, which has no actors then).

    Their actions are already left out of ``machine.actions`` (``EosMachine.__init__``)."""
    from eoscheck.checker.compose.rules import _Rule

    plan = machine._plan
    rules = list(plan.rules)
    if machine.bounds.get("max_ticks", 0) == 0:
        rules = [r for r in rules if r.action != "Tick"]
    # KIP-890 verification's two steps only with verification_steps, the leaders' one step only without
    from .eos_verification import SPLIT_ACTIONS
    split = getattr(machine, "verification_split", False)
    rules = [r for r in rules if not (r.action in SPLIT_ACTIONS and not split) and not (
        split and r.action == "HandleProduce" and isinstance(r, _Rule) and r.spec.receive == "requests")]
    channels = plan.channels
    live: set[str] = set()
    for s in machine.init_states():
        view = machine.view(s)
        live.update(name for name in channels if getattr(view, name))

    def feeds(r: Any) -> set[str]:
        if not isinstance(r, _Rule):
            return set()
        out = set(r.sends) | {ref.name for ref in r.writes if ref.name in channels}
        if r.action == "TxnCoordinatorFailover" and not machine.n_producers:
            out.discard("stale_markers")  # the markers of the producers' metadata: none without producers
        return out

    def can_fire(r: Any) -> bool:
        if isinstance(r, _Rule):
            return bool(r.bindings) if r.receive is None else r.receive.name in live
        return r.ops.name in live  # a loss or duplication rule

    while True:
        more = set().union(*(feeds(r) for r in rules if can_fire(r))) - live
        if not more:
            break
        live |= more
    kept = [r for r in rules if can_fire(r)]
    if len(kept) != len(plan.rules):
        plan.set_rules(kept)  # the slots only the dropped rules wrote become constants: left out of the states


__all__ = ["canonical_form", "constraint", "prune_idle_rules", "terminal"]

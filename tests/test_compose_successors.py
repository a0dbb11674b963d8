"""The generated successors' hot path: hosts (one lookup answering the lookups whose slots its key
covers), outcome builders (one tuple display per step) and the successors that check their own
steps' transition properties (``checked_successors``), against the plain forms they replace."""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import pytest
from eoscheck.checker.compose import (
    Actors,
    Budget,
    Channel,
    Composed,
    Delivery,
    Network,
    Part,
    constraint,
    precondition,
    rule,
    transition,
)
from eoscheck.checker.compose.machine import _hosts
from eoscheck.checker.compose.rules import _BUILDERS, _STUB, _STUB_RECEIVE, _builder, _ChannelRule, _Rule
from eoscheck.checker.compose.testing import compare_memo
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.machine import Machine, Property

# ---------------------------------------------------------------- builders


def _apply(s: tuple, written: tuple[int, ...], sent: tuple[int, ...], receive: int, budget: int,
           args: tuple[Any, ...], rest: Any) -> tuple:
    """An outcome applied the way the generated code did before builders: a list copy, the
    receive place, the writes in order, the sends in order, the budget."""
    t = list(s)
    if receive >= 0:
        t[receive] = rest
    for k, v in zip(written, args):
        t[k] = v
    for j, k in enumerate(sent):
        cache, fold = args[len(written) + 2 * j], args[len(written) + 2 * j + 1]
        i = t[k]
        got = cache.get(i)
        t[k] = fold(i) if got is None else got
    if budget >= 0:
        t[budget] += 1
    return tuple(t)


def test_a_builder_makes_the_successor_the_list_copy_made_for_every_shape() -> None:
    rng = random.Random(12)
    width = 6
    for _ in range(400):
        written = tuple(rng.choice(range(width)) for _ in range(rng.randint(0, 3)))  # repeats: the last wins
        sent = tuple(rng.choice(range(width)) for _ in range(rng.randint(0, 3)))  # onto written places too
        receive = rng.choice([-1, *range(width)])
        budget = rng.choice([-1, *[k for k in range(width) if k not in sent and k != receive]])
        s = tuple(rng.randint(0, 4) for _ in range(width))
        args: list[Any] = [rng.randint(10, 20) for _ in written]
        for j in range(len(sent)):
            # a cache that knows some contents, and a fold for the others
            args += [{x: 100 + x for x in range(0, 30, 2)}, lambda i, j=j: 1000 * (j + 1) + i]
        rest = 77
        build = _builder(width, written, sent, receive, budget)
        got = build(s, tuple(args), rest) if receive >= 0 else build(s, tuple(args))
        assert got == _apply(s, written, sent, receive, budget, tuple(args), rest)
        assert _builder(width, written, sent, receive, budget) is build  # one per shape
    assert len(_BUILDERS) > 50


def test_a_builder_is_compiled_on_its_first_call_and_stays_the_same_function() -> None:
    # a width no other test uses: the shapes are new here, so each builder starts as the stub
    width = 23
    for shape in [((0,), (), -1, -1), ((1,), (2,), 3, -1), ((), (4,), -1, 5)]:
        build = _builder(width, *shape)
        assert build.__code__ in (_STUB, _STUB_RECEIVE)  # made, not compiled
        s = tuple(range(width))
        folds: list[Any] = []
        for _ in shape[1]:
            folds += [{}, lambda i: -i]  # per send: a cache that knows nothing, and a fold
        args: tuple[Any, ...] = (*[50 for _ in shape[0]], *folds)
        rest = 99
        call = (s, args, rest) if shape[2] >= 0 else (s, args)
        want = _apply(s, *shape, args, rest)
        assert build(*call) == want
        assert build.__code__ not in (_STUB, _STUB_RECEIVE)  # its own code swapped in
        assert _builder(width, *shape) is build and build(*call) == want


# ---------------------------------------------------------------- hosts


def test_hosts_are_the_unconditional_keys_no_other_covers_with_what_they_cover() -> None:
    proj = object()  # a projection: a projected term is decided by its slot
    lookups: list[tuple[list[Any], bool]] = [
        ([1, 2], False),          # 0: a host
        ([1], False),             # 1: covered by 0
        ([(2, proj)], False),     # 2: covered by 0 (slot 2 decides the projection)
        ([3], True),              # 3: conditional: never a host; covered by 5
        ([2, 1], True),           # 4: the same slots as 0
        ([3, 4], False),          # 5: a host
        ([5], False),             # 6: covers nothing else, covered by nothing: no host
        ([(4, proj)], True),      # 7: covered by 5
    ]
    assert _hosts(lookups) == [([1, 2], [0, 1, 2, 4]), ([3, 4], [3, 5, 7])]
    assert _hosts([([1], False), ([2], False)]) == []  # nothing shared


class Hosted(Composed):
    """Three rules on one actor: Bump keyed on node[i]; Check gated on (node[i], total), the key
    of Move's outcomes too (one group); Check's outcomes keyed on them, under the gate. The key
    (node[i], total) covers them all: one host per node."""

    node = Actors(count="nodes", init=0, interned=False)
    total = Part(init=0, interned=False)

    def __init__(self, nodes: int = 2, memoize: bool = True) -> None:
        super().__init__({"nodes": nodes}, memoize=memoize)

    @precondition(lambda self, node: node < 2)
    @rule("Bump", params={"i": "node"}, reads=("node[i]",), writes=("node[i]",))
    def bump(self, i: int, node: int) -> dict[str, Any]:
        return {"node": node + 1}

    @precondition(lambda self, node: node == 1)
    @precondition(lambda self, total: total < 3)
    @rule("Check", params={"i": "node"}, reads=("node[i]", "total"), writes=("total",))
    def check(self, i: int, node: int, total: int) -> dict[str, Any]:
        return {"total": total + 1}

    @rule("Move", params={"i": "node"}, reads=("node[i]", "total"), writes=("total",), results=("n",))
    def move(self, i: int, node: int, total: int) -> dict[str, Any] | None:
        return {"total": total + node, "n": node} if 0 < node and total + node < 4 else None


def test_a_host_answers_the_lookups_its_key_covers_where_they_are_made() -> None:
    m = Hosted()
    source = m._plan.source
    top = [x for x in source.splitlines() if x.startswith("    ") and not x.startswith("     ")]
    # per node: one host on (node[i], total); Bump's outcomes and Check's gate are places of it
    assert sum("= hm" in x and ".get(" in x for x in top) == 2
    assert sum(".get(" in x for x in top) == 2, source
    assert compare_memo(lambda memo: Hosted(memoize=memo)).complete
    got = explore(m, ExploreOptions(stop_at_first=False))
    want = explore(Hosted(memoize=False), ExploreOptions(stop_at_first=False))
    assert (got.stats.distinct, got.stats.generated, got.stats.depth) == (
        want.stats.distinct, want.stats.generated, want.stats.depth)
    assert {a for a, c in got.stats.coverage.items() if c.generated} == {"Bump", "Check", "Move"}
    # the places filled are those of the lookups made: the group (Check's gate, Move's outcomes)
    # and Bump's outcomes for every key, Check's outcomes only where its gate held
    for host in (m._plan._env["hm0"], m._plan._env["hm1"]):
        assert host
        for group, bump, check in host.values():
            assert group is not None and bump is not None
            assert (check is not None) == group[0]


# ---------------------------------------------------------------- checked successors


class Ledger(Composed):
    """A counter and a log: Tick moves the counter alone, Write appends to the log (or, past a
    seeded bound, rewrites its head), Reset empties the log once the counter is full."""

    counter = Part(init=0, interned=False)
    log = Part(init=())

    def __init__(self, bug: bool = False, limit: int = 3, memoize: bool = True) -> None:
        self.bug, self.limit = bug, limit
        super().__init__({}, memoize=memoize)

    @rule("Tick", reads=("counter",), writes=("counter",))
    def tick(self, counter: int) -> dict[str, Any] | None:
        return {"counter": counter + 1} if counter < self.limit else None

    @rule("Write", reads=("log", "counter"), writes=("log",), results=("at",))
    def write(self, log: tuple[int, ...], counter: int) -> dict[str, Any] | None:
        if len(log) >= 3:
            return None
        if self.bug and counter == 2 and log:
            return {"log": (9, *log[1:]), "at": counter}
        return {"log": (*log, counter), "at": counter}

    @transition("LogGrows", reads=("log",), stuttering=True)
    def log_grows(self, step: tuple, before: Any, after: Any) -> bool:
        """the log only grows"""
        return after.log[:len(before.log)] == before.log

    @transition("WritesAtCounter", reads=("log",), actions=("Write",), when=lambda step: step[1] > 0)
    def writes_at_counter(self, step: tuple, before: Any, after: Any) -> bool:
        """a write past the start appends"""
        return len(after.log) == len(before.log) + 1


def _names(m: Machine) -> list[str]:
    return [n for n, p in m.properties().items() if p.kind == "transition"]


def test_a_step_is_checked_only_where_its_outcome_may_fail_a_property() -> None:
    m = Ledger()
    assert compare_memo(lambda memo: Ledger(memoize=memo)).complete
    assert explore(m, ExploreOptions(check_deadlock=False)).verdict == "holds"
    plan = m._plan
    ticks = [o for r in plan.rules if getattr(r, "action", "") == "Tick" for b in r.bindings for outs in b.memo.values()
             for o in outs]
    writes = [o for r in plan.rules if getattr(r, "action", "") == "Write" for b in r.bindings
              for outs in b.memo.values() for o in outs]
    assert ticks and writes
    # Tick writes no place LogGrows reads (stuttering) and is no Write: nothing to check
    assert {plan.check_sets[o[3]] for o in ticks} == {()}
    # a write at 0 is filtered out by WritesAtCounter's ``when``; every write moves the log
    assert {plan.check_sets[o[3]] for o in writes if o[0][1] == 0} == {("LogGrows",)}
    assert {plan.check_sets[o[3]] for o in writes if o[0][1] > 0} == {("LogGrows", "WritesAtCounter")}


def test_a_failing_step_is_recorded_and_the_engine_reports_it_as_without_checked_successors(monkeypatch) -> None:
    m = Ledger(bug=True)
    assert compare_memo(lambda memo: Ledger(bug=True, memoize=memo)).complete  # records exactly the failures
    fn, failed = m.checked_successors(_names(m))
    bad = [(s, step) for s in _reachable(m) for step, t in m.successors(s)
           if not m.properties()["LogGrows"].check(s, step, t)]
    assert bad
    failed.clear()
    fn(bad[0][0])
    assert bad[0][1] in failed
    failed.clear()
    for stop in (True, False):
        got = explore(Ledger(bug=True), ExploreOptions(stop_at_first=stop, check_deadlock=False))
        monkeypatch.setattr(Composed, "checked_successors", lambda self, names: None)
        want = explore(Ledger(bug=True), ExploreOptions(stop_at_first=stop, check_deadlock=False))
        monkeypatch.undo()
        assert got.verdict == want.verdict == "violated"
        assert [(v.property, v.length, v.trace) for v in got.violations] == [
            (v.property, v.length, v.trace) for v in want.violations]
        assert (got.stats.distinct, got.stats.generated) == (want.stats.distinct, want.stats.generated)


class Journal(Composed):
    """Ledger's two rules with one transition property, which names Write only: no step of Tick
    can fail it."""

    counter = Part(init=0, interned=False)
    log = Part(init=())

    def __init__(self, bug: bool = False, memoize: bool = True) -> None:
        self.bug, self.limit = bug, 3
        super().__init__({}, memoize=memoize)

    @rule("Tick", reads=("counter",), writes=("counter",))
    def tick(self, counter: int) -> dict[str, Any] | None:
        return Ledger.tick(self, counter)  # type: ignore[arg-type]

    @rule("Write", reads=("log", "counter"), writes=("log",), results=("at",))
    def write(self, log: tuple[int, ...], counter: int) -> dict[str, Any] | None:
        return Ledger.write(self, log, counter)  # type: ignore[arg-type]

    @transition("Appends", reads=("log",), actions=("Write",))
    def appends(self, step: tuple, before: Any, after: Any) -> bool:
        """a write keeps the log's head"""
        return after.log[:len(before.log)] == before.log


def test_steps_of_a_rule_no_transition_property_names_are_left_unchecked(monkeypatch) -> None:
    from eoscheck.checker.compose.machine import _NEVER_CHECKED, _checked_source

    m = Journal()
    plan = m._plan
    assert not plan._may_check("Tick") and plan._may_check("Write")
    # per rule two step lines: the successor built in place (its usual shape) and by its builder
    steps = [x for x in plan.source.splitlines() if "append((step" in x]
    assert len(steps) == 4 and sum(x.endswith(_NEVER_CHECKED) for x in steps) == 2
    checked = _checked_source(plan.source)
    assert checked.count("CK[ci]") == 2 and checked.count(_NEVER_CHECKED) == 2
    # the same verdicts, traces and counts as the engine's own checks, with the bug and without
    for bug in (False, True):
        got = explore(Journal(bug=bug), ExploreOptions(stop_at_first=False, check_deadlock=False))
        monkeypatch.setattr(Composed, "checked_successors", lambda self, names: None)
        want = explore(Journal(bug=bug), ExploreOptions(stop_at_first=False, check_deadlock=False))
        monkeypatch.undo()
        assert got.verdict == want.verdict == ("violated" if bug else "holds")
        assert [(v.property, v.trace) for v in got.violations] == [(v.property, v.trace) for v in want.violations]
        assert (got.stats.distinct, got.stats.generated) == (want.stats.distinct, want.stats.generated)


def _reachable(m: Composed) -> list[tuple]:
    seen = list(m.init_states())
    index = set(seen)
    for s in seen:
        for _, t in m.successors(s):
            if t not in index and m.within_bounds(t):
                index.add(t)
                seen.append(t)
    return seen


class Bounded(Ledger):
    """Ledger whose constraint cuts logs longer than two, with a property that fails (raises) on
    a step into such a state: the engines never check it there."""

    @constraint("ShortLog", reads=("log",))
    def short_log(self, log: tuple[int, ...]) -> bool:
        return len(log) <= 2

    @transition("ShortAfter", reads=("log",), actions=("Write",))
    def short_after(self, step: tuple, before: Any, after: Any) -> bool:
        """(raises past the constraint)"""
        if len(after.log) > 2:
            raise ValueError("outside the constraint")
        return True


def test_a_check_that_fails_outside_the_constraint_is_not_a_finding() -> None:
    m = Bounded()
    result = explore(m, ExploreOptions(stop_at_first=False, check_deadlock=False))
    assert result.verdict == "holds"
    assert result.stats.coverage["Write"].outside > 0  # steps into long logs were made, and cut


class Rewritten(Ledger):
    """Ledger whose class changes the successors the generated function makes."""

    def successors(self, state: tuple) -> list[tuple[tuple, tuple]]:
        return list(reversed(super().successors(state)))


def test_no_checked_successors_where_the_class_changes_successors() -> None:
    assert Ledger().checked_successors(_names(Ledger())) is not None
    m = Rewritten()
    assert m.checked_successors(_names(m)) is None
    assert explore(m, ExploreOptions(check_deadlock=False)).verdict == "holds"


# ---------------------------------------------------------------- machines without them


class Chain(Machine):
    """0 -> 1 -> ... -> n, a generator of successors and no transition property: the last state
    deadlocks."""

    fingerprint_kind = "hash"

    def __init__(self, n: int) -> None:
        self.n = n

    def init_states(self) -> Iterable[tuple[int]]:
        return [(0,)]

    def successors(self, state: tuple[int]) -> Iterable[tuple[tuple, tuple[int]]]:
        if state[0] < self.n:
            yield ("Next",), (state[0] + 1,)

    def properties(self) -> Mapping[str, Property]:
        return {"Small": Property("Small", "below n + 1", "invariant", lambda s: s[0] <= self.n)}

    def fields(self, state: tuple[int]) -> dict[str, Any]:
        return {"at": state[0]}


@pytest.mark.parametrize("n", [1, 5])
def test_a_machine_of_generators_still_deadlocks_where_it_has_no_successor(n: int) -> None:
    result = explore(Chain(n), ExploreOptions())
    assert result.verdict == "violated"
    (v,) = result.violations
    assert v.kind == "deadlock" and v.length == n + 1
    assert result.stats.distinct == n + 1


def test_every_shape_of_a_small_width_has_one_builder() -> None:
    shapes = list(itertools.product([(), (0,), (1, 0)], [(), (1,)], [-1, 2], [-1, 3]))
    builds = {_builder(4, *shape) for shape in shapes}
    assert len(builds) == len(shapes)


# ---------------------------------------------------------------- channel rules


class Relay(Composed):
    """Senders sending numbered messages on a lossy, copying channel a log receives: Lose and Copy
    (the channel's own rules, with or without a budget) next to rules that send and receive."""

    sender = Actors(count="senders", init=0, interned=False)
    log = Part(init=())
    wire = Channel(network="network", connection=("src",), label=("src", "n"), drop="Lose", duplicate="Copy")
    lost = Budget("max_lost")
    copies = Budget("max_copies")

    def __init__(self, network: Network, max_lost: int = 1, max_copies: int = 1, memoize: bool = True) -> None:
        super().__init__({"senders": 2, "network": network, "max_lost": max_lost, "max_copies": max_copies},
                         memoize=memoize)

    @precondition(lambda self, sender: sender < 2)
    @rule("Send", params={"c": "sender"}, reads=("sender[c]",), writes=("sender[c]",), sends=("wire",))
    def send(self, c: int, sender: int) -> dict[str, Any]:
        return {"sender": sender + 1, "wire": Msg(c, sender)}

    @rule("Receive", receive="wire", params=("src", "n"), reads=("log",), writes=("log",))
    def receive(self, msg: Msg, log: tuple[Msg, ...]) -> dict[str, Any]:
        return {"log": (*log, msg)}

    @transition("NoCopyLogged", reads=("log",), actions=("Copy",))
    def no_copy_logged(self, step: tuple, before: Any, after: Any) -> bool:
        """a copy changes no log (it holds: a copy writes the channel alone)"""
        return after.log == before.log


class Msg(NamedTuple):
    src: int
    n: int


def _reference(m: Composed, s: tuple) -> list[tuple[Any, tuple]]:
    """The successors as each rule's own ``expand`` makes them (a channel rule's is the list copy
    the generated code replaces), in the rules' order."""
    out: list[tuple[Any, tuple]] = []
    for r in m._plan.rules:
        if isinstance(r, _Rule) and r.receive is None and not r.bindings:
            continue
        r.expand(s, out)
    return out


_LOSSY_COPYING = [Network(Delivery.ORDERED, loss="lost", duplication="copies"),
                  Network(Delivery.UNORDERED, loss="lost", duplication="copies")]


@pytest.mark.parametrize(("network", "lost", "copies"), [
    *((net, lost, copies) for net in _LOSSY_COPYING for lost, copies in [(1, 1), (2, 0), (0, 2)]),
    (Network(Delivery.UNORDERED, loss="lost"), 2, 0)])
def test_a_channel_rule_in_the_generated_successors_makes_its_expand_s_steps(network: Network, lost: int,
                                                                             copies: int) -> None:
    m = Relay(network, lost, copies)
    channel_rules = [r for r in m._plan.rules if isinstance(r, _ChannelRule)]
    assert channel_rules and "(s, out)" not in m._plan.source  # pasted in, not called
    assert compare_memo(lambda memo: Relay(network, lost, copies, memoize=memo)).complete
    moved = set()
    for s in _reachable(m):
        got = m.successors(s)
        assert got == _reference(m, s), m.view(s)
        moved.update(step[0] for step, _ in got)
    assert {r.action for r in channel_rules} <= moved  # every channel rule made steps
    assert all(r.outs for r in channel_rules)
    # the budgets bound the channel rules: the same space as before, counted the same way
    got = explore(m, ExploreOptions(stop_at_first=False, check_deadlock=False))
    want = explore(Relay(network, lost, copies, memoize=False), ExploreOptions(stop_at_first=False,
                                                                                check_deadlock=False))
    assert (got.stats.distinct, got.stats.generated) == (want.stats.distinct, want.stats.generated)
    assert got.verdict == "holds"


def test_a_channel_rule_s_step_is_checked_where_a_property_may_fail_on_it() -> None:
    m = Relay(Network(Delivery.UNORDERED, loss="lost", duplication="copies"))
    _reachable(m)
    plan = m._plan
    for r in plan.rules:
        if isinstance(r, _ChannelRule):
            sets = {plan.check_sets[o[3]] for outs in r.outs.values() for o in outs}
            assert sets == ({("NoCopyLogged",)} if r.action == "Copy" else {()}), r.action


# ---------------------------------------------------------------- receive rules on one shared key


class Mailroom(Composed):
    """Clerks posting numbered letters into one tray that three rules receive from: File (reads the
    archive whatever the letter: one key for every binding), Stamp (reads the tray itself and the
    archive, a choice of outcomes, spends a budget) and Answer (reads the clerk the letter names:
    its key depends on the message)."""

    clerk = Actors(count="clerks", init=0, interned=False)
    archive = Part(init=())
    tray = Channel(network="network", label=("src", "n"))
    stamps = Budget("max_stamps")

    def __init__(self, network: Network, max_stamps: int = 2, memoize: bool = True) -> None:
        super().__init__({"clerks": 2, "network": network, "max_stamps": max_stamps}, memoize=memoize)

    @precondition(lambda self, clerk: clerk < 2)
    @rule("Post", params={"c": "clerk"}, reads=("clerk[c]",), writes=("clerk[c]",), sends=("tray",))
    def post(self, c: int, clerk: int) -> dict[str, Any]:
        return {"clerk": clerk + 1, "tray": Msg(c, clerk)}

    @rule("File", receive="tray", match=lambda m: m.n == 0, params=("src", "n"), reads=("archive",),
          writes=("archive",))
    def file(self, msg: Msg, archive: tuple[Msg, ...]) -> dict[str, Any] | None:
        return None if len(archive) >= 2 else {"archive": (*archive, msg)}

    @rule("Stamp", receive="tray", params=("src", "n"), reads=("tray", "archive"), writes=("archive",),
          spends="stamps", results=("left",))
    def stamp(self, msg: Msg, tray: tuple[Msg, ...], archive: tuple[Msg, ...]) -> list[dict[str, Any]]:
        return [{"archive": archive, "left": len(tray)}, {"archive": (msg,), "left": len(tray)}][:1 + (msg.n > 0)]

    @rule("Answer", receive="tray", params={"src": None, "n": None, "k": 2}, reads=("clerk[src]",),
          writes=("clerk[src]",))
    def answer(self, msg: Msg, k: int, clerk: int) -> dict[str, Any] | None:
        return {"clerk": clerk + 2} if k == 1 and clerk == 2 and msg.n == 1 else None


@pytest.mark.parametrize("network", [Network(Delivery.ORDERED), Network(Delivery.UNORDERED),
                                     Network(Delivery.DUPLICATING)], ids=["ordered", "unordered", "duplicating"])
def test_a_receive_rule_on_one_shared_key_looks_its_steps_up_once_and_makes_the_same_ones(
        network: Network, monkeypatch: pytest.MonkeyPatch) -> None:
    def run() -> tuple[Mailroom, list[tuple[str, dict[str, Any], Any]], list[list[tuple[Any, tuple]]]]:
        m = Mailroom(network)
        computed: list[tuple[str, dict[str, Any], Any]] = []
        for r in m._plan.rules:
            if isinstance(r, _Rule) and r.receive is not None:
                def compute(b: Any, s: tuple, msg: Any, rest: int, r: _Rule = r, old: Any = r.compute) -> Any:
                    computed.append((r.action, dict(b.params), msg))
                    return old(b, s, msg, rest)
                r.compute = compute  # type: ignore[method-assign]
                r.clear()  # the generated code holds the rule's compute: regenerate it
        m._plan.compile()
        return m, computed, [m.successors(s) for s in _reachable(m)]

    flat, flat_computed, flat_steps = run()
    source = flat._plan.source
    keys = {r.action: r.shared_key() for r in flat._plan.rules if isinstance(r, _Rule) and r.receive is not None}
    archive = flat.slot("archive")
    # File: the archive; Stamp: the archive (the tray's id leads the key anyway); Answer: none
    assert keys == {"File": [archive], "Stamp": [archive], "Answer": None}
    assert source.count("_flat.get(") == 2 and source.count("_per_channel.get(") == 1, source
    with monkeypatch.context() as patch:  # every receive rule on its per-message loop, as before
        patch.setattr(_Rule, "shared_key", lambda self: None)
        loop, loop_computed, loop_steps = run()
    assert "_flat.get(" not in loop._plan.source
    # the same successors in the same order, and the same misses computed in the same order
    assert flat_steps == loop_steps
    assert flat_computed == loop_computed
    assert {action for action, _, _ in flat_computed} == {"File", "Stamp", "Answer"}
    assert {step[0] for steps in flat_steps for step, _ in steps} == {"Post", "File", "Stamp", "Answer"}
    for r in flat._plan.rules:
        if isinstance(r, _Rule) and r.action in ("File", "Stamp"):
            assert r.flat and not r.per_channel.keys() - {k if type(k) is int else k[0] for k in r.flat}
    assert compare_memo(lambda memo: Mailroom(network, memoize=memo)).complete


# ---------------------------------------------------------------- projected terms


def test_projected_terms_hit_plain_dicts_and_miss_through_the_maps_in_the_same_order() -> None:
    from eoscheck.checker.compose.rules import _Projection, plain_projections

    lines = ["def f(s):",
             "    q0 = P1[s[2]]",
             "    k = (s[0], q0, P1[s[1]])",
             "    outs = m.get((s[0], P1[s[3]], P2[s[1]]))",
             "    x = P1[s[0]] if s[0] else -1",  # conditional: a term it may skip stays as it is
             "    y = g(P2[s[2]])",  # a call before the last term: left as it is
             "    return q0, k, outs, x, y"]

    def run(rewrite: bool) -> tuple[list[Any], list[list[Any]]]:
        projs = [_Projection("part:mod3", lambda v: v % 3, None), _Projection("part:half", lambda v: v // 2, None)]
        env: dict[str, Any] = {"P1": projs[0].ids, "P2": projs[1].ids, "m": {(0, 1, 0): "hit"}, "g": lambda v: v}
        src = plain_projections(lines, env) if rewrite else lines
        exec("\n".join(src), env)  # noqa: S102
        rng = random.Random(7)
        got = [env["f"](tuple(rng.randrange(9) for _ in range(4))) for _ in range(300)]
        for p in projs:
            assert p.ids.plain == dict(p.ids)
        return got, [list(p.shared) for p in projs]

    src = plain_projections(lines, {"P1": _Projection("a", abs, None).ids, "P2": _Projection("b", abs, None).ids})
    assert sum(x.strip() == "try:" for x in src) == 3
    assert not any("F" in x for x in src if x.lstrip().startswith(("x =", "y =")))
    # the same values, and the projected values first seen in the same order (the ids they get)
    assert run(True) == run(False)


class Partial(Composed):
    """Post writes its clerk and the archive, sends a letter and spends a budget (its full shape:
    everything the rule declares), or writes both and sends nothing (its writes-only shape), or
    writes its clerk alone; Take takes a letter and writes the archive, or (clerk 1's letter)
    nothing; Ack takes a letter and writes its sender; the tray may lose a letter. The generated
    successors build in place the full and writes-only shapes, a message taken alone or with its
    sender written, and every loss; the others by their builders."""

    clerk = Actors(count="clerks", init=0, interned=False)
    archive = Part(init=())
    tray = Channel(network="network", label=("src", "n"))
    posts = Budget("max_posts")
    losses = Budget("max_losses")

    def __init__(self, memoize: bool = True) -> None:
        super().__init__({"clerks": 2, "network": Network(Delivery.UNORDERED, loss="losses"), "max_posts": 3,
                          "max_losses": 1}, memoize=memoize)

    @rule("Post", params={"c": "clerk"}, reads=("clerk[c]", "archive"), writes=("clerk[c]", "archive"),
          sends=("tray",), spends="posts")
    def post(self, c: int, clerk: int, archive: tuple[int, ...]) -> dict[str, Any] | None:
        if clerk >= 4:
            return None
        if clerk % 2:
            return {"clerk": clerk + 1}
        if clerk == 2:
            return {"clerk": clerk + 1, "archive": (*archive, c)[-2:]}
        return {"clerk": clerk + 1, "archive": (*archive, c)[-2:], "tray": Msg(c, clerk)}

    @rule("Take", receive="tray", params=("src", "n"), reads=("archive",), writes=("archive",))
    def take(self, msg: Msg, archive: tuple[int, ...]) -> dict[str, Any]:
        return {"archive": archive[1:]} if msg.src == 0 else {}

    @rule("Ack", receive="tray", params=("src", "n"), reads=("clerk[src]",), writes=("clerk[src]",))
    def ack(self, msg: Msg, clerk: int) -> dict[str, Any] | None:
        return {"clerk": 9} if clerk < 9 else None


def test_a_successor_built_in_place_is_the_one_its_builder_makes(monkeypatch: pytest.MonkeyPatch) -> None:
    m = Partial()
    assert "if build is " in m._plan.source  # Post's full shape, built in place
    assert "elif build is " in m._plan.source  # and its writes-only shape
    # the reference: every step line calls the outcome's builder (the generated code before)
    monkeypatch.setattr(_Rule, "_apply_shapes", lambda self, env, shapes, name, call: [call])
    channel_body = _ChannelRule.body

    def called(self: _ChannelRule, tag: str) -> tuple[list[str], dict[str, Any]]:
        lines, env = channel_body(self, tag)
        return [re.sub(r"append\(\(step, \(.*\)\)\)$", "append((step, build(s, a)))", x) for x in lines], env

    monkeypatch.setattr(_ChannelRule, "body", called)
    ref = Partial()
    assert "build is " not in ref._plan.source
    assert all("append((step, build(" in x for x in ref._plan.source.splitlines() if "append((step" in x)
    seen: dict[str, int] = {}
    width = len(m._plan.live)
    for s in _reachable(ref):
        assert m.successors(s) == ref.successors(s)
        for rule_ in m._plan.rules:
            if isinstance(rule_, _Rule) and rule_.action == "Post":
                for b in rule_.bindings:
                    shapes = {_builder(width, *rule_._shape(b, rule_.allowed)): "full",
                              _builder(width, *rule_._shape(b, {"clerk", "archive"})): "writes"}
                    for _, build, _, _ in b.memo.get(b.getter(s), ()):
                        kind = shapes.get(build, "other")
                        seen[kind] = seen.get(kind, 0) + 1
    assert seen.keys() == {"full", "writes", "other"}  # every kind of outcome was made
    # a letter taken with nothing written (the receive-only shape), and a letter lost
    tray = m._plan.pos[m.slot("tray")]
    alone = {step[0] for s in _reachable(m) for step, t in m.successors(s)
             if [k for k in range(width) if s[k] != t[k]] == [tray]}
    assert "Take" in alone
    assert any(step[0] == "Ack" for s in _reachable(m) for step, _ in m.successors(s))
    assert "elif build is r2_R_1:" in m._plan.source  # Ack's sender written in place (clerk 0's)
    assert any(step[0] == "Drop_tray" for s in _reachable(m) for step, _ in m.successors(s))
    assert explore(m, ExploreOptions()).stats.distinct == explore(ref, ExploreOptions()).stats.distinct

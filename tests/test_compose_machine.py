"""The mechanics ``checker.compose`` provides once for every composed machine: memoisation that
agrees with recomputation (and a check that notices when it does not), pickling without memos,
cache clearing, the parallel engine's state batches across processes, derived actions, labels
and fields, and declaration errors reported in one line."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from typing import Any, NamedTuple

import pytest
from eoscheck.checker.compose import (
    TABLES,
    Actors,
    Budget,
    Channel,
    Clock,
    Composed,
    ComposeError,
    Delivery,
    Network,
    Part,
    invariant,
    precondition,
    rule,
    transition,
)
from eoscheck.checker.compose.rules import _getter
from eoscheck.checker.compose.testing import MemoMismatch, compare_memo
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.explore.spark_checkpoint import run_key
from eoscheck.checker.intern import InternCollision
from eoscheck.examples.abp import ComposedAbp
from eoscheck.examples.twophase_composed import (
    ComposedTwoPhase,
    SymmetricComposedTwoPhase,
)


def reachable(machine: Composed, limit: int = 100_000) -> list[tuple]:
    seen = list(machine.init_states())
    index = set(seen)
    for s in seen:
        for _, t in machine.successors(s):
            if t not in index and machine.within_bounds(t) and len(seen) < limit:
                index.add(t)
                seen.append(t)
    return seen


# ---------------------------------------------------------------- memoisation

@pytest.mark.parametrize("make", [
    lambda memo: ComposedTwoPhase(4, memoize=memo),
    lambda memo: ComposedTwoPhase(3, seeded_bug=True, memoize=memo),
    lambda memo: SymmetricComposedTwoPhase(4, memoize=memo),
    *[lambda memo, d=d: ComposedAbp(3, d, 1, 1 if d is not Delivery.DUPLICATING else 0, memoize=memo)
      for d in Delivery],
], ids=["twophase", "twophase-bug", "twophase-symmetric", "abp-ordered", "abp-unordered", "abp-duplicating"])
def test_memoised_successors_and_verdicts_equal_recomputed_ones_on_every_state(make):
    report = compare_memo(make)
    assert report.complete
    assert report.states >= 64 and report.steps > report.states


def _drop_read(machine: Composed, action: str, part: str) -> Composed:
    """Break one memo key: the binding of ``action`` forgets the slot of ``part``."""
    (rule_,) = [r for r in machine._plan.rules if r.action == action]
    slot = machine.slot(part)
    for b in rule_.bindings:
        b.key_slots = [k for k in b.key_slots if k != slot]
        b.getter = _getter(b.key_slots)
    rule_.compile()  # the generated code inlines the keys
    machine._plan.compile()
    return machine


@pytest.mark.parametrize("make_broken", [
    lambda: _drop_read(ComposedTwoPhase(3), "TMCommit", "tm_prepared"),
    lambda: _drop_read(ComposedAbp(3, Delivery.ORDERED, 0, 0), "Send", "next_value"),
])
def test_the_memo_check_fails_when_a_key_drops_a_read_part(make_broken):
    broken = make_broken()
    plain = type(broken)
    with pytest.raises(MemoMismatch, match="successors differ"):
        compare_memo(lambda memo: broken if memo else _unmemoised(plain, broken))


def _unmemoised(cls: type, like: Composed) -> Composed:
    clone = pickle.loads(pickle.dumps(like))  # same configuration, fresh plan
    clone.memoize = False
    clone.__setstate__(clone.__getstate__())
    return clone


def test_the_memo_check_fails_when_an_invariant_key_drops_its_part():
    make = lambda memo: ComposedAbp(3, Delivery.UNORDERED, 0, 0, memoize=memo)
    broken = make(True)
    inv = broken._plan.property_objs["InOrder"]
    inv.bindings = [(combo, reads, [], memo) for combo, reads, _, memo in inv.bindings]
    inv.compile()
    with pytest.raises(MemoMismatch, match="invariant InOrder differs"):
        compare_memo(lambda memo: broken if memo else make(False))


def test_an_effect_sees_only_the_parts_it_reads():
    seen: list[set[str]] = []

    class Spy(Composed):
        a = Part(init=(1,))
        b = Part(init=(2,))

        @rule("Look", reads=("a",), writes=("a",))
        def look(self, **kwargs: Any) -> None:
            seen.append(set(kwargs))

    m = Spy()
    m.successors(next(iter(m.init_states())))
    assert seen == [{"a"}]


def test_effects_and_guards_get_the_same_arguments_called_positionally_or_by_keyword():
    import functools

    from eoscheck.checker.compose.rules import _caller

    calls: list[tuple[str, Any]] = []

    def logged(fn: Any) -> Any:
        @functools.wraps(fn)
        def wrapper(self: Any, **kwargs: Any) -> Any:  # keywords only: a positional call would fail
            calls.append(("wrapped", kwargs))
            return fn(self, **kwargs)
        return wrapper

    class Both(Composed):
        a = Part(init=1)
        b = Part(init=2)

        @rule("Plain", reads=("a", "b"), writes=("a",))
        def plain(self, b: int, a: int) -> dict[str, int] | None:  # not in declaration order
            calls.append(("plain", (a, b)))
            return {"a": a + b} if a < 5 else None

        @rule("Wrapped", reads=("a", "b"), writes=("b",))
        @logged
        def wrapped(self, a: int, b: int) -> dict[str, int] | None:
            return {"b": a * b} if b < 50 else None

    m = Both()
    s = next(iter(m.init_states()))
    assert [(step, m.view(t).a, m.view(t).b) for step, t in m.successors(s)] == [
        (("Plain",), 3, 2), (("Wrapped",), 1, 2)]
    assert calls == [("plain", (1, 2)), ("wrapped", {"a": 1, "b": 2})]
    f = lambda self, x, y: (x, y)
    assert _caller(f, ("x", "y"))(None, {"y": 2, "x": 1, "z": 3}) == (1, 2)  # positional
    assert _caller(f, ("y", "x"))(None, {"y": 2, "x": 1}) == (1, 2)  # names not in its order: by keyword


# ---------------------------------------------------------------- pickling, caches, run identity

def _memo_entries(machine: Composed) -> int:
    plan = machine._plan
    n = sum(len(b.memo) for r in plan.rules for b in getattr(r, "bindings", []))
    n += sum(len(b.memo) for r in plan.rules for bs in getattr(r, "by_msg", {}).values() for b in bs)
    n += sum(len(ops._deliver) + len(ops._send) for ops in plan.channels.values())
    for obj in plan.property_objs.values():
        n += sum(len(b[3]) for b in obj.bindings) if hasattr(obj, "bindings") else len(obj.memo)
    return n


def test_pickling_leaves_memos_behind_and_the_copy_explores_the_same():
    machine = ComposedAbp(3, Delivery.ORDERED, 1, 1)
    cold_key = run_key(machine, False, machine.properties(), True)
    first = explore(machine, ExploreOptions())
    assert _memo_entries(machine) > 50
    copy = pickle.loads(pickle.dumps(machine))
    assert _memo_entries(copy) == 0
    assert len(pickle.dumps(machine)) < 2_000  # configuration only, no memo or table
    again = explore(copy, ExploreOptions())
    assert (again.stats.distinct, again.stats.generated) == (first.stats.distinct, first.stats.generated)
    # the run identity of a warm machine is that of a cold one (no memo contents in its attributes)
    assert run_key(machine, False, machine.properties(), True) == cold_key


def test_clear_caches_empties_every_memo_and_changes_nothing():
    machine = ComposedTwoPhase(4)
    checks = machine.properties()
    first = explore(machine, ExploreOptions())
    assert _memo_entries(machine) > 0
    machine.clear_caches()
    assert _memo_entries(machine) == 0
    assert machine.properties() == checks  # memos are cleared in place: checks handed out stay valid
    again = explore(machine, ExploreOptions())
    assert (again.stats.distinct, again.stats.generated) == (first.stats.distinct, first.stats.generated)


# ---------------------------------------------------------------- batches between processes

_CHILD = """
import json, pickle, sys
from eoscheck.examples.abp import ComposedAbp
from eoscheck.checker.compose import Delivery
machine = ComposedAbp(3, Delivery.UNORDERED, 1, 1)
with open(sys.argv[1], "rb") as f:
    states = machine.import_states(pickle.load(f))
print(json.dumps([[machine.fields(s), sorted(machine.format_step(st) for st, _ in machine.successors(s)),
                   machine.properties()["InOrder"].check(s)] for s in states]))
"""


def test_export_import_round_trip_in_a_fresh_process(tmp_path):
    machine = ComposedAbp(3, Delivery.UNORDERED, 1, 1)
    states = reachable(machine)[-300:]
    exported = machine.export_states(states)
    flat, parts = exported
    assert all(type(s) is tuple for s in flat)
    ids = {(t.kind, s[k]) for s in states for k, t in machine._plan.interned_slots}
    sent = {(kind, i) for kind, values in parts.items() for i in values}
    # each part once per batch, per table (a dict); an id of these states that another table
    # also holds (the empty value of two parts) may travel in both tables, nothing else
    assert ids <= sent
    assert {i for _, i in sent} == {i for _, i in ids}
    assert all(TABLES[kind].values[i] == v for kind, values in parts.items() for i, v in values.items())
    path = tmp_path / "batch.pickle"
    path.write_bytes(pickle.dumps(exported))
    out = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True, check=True)
    want = [[machine.fields(s), sorted(machine.format_step(st) for st, _ in machine.successors(s)),
             machine.properties()["InOrder"].check(s)] for s in states]
    assert json.loads(out.stdout) == json.loads(json.dumps(want))
    # in this process too, importing gives back equal states
    assert machine.import_states(pickle.loads(path.read_bytes())) == states


def test_import_refuses_a_part_whose_id_is_not_its_content_hash():
    machine = ComposedAbp(3, Delivery.ORDERED, 0, 0)
    s = next(iter(machine.init_states()))
    flat, parts = machine.export_states([s])
    kind = next(k for k in parts if k.endswith(".log"))
    (ident,) = parts[kind]
    with pytest.raises(InternCollision):
        machine.import_states((flat, {**parts, kind: {ident: (99,)}}))
    with pytest.raises(InternCollision):
        machine.import_states((flat, {**parts, kind: {12345: (7, 7, 7)}}))


_BATCH_CHILD = """
import json, sys
from eoscheck.examples.abp import ComposedAbp
from eoscheck.checker.compose import Delivery
machine = ComposedAbp(3, Delivery.UNORDERED, 1, 1)
with open(sys.argv[1], "rb") as f:
    states = machine.import_batch(f.read())
print(json.dumps([machine.fields(s) for s in states]))
"""


def test_export_batch_round_trip_in_a_fresh_process(tmp_path):
    """The Spark engine's batches: parts pickled once per process, unpickled only where unknown."""
    machine = ComposedAbp(3, Delivery.UNORDERED, 1, 1)
    states = reachable(machine)[-300:]
    blob = machine.export_batch(states)
    assert machine.export_batch(states) == blob  # the parts' bytes come from the cache
    path = tmp_path / "batch.bin"
    path.write_bytes(blob)
    out = subprocess.run([sys.executable, "-c", _BATCH_CHILD, str(path)], capture_output=True, text=True,
                         check=True)
    assert json.loads(out.stdout) == json.loads(json.dumps([machine.fields(s) for s in states]))
    assert machine.import_batch(blob) == states


def test_import_batch_refuses_another_value_under_a_known_id():
    machine = ComposedAbp(3, Delivery.ORDERED, 0, 0)
    s = next(iter(machine.init_states()))
    flat, parts = pickle.loads(machine.export_batch([s]))
    kind = next(k for k in parts if k.endswith(".log"))
    (ident,) = parts[kind]
    with pytest.raises(InternCollision):
        machine.import_batch(pickle.dumps((flat, {**parts, kind: {ident: pickle.dumps((99,))}})))


def test_the_parallel_engine_explores_a_composed_machine_like_the_bfs():
    machine = ComposedAbp(3, Delivery.UNORDERED, 1, 1)
    bfs = explore(machine, ExploreOptions(stop_at_first=False))
    par = explore(ComposedAbp(3, Delivery.UNORDERED, 1, 1),
                  ExploreOptions(strategy="parallel", workers=2, stop_at_first=False))
    assert (par.stats.distinct, par.stats.generated, par.stats.depth) == (
        bfs.stats.distinct, bfs.stats.generated, bfs.stats.depth)
    assert par.verdict == bfs.verdict == "violated"


# ---------------------------------------------------------------- the example in docs/compose.md

class Req(NamedTuple):
    client: int
    seq: int


LOSSY_COPYING = Network(Delivery.ORDERED, loss="lost", duplication="copies")


class Store(Composed):
    client = Actors(count="clients", init=0, interned=False)
    log = Part(init=())
    requests = Channel(network="network", connection=("client",), label=("client", "seq"),
                       drop="LoseRequest", duplicate="Retransmit")
    lost = Budget("max_lost")
    copies = Budget("max_copies")
    now = Clock(max="max_ticks", tick="Tick", reads=("requests",), when=lambda m, requests: not requests)

    def __init__(self, clients: int = 2, records: int = 2, network: Network = LOSSY_COPYING,
                 max_lost: int = 1, max_copies: int = 0, max_ticks: int = 0, memoize: bool = True) -> None:
        self.records = records
        super().__init__({"clients": clients, "network": network, "max_lost": max_lost,
                          "max_copies": max_copies, "max_ticks": max_ticks}, memoize=memoize)

    @precondition(lambda self, client: client < self.records)
    @rule("Send", params={"c": "client"}, reads=("client[c]",), writes=("client[c]",), sends=("requests",))
    def send(self, c: int, client: int) -> dict[str, Any]:
        return {"client": client + 1, "requests": Req(c, client)}

    @rule("Append", receive="requests", params=("client", "seq"), reads=("log",), writes=("log",),
          results=("dup",))
    def append(self, msg: Req, log: tuple[Req, ...]) -> dict[str, Any]:
        return {"log": log + (msg,), "dup": msg in log}

    @invariant("NoDuplicates", reads=("log",))
    def no_duplicates(self, log: tuple[Req, ...]) -> bool:
        """no request is appended twice"""
        return len(set(log)) == len(log)

    @transition("LogGrows", reads=("log",))
    def log_grows(self, step: tuple, before: Any, after: Any) -> bool:
        """the log only grows"""
        return after.log[:len(before.log)] == before.log


class GatedStore(Store):
    """Store with a rule whose precondition reads one of its two parts."""

    @precondition(lambda self, client: client == self.records)
    @rule("Audit", params={"c": "client"}, reads=("client[c]", "log"), results=("size",))
    def audit(self, c: int, client: int, log: tuple[Req, ...]) -> dict[str, Any]:
        return {"size": len(log)}


def test_a_precondition_on_fewer_reads_is_memoised_on_them_and_changes_nothing():
    report = compare_memo(lambda memo: GatedStore(memoize=memo))
    assert report.complete and report.steps > report.states
    machine = GatedStore()
    (audit,) = [r for r in machine._plan.rules if r.action == "Audit"]
    binding = audit.bindings[0]
    assert len(binding.gate_slots) == 1 and len(binding.key_slots) == 2
    result = explore(machine, ExploreOptions(stop_at_first=False))
    assert result.stats.coverage["Audit"].generated > 0
    assert set(binding.gate_memo.values()) == {True, False}
    # the full key (client, log) is looked up only where the gate is open
    assert binding.memo and all(client == machine.records for client, _ in binding.memo)


class TwiceGatedStore(GatedStore):
    """GatedStore with a second rule gated on ``client[c]`` and an ungated one keyed on it alone."""

    @precondition(lambda self, client: client == self.records)
    @rule("Count", params={"c": "client"}, reads=("client[c]", "log"), results=("sent",))
    def count(self, c: int, client: int, log: tuple[Req, ...]) -> dict[str, Any]:
        return {"sent": sum(1 for r in log if r.client == c)}

    @rule("Peek", params={"c": "client"}, reads=("client[c]",), results=("at",))
    def peek(self, c: int, client: int) -> dict[str, Any] | None:
        return {"at": client} if client == 1 else None


def test_gates_on_the_same_slots_are_one_lookup_with_the_outcomes_keyed_there():
    report = compare_memo(lambda memo: TwiceGatedStore(memoize=memo))
    assert report.complete and report.steps > report.states
    machine = TwiceGatedStore()
    source = machine._plan.source
    # per client one group on client[c]: Send's outcomes, Audit's and Count's gates, Peek's outcomes
    assert source.count("_gm0.get(") == 0 and source.count("k = s") == 2
    assert "in g0[0]:" in source and "if g0[1]:" in source and "if g0[2]:" in source and "in g0[3]:" in source
    result = explore(machine, ExploreOptions(stop_at_first=False))
    assert result.stats.coverage["Audit"].generated > 0 and result.stats.coverage["Count"].generated > 0
    assert result.stats.coverage["Peek"].generated > 0
    unmemoised = explore(TwiceGatedStore(memoize=False), ExploreOptions(stop_at_first=False))
    assert (result.stats.distinct, result.stats.generated) == (unmemoised.stats.distinct, unmemoised.stats.generated)


class GateOnlyStore(Store):
    """Store with a rule whose gate alone reads the clock (the effect and its other guard do not) and
    one whose effect reads it too."""

    @precondition(lambda self, client, now: client == self.records and now < 2)
    @precondition(lambda self, log: len(log) > 0)
    @rule("Seal", params={"c": "client"}, reads=("client[c]", "now", "log"), results=("size",))
    def seal(self, c: int, client: int, log: tuple[Req, ...]) -> dict[str, Any]:
        return {"size": len(log)}

    @precondition(lambda self, client, now: client == self.records and now < 2)
    @rule("Stamp", params={"c": "client"}, reads=("client[c]", "now", "log"), results=("at",))
    def stamp(self, c: int, client: int, now: int, log: tuple[Req, ...]) -> dict[str, Any]:
        return {"at": now}


def test_a_read_only_the_gate_takes_is_left_out_of_the_outcomes_key():
    report = compare_memo(lambda memo: GateOnlyStore(max_ticks=2, memoize=memo))
    assert report.complete and report.steps > report.states
    machine = GateOnlyStore(max_ticks=2)
    plan = machine._plan
    (seal,) = [r for r in plan.rules if r.action == "Seal"]
    (stamp,) = [r for r in plan.rules if r.action == "Stamp"]
    now, log = plan.slots["now"][0], plan.slots["log"][0]
    assert seal.gate_only == {"now"} and stamp.gate_only == frozenset()
    client = plan.slots["client"][0]
    assert seal.bindings[0].key_slots == [client, log] and stamp.bindings[0].key_slots == [client, now, log]
    assert all(now in b.gate_slots for b in (seal.bindings[0], stamp.bindings[0]))
    result = explore(machine, ExploreOptions(stop_at_first=False))
    cov = result.stats.coverage
    assert cov["Seal"].generated > 0 and cov["Stamp"].generated > 0
    # the gate closes on the clock (now = 2) where the outcomes' key alone would say Seal fires
    logs = plan.tables["log"].values
    at = {k[:2]: ok for k, ok in seal.bindings[0].gate_memo.items() if logs[k[2]]}  # (client, now), a log
    assert at[(machine.records, 2)] is False and at[(machine.records, 1)] is True
    unmemoised = explore(GateOnlyStore(max_ticks=2, memoize=False), ExploreOptions(stop_at_first=False))
    assert (result.stats.distinct, result.stats.generated) == (unmemoised.stats.distinct, unmemoised.stats.generated)
    assert cov["Seal"].generated == unmemoised.stats.coverage["Seal"].generated


def test_the_documented_example_behaves_as_documented():
    m = Store()
    assert m.actions == {"Send": ("c",), "Append": ("client", "seq", "dup"), "LoseRequest": ("client", "seq"),
                         "Tick": ("now",)}
    assert Store.property_docs() == {"NoDuplicates": "no request is appended twice", "LogGrows": "the log only grows"}
    assert m.format_step(("Append", 0, 1, False)) == "Append(client=0, seq=1, dup=False)"
    result = explore(m, ExploreOptions(check_deadlock=False))
    assert result.verdict == "holds"
    # with a retransmission the same request is appended twice
    dup = explore(Store(max_copies=1), ExploreOptions(check_deadlock=False))
    assert dup.verdict == "violated" and dup.violations[0].property == "NoDuplicates"
    assert [t.step[0] for t in dup.violations[0].trace[1:]] == ["Send", "Retransmit", "Append", "Append"]
    assert compare_memo(lambda memo: Store(max_copies=1, max_ticks=2, memoize=memo)).complete


def test_fields_view_and_state_agree():
    m = Store()
    s = m.state(client=(1, 0), log=(Req(0, 0),), requests=(Req(1, 0),))
    v = m.view(s)
    assert (v.client, v.log, v.requests, v.lost, v.now) == ((1, 0), (Req(0, 0),), (Req(1, 0),), 0, 0)
    assert m.fields(s) == {"client[0]": 1, "client[1]": 0, "log": [{"client": 0, "seq": 0}],
                           "requests": [{"client": 1, "seq": 0}], "faults.lost": 0, "faults.copies": 0, "now": 0}


class StoreWithFreshAppends(Store):
    """Store with a transition property that only duplicate appends can fail (``when=``)."""

    calls: list[tuple] = []  # noqa: RUF012 (the steps the property was evaluated on, per test)

    @transition("AppendsAreFresh", reads=("log",), actions=("Append",), when=lambda step: step[-1] is True)
    def appends_are_fresh(self, step: tuple, before: Any, after: Any) -> bool:
        """no request is appended again"""
        StoreWithFreshAppends.calls.append(step)
        return after.log[-1] not in before.log


def test_transition_when_skips_the_steps_it_refuses():
    StoreWithFreshAppends.calls = []
    clean = explore(StoreWithFreshAppends(), ExploreOptions(check_deadlock=False))
    # Append steps happen, but none is a duplicate: the property is never evaluated
    assert clean.verdict == "holds" and StoreWithFreshAppends.calls == []
    dup = explore(StoreWithFreshAppends(max_copies=1), ExploreOptions(check_deadlock=False, stop_at_first=False))
    assert {v.property for v in dup.violations} == {"NoDuplicates", "AppendsAreFresh"}
    assert StoreWithFreshAppends.calls and all(step[0] == "Append" and step[-1] is True
                                               for step in StoreWithFreshAppends.calls)


class StoreWithGrowingLog(Store):
    """Store with a stuttering transition property: steps that leave the log alone pass unasked."""

    calls: list[tuple] = []  # noqa: RUF012 (the steps the property was evaluated on, per test)

    @transition("LogOnlyGrows", reads=("log",), stuttering=True)
    def log_only_grows(self, step: tuple, before: Any, after: Any) -> bool:
        """the log is only appended to"""
        StoreWithGrowingLog.calls.append(step)
        return after.log[:len(before.log)] == before.log


def test_a_stuttering_transition_is_asked_only_on_steps_that_change_its_reads():
    StoreWithGrowingLog.calls = []
    m = StoreWithGrowingLog()
    stutters = [(s, step, t) for s in reachable(m) for step, t in m.successors(s) if m.view(s).log == m.view(t).log]
    assert stutters  # Send, Tick and losses leave the log alone
    check = m.properties()["LogOnlyGrows"].check
    assert all(check(s, step, t) for s, step, t in stutters) and StoreWithGrowingLog.calls == []
    StoreWithGrowingLog.calls = []
    result = explore(StoreWithGrowingLog(), ExploreOptions(check_deadlock=False))
    assert result.verdict == "holds" and StoreWithGrowingLog.calls
    assert {step[0] for step in StoreWithGrowingLog.calls} == {"Append"}


def _duplicates(log: tuple[Req, ...]) -> int:
    return len(log) - len(set(log))


class StoreCountingDuplicates(Store):
    """Store with a property that can fail only where a projection of what it reads moves
    (``stuttering=(terms)``): the log changes on every Append, its number of duplicates only on a
    duplicate one."""

    log = Part(init=(), projections={"dups": _duplicates})
    calls: list[tuple] = []  # noqa: RUF012 (the steps the property was evaluated on, per test)

    @transition("NoNewDuplicate", reads=("log",), actions=("Append",), stuttering=("log:dups",))
    def no_new_duplicate(self, step: tuple, before: Any, after: Any) -> bool:
        """no append repeats a request already in the log"""
        StoreCountingDuplicates.calls.append(step)
        return _duplicates(after.log) == _duplicates(before.log)


def test_a_transition_stuttering_on_a_projection_is_asked_only_where_the_projection_moves():
    StoreCountingDuplicates.calls = []
    m = StoreCountingDuplicates()
    appends = [(s, step, t) for s in reachable(m) for step, t in m.successors(s) if step[0] == "Append"]
    # every Append changes the log (what the property reads), none its duplicates: nothing is asked
    assert appends and all(m.view(s).log != m.view(t).log for s, _, t in appends)
    check = m.properties()["NoNewDuplicate"].check
    assert all(check(s, step, t) for s, step, t in appends) and StoreCountingDuplicates.calls == []
    clean = explore(StoreCountingDuplicates(), ExploreOptions(check_deadlock=False))
    assert clean.verdict == "holds" and StoreCountingDuplicates.calls == []
    # with a retransmission the second Append of one request moves the projection: asked, and it fails
    dup = explore(StoreCountingDuplicates(max_copies=1), ExploreOptions(check_deadlock=False, stop_at_first=False))
    assert {v.property for v in dup.violations} == {"NoDuplicates", "NoNewDuplicate"}
    assert StoreCountingDuplicates.calls and all(step[0] == "Append" and step[-1] is True
                                                 for step in StoreCountingDuplicates.calls)
    # the same verdicts and counts as the property without the shortcut
    plain = explore(StoreWithoutStuttering(max_copies=1), ExploreOptions(check_deadlock=False, stop_at_first=False))
    assert ({v.property for v in plain.violations}, plain.stats.distinct, plain.stats.generated) == \
        ({v.property for v in dup.violations}, dup.stats.distinct, dup.stats.generated)
    assert [t.step for t in plain.violations[-1].trace] == [t.step for t in dup.violations[-1].trace]


class StoreWithoutStuttering(Store):
    """StoreCountingDuplicates's property asked on every Append."""

    @transition("NoNewDuplicate", reads=("log",), actions=("Append",))
    def no_new_duplicate(self, step: tuple, before: Any, after: Any) -> bool:
        """no append repeats a request already in the log"""
        return _duplicates(after.log) == _duplicates(before.log)


def test_clock_ticks_only_when_allowed_and_up_to_its_max():
    m = Store(max_ticks=2, max_lost=0)
    nows = {m.view(s).now for s in reachable(m)}
    assert nows == {0, 1, 2}
    for s in reachable(m):
        for step, t in m.successors(s):
            if step[0] == "Tick":
                assert not m.view(s).requests and step == ("Tick", m.view(s).now + 1)


class StoreTickingWhileQuiet(Store):
    """The clock reads a projection of a part: ticks wait while some client has sent a record."""

    client = Actors(count="clients", init=0, interned=False, projections={"started": lambda sent: sent > 0})
    now = Clock(max="max_ticks", tick="Tick", reads=("client:started",),
                when=lambda m, client: not any(client))


def test_a_clock_may_read_a_projection_under_its_part_name():
    m = StoreTickingWhileQuiet(max_ticks=2, max_lost=0)
    ticks = [(s, step) for s in reachable(m) for step, _ in m.successors(s) if step[0] == "Tick"]
    assert ticks and all(not any(m.view(s).client) for s, _ in ticks)
    # a client that sent stops the clock, which Store's own reading of the requests alone would not
    assert any(any(m.view(s).client) and not m.view(s).requests and m.view(s).now < 2 for s in reachable(m))


# ---------------------------------------------------------------- declaration errors

def test_declaration_errors_name_the_rule_and_the_problem():
    class UnknownPart(Composed):
        a = Part()

        @rule("R", reads=("b",))
        def r(self) -> None: ...

    with pytest.raises(ComposeError, match=r"rule R .*no part named 'b'"):
        UnknownPart()

    class UnknownArgument(Composed):
        a = Part()

        @rule("R", reads=("a",))
        def r(self, a: Any, b: Any) -> None: ...

    with pytest.raises(ComposeError, match="takes b, which it does not declare"):
        UnknownArgument()

    class Undeclared(Composed):
        a = Part()

        @rule("R", reads=("a",))
        def r(self, a: Any) -> dict[str, Any]:
            return {"a": a}

    m = Undeclared()
    with pytest.raises(ComposeError, match="returned a, which it does not declare"):
        m.successors(next(iter(m.init_states())))

    class MissingSize(Composed):
        a = Actors(count="n")

    with pytest.raises(ComposeError, match="no configuration entry 'n'"):
        MissingSize()

    class NotIndexable(Composed):
        a = Part()

        @rule("R", params={"i": 2}, reads=("a[i]",))
        def r(self) -> None: ...

    with pytest.raises(ComposeError, match="not an Actors part"):
        NotIndexable()

    class ScalarGetsTuple(Composed):
        a = Actors(count=1, interned=False)

        @rule("R", writes=("a[i]",), params={"i": 1})
        def r(self) -> dict[str, Any]:
            return {"a": (1, 2)}

    m2 = ScalarGetsTuple()
    with pytest.raises(ComposeError, match="not an int or bool"):
        m2.successors(next(iter(m2.init_states())))


def test_composed_machines_use_hash_fingerprints_and_refuse_inline_ints_outside_its_domain():
    """``hash`` is the default kind: every slot is an id, a clock, a budget or an inline int that
    encoding checks; -2 (which hashes like -1) and ints beyond 2**61-1 are refused in one line, and a
    machine that sets ``fingerprint_kind = "encoded"`` may hold them."""

    class Sentinel(Composed):
        x = Actors(count=1, interned=False, init=-1)

        @rule("Down", params={"i": 1}, reads=("x[i]",), writes=("x[i]",))
        def down(self, x: int) -> dict[str, int] | None:
            return {"x": x - 1} if x > -3 else None

    class Huge(Composed):
        x = Actors(count=1, interned=False, init=0)

        @rule("Jump", params={"i": 1}, reads=("x[i]",), writes=("x[i]",))
        def jump(self, x: int) -> dict[str, int] | None:
            return {"x": 1 << 61} if x == 0 else None

    class EncodedSentinel(Sentinel):
        fingerprint_kind = "encoded"

    assert Composed.fingerprint_kind == "hash" and ComposedTwoPhase(3).fingerprint_kind == "hash"
    for machine in (Sentinel(), Huge()):
        with pytest.raises(ComposeError, match=r"outside the ints 'hash' fingerprints tell apart.*fingerprint_kind = 'encoded'"):
            explore(machine, ExploreOptions(stop_at_first=False))
    assert explore(EncodedSentinel(), ExploreOptions(stop_at_first=False)).stats.distinct == 3  # -1, -2, -3


def test_hash_and_encoded_fingerprints_find_the_same_states():
    class EncodedTwoPhase(ComposedTwoPhase):
        fingerprint_kind = "encoded"

    runs = [explore(m, ExploreOptions(stop_at_first=False)).stats for m in (ComposedTwoPhase(4), EncodedTwoPhase(4))]
    assert (runs[0].distinct, runs[0].generated) == (runs[1].distinct, runs[1].generated) == (1568, 8258)


def test_subclasses_inherit_and_override_rules():
    class Base(Composed):
        x = Actors(count=2, interned=False)

        @rule("Inc", params={"i": "x"}, reads=("x[i]",), writes=("x[i]",))
        def inc(self, x: int) -> dict[str, int] | None:
            return {"x": x + 1} if x < 2 else None

    class Capped(Base):
        @rule("Inc", params={"i": "x"}, reads=("x[i]",), writes=("x[i]",))
        def inc(self, x: int) -> dict[str, int] | None:
            return {"x": x + 1} if x < 1 else None

    assert len(reachable(Base())) == 9
    assert len(reachable(Capped())) == 4
    assert Capped().actions == {"Inc": ("i",)}


def test_a_rule_returning_a_list_is_a_choice_and_results_label_the_step():
    class Choice(Composed):
        x = Part(init=0)
        budget = Budget("b")

        @rule("Set", reads=("x",), writes=("x",), results=("to",), spends="budget")
        def set_(self, x: int) -> list[dict[str, int]]:
            return [{"x": v, "to": v} for v in (1, 2) if v != x]

    m = Choice({"b": 2})
    s0 = next(iter(m.init_states()))
    assert [(st, m.view(t).x, m.view(t).budget) for st, t in m.successors(s0)] == [(("Set", 1), 1, 1),
                                                                                  (("Set", 2), 2, 1)]
    assert len(reachable(m)) == 1 + 2 + 2  # x in {1, 2} after each of two spends
    assert Choice({"b": 0}).actions == {}


def test_aliases_read_and_write_two_actors_of_one_kind():
    class Transfer(Composed):
        account = Actors(count=2, init=lambda m, i: 2 if i == 0 else 0, interned=False)

        @rule("Move", params={"a": "account", "b": "account"}, reads=("src=account[a]", "dst=account[b]"),
              writes=("src=account[a]", "dst=account[b]"))
        def move(self, a: int, b: int, src: int, dst: int) -> dict[str, int] | None:
            return {"src": src - 1, "dst": dst + 1} if a != b and src > 0 else None

        @invariant("Conserved", reads=("account",))
        def conserved(self, account: tuple[int, ...]) -> bool:
            """money is neither made nor lost"""
            return sum(account) == 2

        @invariant("NonNegative", params={"i": "account"}, reads=("account[i]",))
        def non_negative(self, i: int, account: int) -> bool:
            """no account is overdrawn"""
            calls.append((i, account))
            return account >= 0

    calls: list[tuple[int, int]] = []
    m = Transfer()
    assert sorted(m.view(s).account for s in reachable(m)) == [(0, 2), (1, 1), (2, 0)]
    assert explore(m, ExploreOptions(check_deadlock=False)).verdict == "holds"
    # memoised per account on that account alone: each (account, balance) checked once
    assert sorted(calls) == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]


def test_zero_actors_give_a_rule_no_bindings():
    class Maybe(Composed):
        follower = Actors(count="followers", init=0, interned=False)
        leader = Part(init=0)

        @rule("Replicate", params={"f": "follower"}, reads=("follower[f]", "leader"), writes=("follower[f]",))
        def replicate(self, follower: int, leader: int) -> dict[str, int] | None:
            return {"follower": leader} if follower != leader else None

        @rule("Bump", reads=("leader", "follower"), writes=("leader",))
        def bump(self, leader: int, follower: tuple[int, ...]) -> dict[str, int] | None:
            return {"leader": leader + 1} if leader < 2 and all(f == leader for f in follower) else None

    assert len(reachable(Maybe({"followers": 0}))) == 3
    assert len(reachable(Maybe({"followers": 2}))) == 3 + 2 * 3  # per bump: nobody, one or both caught up


def test_a_part_value_that_would_hash_differently_in_another_process_is_refused():
    from eoscheck.checker.compose import ORDERED
    from eoscheck.checker.fingerprint import UnstableStateError

    class Named(Composed):
        log = Part(init=())
        net = Channel(network=ORDERED)

        @rule("Append", reads=("log",), writes=("log",))
        def append(self, log: tuple) -> dict[str, Any] | None:
            return {"log": log + ("text",)} if not log else None

        @rule("Send", sends=("net",))
        def send(self) -> dict[str, Any]:
            return {"net": (1, None)}

    m = Named()
    s0 = next(iter(m.init_states()))
    with pytest.raises(UnstableStateError, match="log.0 is a str"):
        m._plan.rules[0].expand(s0, [])
    with pytest.raises(UnstableStateError, match="net.0.1 is a NoneType"):
        m._plan.rules[1].expand(s0, [])


def test_a_state_pickled_raw_into_a_fresh_process_fails_with_one_clear_error(tmp_path):
    machine = ComposedAbp(3, Delivery.UNORDERED, 1, 1)
    states = reachable(machine)[-5:]
    path = tmp_path / "raw.pickle"
    path.write_bytes(pickle.dumps(states))  # not through export_states: the parts stay behind
    child = ("import pickle, sys\n"
             "from eoscheck.examples.abp import ComposedAbp\n"
             "from eoscheck.checker.compose import Delivery, ComposeError\n"
             "m = ComposedAbp(3, Delivery.UNORDERED, 1, 1)\n"
             "try:\n"
             "    [m.successors(s) for s in pickle.load(open(sys.argv[1], 'rb'))]\n"
             "except ComposeError as e:\n"
             "    print(e)\n")
    out = subprocess.run([sys.executable, "-c", child, str(path)], capture_output=True, text=True, check=True)
    assert "never interned" in out.stdout and "export_states" in out.stdout

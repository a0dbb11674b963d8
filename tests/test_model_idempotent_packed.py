"""``kafka.idempotent_produce`` keeps flat states of interned parts and memoises its part rules
(model/machines/idempotent_packed.py, checker/intern.py). These tests hold that optimisation to the
behaviour it replaces: the memoised machine steps exactly like an unmemoised one (so no cache key
misses an input of its rule), a flat state reads, hashes and pickles like its readable
``IdempotentState``, fingerprints do not depend on the process, and the machine survives the
trips the engines give it (cleared caches, cloudpickle to a Spark executor)."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from collections import deque
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

import pytest
from eoscheck.checker.intern import ID_MODULUS, InternCollision, Interner
from eoscheck.model import properties as props
from eoscheck.model.machines.idempotent_packed import PackedIdempotentState, pack
from eoscheck.model.machines.idempotent_produce import IdempotentProduceMachine
from eoscheck.model.registry import IDEMPOTENT_PRODUCE_MACHINE as IDEMPOTENT_PRODUCE
from eoscheck.model.state import IdempotentState

VARIANTS: list[str] = list(IDEMPOTENT_PRODUCE.variants)

# Three shapes, each a complete state space of 7k-20k states per variant that reaches every fault
# its bounds allow: one client with two records (retries, resets, a failover to the in-sync
# follower), two clients (keys must tell the clients apart; a failover to a restarted replica), and
# two failovers (a NOT_LEADER_OR_FOLLOWER response read under either later leader). A tick of
# delivery/expiry timeout keeps ExpireBatch and ExpireProducerIds reachable at max_ticks=1.
CONFIGS: dict[str, dict[str, int]] = {
    "one-client": dict(clients=1, records=2, max_ticks=1, producer_id_expiration=1, delivery_timeout=1,
                       lost_responses=1, transient_errors=1, delete_records=1, leader_failovers=1,
                       restarted_replica_failovers=0),
    "two-clients": dict(clients=2, records=1, max_ticks=1, producer_id_expiration=1, delivery_timeout=1,
                        lost_responses=1, transient_errors=0, delete_records=1, leader_failovers=0,
                        restarted_replica_failovers=1),
    "two-failovers": dict(clients=1, records=2, max_ticks=1, producer_id_expiration=1, delivery_timeout=1,
                          lost_responses=1, transient_errors=1, delete_records=0, leader_failovers=2,
                          restarted_replica_failovers=0),
}
STATE_CAP = 20_000


def required_steps(config: str) -> set[str]:
    """Steps a comparison run must reach, or its bounds no longer exercise what they are for."""
    b = CONFIGS[config]
    steps = {"Send", "Drain", "HandleProduce", "HandleProduceResponse", "RequestTimeout", "ExpireBatch",
             "ExpireProducerIds", "Tick"}
    if b["lost_responses"]:
        steps.add("LoseResponse")
    if b["delete_records"]:
        steps |= {"DeleteRecords", "PropagateLogStartOffset"}
    if b["leader_failovers"] or b["restarted_replica_failovers"]:
        steps.add("LeaderFailover")
    return steps


# The invariants as written over the readable state (the machine memoises and splits them).
READABLE_INVARIANTS: dict[str, Callable[[IdempotentState], bool]] = {
    "NoDuplicates": props.no_duplicates,
    "SendOrderNoLoss": props.send_order_no_loss,
    "FencedEpochNeverWrites": props.fenced_epoch_never_writes,
}


def settings(variant: str, config: str) -> tuple[dict[str, Any], dict[str, int]]:
    """(switches, bounds) of ``variant`` with the bounds of ``config`` over the defaults."""
    switches = {k: v.default for k, v in IDEMPOTENT_PRODUCE.switches.items()}
    switches.update(IDEMPOTENT_PRODUCE.variants[variant].switches)
    bounds = {k: v.default for k, v in IDEMPOTENT_PRODUCE.bounds.items()}
    bounds.update(CONFIGS[config])
    return switches, bounds


def machine(variant: str = "kafka-shipped", config: str = "two-clients", memoize: bool = True
            ) -> IdempotentProduceMachine:
    switches, bounds = settings(variant, config)
    if memoize:  # the registry's build is what the engine runs
        m = IDEMPOTENT_PRODUCE.build(switches, bounds)
        assert isinstance(m, IdempotentProduceMachine) and m.memoize
        return m
    return IdempotentProduceMachine(switches, bounds, memoize=False)


def bfs(m: IdempotentProduceMachine, cap: int,
        successors: Callable[[PackedIdempotentState], list[tuple[tuple, PackedIdempotentState]]] | None = None
        ) -> Iterator[PackedIdempotentState]:
    """Reachable states in BFS order (deterministic: the successor order decides), at most ``cap``;
    ``within_bounds`` as the engine applies it. ``successors`` replaces ``m.successors`` (to check
    each state's successors as it is expanded)."""
    expand = successors or (lambda s: list(m.successors(s)))
    seen: set[PackedIdempotentState] = set()
    queue: deque[PackedIdempotentState] = deque()
    for s in m.init_states():
        if s not in seen and m.within_bounds(s):
            seen.add(s)
            queue.append(s)
    while queue:
        s = queue.popleft()
        yield s
        for _, t in expand(s):
            if len(seen) < cap and t not in seen and m.within_bounds(t):
                seen.add(t)
                queue.append(t)


@cache
def reached(variant: str, config: str, cap: int = STATE_CAP) -> tuple[PackedIdempotentState, ...]:
    """The states a fresh memoised machine reaches (shared by the tests that only read states)."""
    return tuple(bfs(machine(variant, config), cap))


def invariants(m: IdempotentProduceMachine) -> dict[str, Callable[[Any], bool]]:
    return {name: p.check for name, p in m.properties().items() if p.kind == "invariant"}


def memo_dicts(m: IdempotentProduceMachine) -> dict[str, dict]:
    """The machine's part-rule caches: its private dict attributes other than the properties."""
    return {k: v for k, v in vars(m).items() if k.startswith("_") and k != "_props" and isinstance(v, dict)}


# --- 1. memoised and unmemoised machines agree -------------------------------------------------------


@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("variant", VARIANTS)
def test_memoised_successors_and_invariants_equal_unmemoised(variant: str, config: str) -> None:
    """A cache key that misses an input of its part rule returns another state's answer: the
    memoised machine then differs from the one that recomputes every rule, on some reached state.
    The comparison runs while the BFS fills the caches, so later states hit entries of earlier ones."""
    memo = machine(variant, config)
    plain = machine(variant, config, memoize=False)
    memo_inv, plain_inv = invariants(memo), invariants(plain)
    assert memo_inv.keys() == plain_inv.keys() and memo_inv
    steps_seen: set[str] = set()

    def checked(s: PackedIdempotentState) -> list[tuple[tuple, PackedIdempotentState]]:
        got = list(memo.successors(s))
        want = list(plain.successors(s))
        assert got == want, f"{variant}/{config}: successors differ from {s!r}"
        for name, check in memo_inv.items():  # violated in some states of most variants
            assert check(s) == plain_inv[name](s), f"{variant}/{config}: {name} differs on {s!r}"
        steps_seen.update(step[0] for step, _ in got)
        return got

    count = sum(1 for _ in bfs(memo, STATE_CAP, checked))
    assert count > 5000  # the bounds still make a state space worth comparing
    # the unmemoised machine really recomputes (else both could share one wrong answer)
    assert not memo_dicts(plain)["_client_moves"] and not any(plain._invariant_caches)
    assert memo_dicts(memo)["_client_moves"]
    missing = required_steps(config) - steps_seen
    assert not missing, f"{variant}/{config} no longer reaches {sorted(missing)}"


# --- 2. the flat state is the readable state ------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_packed_state_reads_hashes_and_pickles_as_its_unpacked_form(variant: str) -> None:
    m = machine(variant)
    inv = invariants(m)
    assert inv.keys() == READABLE_INVARIANTS.keys()  # a new invariant needs its readable form here
    states = reached(variant, "two-clients", 6000)
    for s in states:
        assert type(s) is PackedIdempotentState
        u = s.unpack()
        assert type(u) is IdempotentState
        again = pack(u)
        assert type(again) is PackedIdempotentState and again == s and hash(again) == hash(s)
        loaded = pickle.loads(pickle.dumps(s))
        assert type(loaded) is PackedIdempotentState and loaded == s and hash(loaded) == hash(s)
        # the names properties, traces and tests read
        assert s.now == u.now and s.next_producer_id == u.next_producer_id and s.leader_epoch == u.leader_epoch
        assert s.partition == u.partition and s.partition.log == u.partition.log
        assert s.clients == u.clients and s.clients[0] == u.clients[0] and s.clients[-1] == u.clients[-1]
        assert s.faults == u.faults and s.faults.lost_responses == u.faults.lost_responses
        assert s.requests == u.requests and s.responses == u.responses and s.follower == u.follower
        for name, readable in READABLE_INVARIANTS.items():
            assert inv[name](s) == readable(u), f"{variant}: {name} differs from its readable form on {u!r}"
    # traces render either form alike (spot check: fields() builds strings, so not every state)
    for s in states[::50]:
        assert m.fields(s) == m.fields(s.unpack())


# --- 3. fingerprints do not depend on the process ------------------------------------------------------

FINGERPRINT_STATES = 2000

# Loads this file as a module in a fresh interpreter (empty intern tables, another hash seed), reports
# the hashes of its own BFS, of the states it unpickles from stdin, and of their successors.
CHILD = r"""
import importlib.util, json, pickle, sys
spec = importlib.util.spec_from_file_location("packed_child", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
exported, pickled = pickle.loads(sys.stdin.buffer.read())
m = mod.machine("kafka-shipped", "two-clients")
imported = m.import_states(pickle.loads(exported))  # first, while the tables lack their parts
shipped = pickle.loads(pickled)
print(json.dumps({
    "imported": [hash(s) for s in imported],
    "imported_types": sorted({type(s).__name__ for s in imported}),
    "imported_equal": [a == b for a, b in zip(imported, shipped)],
    "own": mod.state_hashes(),
    "shipped": [hash(s) for s in shipped],
    "shipped_types": sorted({type(s).__name__ for s in shipped}),
    "successors": [[hash(t) for _, t in m.successors(s)] for s in shipped],
    "probe": hash("eoscheck-probe"),
}))
"""


def state_hashes() -> list[int]:
    """Sorted hashes of the first ``FINGERPRINT_STATES`` states of a fixed BFS."""
    return sorted(hash(s) for s in bfs(machine("kafka-shipped", "one-client"), FINGERPRINT_STATES))


def test_fingerprints_and_pickled_states_agree_across_processes() -> None:
    """Part ids are content hashes, not counters: a fresh process with another hash seed gives the
    same state hashes, and reads states pickled here with its own (empty) tables."""
    seed = "456" if os.environ.get("PYTHONHASHSEED") == "123" else "123"
    ours = state_hashes()
    assert len(ours) == FINGERPRINT_STATES
    shipped = list(reached("kafka-shipped", "two-clients", 6000)[::20])
    m = machine("kafka-shipped", "two-clients")
    batch = pickle.dumps(m.export_states(shipped))
    proc = subprocess.run([sys.executable, "-c", CHILD, __file__], input=pickle.dumps((batch, pickle.dumps(shipped))),
                          capture_output=True, env={**os.environ, "PYTHONHASHSEED": seed}, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    child = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    assert child["probe"] != hash("eoscheck-probe")  # the child really hashes str differently
    assert child["own"] == ours
    assert child["shipped"] == [hash(s) for s in shipped]
    assert child["shipped_types"] == ["PackedIdempotentState"]
    assert child["successors"] == [[hash(t) for _, t in m.successors(s)] for s in shipped]
    # the parallel engine's transfer form: each part once per batch, interned on arrival
    assert child["imported"] == [hash(s) for s in shipped] and all(child["imported_equal"])
    assert child["imported_types"] == ["PackedIdempotentState"]


def test_a_transferred_batch_sends_each_part_once_and_refuses_a_mismatched_part() -> None:
    m = machine("kafka-shipped", "two-clients")
    states = list(reached("kafka-shipped", "two-clients", 3000))
    flat, parts = m.export_states(states)
    assert sum(len(p) for p in parts) < len(states)  # parts recur across states
    assert m.import_states((flat, parts)) == states
    # a part whose id is another part's content hash, as a corrupt or colliding batch would carry
    (ident, value), (other_ident, _) = list(parts[0].items())[:2]
    with pytest.raises(InternCollision):
        m.import_states((flat, [{other_ident: value}] + parts[1:]))
    fresh = value._replace(log_start_offset=value.log_start_offset + 10_000)
    with pytest.raises(InternCollision):
        m.import_states((flat, [{ident + 1: fresh}] + parts[1:]))


# --- 4. the interner ------------------------------------------------------------------------------


def test_interner_gives_equal_values_one_id_and_keeps_the_first() -> None:
    table: Interner[tuple[int, ...]] = Interner("test")
    # built at run time: two tuple literals would be folded into one constant (first is second)
    first = tuple([1, (2, 3), True])  # noqa: C409
    second = tuple([1, (2, 3), True])  # noqa: C409
    assert first is not second
    ident = table.intern(first)
    # the id is the content hash reduced into hash()'s injective range (and below 2**60: two
    # 30-bit digits): the same in every process
    assert ident == hash(first) % ID_MODULUS and 0 <= ident < 1 << 60
    assert table.intern(second) == ident
    assert table[ident] is first and table.values[ident] is first
    assert len(table) == 1
    other = table.intern((1, (2, 4), True))
    assert other != ident and len(table) == 2


def test_interner_refuses_two_values_with_one_hash() -> None:
    # CPython: hash(-1) == hash(-2), so the two tuples collide although they differ
    a, b = (-1, 5), (-2, 5)
    assert a != b and hash(a) == hash(b)
    table: Interner[tuple[int, int]] = Interner("test")
    ident = table.intern(a)
    with pytest.raises(InternCollision):
        table.intern(b)
    assert table[ident] == a and len(table) == 1  # the first value stays
    assert table.intern((-1, 5)) == ident


# --- 5. clearing the caches ---------------------------------------------------------------------


def test_cleared_caches_give_the_same_successors() -> None:
    m = machine("kafka-shipped", "one-client")
    plain = machine("kafka-shipped", "one-client", memoize=False)
    inv = invariants(m)
    states = list(bfs(m, 3000))
    before = [list(m.successors(s)) for s in states]
    verdicts = [{name: check(s) for name, check in inv.items()} for s in states]
    assert m._client_moves and m._produce
    m.clear_caches()
    assert not any(memo_dicts(m).values()), "clear_caches left entries"
    assert not any(m._invariant_caches)
    after = [list(m.successors(s)) for s in reversed(states)][::-1]  # refilled in another order
    assert after == before
    assert after == [list(plain.successors(s)) for s in states]
    assert verdicts == [{name: check(s) for name, check in inv.items()} for s in states]


# --- 6. shipping the machine ----------------------------------------------------------------------


def test_machine_ships_without_its_caches() -> None:
    """The Spark engine broadcasts the machine with cloudpickle (checker/explore/spark.py). The
    part-rule caches hold ids the receiving process has not interned, so they must arrive empty;
    the sender's own caches stay."""
    from pyspark import cloudpickle

    m = machine("kafka-shipped", "two-clients")
    states = list(bfs(m, 1000))
    inv = invariants(m)
    for s in states:
        for check in inv.values():
            check(s)
    warm = {k: len(v) for k, v in memo_dicts(m).items()}
    assert warm["_client_moves"] and warm["_produce"]

    shipped = m.__getstate__()
    assert shipped["_client_moves"] == {} and shipped["_produce"] == {}
    assert {k: len(v) for k, v in memo_dicts(m).items()} == warm  # __getstate__ copies, not clears

    loaded = cloudpickle.loads(cloudpickle.dumps(m))
    assert type(loaded) is IdempotentProduceMachine and loaded.memoize
    assert type(loaded._client_moves) is dict and loaded._client_moves == {}
    assert type(loaded._produce) is dict and loaded._produce == {}
    assert not any(memo_dicts(loaded).values())
    init = list(m.init_states())
    assert list(loaded.init_states()) == init
    assert [list(loaded.successors(s)) for s in init] == [list(m.successors(s)) for s in init]
    assert [list(loaded.successors(s)) for s in states] == [list(m.successors(s)) for s in states]
    loaded_inv = invariants(loaded)
    assert all(loaded_inv[n](s) == c(s) for s in states for n, c in inv.items())
    assert loaded._client_moves  # and it fills caches of its own

    # an unmemoised machine stays unmemoised once shipped
    plain = cloudpickle.loads(cloudpickle.dumps(machine("kafka-shipped", "two-clients", memoize=False)))
    assert not plain.memoize
    assert [list(plain.successors(s)) for s in init] == [list(m.successors(s)) for s in init]
    assert not plain._client_moves

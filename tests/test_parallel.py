"""The parallel engine must agree with the single-process BFS: counts, verdicts, trace lengths."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import pytest
from eoscheck.checker.explore import ExploreOptions, explore, parallel
from eoscheck.checker.explore.parallel import WorkerError
from eoscheck.checker.machine import Machine, Property
from eoscheck.checker.trace import trace_is_valid
from eoscheck.examples.diehard import DieHard
from eoscheck.examples.tcommit import TCommit
from eoscheck.examples.toys import Counter, Grid
from eoscheck.examples.twophase import SymmetricTwoPhase, TwoPhase

NONE = ()




def run_both(machine: Machine, options: ExploreOptions, workers: int = 2):
    bfs = explore(machine, replace(options, strategy="bfs"))
    par = explore(machine, replace(options, strategy="parallel", workers=workers))
    assert par.strategy == "parallel"
    return bfs, par


def assert_same_run(bfs, par) -> None:
    assert par.verdict == bfs.verdict
    assert par.limit_hit == bfs.limit_hit
    assert [(v.property, v.kind, v.length) for v in par.violations] == \
        [(v.property, v.kind, v.length) for v in bfs.violations]
    if bfs.verdict != "violated":  # a stop mid-level counts differently; complete runs may not
        assert (par.stats.distinct, par.stats.generated, par.stats.depth, par.stats.queue) == \
            (bfs.stats.distinct, bfs.stats.generated, bfs.stats.depth, bfs.stats.queue)
        assert {a: (c.generated, c.outside) for a, c in par.stats.coverage.items()} == \
            {a: (c.generated, c.outside) for a, c in bfs.stats.coverage.items()}
        assert sum(c.distinct for c in par.stats.coverage.values()) == \
            sum(c.distinct for c in bfs.stats.coverage.values())
        if par.limit_hit is None:  # the same fingerprints: the workers' sorted runs, merged
            assert par.stats.observed_collision == bfs.stats.observed_collision


@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize("machine, options", [
    (TwoPhase(3), ExploreOptions()), (TwoPhase(5), ExploreOptions()), (TCommit(3), ExploreOptions()),
    (DieHard(2, 4, 3), ExploreOptions()), (SymmetricTwoPhase(5), ExploreOptions()),
    (Grid(5, symmetric=True), ExploreOptions(properties=NONE)),
], ids=["twophase3", "twophase5", "tcommit3", "diehard-holds", "twophase5-sym", "grid-sym"])
def test_complete_runs_match_bfs(machine, options, workers):
    bfs, par = run_both(machine, options, workers)
    assert bfs.verdict == "holds"
    assert_same_run(bfs, par)


def test_twophase_counts_match_tlc_with_two_workers():
    result = explore(TwoPhase(5), ExploreOptions(strategy="parallel", workers=2))
    assert (result.stats.distinct, result.stats.generated, result.stats.depth) == (8_832, 58_146, 17)


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_seeded_violation_has_the_same_shortest_length(workers):
    machine = DieHard()
    bfs, par = run_both(machine, ExploreOptions(properties=("NotSolved",)), workers)
    (violation,) = par.violations
    assert violation.length == 7 == bfs.violations[0].length
    assert trace_is_valid(machine, violation.trace)
    assert violation.trace[-1].state[1] == 4
    assert all(t.state[1] != 4 for t in violation.trace[:-1])


@pytest.mark.parametrize("machine, options", [
    (Counter(limit=4), ExploreOptions(properties=NONE)),  # deadlock, 5 states
    (Counter(limit=6, wrap=True), ExploreOptions(properties=("NeverDecreases",))),  # transition
    (Counter(limit=6), ExploreOptions(properties=("Below5",))),
    (Grid(6), ExploreOptions()),  # NotCorner at 11 states, many equal-length paths
    (Grid(6, symmetric=True), ExploreOptions()),
], ids=["deadlock", "transition", "invariant", "grid", "grid-sym"])
def test_each_kind_of_violation_matches_bfs(machine, options):
    bfs, par = run_both(machine, options)
    assert par.verdict == "violated"
    assert_same_run(bfs, par)
    for v in par.violations:
        assert trace_is_valid(machine, v.trace)


def test_continue_reports_each_property_with_its_shortest_trace():
    machine = Counter(limit=6, wrap=True)
    bfs, par = run_both(machine, ExploreOptions(stop_at_first=False))
    assert {v.property for v in par.violations} == {"Below3", "Below5", "NeverDecreases"}
    assert_same_run(bfs, par)
    # --continue explores everything, so the counts must match too
    assert (par.stats.distinct, par.stats.generated) == (bfs.stats.distinct, bfs.stats.generated)


def test_violation_in_an_initial_state():
    class BadStart(Counter):
        def init_states(self):
            yield (7,)

    bfs, par = run_both(BadStart(limit=9), ExploreOptions(properties=("Below5",)))
    assert par.violations[0].length == 1
    assert_same_run(bfs, par)


@pytest.mark.parametrize("options", [
    ExploreOptions(max_states=1000),
    ExploreOptions(max_depth=9),
    ExploreOptions(max_depth=17),  # exactly the last level: complete
    ExploreOptions(max_states=8_832),  # exactly the space: complete
])
def test_limits_match_bfs(options):
    bfs, par = run_both(TwoPhase(5), options)
    assert_same_run(bfs, par)


def test_state_constraint_is_respected():
    bfs, par = run_both(Counter(limit=9, terminal=True, bound=4), ExploreOptions(properties=NONE))
    assert par.stats.distinct == 5
    assert_same_run(bfs, par)


def test_time_limit_gives_incomplete():
    par = explore(TwoPhase(7), ExploreOptions(strategy="parallel", max_seconds=0.3))
    assert par.verdict == "incomplete" and par.limit_hit == "time"
    assert 0 < par.stats.distinct < 296_448


def test_a_failing_worker_is_reported_with_its_traceback():
    class Broken(Counter):
        def successors(self, s):
            if s[0] == 3:
                raise RuntimeError("model bug at x=3")
            yield from super().successors(s)

    with pytest.raises(WorkerError, match="model bug at x=3"):
        explore(Broken(limit=6, terminal=True), ExploreOptions(strategy="parallel", properties=NONE))


def test_parent_links_spilled_to_disk_still_rebuild_traces(monkeypatch):
    from eoscheck.checker.explore import parallel

    monkeypatch.setattr(parallel, "PARENT_SPILL_BYTES", 0)  # every level goes to disk
    machine = Grid(8)
    bfs, par = run_both(machine, ExploreOptions())
    assert_same_run(bfs, par)
    assert trace_is_valid(machine, par.violations[0].trace)


def test_kafka_idempotent_produce_matches_bfs():
    from eoscheck.checker.registry import find_model

    machine = find_model("kafka.idempotent_produce").machine(bounds={"clients": 2, "records": 2})
    bfs, par = run_both(machine, ExploreOptions(stop_at_first=False))
    assert_same_run(bfs, par)
    assert par.stats.distinct > 1000


def test_states_that_hash_differently_per_process_are_refused():
    from eoscheck.checker.fingerprint import UnstableStateError

    class Stringly(Counter):
        def successors(self, s):
            yield ("Inc",), (s[0] + 1, "oops")

    with pytest.raises(UnstableStateError, match="str"):
        explore(Stringly(), ExploreOptions(strategy="parallel", properties=NONE))

    class BadInit(Counter):
        def init_states(self):
            yield (0, None)

    with pytest.raises(UnstableStateError, match="NoneType"):
        explore(BadInit(), ExploreOptions(strategy="parallel", properties=NONE))


def test_runs_are_deterministic():
    machine = Grid(7)
    options = ExploreOptions(strategy="parallel", workers=3, stop_at_first=False, properties=NONE)
    first, second = explore(machine, options), explore(machine, options)
    assert first.stats.coverage == second.stats.coverage
    bug = ExploreOptions(strategy="parallel", workers=2)
    traces = [[(t.step, t.state) for t in explore(Grid(7), bug).violations[0].trace] for _ in range(2)]
    assert traces[0] == traces[1]


def test_frontiers_are_rebalanced():
    # Level 2 is generated entirely by the worker holding the single initial state; without
    # moving states the other worker would idle for the whole run.
    result = explore(TwoPhase(5), ExploreOptions(strategy="parallel", workers=2))
    moved = [re.search(r"([\d,]+) states moved between workers", n) for n in result.notes]
    counts = [int(m.group(1).replace(",", "")) for m in moved if m]
    assert counts and counts[0] > 0


def test_cost_weights_favour_the_worker_with_fewer_successors_per_state():
    balance = parallel._Balance(2)
    big = parallel.COST_MIN_STATES
    # worker 0's states have 4 successors each, worker 1's 3: worker 0 gets the smaller share
    cede = balance.expanded([{"states": big, "generated": 4 * big}, {"states": big, "generated": 3 * big}])
    assert cede == [0.0, 0.0]  # no settle seen yet: nothing to steer by
    cap = parallel.COST_SHARE_CAP
    assert balance.weights == pytest.approx([1 - cap, 1 + cap])  # 3/4 of 1 is past the cap
    # the last settle split the level evenly: owner 0 cedes, toward worker 0's smaller share
    balance.settled([[500, 500], [500, 500]], [0, 0])
    cede = balance.expanded([{"states": big, "generated": 4 * big}, {"states": big, "generated": 3 * big}])
    assert cede[0] == pytest.approx(min((0.5 - (1 - cap) / 2) / parallel._CEDE_GAIN, 1.0)) and cede[1] == 0.0
    # measured: 50 of 1,000 states ceded at that fraction gives the gain the next fraction uses
    balance.settled([[450, 500], [500, 550]], [50, 0])
    assert balance.gain[0] == pytest.approx(50 / (cede[0] * 2000)) and balance.natural == [0.5, 0.5]
    # small levels are shared evenly
    assert balance.expanded([{"states": 10, "generated": 40}, {"states": 10, "generated": 30}]) == [0.0, 0.0]
    assert balance.weights == [1.0, 1.0]


@pytest.mark.parametrize("total", [0, 1, 5, 1001, 69706])
@pytest.mark.parametrize("workers", [2, 3])
def test_shares_follow_the_weights_and_even_weights_give_the_even_split(total, workers):
    even = parallel._shares(total, [1.0] * workers)
    assert even == [total // workers + (1 if w < total % workers else 0) for w in range(workers)]
    weights = [0.95] + [1.05] * (workers - 1)
    shares = parallel._shares(total, weights)
    assert sum(shares) == total
    assert all(abs(s - total * w / sum(weights)) < 1 for s, w in zip(shares, weights))
    _, _, moved = parallel._plan_moves([total, 0] + [0] * (workers - 2), weights)
    assert moved == total - shares[0] if total > parallel.MIN_MOVE else moved == 0


@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("machine, options", [
    (SymmetricTwoPhase(5), ExploreOptions()), (Grid(12), ExploreOptions(stop_at_first=False)),
], ids=["twophase5-sym", "grid-continue"])
def test_states_found_by_two_workers_ceded_to_balance_cost_keep_the_bfs_run(monkeypatch, machine, options, workers):
    """Every level steered (no size floor, a tiny gain: an owner cedes all it can): the owner that
    cedes a state found by two generators keeps it out of its own frontier, and the other keeps
    it, so nothing is lost or kept twice, and the traces through ceded states rebuild."""
    monkeypatch.setattr(parallel, "HEAD_FRONTIER", 2)
    monkeypatch.setattr(parallel, "HANDOVER_BLOCK", 1)  # every worker starts with states
    monkeypatch.setattr(parallel, "COST_MIN_STATES", 0)
    monkeypatch.setattr(parallel, "_CEDE_GAIN", 1e-6)
    bfs, par = run_both(machine, options, workers)
    assert_same_run(bfs, par)
    for v in par.violations:
        assert trace_is_valid(machine, v.trace)
    ceded = [re.search(r"([\d,]+) found by two workers kept by", n) for n in par.notes]
    assert next(int(m.group(1).replace(",", "")) for m in ceded if m) > 0



def test_moves_balance_the_frontiers_and_keep_traces_valid(monkeypatch):
    """With no slack every level is split exactly; the states handed over carry their parents'
    references, so a trace through them still rebuilds."""
    from eoscheck.checker.explore import parallel

    monkeypatch.setattr(parallel, "SLACK", 0.0)
    monkeypatch.setattr(parallel, "MIN_MOVE", 0)
    machine = Grid(8)
    bfs, par = run_both(machine, ExploreOptions(), workers=3)
    assert_same_run(bfs, par)
    assert trace_is_valid(machine, par.violations[0].trace)
    gives, takes, moved = parallel._plan_moves([10, 1, 1])
    assert moved == 6 and gives == [[(1, 3), (2, 3)], [], []] and takes == [[], [0], [0]]
    assert parallel._plan_moves([4, 4, 4]) == ([[], [], []], [[], [], []], 0)


def test_an_invariant_found_while_expanding_stops_the_run_like_the_bfs():
    """Invariants of a level are checked as its chunks are expanded (the workers went on to it
    without waiting for the parent): the run still stops with the BFS's verdict and trace length,
    and leaves no worker."""
    import multiprocessing

    bfs, par = run_both(Counter(limit=6), ExploreOptions(properties=("Below5",)))
    assert_same_run(bfs, par)
    assert not multiprocessing.active_children()


def test_a_transition_found_by_a_worker_is_readable_here(tmp_path):
    """A worker's successor may name interned parts the coordinating process never built: the
    trace's last state is re-generated there, so the counterexample can be rendered (it used to end
    in a KeyError when a spec's transition property broke on the parallel engine). A fresh process,
    as a user runs it: in this one, earlier tests have interned the parts already."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    name = "exhausted-epoch-retry-shipped"
    done = subprocess.run([sys.executable, "-m", "eoscheck.checker.cli", "check", str(root / "specs" / f"{name}.toml"),
                           "--engine", "parallel", "--workers", "2", "--no-progress", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    written = json.loads((tmp_path / f"{name}.NoUnexpectedServerError.json").read_text())
    committed = json.loads((root / "counterexamples" / f"{name}.NoUnexpectedServerError.json").read_text())
    assert written["engine"]["strategy"] == "parallel"
    written["engine"]["strategy"] = committed["engine"]["strategy"]
    assert written == committed


# ---- the head: the first levels expanded by the coordinating process before it forks

class Tree(Machine):
    """A binary tree of ``depth`` levels (level d holds 2^d states, each reached once) with two
    invariants, one broken at level 3 and one at level ``deep``: under ``--continue`` the head finds
    the first and the workers the second."""

    actions: Mapping[str, tuple[str, ...]] = {"Left": (), "Right": ()}

    def __init__(self, depth: int = 11, deep: int = 9):
        self.depth, self.deep = depth, deep

    def init_states(self):
        yield (0, 0)

    def successors(self, s):
        d, b = s
        if d < self.depth:
            yield ("Left",), (d + 1, 2 * b)
            yield ("Right",), (d + 1, 2 * b + 1)

    def is_terminal(self, s):
        return s[0] == self.depth

    def fields(self, s):
        return {"tree.depth": s[0], "tree.branch": s[1]}

    def properties(self):
        return {"Shallow": Property("Shallow", "depth below 2", "invariant", lambda s: s[0] < 2),
                "NotDeep": Property("NotDeep", "depth below deep", "invariant",
                                    lambda s, deep=self.deep - 1: s[0] < deep)}


def started_workers(result) -> bool:
    return any("worker processes" in n for n in result.notes)


def steps_and_states(violation) -> list:
    return [(t.step, t.state) for t in violation.trace]


@pytest.mark.parametrize("machine, options", [
    (Grid(6), ExploreOptions()), (DieHard(), ExploreOptions(properties=("NotSolved",))),
    (TwoPhase(3), ExploreOptions()), (Counter(limit=6, wrap=True), ExploreOptions(stop_at_first=False)),
], ids=["grid", "diehard", "twophase3-holds", "counter-continue"])
def test_a_small_model_runs_in_the_head_alone_and_reports_the_bfs_trace(monkeypatch, machine, options):
    monkeypatch.setattr(parallel, "HEAD_FRONTIER", 4096)
    bfs, par = run_both(machine, options)
    assert_same_run(bfs, par)
    assert not started_workers(par) and any("no worker process started" in n for n in par.notes)
    assert (par.stats.distinct, par.stats.generated, par.stats.depth) == \
        (bfs.stats.distinct, bfs.stats.generated, bfs.stats.depth)
    assert [steps_and_states(v) for v in par.violations] == [steps_and_states(v) for v in bfs.violations]


@pytest.mark.parametrize("block", [1, 64])
@pytest.mark.parametrize("head", [1, 3])
@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize("machine, options", [
    (TwoPhase(5), ExploreOptions()), (SymmetricTwoPhase(5), ExploreOptions()),
    (Grid(12), ExploreOptions(properties=NONE)), (Grid(12), ExploreOptions(stop_at_first=False)),
], ids=["twophase5", "twophase5-sym", "grid", "grid-continue"])
def test_workers_going_on_from_the_head_match_the_bfs(monkeypatch, machine, options, workers, head, block):
    monkeypatch.setattr(parallel, "HEAD_FRONTIER", head)
    # block 1: every worker starts with states of the level handed over (64: the first takes all)
    monkeypatch.setattr(parallel, "HANDOVER_BLOCK", block)
    bfs, par = run_both(machine, options, workers)
    assert started_workers(par)
    assert_same_run(bfs, par)


def test_a_finished_run_reports_its_stores_and_leaves_no_worker_or_exchange_file(monkeypatch):
    """The last round trip (``finish``) brings each worker's sorted fingerprints, store bytes and
    peak RAM; the workers exit after it while the parent merges, and are joined before the run
    returns: no child process and no file in the exchange directory is left."""
    import glob
    import multiprocessing
    import os
    import re

    monkeypatch.setattr(parallel, "HEAD_FRONTIER", 8)
    options = ExploreOptions(properties=NONE, stop_at_first=False)
    bfs, par = run_both(TwoPhase(5), options)
    assert started_workers(par)
    assert_same_run(bfs, par)  # the observed collision estimate from the merged runs included
    assert par.stats.observed_collision is not None
    (stores,) = [n for n in par.notes if "bytes per distinct state" in n]
    per_state = float(re.search(r"links: ([\d.]+) bytes per distinct state", stores).group(1))
    assert 8 <= per_state < 200  # at least the 8-byte fingerprint of every state, in both workers' sets
    (ram,) = [n for n in par.notes if "peak RAM above their forked image" in n]
    assert int(re.search(r"image: ([\d,]+) bytes", ram).group(1).replace(",", "")) > 0
    assert multiprocessing.active_children() == []
    assert glob.glob(f"/dev/shm/eoscheck-parallel-{os.getpid()}-*") == []
    assert glob.glob(f"/tmp/eoscheck-parallel-{os.getpid()}-*") == []


@pytest.mark.parametrize("size, workers, block", [(5809, 2, 64), (4096, 2, 64), (200, 3, 7), (10, 3, 64), (0, 2, 64)])
def test_the_level_handed_over_is_dealt_in_blocks_in_turn(size, workers, block):
    dealt = [parallel._handed_over(size, workers, w, block) for w in range(workers)]
    assert sorted(i for part in dealt for i in part) == list(range(size))  # each state once
    for w, part in enumerate(dealt):
        assert part == sorted(part)  # the level's order kept (the BFS's discovery order)
        assert all(i // block % workers == w for i in part)  # whole blocks, dealt in turn
    assert max(map(len, dealt)) - min(map(len, dealt)) <= block


@pytest.mark.parametrize("workers", [1, 2])
def test_traces_through_the_head_rebuild_and_the_heads_own_are_the_bfs(monkeypatch, workers):
    """Under --continue the head finds Shallow (level 3) and the workers NotDeep (level 9, past the
    hand-over at level 4): the second trace starts with the head's links, the first is the BFS's."""
    monkeypatch.setattr(parallel, "HEAD_FRONTIER", 4)
    machine = Tree()
    bfs, par = run_both(machine, ExploreOptions(stop_at_first=False), workers)
    assert started_workers(par)
    assert_same_run(bfs, par)
    assert (par.stats.distinct, par.stats.generated, par.stats.depth) == (2 ** 12 - 1, 2 ** 12 - 1, 12)
    shallow, deep = par.violations
    assert (shallow.property, shallow.length, deep.property, deep.length) == ("Shallow", 3, "NotDeep", 9)
    assert steps_and_states(shallow) == steps_and_states(bfs.violations[0])
    assert trace_is_valid(machine, deep.trace) and deep.trace[-1].state[0] == 8
    # stopping at the first: the head's, with the BFS's trace, and no worker
    bfs, par = run_both(machine, ExploreOptions(), workers)
    assert not started_workers(par)
    assert steps_and_states(par.violations[0]) == steps_and_states(bfs.violations[0])


@pytest.mark.parametrize("options", [
    ExploreOptions(max_states=100), ExploreOptions(max_depth=5), ExploreOptions(max_depth=6),
    ExploreOptions(max_states=2 ** 6 - 1), ExploreOptions(properties=NONE, max_seconds=0),
], ids=["states", "depth", "depth-exact", "states-exact", "time"])
def test_limits_reached_in_the_head_match_the_bfs(monkeypatch, options):
    monkeypatch.setattr(parallel, "HEAD_FRONTIER", 4096)
    bfs, par = run_both(Tree(depth=5, deep=99), options)
    assert not started_workers(par)
    if options.max_seconds is None:
        assert_same_run(bfs, par)
    else:
        assert par.limit_hit == "time" and par.verdict == bfs.verdict == "incomplete"


def test_a_run_with_a_head_is_deterministic(monkeypatch):
    monkeypatch.setattr(parallel, "HEAD_FRONTIER", 2)
    options = ExploreOptions(strategy="parallel", workers=2)
    runs = [explore(Grid(12), options) for _ in range(3)]
    assert all(started_workers(r) for r in runs)
    assert len({repr(steps_and_states(r.violations[0])) for r in runs}) == 1
    assert len({repr(r.stats.coverage) for r in runs}) == 1


class _GonePeer:
    """A pipe end whose worker died: SIGKILLed with unread data in the pipe, the kernel resets it."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def send(self, message: object) -> None:
        raise self.exc

    def recv(self) -> object:
        raise self.exc


@pytest.mark.parametrize("exc", [EOFError(), ConnectionResetError(104, "Connection reset by peer"),
                                 BrokenPipeError(32, "Broken pipe")])
def test_a_worker_gone_from_its_pipe_is_a_worker_error(exc):
    # before: a reset surfaced as "eoscheck: error: Connection reset by peer", naming no engine
    conn = _GonePeer(exc)
    with pytest.raises(WorkerError, match="exited unexpectedly"):
        parallel._ask(conn, ("chain", 0))  # type: ignore[arg-type]
    with pytest.raises(WorkerError, match="exited unexpectedly"):
        parallel._receive(conn)  # type: ignore[arg-type]
    with pytest.raises(WorkerError, match="exited unexpectedly"):
        parallel._ask_all([conn], ("finish",))  # type: ignore[list-item]


def test_a_dead_runs_exchange_directory_is_swept(tmp_path: Path) -> None:
    # a run killed with its workers leaves its directory in /dev/shm; the next run removes it
    import os
    import subprocess
    import sys

    from eoscheck.checker.explore.parallel import _sweep_stale

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    dead = tmp_path / f"eoscheck-parallel-{gone.stdout.strip()}-abc123"
    live = tmp_path / f"eoscheck-parallel-{os.getpid()}-def456"
    other = tmp_path / "eoscheck-parallel-notapid"
    for d in (dead, live, other):
        d.mkdir()
    (dead / "level-0").write_bytes(b"x")
    _sweep_stale(str(tmp_path))
    assert not dead.exists()
    assert live.exists() and other.exists()


@pytest.mark.parametrize("size", [0, 1, 2, 3, parallel._GAP_BLOCK, parallel._GAP_BLOCK + 1, 3 * parallel._GAP_BLOCK + 7])
def test_observed_collision_of_sorted_runs_equals_the_least_gap_of_their_union(tmp_path: Path, size: int) -> None:
    """The merge reads the workers' runs into one array and scans the gaps block by block: the least
    gap sits across a block boundary here (and the runs are unequal), where a scan that did not
    overlap its blocks by one value would miss it."""
    import numpy as np
    rng = np.random.default_rng(size)
    values = np.unique(rng.integers(1, 1 << 62, size=size, dtype=np.uint64) * np.uint64(4))
    if values.size > parallel._GAP_BLOCK + 1:
        at = parallel._GAP_BLOCK  # the pair (at - 1, at) straddles the first block boundary
        values[at] = values[at - 1] + np.uint64(1)
        assert values[at + 1] > values[at]
    owner = rng.integers(0, 3, size=values.size)
    runs = []
    for w in range(3):
        path = tmp_path / f"run-{w}"
        np.sort(values[owner == w]).tofile(path)
        runs.append((str(path), int(np.count_nonzero(owner == w))))
    expected = None
    if values.size >= 2:
        gap = int(np.diff(np.sort(values)).min())
        expected = 1.0 if gap == 0 else min(1.0, 1.0 / gap)
    assert parallel._observed_collision(runs) == expected
    assert not list(tmp_path.iterdir())  # the runs are consumed
    if values.size > parallel._GAP_BLOCK + 1:
        assert expected == 1.0

"""The Spark engine gives the local BFS's answers: counts, depth, verdicts, shortest traces; it
resumes from checkpoints without recomputing levels; and it fails with one clear line when Spark
cannot run. Every test here shares the session-scoped local[2] session from conftest.py."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.explore.common import UnknownPropertyError
from eoscheck.checker.machine import Machine, Property
from eoscheck.checker.registry import find_model
from eoscheck.checker.result import Result

pytestmark = pytest.mark.spark


# ---------------------------------------------------------------- a machine of our own

class Counters(Machine):
    """Two counters with an increment each and a swap; small, with every kind of violation.

    Shortest violations (trace lengths in states): ``XNeverDecreases`` (a swap from x > y) 3,
    ``SumBelow`` (x + y reaches ``limit``) limit + 1, deadlock at (n, n) 2n + 1. The constraint
    ``y <= x + 2`` keeps some successors out of the explored graph.
    """

    actions: Mapping[str, tuple[str, ...]] = {"IncX": (), "IncY": (), "Swap": ()}

    def __init__(self, n: int = 4, limit: int = 5):
        self.n, self.limit = n, limit

    def init_states(self) -> Iterator[tuple]:
        yield (0, 0)

    def successors(self, s: tuple) -> Iterator[tuple[tuple, tuple]]:
        x, y = s
        if x < self.n:
            yield ("IncX",), (x + 1, y)
        if y < self.n:
            yield ("IncY",), (x, y + 1)
        if x != y:
            yield ("Swap",), (y, x)

    def within_bounds(self, s: tuple) -> bool:
        return s[1] <= s[0] + 2

    def properties(self) -> Mapping[str, Property]:
        return {
            "SumBelow": Property("SumBelow", "x + y stays below the limit", "invariant",
                                 lambda s: s[0] + s[1] < self.limit),
            "XNeverDecreases": Property("XNeverDecreases", "x never goes down", "transition",
                                       lambda s, step, t: t[0] >= s[0]),
        }

    def fields(self, s: tuple) -> dict:
        return {"x": s[0], "y": s[1]}


class BrokenCounters(Counters):
    """A model with a bug that only shows on an executor, a few levels in."""

    def successors(self, s: tuple) -> Iterator[tuple[tuple, tuple]]:
        if s == (2, 1):
            raise ZeroDivisionError("model bug at (2, 1)")
        yield from super().successors(s)


def build(name: str, **bounds: int) -> Machine:
    model = find_model(name)
    switches = {k: sw.default for k, sw in model.switches.items()}
    variant = model.variants[model.default_variant]
    switches.update(getattr(variant, "switches", {}) or {})
    values = {k: b.default for k, b in model.bounds.items()}
    values.update(bounds)
    return model.build(switches, values)


def both(machine: Machine, **options) -> tuple[Result, Result]:
    local = explore(machine, ExploreOptions(strategy="bfs", **options))
    spark = explore(machine, ExploreOptions(strategy="spark", **options))
    return local, spark


def assert_same(local: Result, spark: Result, complete: bool = False) -> None:
    """Same verdict and violations (property, kind, shortest length); same counts unless the run
    stopped at a first violation (the local BFS stops mid-level, Spark at the level's end)."""
    assert spark.strategy == "spark"
    assert spark.verdict == local.verdict
    assert spark.limit_hit == local.limit_hit
    if complete or local.verdict != "violated":
        assert (spark.stats.distinct, spark.stats.generated, spark.stats.depth) == \
            (local.stats.distinct, local.stats.generated, local.stats.depth)
        assert {a: (c.generated, c.outside) for a, c in spark.stats.coverage.items()} == \
            {a: (c.generated, c.outside) for a, c in local.stats.coverage.items()}
        assert sum(c.distinct for c in spark.stats.coverage.values()) == \
            sum(c.distinct for c in local.stats.coverage.values())
    assert sorted((v.property, v.kind, v.length) for v in spark.violations) == \
        sorted((v.property, v.kind, v.length) for v in local.violations)


def assert_replays(machine: Machine, result: Result) -> None:
    """Every trace starts in an initial state and each step is a real step of the machine."""
    for v in result.violations:
        assert v.trace[0].step is None and v.trace[0].state in list(machine.init_states())
        for prev, cur in zip(v.trace, v.trace[1:]):
            assert (cur.step, cur.state) in list(machine.successors(prev.state))


class Recorder:
    """A Progress that remembers what it was told."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.updates: list[tuple[int | None, str]] = []
        self.finished = 0

    def start(self, label: str) -> None:
        self.started.append(label)

    def update(self, stats, level=None, note="") -> None:
        self.updates.append((level, note))

    def finish(self, stats) -> None:
        self.finished += 1


# ---------------------------------------------------------------- same answers as the local BFS

@pytest.mark.parametrize("name, bounds", [
    ("examples.twophase", {"rms": 3}),
    ("examples.tcommit", {"rms": 3}),
    ("examples.diehard", {}),
])
def test_textbook_models_match_local_bfs(spark, name, bounds):
    machine = build(name, **bounds)
    local, result = both(machine)
    assert_same(local, result)
    assert_replays(machine, result)


@pytest.mark.parametrize("name, variant, bounds, violated", [
    # an abortable error happens inside a transaction (KIP-360 client), so one is allowed; the
    # hand-written machine (kafka.init_producer_id is a preset of the composed kafka.eos, which Spark
    # cannot run)
    ("eoscheck.model.registry:INIT_PRODUCER_ID_MACHINE", "kafka-shipped", {"transactions": 1},
     "SoleInstanceNeverFenced"),
    ("kafka.idempotent_produce", "broker-0.11", {}, "OutOfOrderOnlyOnDataLoss"),
])
def test_kafka_specs_match_local_bfs(spark, name, variant, bounds, violated):
    machine = find_model(name).machine(variant, bounds=bounds)
    local, result = both(machine, stop_at_first=False)
    assert violated in {v.property for v in result.violations}
    assert_same(local, result, complete=True)
    assert_replays(machine, result)


def test_kafka_packed_states_and_memoised_invariants_on_executors(spark):
    # kafka.idempotent_produce keeps flat states of interned parts and memoised invariants that
    # read the interning tables: executors must read their own process's tables. An invariant
    # closure once shipped (by value) a snapshot of the driver's tables and failed with a KeyError;
    # a driver that had explored before shipped a full snapshot and hid it, hence a fresh process
    # with Spark first.
    code = """
        from eoscheck.checker.explore import ExploreOptions, explore
        from eoscheck.checker.registry import find_model
        machine = find_model("kafka.idempotent_produce").machine("kafka-shipped", bounds={"clients": 2, "records": 3})
        for strategy in ("spark", "bfs"):
            r = explore(machine, ExploreOptions(strategy=strategy, stop_at_first=False))
            print(strategy, r.verdict, r.stats.distinct, r.stats.generated, r.stats.depth)
        """
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr.strip().splitlines()[-1:]
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines() if line.startswith(("bfs", "spark")))
    assert lines["bfs"].startswith("holds ") and lines["spark"] == lines["bfs"]


def test_composed_machine_matches_local_bfs(spark):
    """kafka.eos (declared with checker.compose) holds ids of interned parts in its states: they
    cross to executors through export_states/import_states, each part once per batch. Same counts
    and the same shortest violation length as the BFS."""
    root = Path(__file__).resolve().parent.parent
    from eoscheck.checker.spec import build_machine, load_spec, spec_to_options
    spec = load_spec(root / "specs" / "eos-ctp-timeout-abort-kafka-0.11.0.0.toml")
    machine = build_machine(spec)
    options = spec_to_options(spec)
    local = explore(machine, options)
    from dataclasses import replace
    result = explore(machine, replace(options, strategy="spark"))
    assert_same(local, result)
    assert [v.property for v in result.violations] == ["ExactlyOnce"]
    assert_replays(machine, result)


# ---------------------------------------------------------------- the first levels on the driver

@pytest.mark.parametrize("driver_states", [30, 10**9])  # the first levels only; every level
@pytest.mark.parametrize("name, bounds", [("examples.twophase", {"rms": 3}), ("examples.diehard", {})])
def test_small_levels_on_the_driver_match_local_bfs(spark, name, bounds, driver_states):
    machine = build(name, **bounds)
    local, result = both(machine, spark_driver_states=driver_states)
    assert_same(local, result)
    assert_replays(machine, result)


@pytest.mark.parametrize("driver_states", [5, 10**9])
def test_driver_levels_find_every_violation_kind(spark, driver_states):
    machine = Counters()
    local, result = both(machine, stop_at_first=False, spark_driver_states=driver_states)
    assert_same(local, result, complete=True)
    assert_replays(machine, result)
    local, result = both(machine, max_depth=4, spark_driver_states=driver_states)
    assert_same(local, result)


def test_driver_levels_then_spark_resume_from_checkpoint(spark, tmp_path):
    machine = build("examples.twophase", rms=3)
    ck = str(tmp_path / "ck")
    first = explore(machine, ExploreOptions(strategy="spark", checkpoint_dir=ck, max_depth=6,
                                            spark_driver_states=40))
    assert first.verdict == "incomplete"
    local, again = both(machine, checkpoint_dir=ck, spark_driver_states=40)
    assert any("resumed from checkpoint" in n for n in again.notes)
    assert_same(local, again)


def test_model_error_on_the_driver_is_the_same_line(spark):
    from eoscheck.checker.explore.spark import SparkJobError
    with pytest.raises(SparkJobError) as err:
        explore(BrokenCounters(), ExploreOptions(strategy="spark", properties=(), spark_driver_states=10**9))
    assert str(err.value) == "Spark job for BFS level 4 failed: ZeroDivisionError: model bug at (2, 1)"


def test_symmetry_matches_local_bfs(spark):
    from eoscheck.examples.twophase import SymmetricTwoPhase
    local, result = both(SymmetricTwoPhase(3))
    assert result.verdict == "holds"
    assert_same(local, result)
    plain = explore(SymmetricTwoPhase(3), ExploreOptions(strategy="bfs", symmetry=False))
    assert plain.stats.distinct > result.stats.distinct


def test_seeded_bug_shortest_counterexample(spark):
    machine = build("examples.diehard")
    result = explore(machine, ExploreOptions(strategy="spark", properties=("NotSolved",)))
    assert result.verdict == "violated"
    (v,) = result.violations
    assert v.property == "NotSolved" and v.length == 7 and v.trace[-1].state[1] == 4
    assert_replays(machine, result)


def test_every_violation_kind_with_continue(spark):
    machine = Counters()
    local, result = both(machine, stop_at_first=False)
    kinds = {(v.property, v.kind, v.length) for v in result.violations}
    assert kinds == {("XNeverDecreases", "transition", 3), ("SumBelow", "invariant", 6),
                     ("deadlock", "deadlock", 9)}
    assert_same(local, result, complete=True)
    assert_replays(machine, result)


def test_stop_at_first_reports_the_shortest(spark):
    local, result = both(Counters())
    assert [(v.property, v.length) for v in result.violations] == [("XNeverDecreases", 3)]
    assert_same(local, result)


def test_holds_without_properties_and_deadlock(spark):
    machine = Counters()
    local, result = both(machine, properties=(), check_deadlock=False)
    assert result.verdict == "holds"
    assert_same(local, result)
    assert result.stats.coverage["Swap"].generated > 0


@pytest.mark.parametrize("depth", [1, 4])
def test_depth_limit_matches_local_bfs(spark, depth):
    machine = build("examples.twophase", rms=3)
    local, result = both(machine, max_depth=depth)
    assert_same(local, result)
    assert result.verdict == "incomplete" and result.stats.depth == depth


def test_invariant_broken_just_beyond_the_depth_limit(spark):
    # SumBelow first fails at depth 6: with max_depth 5 neither engine may report it, and level 5
    # must still be expanded in full (counts).
    local, result = both(Counters(), properties=("SumBelow",), max_depth=5)
    assert result.verdict == "incomplete" and not result.violations
    assert_same(local, result)


def test_depth_limit_at_the_last_level_holds(spark):
    # The deepest level is expanded and finds nothing new: the run is complete.
    machine = Counters()
    local, result = both(machine, properties=(), check_deadlock=False,
                         max_depth=explore(machine, ExploreOptions(properties=(), check_deadlock=False)).stats.depth)
    assert local.verdict == "holds"
    assert_same(local, result)


def test_state_limit_is_incomplete(spark):
    result = explore(build("examples.twophase", rms=3),
                     ExploreOptions(strategy="spark", max_states=50))
    assert result.verdict == "incomplete" and result.limit_hit == "states"
    assert 50 <= result.stats.distinct < 288


def test_time_limit_is_incomplete(spark):
    result = explore(build("examples.twophase", rms=3),
                     ExploreOptions(strategy="spark", max_seconds=0.0))
    assert result.verdict == "incomplete" and result.limit_hit == "time"
    # the session is still usable after a cancelled job
    again = explore(Counters(), ExploreOptions(strategy="spark", properties=(), check_deadlock=False))
    assert again.verdict == "holds"


def test_progress_reports_each_level(spark):
    rec = Recorder()
    result = explore(build("examples.tcommit"), ExploreOptions(strategy="spark"), rec)
    assert rec.started and rec.finished == 1
    levels = [lvl for lvl, _ in rec.updates]
    assert levels == list(range(1, result.stats.depth + 1))
    assert all("new states" in note for _, note in rec.updates[1:])


def test_model_error_on_an_executor_is_one_line(spark):
    from eoscheck.checker.explore.spark import SparkJobError
    with pytest.raises(SparkJobError) as err:
        explore(BrokenCounters(), ExploreOptions(strategy="spark", properties=()))
    assert str(err.value) == "Spark job for BFS level 4 failed: ZeroDivisionError: model bug at (2, 1)"
    assert "Traceback" in err.value.details
    # the shared session survives a failed job
    assert explore(Counters(), ExploreOptions(strategy="spark", properties=(),
                                              check_deadlock=False)).verdict == "holds"


def test_unknown_property_fails_before_spark(spark):
    with pytest.raises(UnknownPropertyError):
        explore(Counters(), ExploreOptions(strategy="spark", properties=("Nope",)))


# ---------------------------------------------------------------- checkpoints

def level_files(directory: Path) -> dict[str, int]:
    return {str(p.relative_to(directory)): p.stat().st_mtime_ns
            for p in directory.glob("level-*/*.parquet")}


def test_resume_from_checkpoint_skips_done_levels(spark, tmp_path):
    machine = build("examples.twophase", rms=3)
    local = explore(machine, ExploreOptions(strategy="bfs"))
    first = explore(machine, ExploreOptions(strategy="spark", checkpoint_dir=str(tmp_path),
                                            max_depth=4))
    assert first.verdict == "incomplete" and first.limit_hit == "depth"
    done = level_files(tmp_path)
    assert {Path(k).parts[0] for k in done} == {f"level-0000{i}" for i in range(1, 5)}

    rec = Recorder()
    second = explore(machine, ExploreOptions(strategy="spark", checkpoint_dir=str(tmp_path)), rec)
    assert second.spark_resumed_from == 4
    assert any("resumed from checkpoint" in n for n in second.notes)
    assert_same(local, second)
    after = level_files(tmp_path)
    assert {k: after[k] for k in done} == done  # levels 1-4 were not rewritten
    assert len(after) > len(done)
    assert min(lvl for lvl, _ in rec.updates) == 4  # nothing below level 4 was computed again

    # A finished run resumes to its result without exploring.
    third = explore(machine, ExploreOptions(strategy="spark", checkpoint_dir=str(tmp_path)))
    assert_same(local, third)
    assert level_files(tmp_path) == after


def test_resume_keeps_violations_and_traces(spark, tmp_path):
    machine = Counters()
    local = explore(machine, ExploreOptions(strategy="bfs", stop_at_first=False))
    explore(machine, ExploreOptions(strategy="spark", stop_at_first=False, max_depth=4,
                                    checkpoint_dir=str(tmp_path)))
    resumed = explore(machine, ExploreOptions(strategy="spark", stop_at_first=False,
                                              checkpoint_dir=str(tmp_path)))
    assert resumed.spark_resumed_from == 4
    assert_same(local, resumed, complete=True)
    assert_replays(machine, resumed)


def test_resume_with_another_partition_count(spark, tmp_path, monkeypatch):
    machine = build("examples.tcommit", rms=3)
    local = explore(machine, ExploreOptions(strategy="bfs", check_deadlock=False))
    options = dict(strategy="spark", check_deadlock=False, checkpoint_dir=str(tmp_path))
    monkeypatch.setenv("EOSCHECK_SPARK_PARTITIONS", "3")
    first = explore(machine, ExploreOptions(max_depth=3, **options))
    assert first.spark_partitions == 3
    monkeypatch.delenv("EOSCHECK_SPARK_PARTITIONS")
    second = explore(machine, ExploreOptions(max_depth=5, **options))  # levels 4-5 split in 2
    monkeypatch.setenv("EOSCHECK_SPARK_PARTITIONS", "1")
    third = explore(machine, ExploreOptions(**options))
    assert (second.spark_resumed_from, third.spark_resumed_from) == (3, 5)
    assert_same(local, third)


def test_checkpoint_of_another_run_is_refused(spark, tmp_path):
    from eoscheck.checker.explore.spark_checkpoint import CheckpointError
    explore(build("examples.tcommit", rms=2),
            ExploreOptions(strategy="spark", checkpoint_dir=str(tmp_path)))
    with pytest.raises(CheckpointError, match="different run"):
        explore(build("examples.tcommit", rms=3),
                ExploreOptions(strategy="spark", checkpoint_dir=str(tmp_path)))


def test_foreign_directory_is_not_overwritten(spark, tmp_path):
    from eoscheck.checker.explore.spark_checkpoint import CheckpointError
    mine = tmp_path / "notes.txt"
    mine.write_text("mine")
    with pytest.raises(CheckpointError, match="not empty"):
        explore(Counters(), ExploreOptions(strategy="spark", checkpoint_dir=str(tmp_path)))
    assert mine.read_text() == "mine" and sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_corrupt_manifest_is_one_line(spark, tmp_path):
    from eoscheck.checker.explore.spark_checkpoint import CheckpointError
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="corrupt") as err:
        explore(Counters(), ExploreOptions(strategy="spark", checkpoint_dir=str(tmp_path)))
    assert "\n" not in str(err.value)


# ---------------------------------------------------------------- Spark cannot run

def run_python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env={**os.environ, **env}, timeout=120, check=False)


def test_missing_java_is_one_clear_line(tmp_path):
    proc = run_python("""
        from eoscheck.checker.explore import ExploreOptions, explore
        from eoscheck.checker.explore.spark_session import SparkUnavailableError
        from eoscheck.examples.tcommit import TCommit
        try:
            explore(TCommit(2), ExploreOptions(strategy="spark"))
        except SparkUnavailableError as exc:
            print(exc)
        """, {"JAVA_HOME": str(tmp_path / "no-jdk")})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("Java not found") and "JAVA_HOME" in lines[0] and "openjdk-17" in lines[0]


def test_unreachable_master_is_one_clear_line():
    import socket

    from eoscheck.checker.explore.spark_session import (
        SparkUnavailableError,
        check_master,
    )
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(SparkUnavailableError, match="unreachable") as err:
        check_master(f"spark://127.0.0.1:{port}")
    assert "\n" not in str(err.value)
    with pytest.raises(SparkUnavailableError, match="unknown Spark master"):
        check_master("mesos://old")
    check_master("local[2]")


def test_project_code_zip_is_importable(tmp_path):
    """What addPyFile ships to a cluster: the eoscheck package with its mapped subpackages."""
    import eoscheck.examples.tcommit  # noqa: F401  (a model's module is imported when shipping)
    from eoscheck.checker.explore.spark_session import _zip_package
    path = _zip_package("eoscheck", tmp_path)
    names = zipfile.ZipFile(path).namelist()
    assert "eoscheck/checker/explore/spark.py" in names and "eoscheck/examples/tcommit.py" in names
    # -S: no site-packages, so the import can only come from the zip
    proc = subprocess.run([sys.executable, "-S", "-c",
                           (f"import sys; sys.path.insert(0, {str(path)!r}); "
                            "import eoscheck.checker.machine as m; print(m.__file__)")],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert str(path) in proc.stdout


# ---------------------------------------------------------------- through the command line

def test_cli_engine_spark_meets_expectations(spark, tmp_path, capsys):
    """``eoscheck check --engine spark`` on specs that expect "holds" and "violates"; the
    counterexample written for the seeded bug has the textbook length."""
    import json

    from eoscheck.checker.cli import main
    specs = Path(__file__).resolve().parent.parent / "specs" / "examples"
    code = main(["check", str(specs / "tcommit-3rm-consistent.toml"),
                 str(specs / "diehard-big-jug-reaches-4.toml"), "--engine", "spark",
                 "--out", str(tmp_path), "--no-progress", "--quiet"])
    assert code == 0, capsys.readouterr()
    (cex,) = [p for p in tmp_path.glob("*.json") if not p.name.endswith(".itf.json")]
    assert len(json.loads(cex.read_text())["steps"]) == 7


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to find the JVM")
def test_sigterm_stops_spark_and_its_jvm():
    """A driver killed with SIGTERM unwinds (exit 143) and its JVM does not outlive it."""
    import signal
    import time
    code = textwrap.dedent("""
        from eoscheck.checker.explore import ExploreOptions, explore
        from eoscheck.examples.twophase import TwoPhase

        class Announce:
            def start(self, label): pass
            def update(self, stats, level=None, note=""): print("level", level, flush=True)
            def finish(self, stats): pass

        try:
            explore(TwoPhase(9), ExploreOptions(strategy="spark"), Announce())
        finally:
            print("unwound", flush=True)
        """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().startswith("level")  # Spark is up and exploring
        jvms = _children(proc.pid)
        assert jvms, "no JVM child found"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=120) == 128 + signal.SIGTERM
        assert "unwound" in proc.stdout.read()
        deadline = time.monotonic() + 60
        while any(_alive(p) for p in jvms) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not any(_alive(p) for p in jvms)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_successors_outside_the_constraint_are_counted_as_locally(spark):
    from eoscheck.examples.toys import Counter

    local, result = both(Counter(limit=6, wrap=True, bound=3), stop_at_first=False, properties=())
    assert_same(local, result, complete=True)
    assert result.stats.coverage["Inc"].outside == local.stats.coverage["Inc"].outside == 1

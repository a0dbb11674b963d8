"""Breadth-first exploration on Apache Spark (PySpark): the same answers as ``bfs``, on a cluster.

**Design** (level-synchronous BFS; see ``spark_level`` for what executors run). The state space
is split by ``fingerprint % P``; partition ``p`` owns a visited set (one sorted ``uint64`` numpy
array). One Spark job of one stage (``submitMapStage``) per level, one task per partition, one
Python pass per task (``level_partition``):

1. the task reads its part of the previous level's shuffle: its own visited array and the
   candidate chunks that every partition's expansion sent it;
2. the anti-join on fingerprints only: ``np.unique`` on the candidates, ``searchsorted`` against
   the visited array, the merged visited array, the new frontier (rows of the candidate blobs:
   states are never decoded or re-encoded here), parent links and counters;
3. in the same Python pass, the new frontier is expanded: successors, ``within_bounds``,
   transition properties, deadlocks, ``canonical`` (symmetry), fingerprint, de-duplication within
   the partition, invariants on the remaining candidates (a candidate that breaks a live
   invariant is necessarily new), dropping the successors that belong to this partition and are
   in its visited set (encoding a state and moving it was most of a level's cost, and most
   successors are old states), and bucketing by target partition, one chunk per bucket with its
   states encoded once as a list (``Machine.export_states``: interned parts once per chunk);
4. ``partitionBy`` (identity partitioner) moves the candidate chunks to their partitions and the
   merged visited array to its own: the next level's shuffle. Nothing is cached in the JVM; the
   frontier never leaves the Python worker that found it; the shuffle a level read is dropped
   once the level is done;
5. the driver gets only the counters, violations and (without a checkpoint directory) the
   parent links, 16 bytes per new state, through an accumulator keyed by (level, partition),
   and rebuilds counterexamples with ``checker.trace.rebuild_trace`` exactly as the local BFS.

The first levels, while they have fewer than ``driver_states`` states (default 5000), run in the
driver's process with the same ``level_partition`` (a Spark job costs tenths of a second whatever
its size); meanwhile a warm-up job starts the executors' Python workers, unpacks the machine
there and runs a small shuffle (an executor's first shuffle costs seconds of class loading). The
first level above the threshold ships the driver's partitions to Spark; the rest follow there.
(Keeping larger levels on the driver until the warm-up ends was measured twice, in rounds 3 and
4 of bench/results/spark-cluster.md: on a shared machine the driver's work slows the executors'
start as much as it saves.)

This replaced (issue 17) a design that cached each level's visited set and frontier in the JVM,
``localCheckpoint``-ed them and unioned them with the shuffled candidates: two Python passes per
task (anti-join, then expansion of the cached result) and the cache and checkpoint calls cost
more per level than moving the visited set through the shuffle.

**RDD, not DataFrame/Arrow**, by measurement (``bench/bench_spark_api.py``: one level's data
movement for 1M candidate states, local[2] on this 2-core machine, medians of 3):
RDD with columnar chunks 12.3 s, DataFrame with ``mapInArrow`` on both sides of a
``repartition`` 20.2 s (1.64x), one RDD record per state 16.3 s (1.32x). The work per state is
Python (the model), so a DataFrame plan adds only conversions: states must become Arrow rows
(one ``bytes`` each) and back, and the Catalyst plan cannot be told that the data is already
partitioned, so the visited set would have to be joined or re-shuffled each level. With RDDs
a whole partition's visited array or candidate chunk moves as one record.
The throwaway prototype in the performance notes saw the same ordering (DataFrames 7.8x a
single process, RDDs 5x).

**Counting** matches ``bfs`` (TLC's conventions): generated = initial states + every successor
(outside the constraint included); distinct = states kept; depth = levels reached; deadlock =
a non-terminal state with no successor at all; ``max_depth`` expands the last level but keeps none
of its new successors. Differences, all at the edges: limits are checked between levels, so a
``max_states`` run may end with more states than the limit (the whole level that crossed it);
when several properties fail at the same shortest depth, the one reported first may differ; and
coverage's per-action ``distinct`` may credit another action when one state is first reached by
two actions in the same level.
"""

from __future__ import annotations

import contextlib
import re
import signal
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from ..fingerprint import MASK64, observed_collision_probability
from ..machine import Machine
from ..result import Result, Stats, TraceStep, Violation, ViolationKind
from ..signals import Terminated
from ..signals import _raise as _raise_terminated
from ..trace import rebuild_trace
from .common import build_coverage, limit_notes, select_properties, verdict_of
from .errors import EngineSetupError
from .expand import Expander
from .options import ExploreOptions
from .spark_checkpoint import (
    FORMAT,
    CheckpointError,
    CheckpointStore,
    decode_found,
    encode_found,
    run_key,
)
from .spark_config import DEFAULT_EXECUTOR_TIMEOUT, resolve_driver_states
from .spark_level import (
    EMPTY,
    LevelArgs,
    Overwrite,
    Plan,
    decode_states,
    identity_partition,
    level_partition,
    load_partition,
    make_chunk,
    warm_partition,
)
from .spark_session import (
    SessionSettings,
    SparkUnavailableError,
    default_partitions,
    is_local_master,
    spark_class,
    spark_session,
)

if TYPE_CHECKING:
    from ..progress import Progress

__all__ = ["CheckpointError", "SparkJobError", "SparkUnavailableError", "explore_spark"]

#: a violation seen during the run: (property, kind, level of the fingerprint, fingerprint,
#: step, next state encoded by ``spark_level.encode_states``); for "transition" the fingerprint is
#: the parent's and the trace ends with (step, next state)
Found = tuple[str, ViolationKind, int, int, Any, Any]

def _unwind(signum: int, previous: Any = None) -> BaseException:
    """What a signal becomes once the JVM call has returned: KeyboardInterrupt for Ctrl-C (the
    CLI exits 130); for SIGTERM/SIGHUP ``Terminated`` where the CLI's handler was installed (it
    prints one line and exits 128 + signal), else SystemExit(128 + signal), as the shell reports."""
    if signum == signal.SIGINT:
        return KeyboardInterrupt()
    if previous is _raise_terminated:
        return Terminated(signum)
    return SystemExit(128 + signum)


#: resumptions from the checkpoint after lost executors before a run gives up
MAX_RECOVERIES = 3


#: how Spark reports a task or stage that failed because an executor (and the level data cached
#: on it, which ``localCheckpoint`` does not replicate) went away
_LOST = re.compile(r"Checkpoint block \S+ not found|ExecutorLostFailure|FetchFailed|"
                   r"[Ee]xecutor \S+ (?:was )?lost|Worker lost|BlockManagerId.*(?:lost|removed)")


class SparkJobError(EngineSetupError, RuntimeError):
    """A Spark job failed; usually the model raised on an executor. The message is the Python
    error's last line; ``details`` keeps Spark's whole report. ``lost``: it failed because an
    executor was lost (its part of the visited set with it)."""

    def __init__(self, level: int, details: str, lost: bool = False):
        self.details = details
        self.lost = lost or bool(_LOST.search(details))
        if self.lost:
            super().__init__(
                f"Spark job for BFS level {level} failed: an executor was lost, and with it its part "
                "of the visited set; rerun with a checkpoint (--checkpoint or [check.spark] "
                "checkpoint) to resume from the last complete level")
            return
        errors = re.findall(r"^(?:[\w.]+(?:Error|Exception|Interrupt)\b.*)$", details, re.MULTILINE)
        python = [e for e in errors if not e.startswith(("org.apache", "py4j", "java."))]
        cause = (python or errors or [details.strip().splitlines()[0] if details.strip() else "?"])[-1]
        super().__init__(f"Spark job for BFS level {level} failed: {cause}")


def _records(partition: list) -> list:
    return partition


def _trace_length(f: Found) -> int:
    return f[2] + 1 if f[1] == "transition" else f[2]


@dataclass
class LevelTiming:
    level: int  # the level whose successors were de-duplicated (and the new level expanded)
    new: int  # states it discovered
    distinct: int  # distinct states after it
    seconds: float
    on_driver: bool = False  # run in the driver's process, not as a Spark job


@dataclass
class _Links:
    """Parent links per level (level 1 has none): in memory, or read back from the checkpoint."""

    store: CheckpointStore | None
    levels: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def add(self, level: int, fps: list[np.ndarray], parents: list[np.ndarray]) -> None:
        child = np.concatenate(fps) if fps else EMPTY
        parent = np.concatenate(parents) if parents else EMPTY
        order = np.argsort(child)
        self.levels[level] = (child[order], parent[order])

    def parent(self, level: int, fp: int) -> int:
        if level not in self.levels:
            if self.store is None:
                raise KeyError(f"no parent links for level {level}")
            cols = self.store.read_level(level, ["fp", "parent"])
            self.add(level, [cols["fp"]], [cols["parent"]])
        child, parent = self.levels[level]
        i = int(np.searchsorted(child, np.uint64(fp)))
        if i >= len(child) or int(child[i]) != fp:
            raise KeyError(f"fingerprint {fp:#x} not found at BFS level {level}")
        return int(parent[i])

    def observed_collision(self, distinct: int) -> float | None:
        """The estimate from the fingerprints seen, when every level's links are in memory (not
        when they live in the checkpoint only)."""
        kept = [child for child, _ in self.levels.values()]
        if sum(len(c) for c in kept) != distinct:
            return None
        return observed_collision_probability(np.concatenate(kept) if kept else EMPTY)

    def chain(self, level: int, fp: int) -> list[int]:
        out = [fp]
        for lvl in range(level, 1, -1):
            fp = self.parent(lvl, fp)
            out.append(fp)
        out.reverse()
        return out


class _SparkBFS:
    def __init__(self, sc: Any, machine: Machine, options: ExploreOptions,
                 progress: Progress | None):
        self.sc, self.machine, self.options, self.progress = sc, machine, options, progress
        invariants, transitions = select_properties(machine, options.properties)  # validates names
        self.checked = [n for n, _ in invariants + transitions]
        self.symmetry = options.symmetry and machine.has_symmetry()
        self.partitions = default_partitions(sc, options.spark_partitions)
        self.cluster = not is_local_master(sc.master)
        timeout = options.spark_executor_timeout
        self.executor_timeout = DEFAULT_EXECUTOR_TIMEOUT if timeout is None else timeout
        self.no_executors = False  # the watchdog gave up waiting (exit 2)
        self.executors_alive = 0  # as the watchdog last saw them
        self.interrupted: int | None = None  # the signal that asked the run to stop
        self.key: str | None = None  # the checkpoint's run key
        self.previous_handlers: dict[int, Any] = {}  # signal handlers before the run's own
        self.recoveries = 0
        self.store = CheckpointStore(options.checkpoint_dir) if options.checkpoint_dir else None
        plan = Plan(machine, options.properties, options.symmetry, options.check_deadlock,
                    self.partitions, collect_links=self.store is None, checkpoint=self.store,
                    view=options.view)
        self.expander = Expander(machine, options.properties, symmetry=options.symmetry,
                                 view=options.view, check_deadlock=options.check_deadlock,
                                 stop_at_first=False)
        from pyspark import cloudpickle
        self.broadcast = sc.broadcast(cloudpickle.dumps(plan))
        self.token = uuid.uuid4().hex
        self.group = f"eoscheck-{self.token}"
        self.warm_group = f"{self.group}-warm-up"
        self.shuffle_id: int | None = None  # the last level's shuffle, read by the next level
        self.driver_states = resolve_driver_states(options.spark_driver_states)
        self.report = sc.accumulator({}, Overwrite())
        self.links = _Links(self.store)
        self.start = time.perf_counter()
        self.deadline = (self.start + options.max_seconds) if options.max_seconds is not None else None
        self.timings: list[LevelTiming] = []
        self.warmed_at: float | None = None  # when the warm-up job ended (seconds into the run)
        self._reset()
        self.notes: list[str] = []
        self.manifest: dict | None = None
        self.resumed_from = 0

    # ------------------------------------------------------------ helpers

    def _reset(self) -> None:
        """The running totals of a run starting afresh (a recovery then reads them back from the
        checkpoint's manifest)."""
        self.level = 1
        self.distinct = 0
        self.generated = 0
        self.frontier = 0
        self.gen_cov: dict[str, int] = {}
        self.new_cov: dict[str, int] = {}
        self.out_cov: dict[str, int] = {}  # of gen_cov, cut by the state constraint
        self.found: list[Found] = []
        self.violated: set[str] = set()
        self.limit_hit: str | None = None

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def stats(self) -> Stats:
        return Stats(distinct=self.distinct, generated=self.generated, depth=self.level,
                     queue=self.frontier, elapsed=self.elapsed(),
                     coverage=build_coverage(self.machine, self.gen_cov, self.new_cov, self.out_cov))

    def _add(self, counts: dict[str, int], more: dict[str, int]) -> None:
        for k, v in more.items():
            counts[k] = counts.get(k, 0) + v

    def _record(self, candidates: list[Found]) -> None:
        """Keep the shortest violation per property (and only one overall when stopping at the
        first): shortest trace, then transitions before invariants before deadlock at equal
        length, then the machine's property order, then the fingerprint (determinism)."""
        order = {name: i for i, name in enumerate(self.checked + ["deadlock"])}
        kind_rank = {"transition": 0, "invariant": 1, "deadlock": 2}
        candidates = sorted(candidates, key=lambda f: (_trace_length(f), kind_rank[f[1]],
                                                       order.get(f[0], 0), f[3]))
        for f in candidates:
            if f[0] in self.violated:
                continue
            if self.options.stop_at_first and self.found:
                break
            self.found.append(f)
            self.violated.add(f[0])

    # ------------------------------------------------------------ level 1 (driver side)

    def initial(self) -> Any:
        fps: list[int] = []
        states: list = []
        seen: set[int] = set()
        generated, inits, init_fps = self.expander.init_states()
        self.generated += generated
        for state, h in zip(inits, init_fps):
            fp = h & MASK64
            if fp in seen:
                continue
            seen.add(fp)
            fps.append(fp)
            states.append(state)
        if self.options.max_states is not None and len(fps) > self.options.max_states:
            fps, states = fps[:self.options.max_states], states[:self.options.max_states]
            self.limit_hit = "states"
        found: list[Found] = []
        for fp, state in zip(fps, states):
            for p in self.expander.check_invariants([state], [fp], 1):
                found.append((p.name, "invariant", 1, fp, None, None))
        self._record(found)
        self.distinct = self.frontier = len(fps)
        self.links.add(1, [np.asarray(fps, dtype=np.uint64)], [np.zeros(len(fps), np.uint64)])

        P = self.partitions
        records: list[tuple[int, tuple[str, Any]]] = []
        for pid in range(P):
            idx = [i for i, fp in enumerate(fps) if fp % P == pid]
            p_fps = [fps[i] for i in idx]
            p_states = [states[i] for i in idx]
            records.append((pid, ("V", np.sort(np.asarray(p_fps, dtype=np.uint64)))))
            records.append((pid, ("F", make_chunk(self.machine, p_fps, p_states, [0] * len(idx), [-1] * len(idx), pid))))
            if self.store is not None:
                self.store.write_part(1, pid, np.asarray(p_fps, dtype=np.uint64),
                                      np.zeros(len(idx), np.uint64), np.full(len(idx), -1, np.int16),
                                      p_states, self.machine)
        if self.frontier < self.driver_states:
            self._warm_up()
        return {pid: records[2 * pid:2 * pid + 2] for pid in range(P)}

    # ------------------------------------------------------------ checkpoints

    def _manifest_entry(self, seconds: float) -> None:
        if self.store is None:
            return
        assert self.manifest is not None
        self.manifest["levels"].append({
            "level": self.level, "new": self.frontier, "distinct": self.distinct,
            "generated": self.generated, "gen_cov": self.gen_cov, "new_cov": self.new_cov,
            "outside": self.out_cov, "partitions": self.partitions, "seconds": round(seconds, 3)})
        self.manifest["found"] = encode_found(self.found)
        self.store.write_manifest(self.manifest)

    def resume_or_start(self) -> Any | None:
        """The level dataset to continue from; None when a stored run has nothing left to do."""
        if self.store is None:
            return self.initial()
        if self.key is None:
            # Once, before exploring: the machine's attributes include memo tables that grow
            # during a run, so a recovery in the same process would not recognise its own run.
            self.key = run_key(self.machine, self.symmetry, self.checked,
                               self.options.check_deadlock, view=self.options.view)
        key = self.key
        manifest = self.store.load_manifest()
        if manifest is not None and manifest.get("run_key") != key:
            raise CheckpointError(
                f"checkpoint directory {self.store.uri} holds a different run (model, bounds or "
                "checked properties differ); use a new --checkpoint directory or delete it")
        if manifest is None or not manifest["levels"]:
            self.manifest = {"format": FORMAT, "run_key": key, "partitions": self.partitions,
                             "model": f"{type(self.machine).__module__}.{type(self.machine).__qualname__}",
                             "levels": [], "found": encode_found([]), "final": None}
            t0 = time.perf_counter()
            rdd = self.initial()
            self._manifest_entry(time.perf_counter() - t0)
            return rdd
        self.manifest = manifest
        last = manifest["levels"][-1]
        self.level, self.distinct, self.generated = last["level"], last["distinct"], last["generated"]
        self.frontier = last["new"]
        self.gen_cov, self.new_cov = dict(last["gen_cov"]), dict(last["new_cov"])
        self.out_cov = dict(last.get("outside", {}))  # absent from checkpoints written before 2026-11-27
        self.found = decode_found(manifest["found"])
        self.violated = {f[0] for f in self.found}
        self.resumed_from = self.level
        self.timings = [t for t in self.timings if t.level < self.level]
        self.notes.append(f"resumed from checkpoint {self.store.uri} at level {self.level}")
        final = manifest.get("final")
        if final is not None:  # the stored run explored everything
            self.generated, self.gen_cov = final["generated"], dict(final["gen_cov"])
            self.out_cov = dict(final.get("outside", {}))
            self.frontier = 0
            return None
        if self.found and self.options.stop_at_first:
            return None
        P = self.partitions
        # Each level's files are split the way the run that wrote it was partitioned.
        stored = {e["level"]: e.get("partitions", manifest["partitions"]) for e in manifest["levels"]}
        seeds = self.sc.parallelize([(p, p) for p in range(P)], P).partitionBy(P, identity_partition)
        return seeds.mapPartitionsWithIndex(  # computed by the first level's job
            partial(load_partition, self.machine, self.store, self.level, P, stored), preservesPartitioning=True)

    # ------------------------------------------------------------ jobs

    @contextlib.contextmanager
    def interruptible(self) -> Iterator[None]:
        """Ctrl-C, SIGTERM and SIGHUP during the run: cancel the running job from another thread
        and unwind once the driver's JVM call has returned. Raising inside the call (what Python
        and PySpark's own SIGINT handler do) leaves py4j's connection half-read: PySpark's handler
        then calls into the JVM on that same connection, and the way out prints dozens of lines of
        py4j tracebacks. The checkpoint stays consistent either way: a level is listed in its
        manifest only once complete."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return

        def on_signal(signum: int, frame: Any) -> None:
            if self.interrupted is not None:  # a second signal: stop waiting for the JVM
                raise _unwind(signum, previous.get(signum))
            self.interrupted = signum
            threading.Thread(target=self._cancel, name="eoscheck-cancel", daemon=True).start()

        signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
        previous: dict[int, Any] = {sig: signal.signal(sig, on_signal) for sig in signals}
        self.previous_handlers = previous
        try:
            yield
            self._check_interrupted()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _cancel(self) -> None:
        with contextlib.suppress(Exception):
            self.sc.cancelJobGroup(self.group)
            self.sc.cancelJobGroup(self.warm_group)

    def _check_interrupted(self) -> None:
        if self.interrupted is not None:
            raise _unwind(self.interrupted, self.previous_handlers.get(self.interrupted))

    def _run_job(self, action: Any, level: int) -> None:
        """Run one Spark job under the time limit (a timer cancels it at the deadline) and, on a
        cluster, under the executor watchdog."""
        self.sc.setJobGroup(self.group, f"eoscheck level {level}", True)
        timer = None
        if self.deadline is not None:
            timer = threading.Timer(max(0.0, self.deadline - time.perf_counter()),
                                    self.sc.cancelJobGroup, [self.group])
            timer.daemon = True
            timer.start()
        done = threading.Event()
        lost: list[str] = []
        watchdog = None
        if self.cluster:
            watchdog = threading.Thread(target=self._watch_executors, args=(done, lost),
                                        name="eoscheck-executor-watchdog", daemon=True)
            watchdog.start()
        self._check_interrupted()
        try:
            action()
            self._check_interrupted()
            if lost:
                # Spark recomputed the lost partitions from their lineage (the level's job never
                # truncates it: submitMapStage does not checkpoint); the counts are unaffected
                # since every report is keyed by (level, partition).
                self.notes.append(f"level {level}: {', '.join(lost)} during the run; Spark "
                                  "recomputed their partitions")
        except Exception as exc:
            self._check_interrupted()
            if self.deadline is not None and time.perf_counter() >= self.deadline:
                raise  # cancelled by the timer: the caller turns it into limit "time"
            if self.no_executors:
                raise SparkUnavailableError(self._no_executor_message()) from None
            raise SparkJobError(level, str(exc), lost=bool(lost)) from None
        finally:
            done.set()
            if timer is not None:
                timer.cancel()
            if watchdog is not None:
                watchdog.join(timeout=5)

    def _live_executors(self) -> int:
        # The driver's block manager is always listed.
        return max(0, int(self.sc._jsc.sc().getExecutorMemoryStatus().size()) - 1)

    def _say(self, message: str) -> None:
        print(f"eoscheck: spark: {message}", file=sys.stderr, flush=True)

    def _no_executor_message(self) -> str:
        master = self.sc.master
        return (f"no Spark executor alive on {master} for {self.executor_timeout:.0f} s: start a "
                f"worker ({spark_class()} org.apache.spark.deploy.worker.Worker {master}) or raise "
                "[check.spark] executor_timeout / --executor-timeout (0 waits for ever)")

    def _watch_executors(self, done: threading.Event, lost: list[str]) -> None:
        """While a job runs: notice executors that go away (so a failure is known to be a loss)
        and, with none alive, say so within seconds and then keep waiting (executor_timeout 0) or
        cancel the job after executor_timeout seconds (exit 2)."""
        notice = 10.0 if self.executor_timeout == 0 else min(10.0, self.executor_timeout)
        without: float | None = None
        said = 0.0
        while not done.wait(1.0):
            try:
                alive = self._live_executors()
            except Exception:  # noqa: BLE001  (py4j's errors: the gateway is going away, nothing to watch)
                return
            # (across jobs: an executor may go between two levels)
            if self.executors_alive > alive:
                lost.append(f"{self.executors_alive - alive} executor(s) lost")
                if self.store is not None:
                    # Spark would recompute the lost shuffle outputs from the lineage, back to
                    # the first level; the checkpoint's last complete level is much nearer.
                    # (counted as seen, so that the resumed run's jobs are not cancelled too)
                    self.executors_alive = alive
                    self.sc.cancelJobGroup(self.group)
                    return
            self.executors_alive = alive
            now = time.perf_counter()
            if alive:
                if without is not None and said:
                    self._say(f"{alive} executor(s) back on {self.sc.master}; continuing")
                without, said = None, 0.0
                continue
            if without is None:
                without = now
            waited = now - without
            if waited >= notice and now - said >= 30.0:
                said = now
                limit = ("waiting for ever (executor_timeout 0)" if self.executor_timeout == 0
                         else f"stopping after {self.executor_timeout:.0f} s")
                self._say(f"waiting for executors: none alive on {self.sc.master} for {waited:.0f} s "
                          f"(level {self.level}; {limit}); start a worker: {spark_class()} "
                          f"org.apache.spark.deploy.worker.Worker {self.sc.master}")
                if self.progress is not None:
                    self.progress.update(self.stats(), self.level, "waiting for executors")
            if self.executor_timeout and waited >= self.executor_timeout:
                self.no_executors = True
                self.sc.cancelJobGroup(self.group)
                return

    def _reports(self, kind: str, level: int) -> list[dict]:
        reports = self.report.value
        keys = sorted(k for k in reports if k[0] == kind and k[1] == level)
        return [reports.pop(k) for k in keys]

    def advance(self, source: Any, join: LevelArgs | None, expand: LevelArgs | None,
                level: int) -> Any:
        """One step: ``source``'s partitions anti-joined (``join``) and expanded (``expand``) by
        ``level_partition``, in one Python pass per partition; returns the next step's input, the
        visited set and the new candidates by fingerprint partition (None without ``expand``).
        ``source`` is a dict of partitions while the levels are small enough for the driver
        (``driver_states``), then a Spark shuffle."""
        if join is not None and self.store is not None and not join.last:
            # Files of an interrupted attempt at this level (perhaps with another P) must not mix in.
            import pyarrow.fs as pafs
            directory = self.store.level_dir(join.level + 1)
            if self.store.fs.get_file_info(directory).type != pafs.FileType.NotFound:
                self.store.fs.delete_dir(directory)
        if isinstance(source, dict):
            if self.frontier < self.driver_states:
                try:
                    return self._on_driver(source, join, expand)
                except Exception as exc:  # noqa: BLE001  (the model's own errors, whatever they are)
                    # the same one line as the model raising on an executor
                    raise SparkJobError(level, "".join(traceback.format_exception(exc))) from None
            source = self._to_spark(source)
        out = source.mapPartitionsWithIndex(
            partial(level_partition, self.broadcast, self.token, join, expand, self.report))
        if expand is None:
            self._run_job(lambda: out._jrdd.count(), level)
            return None
        shuffled = out.partitionBy(self.partitions, identity_partition)
        self.run_map_stage(shuffled, level)
        return shuffled

    def _on_driver(self, source: dict[int, list], join: LevelArgs | None,
                   expand: LevelArgs | None) -> dict[int, list] | None:
        """A small level in this process, by the executors' own code: a Spark job costs a few
        tenths of a second whatever its size, more than the first levels' few thousand states."""
        out: dict[int, list] = {p: [] for p in range(self.partitions)}
        for pid in range(self.partitions):
            self._check_interrupted()
            for key, record in level_partition(self.broadcast, self.token, join, expand, self.report,
                                               pid, iter(source[pid])):
                out[key].append((key, record))
        self._check_interrupted()
        return out if expand is not None else None

    def _to_spark(self, source: dict[int, list]) -> Any:
        """The driver's partitions as the first Spark level's input: partition p of the
        parallelized list is the driver's partition p (one element per slice)."""
        P = self.partitions
        return self.sc.parallelize([source[p] for p in range(P)], P).flatMap(_records)

    def _warm_up(self) -> None:
        """While the driver explores the first levels: start the executors' Python workers, unpack
        the run's machine there and move a few bytes through a shuffle, so that the first Spark
        level does not wait for any of it. A fresh executor's first shuffle (its JVM loading and
        compiling the shuffle's code) took 2-2.5 s against 0.4-0.6 s for the next one (load 11)."""
        threading.Thread(target=self._warm_job, name="eoscheck-warm-up", daemon=True).start()

    def _warm_job(self) -> None:
        with contextlib.suppress(Exception):
            self.sc.setJobGroup(self.warm_group, "eoscheck warm-up", True)
            P = self.partitions
            self.sc.parallelize([(p, b"") for p in range(P)], P) \
                .partitionBy(P, identity_partition) \
                .foreachPartition(partial(warm_partition, self.broadcast, self.token))
            self.warmed_at = self.elapsed()

    def run_map_stage(self, shuffled: Any, level: int) -> None:
        """Compute ``shuffled``'s map side only: the anti-join that feeds it and the expansion,
        in one stage, instead of a job of two stages per level. Then the shuffle this stage read
        is dropped from the executors' disks: each holds a level's visited set, and keeping every
        level's until the run ends would take the sum of the levels' visited sets."""
        jrdd = shuffled._jrdd.rdd()  # valueOfPair(ShuffledRDD)
        dependency = jrdd.dependencies().head().rdd().dependencies().head()
        self._run_job(lambda: self.sc._jsc.sc().submitMapStage(dependency).get(), level)
        read, self.shuffle_id = self.shuffle_id, dependency.shuffleId()
        if read is not None:
            self._drop_shuffle(read)

    def _drop_shuffle(self, shuffle_id: int) -> None:
        """What Spark's ContextCleaner does once nothing refers to a shuffle; here the next
        levels' lineage still does (so a lost executor without a checkpoint is recomputed from the
        first level). Best effort: the cleaner is Spark's internal API."""
        with contextlib.suppress(Exception):
            cleaner = self.sc._jsc.sc().cleaner()
            if cleaner.isDefined():
                cleaner.get().doCleanupShuffle(shuffle_id, False)

    # ------------------------------------------------------------ the run

    def _absorb_expansion(self, reports: list[dict]) -> None:
        found: list[Found] = []
        for r in reports:
            self.generated += r["generated"]
            self._add(self.gen_cov, r["gen_cov"])
            self._add(self.out_cov, r["outside"])
            found += [("deadlock", "deadlock", self.level, fp, None, None) for fp in r["deadlocks"]]
            found += [(n, "transition", self.level, pfp, step, nxt)
                      for n, pfp, step, nxt in r["transitions"]]
        self._record(found)

    def _absorb_antijoin(self, reports: list[dict]) -> int:
        found: list[Found] = []
        new = 0
        for r in reports:
            new += r["new"]
            self._add(self.new_cov, r["new_cov"])
            found += [(n, "invariant", self.level + 1, fp, None, None) for n, fp in r["invariants"]]
        if self.store is None and new:
            links = [r["links"] for r in reports]
            self.links.add(self.level + 1, [f for f, _ in links], [p for _, p in links])
        self._record(found)
        return new

    def _finish_manifest(self) -> None:
        if self.store is not None:
            assert self.manifest is not None  # a run with a store starts or resumes one
            self.manifest["found"] = encode_found(self.found)
            self.manifest["final"] = {"generated": self.generated, "gen_cov": self.gen_cov,
                                      "outside": self.out_cov}
            self.store.write_manifest(self.manifest)

    def run(self) -> Result:
        """Explore; after an executor loss, resume from the checkpoint's last complete level
        (when there is a checkpoint; without one the loss is a one-line error)."""
        while True:
            try:
                return self._run_once()
            except SparkJobError as exc:
                if not exc.lost or self.store is None or self.recoveries >= MAX_RECOVERIES:
                    raise
                self.recoveries += 1
                self.shuffle_id = None
                self._say(f"an executor was lost during level {self.level}; resuming from the last "
                          f"complete level in {self.store.uri} (recovery {self.recoveries} of "
                          f"{MAX_RECOVERIES})")
                self.notes.append(f"an executor was lost during level {self.level}: resumed from "
                                  "the checkpoint")
                self._reset()

    def _run_once(self) -> Result:
        opts = self.options
        if self.progress is not None:
            self.progress.start(f"spark {self.sc.master} ({self.partitions} partitions)")
        out = self.resume_or_start()
        if self.progress is not None:
            self.progress.update(self.stats(), self.level, "initial states" if not self.resumed_from
                                 else f"resumed at level {self.level}")
        if out is None or not self.frontier or self.limit_hit or (self.found and opts.stop_at_first):
            return self.result()
        t0 = time.perf_counter()
        try:
            shuffled = self.advance(out, None, self._args(last=False), self.level)
        except Exception:
            if self._timed_out():
                return self.result()
            raise
        xreports = self._reports("x", self.level)
        while True:
            # Here ``shuffled`` holds the visited set and the candidates of the next level, on
            # the driver (a dict of partitions) or in a Spark shuffle.
            self._absorb_expansion(xreports)
            if self.found and opts.stop_at_first:
                break
            if self._timed_out():
                break
            if opts.max_states is not None and self.distinct > opts.max_states:
                self.limit_hit = "states"
                break
            depth_cap = opts.max_depth is not None and self.level >= opts.max_depth
            states_cap = opts.max_states is not None and self.distinct >= opts.max_states
            if depth_cap or states_cap:
                # Count the new successors without keeping any: were there more states?
                try:
                    self.advance(shuffled, self._args(last=True), None, self.level)
                except Exception:
                    if self._timed_out():
                        break
                    raise
                new = sum(r["new"] for r in self._reports("a", self.level))
                if new:
                    self.limit_hit = "depth" if depth_cap else "states"
                elif not self.found:
                    self._finish_manifest()
                self.timings.append(LevelTiming(self.level, 0, self.distinct, time.perf_counter() - t0,
                                                isinstance(shuffled, dict)))
                self.frontier = 0
                break
            args = self._args(last=False)
            try:
                next_shuffled = self.advance(shuffled, args, LevelArgs(self.level + 1, False,
                                                                       args.violated, args.stop_at_first),
                                             self.level + 1)
            except Exception:
                if self._timed_out():
                    break
                raise
            new = self._absorb_antijoin(self._reports("a", self.level))
            seconds = time.perf_counter() - t0
            t0 = time.perf_counter()
            shuffled = next_shuffled
            self.distinct += new
            self.timings.append(LevelTiming(self.level, new, self.distinct, seconds,
                                            isinstance(next_shuffled, dict)))
            self.frontier = new
            if not new:
                self._finish_manifest()
                break
            self.level += 1
            self._manifest_entry(seconds)
            if self.progress is not None:
                self.progress.update(self.stats(), self.level,
                                     f"level {self.level}: {new:,} new states in {seconds:.2f} s")
            if self.found and opts.stop_at_first:
                break  # an invariant failed on the new level: its expansion does not count
            xreports = self._reports("x", self.level)
        return self.result()

    def close(self) -> None:
        """Free what this run left on the executors (the session may serve further runs)."""
        with contextlib.suppress(Exception):
            self.sc.cancelJobGroup(self.warm_group)
        if self.shuffle_id is not None:
            self._drop_shuffle(self.shuffle_id)
        self.report.value.clear()
        self.broadcast.destroy()

    def _args(self, last: bool) -> LevelArgs:
        return LevelArgs(self.level, last, frozenset(self.violated), self.options.stop_at_first)

    def _timed_out(self) -> bool:
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            self.limit_hit = "time"
            return True
        return False

    def result(self) -> Result:
        stats = self.stats()
        stats.observed_collision = self.links.observed_collision(self.distinct)
        violations = [self._violation(f) for f in self.found]
        opts = self.options
        verdict = verdict_of(violations, self.limit_hit)
        notes = list(self.notes) + limit_notes(self.limit_hit, opts)
        if self.limit_hit == "states" and self.distinct > (opts.max_states or 0):
            notes.append("the Spark engine checks limits between levels: it finished the level "
                         "that crossed the state limit")
        if self.progress is not None:
            self.progress.finish(stats)
        result = Result(verdict=verdict, strategy="spark", stats=stats, violations=violations,
                        limit_hit=self.limit_hit, notes=notes)
        # Extra, engine-specific figures (the benchmark reads them); not part of the contract.
        result.spark_levels = self.timings  # type: ignore[attr-defined]
        result.spark_partitions = self.partitions  # type: ignore[attr-defined]
        result.spark_resumed_from = self.resumed_from  # type: ignore[attr-defined]
        result.spark_warmed_at = self.warmed_at  # type: ignore[attr-defined]
        return result

    def _violation(self, f: Found) -> Violation:
        name, kind, level, fp, step, nxt = f
        trace = rebuild_trace(self.machine, self.links.chain(level, fp), self.expander.fp)
        if kind == "transition":
            trace.append(TraceStep(step, decode_states(self.machine, nxt)[0]))
        return Violation(property=name, kind=kind, trace=trace, found_length=len(trace),
                         shortened_by="bfs (shortest)")


def explore_spark(machine: Machine, options: ExploreOptions, progress: Progress | None = None) -> Result:
    """Level-synchronous BFS on Spark; raises SparkUnavailableError (no Java, unreachable master)
    and CheckpointError (a checkpoint directory of another run), each with a one-line message."""
    select_properties(machine, options.properties)  # bad property names fail before Spark starts
    t0 = time.perf_counter()
    with spark_session(SessionSettings.of(options), [machine]) as sc:
        started = time.perf_counter() - t0
        run = _SparkBFS(sc, machine, options, progress)
        if started > 1.0:  # not a session someone else had already started
            run.notes.append(f"Spark ({sc.master}) started in {started:.1f} s, not counted in the "
                             "exploration time")
        try:
            with run.interruptible():
                return run.run()
        finally:
            run.close()

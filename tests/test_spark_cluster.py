"""The Spark engine on a real standalone cluster: a master and workers started with the installed
PySpark's ``spark-class`` on 127.0.0.1 (``checker.explore.spark_cluster``).

A worker killed in the middle of a run and replaced by another: the run resumes from its
checkpoint's last complete level and ends with the BFS's counts. No worker at all: one line and
exit 2 within the configured time. The driver runs in a subprocess (a process holds one
SparkContext, and the other Spark tests share a local one); every JVM is in a process group that
the fixtures kill, so none outlives the test.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from eoscheck.checker.explore import explore
from eoscheck.checker.spec import build_machine, load_spec, spec_to_options

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parent.parent
#: a Kafka spec of 25,850 states over 28 levels: long enough to lose a worker in the middle
SPEC = ROOT / "specs" / "kip360-leader-failover.toml"
#: every wait below is bounded; the whole file takes about a minute on an idle 2-core machine
RUN_TIMEOUT = 600


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator:
    from eoscheck.checker.explore.spark_cluster import LocalCluster
    c = LocalCluster(workers=0, root=tmp_path / "cluster")
    c.start()
    try:
        yield c
    finally:
        c.stop()


def _driver(master: str, checkpoint: str, out: Path) -> subprocess.Popen:
    """A driver that prints one line per level and writes the result's counts to ``out``."""
    code = textwrap.dedent(f"""
        import json
        from eoscheck.checker.explore import explore
        from eoscheck.checker.spec import build_machine, load_spec, spec_to_options
        from dataclasses import replace

        class Levels:
            def start(self, label): pass
            def update(self, stats, level=None, note=""): print("level", level, note, flush=True)
            def finish(self, stats): pass

        spec = load_spec({str(SPEC)!r})
        options = replace(spec_to_options(spec), strategy="spark", spark_master={master!r},
                          checkpoint_dir={checkpoint!r}, spark_executor_timeout=300.0)
        r = explore(build_machine(spec), options, Levels())
        with open({str(out)!r}, "w") as f:
            json.dump({{"distinct": r.stats.distinct, "generated": r.stats.generated,
                       "depth": r.stats.depth, "verdict": r.verdict, "notes": r.notes}}, f)
        """)
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)


def test_worker_lost_mid_run_resumes_with_the_bfs_counts(cluster, tmp_path):
    spec = load_spec(SPEC)
    local = explore(build_machine(spec), spec_to_options(spec))
    cluster.add_worker()
    checkpoint = (tmp_path / "ck").as_uri()  # a Hadoop-style URI: file:///...
    out = tmp_path / "result.json"
    proc = _driver(cluster.master, checkpoint, out)
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + RUN_TIMEOUT
        level = 0
        while level < 8 and time.monotonic() < deadline:
            line = proc.stdout.readline()
            assert line, f"driver ended early: {proc.wait()} {proc.stderr.read() if proc.stderr else ''}"
            if line.startswith("level ") and line.split()[1].isdigit():
                level = int(line.split()[1])
        cluster.kill_worker(0)  # the worker, its executor and its Python workers: gone
        # The replacement starts only once the driver has said it waits for one (10 s after the last
        # executor went): started sooner, on an idle machine it registers before that notice is due.
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            assert line, f"driver ended early: {proc.wait()} {proc.stderr.read() if proc.stderr else ''}"
            if "waiting for executors" in line:
                break
        cluster.add_worker()
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        err = proc.stderr.read() if proc.stderr else ""
        assert code == 0, err
    finally:
        _stop(proc)
    got = json.loads(out.read_text())
    assert (got["distinct"], got["generated"], got["depth"], got["verdict"]) == \
        (local.stats.distinct, local.stats.generated, local.stats.depth, local.verdict)
    # The level data lived on the lost executor only (each level's lineage is truncated): the
    # engine resumed from the checkpoint's last complete level, said so, and ended with the BFS's counts.
    assert any("executor was lost" in n for n in got["notes"]), got["notes"]
    assert "eoscheck: spark: waiting for executors: none alive" in err, err
    assert "resuming from the last complete level" in err, err
    assert "Traceback" not in err
    manifest = json.loads((tmp_path / "ck" / "manifest.json").read_text())
    assert manifest["final"] is not None


def test_no_worker_is_one_line_and_exit_2(cluster, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from eoscheck.checker.cli import main; sys.exit(main())", "check", str(SPEC), "--engine", "spark",
         "--master", cluster.master, "--executor-timeout", "15", "--no-progress",
         "--out", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=RUN_TIMEOUT, start_new_session=True, check=False)
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert any(line.startswith("eoscheck: spark: waiting for executors") for line in lines), lines
    assert lines[-1].startswith("eoscheck: error: ") and "no Spark executor alive" in lines[-1]
    assert "org.apache.spark.deploy.worker.Worker" in lines[-1]
    assert "Traceback" not in proc.stderr and "py4j" not in proc.stderr

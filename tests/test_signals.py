"""Signals during a run: every engine ends with one line and 128 + the signal (143 for SIGTERM,
130 for Ctrl-C), and leaves no process and no temporary directory behind (/dev/shm for the
parallel engine, /tmp/eoscheck-spark-* for Spark)."""

from __future__ import annotations

import glob
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BIG = REPO / "specs" / "large" / "idempotence-benchmark.toml"
#: the exchange directories of the parallel run with this pid (``parallel._exchange_dir``); other
#: runs on the machine (a concurrent test session) have their own pid in the name
SHM = "/dev/shm/eoscheck-parallel-{pid}-*"


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (Linux /proc: children of each thread, recursively)."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        p = todo.pop()
        for children in glob.glob(f"/proc/{p}/task/*/children"):
            try:
                kids = [int(k) for k in Path(children).read_text().split()]
            except OSError:
                continue
            for k in kids:
                if k not in found:
                    found.add(k)
                    todo.append(k)
    return found


def alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


#: the console script's ``main``, the child taking Ctrl-C as a terminal delivers it. A launcher that runs the suite in
#: the background (``cmd &`` in a script with no job control) leaves SIGINT ignored, that disposition is inherited
#: across exec, and Python then installs no handler: the SIGINT test's run ignored its signal and ended normally (exit
#: 0; two clean-clone runs in session 23, started with ``nohup bash -c ... &``), as test_cli_robust's IMPORT_SIGNAL
#: explains for its own child
CHILD = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
         "from eoscheck.checker.entry import main; sys.exit(main())")


def start(engine: str, *extra: str, tmp: Path) -> subprocess.Popen:
    env = {**os.environ, "TMPDIR": str(tmp)}
    # the console script's module: it handles signals from its first line, so a signal that lands
    # while a loaded machine is still importing gets the same one line and exit code
    return subprocess.Popen([sys.executable, "-c", CHILD, "check", str(BIG),
                             "--engine", engine, "--no-progress", "--out", str(tmp / "cx"), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=tmp)


def wait_for(condition, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting for the run to get going")


def finish(proc: subprocess.Popen, timeout: float = 60.0) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def assert_one_line(err: str, fragment: str) -> None:
    assert err.count("\n") == 1 and fragment in err and "Traceback" not in err, err


def shm_of(proc: subprocess.Popen) -> set[str]:
    return set(glob.glob(SHM.format(pid=proc.pid)))


@pytest.mark.slow
@pytest.mark.parametrize("sig,code,fragment", [(signal.SIGTERM, 143, "terminated by SIGTERM"),
                                               (signal.SIGINT, 130, "interrupted")])
def test_parallel_signal_leaves_no_worker_and_no_shm(tmp_path, sig, code, fragment):
    proc = start("parallel", "--workers", "2", tmp=tmp_path)
    wait_for(lambda: len(descendants(proc.pid)) >= 2 and shm_of(proc))
    time.sleep(0.5)  # inside the level loop
    workers = descendants(proc.pid)
    proc.send_signal(sig)
    rc, _, err = finish(proc)
    assert rc == code, err  # (what the run printed: an ignored signal ends it normally, rc 0)
    assert_one_line(err, fragment)
    wait_for(lambda: not any(alive(w) for w in workers), timeout=10)
    assert shm_of(proc) == set()


@pytest.mark.slow
def test_parallel_worker_that_dies_is_one_line_exit_2(tmp_path):
    proc = start("parallel", "--workers", "2", tmp=tmp_path)
    wait_for(lambda: len(descendants(proc.pid)) >= 2)
    time.sleep(0.5)
    workers = sorted(descendants(proc.pid))
    os.kill(workers[0], signal.SIGKILL)
    rc, _, err = finish(proc)
    assert rc == 2
    assert_one_line(err, "parallel engine")
    assert "WorkerError" not in err
    wait_for(lambda: not any(alive(w) for w in workers), timeout=10)
    assert shm_of(proc) == set()


@pytest.mark.slow
def test_parallel_workers_die_with_a_killed_parent(tmp_path):
    """SIGKILL cannot be caught; the workers must still not live on (blocked on a pipe) forever."""
    proc = start("parallel", "--workers", "2", tmp=tmp_path)
    wait_for(lambda: len(descendants(proc.pid)) >= 2)
    time.sleep(0.5)
    workers = descendants(proc.pid)
    proc.kill()
    proc.communicate(timeout=30)
    wait_for(lambda: not any(alive(w) for w in workers), timeout=10)
    assert shm_of(proc) == set()  # the orphaned workers removed it: nobody else is left to


@pytest.mark.slow
@pytest.mark.parametrize("engine,extra", [("bfs", ()), ("dfs", ()),
                                          ("simulate", ("--walks", "100000000"))])
def test_single_process_engines_end_on_sigterm(tmp_path, engine, extra):
    proc = start(engine, *extra, tmp=tmp_path)
    time.sleep(3.0)  # imported and exploring
    assert proc.poll() is None
    proc.send_signal(signal.SIGTERM)
    rc, _, err = finish(proc)
    assert rc == 143
    assert_one_line(err, "terminated by SIGTERM")
    assert list(tmp_path.glob("*")) in ([], [tmp_path / "cx"])  # no temporary file left in TMPDIR


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("ending", ["sigterm", "normal", "error"])
def test_spark_leaves_no_temporary_directory(tmp_path, ending):
    spark_dirs = lambda: glob.glob(str(tmp_path / "eoscheck-spark-*"))
    if ending == "normal":
        small = REPO / "specs" / "examples" / "diehard-big-jug-reaches-4.toml"
        env = {**os.environ, "TMPDIR": str(tmp_path)}
        done = subprocess.run([sys.executable, "-m", "eoscheck.checker.cli", "check", str(small),
                               "--engine", "spark", "--no-progress", "--out", str(tmp_path / "cx")],
                              capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300, check=False)
        assert done.returncode == 0, done.stderr
    elif ending == "error":
        env = {**os.environ, "TMPDIR": str(tmp_path)}
        done = subprocess.run([sys.executable, "-m", "eoscheck.checker.cli", "check", str(BIG),
                               "--engine", "spark", "--no-progress", "--out", str(tmp_path / "cx"),
                               "--checkpoint", str(tmp_path / "ck"), "--max-states", "1"],
                              capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300, check=False)
        assert done.returncode in (0, 1, 2), done.stderr
    else:
        proc = start("spark", tmp=tmp_path)
        wait_for(spark_dirs, timeout=120)
        time.sleep(15)  # the JVM is up and the first levels run
        children = descendants(proc.pid)
        proc.send_signal(signal.SIGTERM)
        rc, _, err = finish(proc, timeout=120)
        assert rc == 143
        assert err.strip().count("\n") == 0 and "Traceback" not in err, err
        wait_for(lambda: not any(alive(c) for c in children), timeout=30)
    assert spark_dirs() == []


def test_terminated_unwinds_finally_blocks_in_process():
    """The CLI's handler turns SIGTERM into an exception, so `finally` (engine cleanup) runs."""
    from eoscheck.checker.signals import Terminated, handle_termination

    cleaned = []
    with pytest.raises(Terminated) as info, handle_termination():
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        finally:
            cleaned.append(True)
    assert cleaned == [True] and info.value.exit_code == 143
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL

"""A Spark standalone cluster on this machine, from the installed PySpark, for tests and benchmarks.

The pip package ships ``bin/spark-class`` but not the ``sbin/start-*.sh`` scripts of a Spark
download; a master and workers are the Java classes ``org.apache.spark.deploy.master.Master`` and
``org.apache.spark.deploy.worker.Worker`` started through it. Everything binds to 127.0.0.1 (the
master, the workers, their web UIs; the master's REST server is off), each daemon runs in its own
process group so that stopping it also ends the executors and Python workers it started, and its
logs, work and scratch directories live under one temporary directory removed by ``stop``.

    with LocalCluster(workers=2) as cluster:
        explore(machine, ExploreOptions(strategy="spark", spark_master=cluster.master))
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Self

from .spark_session import find_java, spark_class

HOST = "127.0.0.1"


class ClusterError(RuntimeError):
    """A daemon did not come up in time; the message names its log."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


@dataclass
class Daemon:
    name: str
    proc: subprocess.Popen
    log: Path

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Signal the daemon's whole process group (its executors and their Python workers)."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)
        # children that left the group's leader behind (executor JVMs) die with the group
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@dataclass
class LocalCluster:
    """A standalone master and ``workers`` workers of ``cores`` cores and ``memory`` each."""

    workers: int = 1
    cores: int = 1
    memory: str = "1g"
    start_timeout: float = 120.0
    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="eoscheck-cluster-")))
    port: int = 0
    master_daemon: Daemon | None = None
    worker_daemons: list[Daemon] = field(default_factory=list)

    @property
    def master(self) -> str:
        return f"spark://{HOST}:{self.port}"

    def _env(self, name: str) -> dict[str, str]:
        env = dict(os.environ)
        env.update({
            "SPARK_LOCAL_IP": HOST,
            "SPARK_LOG_DIR": str(self.root / "logs"),
            "SPARK_PID_DIR": str(self.root),
            "SPARK_LOCAL_DIRS": str(self.root / "scratch" / name),
            # the master's REST submission server listens on a fixed port: off
            "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
            # a dead application's files are removed by stop() anyway
            "SPARK_WORKER_OPTS": "-Dspark.worker.cleanup.enabled=false",
        })
        return env

    def _launch(self, name: str, args: list[str]) -> Daemon:
        (self.root / "logs").mkdir(parents=True, exist_ok=True)
        (self.root / "scratch" / name).mkdir(parents=True, exist_ok=True)
        log = self.root / "logs" / f"{name}.log"
        with log.open("ab") as out:
            proc = subprocess.Popen([spark_class(), *args], stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, env=self._env(name),
                                    start_new_session=True)
        return Daemon(name, proc, log)

    def _wait_for(self, daemon: Daemon, text: str) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if text in daemon.log.read_text(errors="replace"):
                return
            if not daemon.alive():
                break
            time.sleep(0.3)
        raise ClusterError(f"Spark {daemon.name} did not start within {self.start_timeout:.0f} s "
                           f"(log: {daemon.log})")

    def start(self) -> LocalCluster:
        find_java()
        try:
            self.port = self.port or free_port()
            self.master_daemon = self._launch("master", [
                "org.apache.spark.deploy.master.Master", "--host", HOST, "--port", str(self.port),
                "--webui-port", str(free_port())])
            self._wait_for(self.master_daemon, "I have been elected leader")
            for _ in range(self.workers):
                self.add_worker()
        except BaseException:
            self.stop()
            raise
        return self

    def add_worker(self, wait: bool = True) -> Daemon:
        """Start one more worker (it registers with the master; executors follow)."""
        n = len(self.worker_daemons) + 1
        name = f"worker{n}"
        work = self.root / "work" / name
        work.mkdir(parents=True, exist_ok=True)
        daemon = self._launch(name, [
            "org.apache.spark.deploy.worker.Worker", self.master, "--host", HOST,
            "--cores", str(self.cores), "--memory", self.memory, "--webui-port", str(free_port()),
            "--work-dir", str(work)])
        self.worker_daemons.append(daemon)
        if wait:
            self._wait_for(daemon, "Successfully registered with master")
        return daemon

    def kill_worker(self, index: int = 0) -> None:
        """SIGKILL a worker and everything it started: a machine lost."""
        self.worker_daemons[index].kill(signal.SIGKILL)

    def stop(self) -> None:
        for daemon in [*self.worker_daemons, *([self.master_daemon] if self.master_daemon else [])]:
            daemon.kill(signal.SIGTERM)
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

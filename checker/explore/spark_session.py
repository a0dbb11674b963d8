"""Getting a Spark session for the Spark engine, and giving it back: Java and master checks, quiet
logging, loopback binding, shipping the project's code, and stopping the JVM on every way out.

Rules kept here so that ``spark.py`` only explores:

* **One-line errors.** Java missing or too old, a bad ``JAVA_HOME``, an unreachable master or a
  failed start raise ``SparkUnavailableError`` whose message says the fix in one line. They are
  checked before the JVM is launched, because PySpark's own failure is a Java stack trace or a
  minute of connection retries.
* **Quiet.** Unless ``EOSCHECK_SPARK_VERBOSE=1``, the JVM's stdout/stderr go to a log file (its
  path is in ``session_log()`` and in error messages) and log4j is set to ERROR; no console
  progress bar, no web UI.
* **Loopback** for local masters (``SPARK_LOCAL_IP``, driver host and bind address 127.0.0.1):
  nothing listens on a public interface. A cluster master needs a driver the executors can reach,
  so for those the usual Spark settings (``SPARK_LOCAL_IP``, ``spark.driver.host``) apply.
* **Code on executors.** Local masters get the driver's ``sys.path`` (so a model defined anywhere
  the driver can import works); other masters get the ``eoscheck`` package, and the machine's own
  package when it is not installed, as zip files through ``addPyFile``.
* **One session per process**, reused when one is already running (the tests share one); a
  session this module started is stopped in a ``finally`` and on SIGTERM/SIGHUP, so a killed
  driver does not leave a JVM behind.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import importlib
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from .errors import EngineSetupError
from .spark_config import DEFAULT_MASTER, resolve_master

MIN_JAVA = 17
JAVA_FIX = "install a JDK 17 (apt-get install openjdk-17-jre-headless) or set JAVA_HOME"


class SparkUnavailableError(EngineSetupError, RuntimeError):
    """Spark cannot run here; the message is one line that says how to fix it."""


def verbose() -> bool:
    return os.environ.get("EOSCHECK_SPARK_VERBOSE", "") not in ("", "0")


def is_local_master(master: str) -> bool:
    return master == "local" or master.startswith(("local[", "local-cluster"))


# ---------------------------------------------------------------- pre-flight checks

def find_java() -> tuple[str, int]:
    """(java executable, major version) as Spark's launcher would pick it, or SparkUnavailableError."""
    home = os.environ.get("JAVA_HOME")
    if home:
        java = os.path.join(home, "bin", "java")
        if not os.access(java, os.X_OK):
            raise SparkUnavailableError(
                f"Java not found: JAVA_HOME={home} has no bin/java; {JAVA_FIX}")
    else:
        found = shutil.which("java")
        if found is None:
            raise SparkUnavailableError(f"Java not found: {JAVA_FIX}")
        java = found
    try:
        proc = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SparkUnavailableError(f"Java at {java} does not run ({exc}); {JAVA_FIX}") from None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', proc.stderr + proc.stdout)
    if proc.returncode != 0 or match is None:
        raise SparkUnavailableError(f"Java at {java} does not run; {JAVA_FIX}")
    major = int(match.group(1))
    if major == 1 and match.group(2):  # "1.8.0" style
        major = int(match.group(2))
    if major < MIN_JAVA:
        raise SparkUnavailableError(
            f"Java {major} found at {java}; Spark 4 needs Java {MIN_JAVA} or newer: {JAVA_FIX}")
    return java, major


def loopback_master(master: str) -> bool:
    """A spark:// master on a loopback address (a cluster on this machine only)."""
    if not master.startswith("spark://"):
        return False
    hosts = [h.rpartition(":")[0] for h in master[len("spark://"):].split(",")]
    return all(h == "localhost" or h.startswith("127.") for h in hosts)


def _tcp_reachable(host: str, port: int, timeout: float = 5.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def check_master(master: str) -> None:
    """Fail fast (seconds, not Spark's minute of retries) when a master cannot be reached."""
    if is_local_master(master):
        return
    if master.startswith("spark://"):
        hosts = master[len("spark://"):].split(",")
        for hostport in hosts:
            host, _, port = hostport.rpartition(":")
            if not host or not port.isdigit():
                raise SparkUnavailableError(
                    f"bad Spark master {master!r}: use spark://HOST:PORT (e.g. spark://node1:7077)")
            if _tcp_reachable(host, int(port)):
                return
        raise SparkUnavailableError(
            f"Spark master {master} is unreachable: start one with the pip package's spark-class "
            f"({spark_class()} org.apache.spark.deploy.master.Master --host HOST --port PORT, then "
            f"... org.apache.spark.deploy.worker.Worker {master}) or fix the master "
            "(--master, [check.spark] master, SPARK_MASTER)")
    if master.startswith("k8s://"):
        url = urlparse(master[len("k8s://"):])
        api_host, api_port = url.hostname, url.port or (443 if url.scheme == "https" else 80)
        if api_host is None or not _tcp_reachable(api_host, api_port):
            raise SparkUnavailableError(
                f"Kubernetes API server of {master} is unreachable: check the URL (k8s://https://HOST:PORT)")
        return
    if master == "yarn":
        if not (os.environ.get("HADOOP_CONF_DIR") or os.environ.get("YARN_CONF_DIR")):
            raise SparkUnavailableError(
                "master yarn needs the cluster's configuration: set HADOOP_CONF_DIR (or YARN_CONF_DIR)")
        return
    raise SparkUnavailableError(
        f"unknown Spark master {master!r}: use local[*], spark://HOST:PORT, yarn or k8s://https://HOST:PORT")


def spark_class() -> str:
    """The launcher of Spark's Java classes in the installed PySpark (the pip package ships
    ``bin/spark-class``, not the ``sbin/start-*.sh`` scripts of a Spark download)."""
    try:
        import pyspark
        return str(Path(pyspark.__file__).parent / "bin" / "spark-class")
    except ImportError:
        return "spark-class"


# ---------------------------------------------------------------- code shipping

def _installed_dirs() -> set[Path]:
    paths = sysconfig.get_paths()
    return {Path(paths[k]).resolve() for k in ("purelib", "platlib", "stdlib") if k in paths}


def _zip_package(name: str, out_dir: Path) -> Path | None:
    """A zip importable as ``name`` (package or module); follows setup.py's directory mapping."""
    module = importlib.import_module(name)
    target = out_dir / f"{name.replace('.', '_')}.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        if not hasattr(module, "__path__"):  # a plain module
            assert module.__file__ is not None  # imported from a file, not built in
            zf.write(module.__file__, f"{name}.py")
            return target
        # A package whose subpackages may live in other directories (eoscheck.checker is checker/):
        # walk the package tree through the import system, not the file system.
        stack = [name]
        while stack:
            pkg_name = stack.pop()
            pkg = importlib.import_module(pkg_name)
            prefix = pkg_name.replace(".", "/")
            subpackages: set[str] = set()
            for directory in pkg.__path__:
                root = Path(directory)
                for path in sorted(root.glob("*.py")):
                    zf.write(path, f"{prefix}/{path.name}")
                for sub in sorted(root.iterdir()):
                    if sub.is_dir() and (sub / "__init__.py").exists():
                        subpackages.add(sub.name)
            # Subpackages mapped from elsewhere (setup.py's package_dir) are not below the
            # package's directory; the ones imported so far are in sys.modules.
            for loaded, mod in list(sys.modules.items()):
                if loaded.startswith(pkg_name + ".") and "." not in loaded[len(pkg_name) + 1:] \
                        and hasattr(mod, "__path__"):
                    subpackages.add(loaded[len(pkg_name) + 1:])
            stack.extend(f"{pkg_name}.{sub}" for sub in sorted(subpackages))
    return target


def ship_code(sc: Any, machine: Any, workdir: Path, skip: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """addPyFile the eoscheck package, and the machine's top-level package when it is not
    installed (a user model given as module:ATTR), so executors can unpickle the machine."""
    names = ["eoscheck"]
    top = type(machine).__module__.split(".")[0]
    if top not in ("eoscheck", "__main__"):
        mod = sys.modules.get(top)
        origin = Path(getattr(mod, "__file__", "") or "").resolve()
        if not any(d in origin.parents for d in _installed_dirs()):
            names.append(top)
    shipped = []
    for name in names:
        if name in skip:
            continue
        path = _zip_package(name, workdir)
        if path is not None:
            sc.addPyFile(str(path))
            shipped.append(name)
    return shipped


# ---------------------------------------------------------------- starting and stopping

_LOG4J = """\
rootLogger.level = {level}
rootLogger.appenderRef.console.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{{HH:mm:ss}} %p %c{{1}}: %m%n
"""

_log_path: Path | None = None

#: JVM options of the driver and the executors, for a faster start: a session's start is mostly
#: JVMs loading and compiling classes, the driver's and every executor's at the same time; C1
#: only (TieredStopAtLevel=1) compiles much less during start-up, and the JVM's work here
#: (moving pickled bytes) does not need C2's code. EOSCHECK_SPARK_JVM_OPTIONS replaces them.
FAST_START = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto"


def jvm_options() -> str:
    return os.environ.get("EOSCHECK_SPARK_JVM_OPTIONS", FAST_START)


def session_log() -> Path | None:
    """Where the JVM's output went (None when verbose or no session was started here)."""
    return _log_path


@contextlib.contextmanager
def _jvm_output_to(path: Path | None) -> Iterator[None]:
    """The JVM inherits fds 1 and 2 when it is launched: point them at ``path`` for the launch."""
    if path is None:
        yield
        return
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for f in (fd, *saved):
            os.close(f)


def default_partitions(sc: Any, explicit: int | None = None) -> int:
    """Partitions per level: ``explicit`` ([check.spark] partitions, --partitions), else
    EOSCHECK_SPARK_PARTITIONS, else one per core (fewer were faster on 2 cores; see performance
    notes)."""
    from .spark_config import resolve_partitions
    return resolve_partitions(explicit, max(1, int(sc.defaultParallelism)))


@dataclasses.dataclass(frozen=True)
class SessionSettings:
    """What a Spark session is started with; one session serves every spec of a run."""

    master: str
    conf: tuple[tuple[str, str], ...] = ()
    #: the master was named (command line or spec), not found in SPARK_MASTER, the conf file or
    #: the default: a running session on another master is then an error, not a fallback
    explicit: bool = False

    @staticmethod
    def of(options: Any) -> SessionSettings:
        """The session an ExploreOptions asks for (master resolved through SPARK_MASTER and
        spark-defaults.conf when neither the command line nor the spec names one)."""
        master, _ = resolve_master(options.spark_master)
        conf = dict(options.spark_conf)
        if options.spark_executor_memory:
            conf["spark.executor.memory"] = options.spark_executor_memory
        if options.spark_driver_memory:
            conf["spark.driver.memory"] = options.spark_driver_memory
        return SessionSettings(master, tuple(sorted(conf.items())), options.spark_master is not None)


def quiet_py4j() -> None:
    """py4j logs every broken gateway call (a Ctrl-C inside a JVM call, the JVM going away) with a
    traceback through Python's last-resort handler: dozens of lines on an interrupt. The CLI
    prints one line instead; EOSCHECK_SPARK_VERBOSE=1 keeps them."""
    if verbose():
        return
    for name in ("py4j", "py4j.java_gateway", "py4j.clientserver"):
        logger = logging.getLogger(name)
        logger.setLevel(logging.CRITICAL + 1)
        logger.propagate = False


def start_session(master: str = DEFAULT_MASTER, app_name: str = "eoscheck",
                  conf: dict[str, str] | None = None) -> Any:
    """Start (or join) a SparkSession with the settings the engine needs; raises SparkUnavailableError."""
    global _log_path, _workdir
    from pyspark import SparkContext

    active = SparkContext._active_spark_context
    if active is not None:
        from pyspark.sql import SparkSession
        return SparkSession(active) if SparkSession.getActiveSession() is None else SparkSession.getActiveSession()

    find_java()
    check_master(master)
    quiet_py4j()
    local = is_local_master(master)
    if local or loopback_master(master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # Executors must run this interpreter (same version, same installed packages); on a cluster
    # whose nodes have another Python, PYSPARK_PYTHON set by the user wins.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    workdir = Path(tempfile.mkdtemp(prefix="eoscheck-spark-"))
    _workdir = workdir
    # The JVM reads its log settings from here and logs into it until it stops: removed when the
    # session stops (stop_session), and at exit as a last resort.
    atexit.register(shutil.rmtree, workdir, True)
    log4j = workdir / "log4j2.properties"
    log4j.write_text(_LOG4J.format(level="warn" if verbose() else "error"))
    _log_path = None if verbose() else workdir / "spark.log"

    from pyspark.sql import SparkSession
    builder = (SparkSession.builder.master(master).appName(app_name)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.python.worker.reuse", "true")
               # Small levels: many tiny tasks cost more than they parallelise.
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.sql.adaptive.enabled", "true")
               # Spark's own scratch space (shuffle files, block manager) under our workdir, so
               # that nothing of the driver's outlives the run.
               .config("spark.local.dir", str(workdir))
               # a level's tasks read the shuffle from every executor anyway: no waiting for a
               # "local" executor while another one is free
               .config("spark.locality.wait", "0")
               .config("spark.driver.extraJavaOptions", f"{jvm_options()} -Dlog4j.configurationFile=file:{log4j}")
               .config("spark.executor.extraJavaOptions", f"{jvm_options()} -Dlog4j.configurationFile=file:{log4j}"))
    if local:
        # In local mode the executors live in the driver's JVM: the cached levels share its heap.
        memory = os.environ.get("EOSCHECK_SPARK_DRIVER_MEMORY", "2g")
        builder = (builder.config("spark.driver.memory", memory)
                   .config("spark.driver.host", "127.0.0.1")
                   .config("spark.driver.bindAddress", "127.0.0.1")
                   # Python workers import what the driver imports (models outside the package).
                   .config("spark.executorEnv.PYTHONPATH",
                           os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))))
    elif loopback_master(master) or os.environ.get("SPARK_LOCAL_IP", "").startswith("127."):
        # A cluster on this machine only (a master on loopback can only have workers here): the
        # driver listens on loopback too, not on the machine's other addresses.
        ip = os.environ.get("SPARK_LOCAL_IP", "127.0.0.1")
        ip = ip if ip.startswith("127.") else "127.0.0.1"
        builder = builder.config("spark.driver.host", ip).config("spark.driver.bindAddress", ip)
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    try:
        with _jvm_output_to(_log_path):
            spark = builder.getOrCreate()
    except Exception as exc:  # noqa: BLE001  (PySpark raises plain Exceptions/RuntimeErrors from the launcher)
        where = f" (details in {_log_path})" if _log_path else ""
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        stop_session(None)
        raise SparkUnavailableError(f"Spark did not start on {master}: {first}{where}") from None
    spark.sparkContext.setLogLevel("WARN" if verbose() else "ERROR")
    return spark


_workdir: Path | None = None
_shipped: set[str] = set()


def stop_session(spark: Any) -> None:
    """Stop the JVM and remove this process's Spark scratch directory."""
    global _workdir, _log_path
    if spark is not None:
        with contextlib.suppress(Exception):
            spark.stop()
    if _workdir is not None:
        shutil.rmtree(_workdir, ignore_errors=True)
        _workdir = None
        _log_path = None
    _shipped.clear()


def shutdown_jvm(timeout: float = 20.0) -> None:
    """End the JVM PySpark launched for this process and wait for it, for a process about to exit.

    ``spark.stop()`` keeps the gateway JVM for a later session; it only notices its parent is gone
    when the parent's end of its stdin closes, at exit, and then spends a few tenths of a second in
    shutdown hooks: the CLI returned with an orphan JVM still running. Here its stdin is closed
    and the JVM is waited for (killed if it does not go), before the CLI exits."""
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    proc = getattr(gateway, "proc", None)
    if gateway is None or proc is None:
        return
    with contextlib.suppress(Exception):
        gateway.shutdown()
    with contextlib.suppress(Exception):
        if proc.stdin is not None:
            proc.stdin.close()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
    SparkContext._gateway = None
    SparkContext._jvm = None


def _ship(sc: Any, machines: list[Any]) -> None:
    """addPyFile what executors of a cluster need to unpickle ``machines`` (once per session)."""
    if is_local_master(sc.master) or _workdir is None:
        return
    for machine in machines:
        key = type(machine).__module__.split(".")[0]
        if key in _shipped:
            continue
        for name in ship_code(sc, machine, _workdir, skip=_shipped):
            _shipped.add(name)
        _shipped.add(key)


def _check_joined(active: Any, settings: SessionSettings) -> None:
    """A run may join the running session only if it asks for nothing that session lacks."""
    if settings.explicit and settings.master != active.master:
        raise SparkUnavailableError(
            f"this process already runs Spark on {active.master}; cannot also use {settings.master} "
            "(one Spark session serves a whole run: give every spec the same [check.spark] master)")
    conf = active.getConf()
    for key, value in settings.conf:
        have = conf.get(key, None)
        if have is not None and have != value:
            raise SparkUnavailableError(
                f"this process already runs Spark with {key}={have}; cannot also use {value} "
                "(one Spark session serves a whole run: give every spec the same [check.spark] settings)")


_held: list[Any] | None = None


@contextlib.contextmanager
def one_session_for_all() -> Iterator[None]:
    """Keep the first Spark session that an exploration starts inside this block running for the
    next ones (a CLI run of several specs), and stop it on the way out. The session still starts
    lazily, so a spec that fails its own checks (properties, views) does so before any JVM."""
    global _held
    if _held is not None:  # nested: the outer block stops it
        yield
        return
    _held = []
    try:
        yield
    finally:
        held, _held = _held, None
        for spark in held:
            stop_session(spark)


@contextlib.contextmanager
def spark_session(settings: SessionSettings, machines: list[Any]) -> Iterator[Any]:
    """The SparkContext for one or more explorations: joins a running one (the CLI starts one for
    all specs of a run; the tests share one), else starts one and stops it on the way out (normal
    return, exception, SIGTERM or SIGHUP)."""
    from pyspark import SparkContext

    active = SparkContext._active_spark_context
    if active is not None:
        _check_joined(active, settings)
        _ship(active, machines)
        yield active
        return
    previous: dict[int, Any] = {}
    received: list[int] = []

    def on_signal(signum: int, frame: Any) -> None:
        # Unwind to the finally below, which stops the JVM; exit code 128+signal as a shell would.
        received.append(signum)
        raise SystemExit(128 + signum)

    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            previous[sig] = signal.signal(sig, on_signal)
    spark = None
    try:
        spark = start_session(settings.master, conf=dict(settings.conf))
        if _held is not None:
            _held.append(spark)  # a run of several specs: stopped by one_session_for_all
        sc = spark.sparkContext
        _ship(sc, machines)
        try:
            yield sc
        except BaseException:
            # A signal that lands inside a py4j call leaves the gateway half-read, and the next JVM
            # call on the way out raises a Py4JError over our SystemExit: keep the signal's exit code.
            if received:
                raise SystemExit(128 + received[0]) from None
            raise
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if _held is None or spark is None:
            stop_session(spark)

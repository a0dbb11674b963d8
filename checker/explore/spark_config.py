"""Where the Spark engine's settings come from: a spec's ``[check.spark]`` table, the
environment and Spark's own configuration file, and the command line.

Precedence, highest first: command line (``--master``, ``--checkpoint``, ``--partitions``,
``--executor-memory``, ``--executor-timeout``), the spec's ``[check.spark]``, ``SPARK_MASTER``
(and ``EOSCHECK_SPARK_PARTITIONS``), ``spark.master`` in ``spark-defaults.conf`` (in
``$SPARK_CONF_DIR``, else ``$SPARK_HOME/conf``), and ``local[*]``. Every other ``spark.*``
setting of ``spark-defaults.conf`` is applied by Spark itself when the session starts; a spec's
``[check.spark.conf]`` table adds settings on top of it.

Nothing here imports PySpark: a spec is validated before any engine is loaded.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_MASTER = "local[*]"
#: seconds a run waits with no live executor before it stops with exit 2 (0: wait for ever)
DEFAULT_EXECUTOR_TIMEOUT = 120.0

_MEMORY = re.compile(r"^[1-9][0-9]*[kKmMgGtT]?[bB]?$")
_MASTER = re.compile(r"^(local(\[(\*|[1-9][0-9]*)(,[0-9]+)?\])?|local-cluster\[.+\]|spark://.+|yarn|k8s://.+)$")


class SparkConfigError(ValueError):
    """A Spark setting of the wrong type or value; one line."""


@dataclass(frozen=True)
class SparkSettings:
    """The ``[check.spark]`` table (None: not set)."""

    master: str | None = None
    executor_memory: str | None = None
    driver_memory: str | None = None
    partitions: int | None = None
    checkpoint: str | None = None
    executor_timeout: float | None = None
    driver_states: int | None = None
    conf: tuple[tuple[str, str], ...] = ()


# key -> (accepted types, description for errors)
SPARK_KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "master": ((str,), "a Spark master URL (local[*], spark://HOST:PORT, yarn, k8s://https://HOST:PORT)"),
    "executor_memory": ((str,), "a JVM memory size such as \"2g\" or \"512m\""),
    "driver_memory": ((str,), "a JVM memory size such as \"2g\" or \"512m\""),
    "partitions": ((int,), "a positive integer"),
    "checkpoint": ((str,), "a directory or Hadoop-compatible URI (file://, hdfs://, s3a://)"),
    "executor_timeout": ((int, float), "a number of seconds (0: wait for ever)"),
    "driver_states": ((int,), "a number of states (0: every level on Spark)"),
    "conf": ((dict,), "a table of spark.* settings"),
}


def check_master(value: str, where: str) -> str:
    if not _MASTER.match(value):
        raise SparkConfigError(f"{where} must be {SPARK_KEYS['master'][1]}, got {value!r}")
    return value


def check_memory(value: str, where: str) -> str:
    if not _MEMORY.match(value):
        raise SparkConfigError(f"{where} must be {SPARK_KEYS['executor_memory'][1]}, got {value!r}")
    return value


def parse_table(table: dict[str, Any], prefix: str = "check.spark") -> SparkSettings:
    """Validate a ``[check.spark]`` table; SparkConfigError names the key."""
    unknown = sorted(set(table) - set(SPARK_KEYS))
    if unknown:
        raise SparkConfigError(f"unknown key {prefix}.{unknown[0]}; valid keys: {', '.join(SPARK_KEYS)}")
    values: dict[str, Any] = {}
    value: Any
    for key, value in table.items():
        types, described = SPARK_KEYS[key]
        where = f"{prefix}.{key}"
        ok = not isinstance(value, bool) and isinstance(value, types)  # (a bool var: no narrowing to object)
        if not ok:
            raise SparkConfigError(f"{where} must be {described}, got {value!r}")
        if key == "master":
            check_master(value, where)
        elif key in ("executor_memory", "driver_memory"):
            check_memory(value, where)
        elif key == "partitions" and value < 1:
            raise SparkConfigError(f"{where} must be at least 1, got {value}")
        elif key == "driver_states" and value < 0:
            raise SparkConfigError(f"{where} must be 0 or more, got {value}")
        elif key == "executor_timeout" and value < 0:
            raise SparkConfigError(f"{where} must be 0 or more seconds, got {value}")
        elif key == "checkpoint" and not value.strip():
            raise SparkConfigError(f"{where} is empty; omit it for a run without checkpoints")
        if key == "conf":
            pairs = []
            for name, setting in value.items():
                if not name.startswith("spark."):
                    raise SparkConfigError(f"{where}: {name!r} is not a Spark setting (spark.*)")
                if isinstance(setting, bool):
                    setting = "true" if setting else "false"
                if not isinstance(setting, (str, int, float)):
                    raise SparkConfigError(f"{where}.{name} must be a string, number or boolean, got {setting!r}")
                pairs.append((name, str(setting)))
            value = tuple(sorted(pairs))
        elif key == "executor_timeout":
            value = float(value)
        values[key] = value
    return SparkSettings(**values)


# ---------------------------------------------------------------- Spark's own configuration

def conf_dir() -> Path | None:
    """The directory Spark reads ``spark-defaults.conf`` from."""
    if os.environ.get("SPARK_CONF_DIR"):
        return Path(os.environ["SPARK_CONF_DIR"])
    if os.environ.get("SPARK_HOME"):
        return Path(os.environ["SPARK_HOME"]) / "conf"
    return None


def spark_defaults() -> dict[str, str]:
    """``spark-defaults.conf`` as Spark reads it (``key value`` or ``key=value`` lines)."""
    directory = conf_dir()
    if directory is None:
        return {}
    path = directory / "spark-defaults.conf"
    try:
        text = path.read_text()
    except OSError:
        return {}
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = re.split(r"\s*=\s*|\s+", line, maxsplit=1)
        out[parts[0]] = parts[1].strip() if len(parts) > 1 else ""
    return out


def resolve_master(explicit: str | None) -> tuple[str, str]:
    """(master, where it came from) for a run whose command line and spec gave ``explicit``."""
    if explicit:
        return explicit, "the command line or spec"
    env = os.environ.get("SPARK_MASTER")
    if env:
        return check_master(env, "SPARK_MASTER"), "SPARK_MASTER"
    conf = spark_defaults().get("spark.master")
    if conf:
        return check_master(conf, "spark.master in spark-defaults.conf"), "spark-defaults.conf"
    return DEFAULT_MASTER, "the default"


#: levels are expanded on the driver, not in Spark jobs, while they have fewer states than this
#: (the first levels only: once a level went to Spark, the rest follow)
DEFAULT_DRIVER_STATES = 5000


def resolve_driver_states(explicit: int | None) -> int:
    if explicit is not None:
        return explicit
    env = os.environ.get("EOSCHECK_SPARK_DRIVER_STATES")
    if env:
        if not env.isdigit():
            raise SparkConfigError(f"EOSCHECK_SPARK_DRIVER_STATES must be 0 or a positive integer, got {env!r}")
        return int(env)
    return DEFAULT_DRIVER_STATES


def resolve_partitions(explicit: int | None, default: int) -> int:
    if explicit is not None:
        return explicit
    env = os.environ.get("EOSCHECK_SPARK_PARTITIONS")
    if env:
        if not env.isdigit() or int(env) < 1:
            raise SparkConfigError(f"EOSCHECK_SPARK_PARTITIONS must be a positive integer, got {env!r}")
        return int(env)
    return default

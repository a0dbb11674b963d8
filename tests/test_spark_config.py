"""Where the Spark engine's settings come from: ``[check.spark]`` in a spec, SPARK_MASTER and
spark-defaults.conf, the command line over them; bad values are one line and exit 2. None of
these tests starts Spark."""

from __future__ import annotations

from pathlib import Path

import pytest
from eoscheck.checker.cli import main
from eoscheck.checker.explore.spark_config import (
    SparkConfigError,
    resolve_master,
    spark_defaults,
)
from eoscheck.checker.explore.spark_session import SessionSettings
from eoscheck.checker.spec import SpecError, load_spec, spec_to_options

SPEC = """\
description = "TCommit, 3 RMs"
model = "examples.tcommit"
[bounds]
rms = 3
[check]
strategy = "spark"
deadlock = false
{extra}
[expect]
verdict = "holds"
"""

FULL = """[check.spark]
master = "spark://127.0.0.1:7077"
executor_memory = "2g"
driver_memory = "1g"
partitions = 6
checkpoint = "file:///tmp/ck"
executor_timeout = 30
driver_states = 100
conf = { "spark.executor.cores" = 1, "spark.speculation" = false }
"""


def write(tmp_path: Path, extra: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(SPEC.format(extra=extra))
    return path


def test_check_spark_table_reaches_the_engine_options(tmp_path):
    options = spec_to_options(load_spec(write(tmp_path, FULL)))
    assert options.spark_master == "spark://127.0.0.1:7077"
    assert options.checkpoint_dir == "file:///tmp/ck"
    assert (options.spark_partitions, options.spark_executor_timeout) == (6, 30.0)
    assert options.spark_driver_states == 100
    assert (options.spark_executor_memory, options.spark_driver_memory) == ("2g", "1g")
    assert dict(options.spark_conf) == {"spark.executor.cores": "1", "spark.speculation": "false"}
    settings = SessionSettings.of(options)
    assert settings.explicit and settings.master == "spark://127.0.0.1:7077"
    assert dict(settings.conf)["spark.executor.memory"] == "2g"


def test_command_line_overrides_the_spec(tmp_path):
    spec = load_spec(write(tmp_path, FULL))
    options = spec_to_options(spec, {"spark_master": "local[2]", "checkpoint_dir": "ck2",
                                     "spark_partitions": 3})
    assert (options.spark_master, options.checkpoint_dir, options.spark_partitions) == ("local[2]", "ck2", 3)
    assert options.spark_executor_memory == "2g"  # not overridden


@pytest.mark.parametrize("extra, message", [
    ("[check.spark]\nmaster = \"mesos://x\"", "check.spark.master must be a Spark master URL"),
    ("[check.spark]\nexecutor_memory = \"lots\"", "check.spark.executor_memory must be a JVM memory size"),
    ("[check.spark]\npartitions = 0", "check.spark.partitions must be at least 1"),
    ("[check.spark]\npartitions = true", "check.spark.partitions must be a positive integer"),
    ("[check.spark]\nexecutor_timeout = -1", "check.spark.executor_timeout must be 0 or more"),
    ("[check.spark]\ndriver_states = -1", "check.spark.driver_states must be 0 or more"),
    ("[check.spark]\ndriver_states = 1.5", "check.spark.driver_states must be a number of states"),
    ("[check.spark]\nworkers = 2", "unknown key check.spark.workers; valid keys: master,"),
    ("[check.spark]\nconf = { \"executor.cores\" = 1 }", "'executor.cores' is not a Spark setting"),
    ("spark = 3", "'check.spark' must be a table"),
])
def test_bad_spark_settings_are_one_line_with_the_line(tmp_path, extra, message):
    path = write(tmp_path, extra)
    with pytest.raises(SpecError) as err:
        load_spec(path)
    text = str(err.value)
    assert "\n" not in text and message in text and text.startswith(f"{path}:")


def test_master_from_environment_then_spark_defaults(tmp_path, monkeypatch):
    monkeypatch.delenv("SPARK_MASTER", raising=False)
    monkeypatch.delenv("SPARK_HOME", raising=False)
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    assert resolve_master(None) == ("local[*]", "the default")
    (tmp_path / "spark-defaults.conf").write_text(
        "# cluster defaults\nspark.master   spark://127.0.0.1:7078\nspark.executor.memory=3g\n")
    assert spark_defaults()["spark.executor.memory"] == "3g"
    assert resolve_master(None) == ("spark://127.0.0.1:7078", "spark-defaults.conf")
    monkeypatch.setenv("SPARK_MASTER", "spark://127.0.0.1:7079")
    assert resolve_master(None) == ("spark://127.0.0.1:7079", "SPARK_MASTER")
    assert resolve_master("local[2]")[0] == "local[2]"
    monkeypatch.setenv("SPARK_MASTER", "nonsense")
    with pytest.raises(SparkConfigError, match="SPARK_MASTER must be a Spark master URL"):
        resolve_master(None)


def _one_error_line(capsys) -> str:
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1, err
    return err[0]


def test_cli_bad_spark_flags_are_one_line_exit_2(tmp_path, capsys):
    spec = write(tmp_path, "")
    assert main(["check", str(spec), "--executor-memory", "huge", "--out", str(tmp_path)]) == 2
    assert "--executor-memory must be a JVM memory size" in _one_error_line(capsys)
    assert main(["check", str(spec), "--master", "mesos://x", "--out", str(tmp_path)]) == 2
    assert "--master must be a Spark master URL" in _one_error_line(capsys)
    assert main(["check", str(spec), "--engine", "bfs", "--partitions", "3", "--out", str(tmp_path)]) == 2
    assert "--partitions applies only to the spark engine" in _one_error_line(capsys)


def test_specs_that_want_different_sessions_are_refused_before_spark_starts(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("SPARK_MASTER", raising=False)
    one = write(tmp_path, "[check.spark]\nmaster = \"local[1]\"", "one.toml")
    two = write(tmp_path, "[check.spark]\nmaster = \"local[2]\"", "two.toml")
    assert main(["check", str(one), str(two), "--out", str(tmp_path)]) == 2
    line = _one_error_line(capsys)
    assert "one Spark session serves a whole run" in line and "local[1]" in line and "local[2]" in line


def test_driver_states_from_the_environment(monkeypatch):
    from eoscheck.checker.explore.spark_config import (
        DEFAULT_DRIVER_STATES,
        resolve_driver_states,
    )
    monkeypatch.delenv("EOSCHECK_SPARK_DRIVER_STATES", raising=False)
    assert resolve_driver_states(None) == DEFAULT_DRIVER_STATES
    assert resolve_driver_states(7) == 7
    monkeypatch.setenv("EOSCHECK_SPARK_DRIVER_STATES", "0")
    assert resolve_driver_states(None) == 0 and resolve_driver_states(9) == 9
    monkeypatch.setenv("EOSCHECK_SPARK_DRIVER_STATES", "many")
    with pytest.raises(SparkConfigError, match="EOSCHECK_SPARK_DRIVER_STATES must be"):
        resolve_driver_states(None)

"""Shared fixtures. One Spark session for the whole test run: starting one costs seconds, and a
process can hold only one; every Spark test (and the engine itself, which joins a running
session) uses this one."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

# The Spark tests exercise Spark jobs: every level on Spark, none of the first small ones on the
# driver (tests that want those set spark_driver_states themselves). Subprocesses inherit it.
os.environ.setdefault("EOSCHECK_SPARK_DRIVER_STATES", "0")


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """A local[2] SparkSession, stopped at the end of the run (the JVM must not outlive pytest)."""
    from eoscheck.checker.explore.spark_session import start_session

    session = start_session("local[2]", app_name="eoscheck-tests")
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture(autouse=True)
def parallel_workers_from_level_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """In this process the parallel engine hands its models to the workers at once: the test models
    are small, and with the default ``HEAD_FRONTIER`` the parent would explore most of them alone
    (as the BFS), so the tests that compare the workers with the BFS would compare the BFS with
    itself. Tests of the head set it themselves; the CLI tests run in subprocesses, with the default."""
    from eoscheck.checker.explore import parallel

    monkeypatch.setattr(parallel, "HEAD_FRONTIER", 0)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (the README's ``-n 2 --dist loadgroup``), every Spark test runs on one worker: one local
    JVM at a time, one session per process, and the standalone cluster's fixed ports never contend."""
    for item in items:
        if item.get_closest_marker("spark"):
            item.add_marker(pytest.mark.xdist_group("spark"))

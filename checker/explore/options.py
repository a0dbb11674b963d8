"""The knobs every exploration strategy reads; one frozen value so a run is reproducible from it."""

from __future__ import annotations

from dataclasses import dataclass

STRATEGIES = ("bfs", "dfs", "simulate", "parallel", "spark")


@dataclass(frozen=True)
class ExploreOptions:
    strategy: str = "bfs"            # "bfs" | "dfs" | "simulate" | "parallel" | "spark"
    properties: tuple[str, ...] | None = None   # None: all of machine.properties()
    check_deadlock: bool = True
    stop_at_first: bool = True       # False = --continue: every violated property, each with its own shortest trace
    max_states: int | None = None
    max_depth: int | None = None     # for dfs: the depth bound
    max_seconds: float | None = None
    symmetry: bool = True            # apply machine.canonical before fingerprinting
    walks: int = 1000                # simulate
    walk_depth: int = 100            # simulate
    seed: int = 0                    # simulate
    workers: int = 2                 # parallel
    record_graph: bool = False       # keep the explored graph (networkx MultiDiGraph) in result.graph
    spark_master: str | None = None  # spark
    checkpoint_dir: str | None = None  # spark
    temporal: tuple[str, ...] = ()   # temporal properties to check on the state graph (checker.liveness)

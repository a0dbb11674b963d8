"""The knobs every exploration strategy reads (one frozen value so a run is reproducible from it),
and the registry of strategies from which the CLI, the spec validator and ``explore`` take their
choices: a new engine is one module in this package plus one line in ``STRATEGIES``."""

from __future__ import annotations

from dataclasses import dataclass

#: the most worker processes a parallel run starts: each pair of workers shares exchange files, so
#: the files grow with the square of the count, and past a few hundred processes the run only
#: contends for cores
MAX_WORKERS = 256


@dataclass(frozen=True)
class Strategy:
    """An engine: ``checker.explore.<module>.<function>(machine, options, progress) -> Result``
    (a dotted ``module`` is imported as it is)."""

    name: str
    module: str
    function: str
    doc: str
    #: pause the cyclic GC during the run (engines create no reference cycles; Spark's py4j does)
    pause_gc: bool = True


STRATEGIES: dict[str, Strategy] = {s.name: s for s in (
    Strategy("bfs", "bfs", "explore_bfs", "breadth-first, shortest counterexamples (TLC's default)"),
    Strategy("dfs", "dfs", "explore_dfs", "depth-first with an optional depth bound; traces shortened"),
    Strategy("simulate", "simulate", "explore_simulate", "seeded random walks; never proves 'holds'"),
    Strategy("parallel", "parallel", "explore_parallel", "level-synchronous BFS on worker processes"),
    Strategy("spark", "spark", "explore_spark", "level-synchronous BFS on a Spark cluster", pause_gc=False),
)}


@dataclass(frozen=True)
class ExploreOptions:
    strategy: str = "bfs"            # a key of STRATEGIES
    properties: tuple[str, ...] | None = None   # None: all of machine.properties()
    check_deadlock: bool = True
    stop_at_first: bool = True       # False = --continue: every violated property, each with its own shortest trace
    max_states: int | None = None
    max_depth: int | None = None     # for dfs: the depth bound
    max_seconds: float | None = None
    symmetry: bool = True            # apply machine.canonical before fingerprinting
    view: str | None = None          # a view of machine.views() (checker.state_view); None: the machine's default
    walks: int = 1000                # simulate
    walk_depth: int = 100            # simulate
    seed: int = 0                    # simulate
    workers: int = 2                 # parallel
    record_graph: bool = False       # keep the explored graph (networkx MultiDiGraph) in result.graph
    record_edges: bool = False       # bfs: keep every explored edge in flat arrays (stores.EdgeStore) in result.edges
    spark_master: str | None = None  # spark
    checkpoint_dir: str | None = None  # spark: a directory or Hadoop-compatible URI
    spark_partitions: int | None = None  # spark: None = EOSCHECK_SPARK_PARTITIONS or one per core
    spark_executor_memory: str | None = None  # spark: spark.executor.memory
    spark_driver_memory: str | None = None  # spark: spark.driver.memory
    spark_executor_timeout: float | None = None  # spark: seconds without executors before exit 2 (0: wait)
    spark_driver_states: int | None = None  # spark: levels below this many states run on the driver
    spark_conf: tuple[tuple[str, str], ...] = ()  # spark: further spark.* settings
    temporal: tuple[str, ...] = ()   # temporal properties to check on the state graph (checker.liveness)

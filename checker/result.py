"""What every exploration strategy returns: verdict, statistics, violations with traces.

Conventions (TLC's): a trace's length counts its states, the initial state included; ``depth`` is
the length of the longest shortest path found, counted the same way; ``generated`` counts every
successor produced plus the initial states; ``distinct`` counts states kept after dedup.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field
from typing import Any, Literal

from .fingerprint import collision_probability
from .machine import State, Step

Verdict = Literal["holds", "violated", "incomplete"]
ViolationKind = Literal["invariant", "transition", "deadlock", "temporal"]


@dataclass(frozen=True)
class TraceStep:
    """One state of a trace and the step that led to it (``None`` for the initial state)."""

    step: Step | None
    state: State


@dataclass
class Violation:
    property: str  # the property's name, or "deadlock"
    kind: ViolationKind
    trace: list[TraceStep]
    #: length of the trace as first found, before shortening (equal to len(trace) for BFS)
    found_length: int
    #: how the trace was shortened, e.g. "bfs (shortest)", "bfs over trace neighbourhood"
    shortened_by: str = "bfs (shortest)"
    #: a lasso (temporal properties): the last state is followed by ``trace[loop]`` forever (ITF's
    #: ``loop``); None for a finite trace
    loop: int | None = None

    # builtins.property: in this class body ``property`` names the field above (for mypy)
    @builtins.property
    def length(self) -> int:
        return len(self.trace)


@dataclass
class ActionCoverage:
    generated: int = 0  # successors produced by this action
    distinct: int = 0  # of which were new states
    #: of ``generated``, successors outside the state constraint (the bounds): never checked nor
    #: explored, so a "holds" says nothing of the runs through them
    outside: int = 0


@dataclass
class Stats:
    distinct: int = 0
    generated: int = 0
    depth: int = 0
    queue: int = 0  # states left unexplored when the run stopped
    elapsed: float = 0.0
    coverage: dict[str, ActionCoverage] = field(default_factory=dict)
    #: TLC's second estimate, from the fingerprints kept (``fingerprint.observed_collision_probability``);
    #: None when the engine could not see them all
    observed_collision: float | None = None

    @property
    def outside(self) -> int:
        """Generated successors the state constraint cut (``ActionCoverage.outside`` summed)."""
        return sum(c.outside for c in self.coverage.values())

    @property
    def states_per_second(self) -> float:
        return self.distinct / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def generated_per_second(self) -> float:
        return self.generated / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def collision_probability(self) -> float:
        return collision_probability(self.distinct, self.generated)

    def never_fired(self, actions: list[str]) -> list[str]:
        """Actions of the machine that no explored state enabled (usually a spec bug)."""
        return [a for a in actions if self.coverage.get(a, ActionCoverage()).generated == 0]


@dataclass
class Result:
    verdict: Verdict
    strategy: str  # "bfs", "dfs", "simulate", "parallel", "spark"
    stats: Stats
    violations: list[Violation] = field(default_factory=list)
    #: why the run stopped early: "states", "depth", "time", or None when it ran to the end
    limit_hit: str | None = None
    #: a line or two for the user, e.g. "simulation never proves 'holds'"
    notes: list[str] = field(default_factory=list)
    #: what the counts were reduced by (``checker.symmetry.describe``), None without symmetry reduction
    symmetry: str | None = None
    #: the explored state graph (networkx MultiDiGraph) when ExploreOptions.record_graph asked for
    #: it and the space was small enough; see checker.graph
    graph: Any = None
    #: the explored edges (``explore.stores.EdgeStore``) when ExploreOptions.record_edges asked
    #: for them (BFS), for analyses of the whole graph such as liveness
    edges: Any = None
    #: the view deduplication used (``checker.state_view``), None without one
    view: str | None = None

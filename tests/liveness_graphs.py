"""A machine given as an explicit labelled graph, for the liveness tests."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from eoscheck.checker.liveness import Fairness, TemporalProperty
from eoscheck.checker.machine import Machine, Property


class GraphMachine(Machine):
    """States are ``(node,)``; ``edges[node]`` lists ``(action, target)`` in successor order. An
    action ``"Name:3"`` is the step ``("Name", 3)`` (a parameter, for fairness split per instance)."""

    def __init__(self, edges: Mapping[int, Sequence[tuple[str, int]]], init: Sequence[int] = (0,),
                 fair: Sequence[Fairness] = (), temporal: Sequence[TemporalProperty] = ()):
        self.edges = {k: list(v) for k, v in edges.items()}
        self.init = list(init)
        self.fair = list(fair)
        self.temporal = {p.name: p for p in temporal}
        names = sorted({a.split(":")[0] for out in self.edges.values() for a, _ in out})
        self.actions = {a: () for a in names}

    def init_states(self) -> Iterator[tuple]:
        for n in self.init:
            yield (n,)

    def successors(self, s: tuple) -> Iterator[tuple[tuple, tuple]]:
        for action, target in self.edges.get(s[0], ()):
            name, _, param = action.partition(":")
            yield ((name, int(param)) if param else (name,)), (target,)

    def properties(self) -> Mapping[str, Property]:
        return {}

    def temporal_properties(self) -> Mapping[str, TemporalProperty]:
        return self.temporal

    def fairness(self) -> Sequence[Fairness]:
        return self.fair

    def fields(self, s: tuple) -> dict:
        return {"node": s[0]}

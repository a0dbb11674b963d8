"""The explored state graph, for reviewers (GraphML/DOT) and for later analyses (shortening, SCCs).

``record_graph`` runs its own BFS on the expansion core (same fingerprints, symmetry, view and
state constraint as the engines) and keeps every state as a node and every step as an edge of a ``networkx.MultiDiGraph``
(multi: two actions can lead from one state to the same state). It refuses spaces above
``max_states`` (100,000 by default): a drawing of more is unreadable and the graph's memory is
hundreds of bytes per edge. Nodes are unsigned 64-bit fingerprints (``checker.fingerprint``) with
attributes ``label`` (a short rendering of the state's fields) and ``init``; edges carry ``label``
(``machine.format_step``) and ``action``.

``write_graph`` writes GraphML (``.graphml``, via networkx) or Graphviz DOT (``.dot``, written
here to avoid a pydot dependency for a few lines of text).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import networkx as nx

from .fingerprint import MASK64
from .machine import Machine
from .outfile import write_output

if TYPE_CHECKING:
    from .explore.options import ExploreOptions
    from .result import Result

GRAPH_STATE_LIMIT = 100_000
LABEL_WIDTH = 120


class GraphTooLargeError(ValueError):
    """The state space has more states than a graph may record."""


def state_label(machine: Machine, state) -> str:
    """Fields as ``name=value`` pairs on one line, cut to LABEL_WIDTH characters."""
    text = ", ".join(f"{k}={json.dumps(v, separators=(',', ':'))}" for k, v in machine.fields(state).items())
    return text if len(text) <= LABEL_WIDTH else text[: LABEL_WIDTH - 3] + "..."


def record_graph(machine: Machine, *, symmetry: bool = True, max_states: int = GRAPH_STATE_LIMIT,
                 max_depth: int | None = None, view: str | None = None) -> nx.MultiDiGraph:
    """BFS over the whole (constrained) space into a MultiDiGraph; raises GraphTooLargeError."""
    from .explore.expand import Expander, bfs_walk

    walker = Expander(machine, symmetry=symmetry, view=view, check_deadlock=False, no_properties=True)
    graph = nx.MultiDiGraph()
    for _level, parent, step, state, h, new in bfs_walk(walker, max_depth):
        fp = h & MASK64
        if new:
            if graph.number_of_nodes() >= max_states:
                raise GraphTooLargeError(
                    f"state graph not recorded: the space has more than {max_states:,} states "
                    "(graphs are for small runs; lower the bounds)")
            graph.add_node(fp, label=state_label(machine, state), init=parent is None)
        if parent is not None:
            graph.add_edge(parent & MASK64, fp, label=machine.format_step(step), action=step[0])
    return graph


def attach_graph(machine: Machine, options: ExploreOptions, result: Result) -> None:
    """Fill ``result.graph`` as ``options.record_graph`` asks; a note instead if too large."""
    try:
        result.graph = record_graph(machine, symmetry=options.symmetry, max_depth=options.max_depth,
                                    view=options.view)
    except GraphTooLargeError as exc:
        result.graph = None
        result.notes.append(str(exc))


def _dot_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(graph: nx.MultiDiGraph) -> str:
    lines = ["digraph states {", "  node [shape=box, fontsize=10];"]
    for n, data in graph.nodes(data=True):
        extra = ", peripheries=2" if data.get("init") else ""
        lines.append(f"  s{n:016x} [label={_dot_quote(str(data.get('label', n)))}{extra}];")
    for u, v, data in graph.edges(data=True):
        lines.append(f"  s{u:016x} -> s{v:016x} [label={_dot_quote(str(data.get('label', '')))}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_graph(graph: nx.MultiDiGraph, path: str | Path) -> Path:
    """Write GraphML for ``.graphml``, DOT for ``.dot``; anything else is a ValueError."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".graphml":
        # GraphML node ids are strings; hex keeps 64-bit fingerprints exact in every reader.
        relabelled = nx.relabel_nodes(graph, {n: f"{n:016x}" for n in graph.nodes}, copy=True)
        write_output(path, "\n".join(nx.generate_graphml(relabelled)) + "\n")
    elif suffix in (".dot", ".gv"):
        write_output(path, to_dot(graph))
    else:
        raise ValueError(f"cannot write a graph to {path.name!r}: use a .graphml or .dot file name")
    return path

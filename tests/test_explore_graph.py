"""State graph recording and export."""

from __future__ import annotations

import networkx as nx
import pytest
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.graph import GraphTooLargeError, record_graph, write_graph
from eoscheck.examples.diehard import DieHard
from eoscheck.examples.toys import Counter
from eoscheck.examples.twophase import TwoPhase


def test_graph_has_every_state_and_step():
    graph = record_graph(DieHard())
    assert graph.number_of_nodes() == 16
    assert graph.number_of_edges() == 16 * 6  # every jug action is always enabled
    labels = {d["label"] for _, _, d in graph.edges(data=True)}
    assert "FillBig()" in labels
    inits = [n for n, d in graph.nodes(data=True) if d["init"]]
    assert len(inits) == 1 and "jugs.big=0" in graph.nodes[inits[0]]["label"]


def test_explore_attaches_the_graph_only_when_asked():
    assert explore(Counter(limit=3, terminal=True), ExploreOptions()).graph is None
    result = explore(Counter(limit=3, terminal=True), ExploreOptions(record_graph=True))
    assert result.graph.number_of_nodes() == 4
    assert result.graph.number_of_edges() == 3


def test_graph_refuses_large_spaces():
    with pytest.raises(GraphTooLargeError, match="more than 100"):
        record_graph(TwoPhase(4), max_states=100)
    result = explore(TwoPhase(3), ExploreOptions(record_graph=True))
    assert result.graph.number_of_nodes() == 288


def test_write_graphml_and_dot(tmp_path):
    graph = record_graph(DieHard())
    back = nx.read_graphml(write_graph(graph, tmp_path / "g.graphml"))
    assert (back.number_of_nodes(), back.number_of_edges()) == (16, 96)
    dot = write_graph(graph, tmp_path / "g.dot").read_text()
    assert dot.startswith("digraph") and dot.count("->") == 96
    assert 'label="BigToSmall()"' in dot
    with pytest.raises(ValueError, match="graphml"):
        write_graph(graph, tmp_path / "g.png")

"""Textbook models published to the engine: oracles with known TLC counts, and a seeded bug."""

from __future__ import annotations

from collections.abc import Mapping

from eoscheck.checker.machine import Machine
from eoscheck.checker.registry import Bound, ModelDef, Switch, SwitchValue, Variant

from .abp import ORDER_NAMES, ComposedAbp
from .diehard import DieHard
from .tcommit import TCommit
from .twophase import PROPERTY_DOCS as TWOPHASE_PROPERTIES
from .twophase import RMS_BOUND, SymmetricTwoPhase, TwoPhase


def _build_twophase(switches: Mapping[str, SwitchValue], bounds: Mapping[str, int]) -> Machine:
    cls = SymmetricTwoPhase if switches["rm_symmetry"] else TwoPhase
    return cls(bounds["rms"])


MODELS: list[ModelDef] = [
    ModelDef(
        name="examples.twophase",
        doc="Two-phase commit (TLA+ examples, TwoPhase.tla); TLC: 288 states with 3 RMs",
        variants={"tla": Variant("as in TwoPhase.tla (no symmetry, TLC's counts)"),
                  "symmetric": Variant("RMs interchangeable (SYMMETRY Permutations(RM))",
                                       {"rm_symmetry": True})},
        default_variant="tla",
        switches={"rm_symmetry": Switch("treat resource managers as interchangeable", False)},
        bounds={"rms": RMS_BOUND},
        properties=TWOPHASE_PROPERTIES,
        build=_build_twophase,
    ),
    ModelDef(
        name="examples.tcommit",
        doc="Transaction commit (TLA+ examples, TCommit.tla); TLC: 34 states with 3 RMs",
        variants={"tla": Variant("as in TCommit.tla")},
        default_variant="tla",
        switches={},
        bounds={"rms": Bound("number of resource managers", 3, 1, 10)},
        properties={"TCTypeOK": "every RM is in one of the four states",
                    "TCConsistent": "no RM has committed while another has aborted"},
        build=lambda switches, bounds: TCommit(bounds["rms"]),
    ),
    ModelDef(
        name="examples.diehard",
        doc="Die Hard jugs puzzle; NotSolved is violated by a shortest trace of 7 states (3/5/4)",
        variants={"movie": Variant("3- and 5-gallon jugs, goal 4")},
        default_variant="movie",
        switches={},
        bounds={"small": Bound("capacity of the small jug", 3, 1, 20),
                "big": Bound("capacity of the big jug", 5, 1, 20),
                "goal": Bound("gallons wanted in the big jug", 4, 0, 20)},
        properties={"TypeOK": "each jug holds between 0 and its capacity",
                    "NotSolved": "the big jug never holds exactly the goal",
                    "PourConserves": "pouring moves water without losing any"},
        build=lambda switches, bounds: DieHard(bounds["small"], bounds["big"], bounds["goal"]),
    ),
]

MODELS.append(ModelDef(
    name="examples.abp",
    doc="Alternating-bit protocol declared with checker.compose; holds only over an ordered network",
    variants={"ordered": Variant("FIFO channels that lose and duplicate (ABP's assumption)"),
              "unordered": Variant("channels that reorder: a stale Data is taken as new", {"network": "unordered"}),
              "duplicating": Variant("a set of messages (TLA+ style): old messages stay deliverable",
                                     {"network": "duplicating"})},
    default_variant="ordered",
    switches={"network": Switch("network semantics of both channels", "ordered", tuple(ORDER_NAMES))},
    bounds={"records": Bound("values the sender transmits", 3, 1, 8),
            "lost": Bound("messages the network may lose (fault budget; 0 removes the loss rules)", 1, 0, 5),
            "copies": Bound("messages the network may duplicate (0 removes the copy rules)", 1, 0, 5),
            "capacity": Bound("messages a channel holds at most (state constraint)", 2, 1, 6)},
    properties=ComposedAbp.property_docs(),
    build=lambda switches, bounds: ComposedAbp(
        bounds["records"], ORDER_NAMES[str(switches["network"])], bounds["lost"],
        0 if switches["network"] == "duplicating" else bounds["copies"], bounds["capacity"]),
))

from .symmetric import MODELS as _SYMMETRIC_MODELS

MODELS += _SYMMETRIC_MODELS

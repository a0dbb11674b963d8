"""The Die Hard jugs puzzle (TLA+ examples' ``DieHard.tla``): a small model with a known answer.

With a 3- and a 5-gallon jug, getting exactly 4 gallons into the big jug takes six steps, so the
"bug" the invariant ``NotSolved`` (big /= 4) seeds has a shortest counterexample of exactly
**7 states** (initial state included). By hand, one shortest solution is:
(0,0) FillBig (0,5) BigToSmall (3,2) EmptySmall (0,2) BigToSmall (2,0) FillBig (2,5) BigToSmall (3,4).
No five-step solution exists: from (0,0) the states at distance 1..5 have big in {0,5}, {0,2,5},
{2,3,5}, ... and 4 first appears at distance 6 (``tests/test_oracles.py`` checks the length).

``PourConserves`` is a transition property that holds: pouring never creates or loses water.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from eoscheck.checker.machine import Machine, Property


class DieHard(Machine):
    actions: Mapping[str, tuple[str, ...]] = {"FillSmall": (), "FillBig": (), "EmptySmall": (), "EmptyBig": (),
               "SmallToBig": (), "BigToSmall": ()}

    def __init__(self, small: int = 3, big: int = 5, goal: int = 4):
        self.small_cap, self.big_cap, self.goal = small, big, goal

    def init_states(self) -> Iterator[tuple]:
        yield (0, 0)

    def successors(self, s: tuple) -> Iterator[tuple[tuple, tuple]]:
        small, big = s
        yield ("FillSmall",), (self.small_cap, big)
        yield ("FillBig",), (small, self.big_cap)
        yield ("EmptySmall",), (0, big)
        yield ("EmptyBig",), (small, 0)
        pour = min(small, self.big_cap - big)
        yield ("SmallToBig",), (small - pour, big + pour)
        pour = min(big, self.small_cap - small)
        yield ("BigToSmall",), (small + pour, big - pour)

    def properties(self) -> Mapping[str, Property]:
        def type_ok(s: tuple) -> bool:
            return 0 <= s[0] <= self.small_cap and 0 <= s[1] <= self.big_cap

        def conserves(s: tuple, step: tuple, t: tuple) -> bool:
            return step[0] not in ("SmallToBig", "BigToSmall") or sum(s) == sum(t)

        return {
            "TypeOK": Property("TypeOK", "each jug holds between 0 and its capacity", "invariant", type_ok),
            "NotSolved": Property("NotSolved", f"the big jug never holds exactly {self.goal} gallons",
                                  "invariant", lambda s: s[1] != self.goal),
            "PourConserves": Property("PourConserves", "pouring moves water without losing any",
                                      "transition", conserves),
        }

    def fields(self, s: tuple) -> dict:
        return {"jugs.small": s[0], "jugs.big": s[1]}

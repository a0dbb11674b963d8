"""The generated least-image canonical form (``checker.compose.least_image``): for a small group of
several scalarsets (or one whose actors mention its identities) it is the least image of the
state's orbit in the order (key, whole image), computed without building every image; it is a
function of the orbit, the same with and without memos, and is used only where it applies."""

from __future__ import annotations

from typing import Any

import pytest
from eoscheck.checker.compose import least_image
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.model.machines.eos import EosMachine, machine
from eoscheck.model.machines.eos_model import BOUNDS
from eoscheck.model.protocol import VARIANTS
from reachable_states import reachable


def _key(m: Any, image: tuple) -> tuple:
    plan = m._plan
    active = [ss for ss, n in plan.scalarset_sizes.items() if n > 1]
    slots = [k for ss in active for k in range(*_span(plan.slots[plan.scalarsets[ss][0]]))]
    return m.slot_reader(slots)(image)  # logical slots: a state leaves the constant ones out


def _span(slot: tuple[int, int]) -> tuple[int, int]:
    return slot[0], slot[0] + slot[1]


@pytest.mark.parametrize("bounds", [
    {"producers": 2, "partitions": 2, "lost_responses": 1},
    {"producers": 2, "partitions": 3, "produce_timeouts": 1},
], ids=["2x2", "2x3"])
def test_least_image_of_the_orbit(bounds: dict[str, int]) -> None:
    m = machine("kafka-4.0", **bounds)
    assert m._plan.least is not None and m.canonical is m._plan.least
    sym = m.symmetry
    assert sym is not None and sym.exact
    states = reachable(m, 1500)
    stabilised = 0
    for s in states:
        images = {sym.apply(s, g) for g in sym.group()}
        want = min(images, key=lambda t: (_key(m, t), t))
        assert m.canonical(s) == want
        assert m._plan.canonical(s) == want
        stabilised += len(images) < sym.group_order
    assert stabilised  # states fixed by some renaming: their least keys tie, and the tie is broken whole


def test_same_forms_without_memos() -> None:
    memo = machine("kafka-4.0", producers=2, partitions=2, lost_responses=1)
    plain = EosMachine(VARIANTS["kafka-4.0"].protocol, {**{k: b.default for k, b in BOUNDS.items()}, "producers": 2,
                                                        "partitions": 2, "lost_responses": 1}, memoize=False)
    states = reachable(memo, 800)
    first = [memo.canonical(s) for s in states]
    assert [memo.canonical(s) for s in states] == first  # from the recent forms now
    memo.clear_caches()
    assert [memo.canonical(s) for s in states] == first
    assert plain._plan.least is not None
    # its own ids for the values the renamings make (the tables are process-wide): the same forms
    assert [plain.canonical(s) for s in states] == first


def test_where_it_applies() -> None:
    # one scalarset whose actors do not mention identities keeps its sort
    assert machine("kafka-4.0", producers=2, partitions=1)._plan.least is None
    assert machine("kafka-4.0", producers=3, partitions=2)._plan.least is not None  # 3! * 2! = 12
    big = machine("kafka-4.0", producers=5, partitions=2)  # 240 > LEAST_IMAGE: the product of sorts
    assert 240 > least_image.LEAST_IMAGE and big._plan.least is None and big._plan.product is not None


def test_counts_are_orbits_in_every_engine() -> None:
    m = machine("kafka-4.0", producers=2, partitions=2, lost_responses=1)
    counts = {engine: explore(m, ExploreOptions(stop_at_first=False, strategy=engine)).stats.distinct
              for engine in ("bfs", "dfs", "parallel")}
    assert counts == {"bfs": 4_670, "dfs": 4_670, "parallel": 4_670}  # main's product of sorts: the same


def test_self_renaming_clients_one_state_per_orbit() -> None:
    # the idempotent clients mention each other's ids (no rename-invariant sort key): main's brute force
    # over both orders gave 15,344 with every engine; the least image must too
    from eoscheck.checker.registry import find_model
    m = find_model("kafka.idempotent_produce").machine("kafka-shipped", bounds={"clients": 2, "records": 3})
    assert m._plan.least is not None
    assert [explore(m, ExploreOptions(stop_at_first=False, strategy=s)).stats.distinct
            for s in ("bfs", "parallel")] == [15_344, 15_344]

"""Which worker should expand which state? A load-independent model of routing policies (par17).

    python bench/affinity_model.py --symmetry                       # every policy below
    python bench/affinity_model.py --symmetry --policy gen --policy hash:producer,txn

One BFS of the model is recorded level by level in this process (states, fingerprints and every
edge, duplicates included), and each memo binding that filled at least ``--min-entries`` entries
(rules, their gates, invariants) gives its key getter. A policy assigns every state of a level to
a worker; a worker *misses* a key the first time a state it holds has it (keys of the levels the
head expands, ``parallel.HEAD_FRONTIER``, are known to all). The cost model is par14's
(``profile_parallel.py --counts``): a level costs a worker ``--us-per-successor`` per successor and
``--us-per-miss`` per miss, plus ``--us-per-move`` to both ends of each state whose worker is not
one of the workers that generated it (a move). Printed: misses per worker (and their sum over the
BFS's after the head), moves, successors per worker, and the modelled ratio BFS / (head + each
level's slower worker), and in parentheses BFS / (head + the workers' mean): the ceiling of the
same partition were each level's work evened out (by stealing within the level, say) at no cost. It treats every key as looked up by every state of the level (a gated
rule's outcome memo is looked up only where its gate passes; receive rules are left out), so its
totals differ from the engine's counts: compare policies with each other, and check a winner
with the engine (``profile_parallel.py --counts``).

Policies (SLOTS: part names, comma-separated, as ``Composed`` lays them out):

* ``gen``: the engine today: a state stays with a worker that generated it (the owner of its
  fingerprint if it is one of them, else the lowest), the head's last level dealt in blocks of 64,
  a surplus above 0.5% moved as one run of neighbouring states;
* ``gen-pick:SLOTS``: the same, the surplus taken among states whose SLOTS hash points at the taker;
  ``gen-pick:random``: among states picked by fingerprint (the control);
* ``gen-tie:SLOTS``: the same, a state two workers generate kept by the one SLOTS points at;
* ``hash:SLOTS``: every state to the worker its SLOTS hash points at (moves where it is generated
  elsewhere);
* ``sticky:SLOTS``: states grouped by their SLOTS values; a group keeps its worker, new groups go
  to the least loaded (by states), and groups move, largest first, when a worker holds 1% more;
* ``oracle:SLOTS`` / ``predicted:SLOTS``: as sticky, balanced by cost: the level's exact cost per
  state (successors, keys new to the BFS) or the group's cost per state in the previous level.

``--steal`` models stealing within a level: after the policy's assignment, the worker with less
work takes the other's last states (each a move) until their costs meet, and expands them after its
own, missing whatever keys of theirs it has not met.

``--exchange-us X`` adds a memo exchange after each level: every worker knows every key missed
before the level, and pays X per entry missed in the level (by any worker: sending and installing).
"""

from __future__ import annotations

import argparse
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

GOLDEN = 0.6180339887498949
DEFAULT_POLICIES = ["gen", "gen-pick:random", "gen-pick:producer,txn", "gen-tie:producer,txn", "hash:producer",
                    "hash:producer,txn", "sticky:producer,txn", "oracle:producer,txn", "predicted:producer,txn"]


def record(machine: Any, symmetry: bool) -> list[tuple[list[Any], list[int], list[tuple[int, int]]]]:
    """The BFS's levels: (states, fingerprints, edges as (parent's index in its level, child fp))."""
    from eoscheck.checker.explore.expand import Expander
    ex = Expander(machine, None, symmetry=symmetry, view=None, check_deadlock=False, stop_at_first=False)
    _, inits, fps = ex.init_states()
    frontier: list[Any] = []
    ffps: list[int] = []
    visited: set[int] = set()
    for s, h in zip(inits, fps):
        if h not in visited:
            visited.add(h)
            frontier.append(s)
            ffps.append(h)
    levels = []
    while frontier:
        edges: list[tuple[int, int, Any]] = []
        nxt: list[Any] = []
        nfps: list[int] = []
        for i in range(0, len(frontier), 2048):
            refs = list(range(i, min(i + 2048, len(frontier))))
            cand = ex.expand_chunk(frontier[i:i + 2048], refs, len(levels) + 1, visited, None, edges)
            visited.update(cand.fps)
            nxt.extend(cand.states)
            nfps.extend(cand.fps)
        levels.append((frontier, ffps, [(p, c) for p, c, _ in edges]))
        frontier, ffps = nxt, nfps
    return levels


def key_getters(machine: Any, min_entries: int) -> list[Callable[[tuple], Any]]:
    from eoscheck.checker.compose.rules import _getter, _Rule
    plan = machine._plan
    out = []
    for rule in plan.rules:
        if isinstance(rule, _Rule) and rule.receive is None:
            for b in rule.bindings:
                if len(b.memo) >= min_entries:
                    out.append(b.getter)
                if b.gate_getter is not None and len(b.gate_memo) >= min_entries:
                    out.append(b.gate_getter)
    for obj in plan.property_objs.values():
        for _combo, _reads, terms, memo in getattr(obj, "bindings", []):
            if len(memo) >= min_entries:
                out.append(_getter(terms, plan.pos))
    return out


class Model:
    def __init__(self, machine: Any, levels: list, getters: list, args: argparse.Namespace) -> None:
        self.levels, self.args, self.plan = levels, args, machine._plan
        self.keys = [[tuple(g(s) for g in getters) for s in states] for states, _, _ in levels]
        self.nkeys = len(getters)
        self.succ = []
        for states, _, edges in levels:
            n = [0] * len(states)
            for p, _ in edges:
                n[p] += 1
            self.succ.append(n)
        # keys new to the BFS, per state (the oracle's cost)
        known: list[set] = [set() for _ in getters]
        self.bfs_new = []
        for ks_level in self.keys:
            row = []
            for ks in ks_level:
                m = 0
                for j, k in enumerate(ks):
                    if k not in known[j]:
                        known[j].add(k)
                        m += 1
                row.append(m)
            self.bfs_new.append(row)

    def group_fn(self, spec: str) -> Callable[[Any, int], int]:
        if spec == "random":
            return lambda s, h: (h >> 7) & 0xFFFFFFFF
        places = []
        for name in spec.split(","):
            base, _count = self.plan.slots[name]
            places.append(self.plan.pos[base])
        return lambda s, h: zlib.crc32(repr(tuple(s[p] for p in places)).encode())

    def run(self, policy: str) -> str:
        a, workers = self.args, self.args.workers
        kind, _, spec = policy.partition(":")
        group = self.group_fn(spec) if spec else None
        known = [[set() for _ in range(self.nkeys)] for _ in range(workers)]
        head = wall = total = 0.0
        bfs = 0.0
        misses = [0] * workers
        succ = [0] * workers
        moves = 0
        sticky: dict[int, int] = {}
        prev_cost: dict[int, float] = {}
        prev_n: dict[int, int] = {}
        in_head = True
        prev_owner: list[int] = []
        bfs_after_head = 0
        for lv, (states, fps, edges) in enumerate(self.levels):
            level_bfs = a.us_per_successor * len(edges) + a.us_per_miss * sum(self.bfs_new[lv])
            bfs += level_bfs
            if in_head and len(states) >= a.head * workers:
                in_head = False
            if in_head:
                head += level_bfs
                for w in range(workers):
                    for ks in self.keys[lv]:
                        for j, k in enumerate(ks):
                            known[w][j].add(k)
                prev_owner = [(i // 64) % workers for i in range(len(states))]
                continue
            bfs_after_head += sum(self.bfs_new[lv])
            gens: defaultdict[int, set[int]] = defaultdict(set)
            if lv:
                for p, c in self.levels[lv - 1][2]:
                    gens[c].add(prev_owner[p])
            first = not lv or len(self.levels[lv - 1][0]) < a.head * workers
            if kind in ("gen", "gen-pick", "gen-tie"):
                if first:
                    owner = [(i // 64) % workers for i in range(len(states))]
                else:
                    owner = []
                    for s, h in zip(states, fps):
                        g = gens[h]
                        if kind == "gen-tie" and group is not None and group(s, h) % workers in g:
                            owner.append(group(s, h) % workers)
                        else:
                            owner.append(h % workers if h % workers in g else min(g))
                self.rebalance(owner, states, fps, lv, group if kind == "gen-pick" else None)
            elif kind == "hash":
                assert group is not None
                owner = [group(s, h) % workers for s, h in zip(states, fps)]
            else:
                assert group is not None
                gs = [group(s, h) for s, h in zip(states, fps)]
                if kind == "sticky":
                    cost = [1.0] * len(states)
                elif kind == "oracle":
                    cost = [a.us_per_successor * n + a.us_per_miss * m for n, m in zip(self.succ[lv], self.bfs_new[lv])]
                else:
                    avg = sum(prev_cost.values()) / max(1, sum(prev_n.values())) if prev_n else 1.0
                    cost = [prev_cost[g] / prev_n[g] if g in prev_n else avg for g in gs]
                owner = _assign(gs, cost, sticky, workers, 0.01)
                prev_cost.clear()
                prev_n.clear()
                for i, g in enumerate(gs):
                    prev_cost[g] = prev_cost.get(g, 0.0) + a.us_per_successor * self.succ[lv][i] + a.us_per_miss * self.bfs_new[lv][i]
                    prev_n[g] = prev_n.get(g, 0) + 1
            routed = list(owner)
            order: list[int] = list(range(len(states)))
            stolen: list[int] = []
            if a.steal:
                trial = [[set(x) for x in known[w]] for w in range(workers)]
                cost_t, _, per = self.level_costs(lv, owner, trial, order, [0] * workers)
                victim = max(range(workers), key=lambda w: cost_t[w])
                thief = min(range(workers), key=lambda w: cost_t[w])
                taken = 0.0
                for i in reversed(range(len(states))):
                    if taken >= (cost_t[victim] - cost_t[thief]) / 2:
                        break
                    if owner[i] == victim:
                        taken += per[i] + a.us_per_move
                        stolen.append(i)
                for i in stolen:
                    owner[i] = thief
                order = [i for i in order if routed[i] == owner[i]] + stolen[::-1]
            cost_w, level_misses, _ = self.level_costs(lv, owner, known, order, succ)
            if stolen:
                moves += len(stolen)
                cost_w[victim] += a.us_per_move * len(stolen)
                cost_w[thief] += a.us_per_move * len(stolen)
            if not first:
                for i, h in enumerate(fps):
                    if routed[i] not in gens[h]:
                        moves += 1
                        cost_w[routed[i]] += a.us_per_move
                        cost_w[min(gens[h])] += a.us_per_move
            if a.exchange_us is not None:
                for w in range(workers):
                    cost_w[w] += a.exchange_us * sum(level_misses)
                for j in range(self.nkeys):
                    union = set().union(*(known[w][j] for w in range(workers)))
                    for w in range(workers):
                        known[w][j] = set(union)
            for w in range(workers):
                misses[w] += level_misses[w]
            wall += max(cost_w)
            total += sum(cost_w)
            prev_owner = owner
        return (f"{policy:26} misses {'/'.join(f'{m:,}' for m in misses)} = {sum(misses) / max(1, bfs_after_head):.3f}x the BFS's "
                f"after the head; moves {moves:,}; successors {'/'.join(f'{s:,}' for s in succ)}; modelled head {head / 1e6:.3f} "
                f"+ slower {wall / 1e6:.3f} s (barrier {(wall * workers - total) / 1e6:.3f}); BFS {bfs / 1e6:.3f} s; "
                f"ratio {bfs / (head + wall):.3f}x (with each level's work evened out between the workers: "
                f"{bfs / (head + total / workers):.3f}x)")

    def level_costs(self, lv: int, owner: list[int], known: list[list[set]], order: list[int],
                    succ: list[int]) -> tuple[list[float], list[int], list[float]]:
        """Each worker's cost and misses for level ``lv``, its states taken in ``order`` (``known``
        and ``succ`` updated), and each state's cost."""
        a, workers = self.args, self.args.workers
        cost_w = [0.0] * workers
        misses = [0] * workers
        per = [0.0] * len(owner)
        for i in order:
            w = owner[i]
            kw = known[w]
            m = 0
            for j, k in enumerate(self.keys[lv][i]):
                if k not in kw[j]:
                    kw[j].add(k)
                    m += 1
            misses[w] += m
            succ[w] += self.succ[lv][i]
            per[i] = a.us_per_miss * m + a.us_per_successor * self.succ[lv][i]
            cost_w[w] += per[i]
        return cost_w, misses, per

    def rebalance(self, owner: list[int], states: list, fps: list[int], lv: int, pick: Callable | None) -> None:
        """The engine's ``_plan_moves`` and ``give``, for 2 workers: the surplus over the share
        (beyond 0.5% and 64 states) as one run from a place that moves by the golden ratio."""
        workers = self.args.workers
        counts = Counter(owner)
        big = max(range(workers), key=lambda w: counts[w])
        extra = int(counts[big] - len(states) / workers)
        if extra <= max(64, 0.005 * len(states) / workers):
            return
        idx = [i for i, o in enumerate(owner) if o == big]
        if pick is not None:
            chosen = ([i for i in idx if pick(states[i], fps[i]) % workers != big]
                      + [i for i in idx if pick(states[i], fps[i]) % workers == big])[:extra]
        else:
            start = int((len(idx) - extra) * ((lv * GOLDEN) % 1.0))
            chosen = idx[start:start + extra]
        light = min(range(workers), key=lambda w: counts[w])
        for i in chosen:
            owner[i] = light


def _assign(gs: list[int], cost: list[float], sticky: dict[int, int], workers: int, slack: float) -> list[int]:
    """Sticky groups: a group keeps its worker; new groups to the least loaded, largest first; then
    groups move from the most to the least loaded, largest that fits first, while it holds more
    than ``slack`` over the share."""
    group_cost: defaultdict[int, float] = defaultdict(float)
    for g, c in zip(gs, cost):
        group_cost[g] += c
    load = [0.0] * workers
    new = []
    for g, c in group_cost.items():
        if g in sticky:
            load[sticky[g]] += c
        else:
            new.append((c, g))
    for c, g in sorted(new, reverse=True):
        w = min(range(workers), key=lambda w: load[w])
        sticky[g] = w
        load[w] += c
    share = sum(load) / workers
    for _ in range(len(group_cost)):
        heavy = max(range(workers), key=lambda w: load[w])
        light = min(range(workers), key=lambda w: load[w])
        excess = load[heavy] - share
        if excess <= slack * share:
            break
        fits = [(c, g) for g, c in group_cost.items() if sticky[g] == heavy and c < 2 * excess]
        if not fits:
            break
        c, g = max(fits)
        sticky[g] = light
        load[heavy] -= c
        load[light] += c
    return [sticky[g] for g in gs]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="kafka.eos")
    parser.add_argument("--bounds", default="restarts=1,transactions=2,input_records=1,max_ticks=2")
    parser.add_argument("--symmetry", action="store_true")
    parser.add_argument("--policy", action="append", help=f"default: {', '.join(DEFAULT_POLICIES)}")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--head", type=int, default=2048, help="parallel.HEAD_FRONTIER (states per worker)")
    parser.add_argument("--min-entries", type=int, default=20)
    parser.add_argument("--us-per-successor", type=float, default=2.96)
    parser.add_argument("--us-per-miss", type=float, default=17.8)
    parser.add_argument("--us-per-move", type=float, default=4.2,
                        help="to each end of a move (par14: a third of what expanding a state costs)")
    parser.add_argument("--exchange-us", type=float, default=None)
    parser.add_argument("--steal", action="store_true",
                        help="at each level's end, the less loaded worker takes the other's last states until their "
                             "costs meet (charged: a move each, and the keys they bring that the taker has not met)")
    args = parser.parse_args()
    if args.workers != 2:
        parser.error("the gen policies model the engine's rebalancing for 2 workers only")
    from eoscheck.checker.registry import find_model
    bounds = {k: int(v) for k, v in (kv.split("=") for kv in args.bounds.split(",") if kv)}
    machine = find_model(args.model).machine(bounds=bounds)
    levels = record(machine, args.symmetry)
    getters = key_getters(machine, args.min_entries)
    model = Model(machine, levels, getters, args)
    print(f"{args.model} {args.bounds} symmetry={args.symmetry}: {sum(len(s) for s, _, _ in levels):,} states, "
          f"{sum(len(e) for _, _, e in levels):,} edges, {len(levels)} levels; {len(getters)} key getters, "
          f"{sum(map(sum, model.bfs_new)):,} keys" + ("; stealing within levels" if args.steal else "") + (f"; exchange {args.exchange_us} us per entry" if args.exchange_us is not None else ""))
    for policy in args.policy or DEFAULT_POLICIES:
        print(model.run(policy), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

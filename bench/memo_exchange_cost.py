"""A lower bound of what a memo exchange between the parallel engine's workers costs per entry (par17).

    python bench/memo_exchange_cost.py --max-states 150000

After a BFS of ``--max-states`` states (kafka.eos, symmetry), every rule memo entry (key and, per
outcome, its step, the written values that are plain data, and its check index) and every invariant
memo entry is pickled, unpickled and inserted into a dict; the least CPU of five rounds per entry is
printed. A real exchange costs more: outcomes also hold generated builders and per-projection
write functions (closures: not picklable, to be re-created in the receiving process), and keys hold
projection ids numbered per process (``_Projection.see``), to be translated.
"""

from __future__ import annotations

import argparse
import pickle
import time
from typing import Any


def _plain(value: Any) -> bool:
    return not callable(value) and not (isinstance(value, tuple) and any(callable(x) for x in value))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bounds", default="restarts=1,transactions=2,input_records=1,max_ticks=2")
    parser.add_argument("--max-states", type=int, default=150000)
    args = parser.parse_args()
    from eoscheck.checker.compose.properties import _Invariant
    from eoscheck.checker.compose.rules import _Rule
    from eoscheck.checker.explore import ExploreOptions, explore
    from eoscheck.checker.registry import find_model
    bounds = {k: int(v) for k, v in (kv.split("=") for kv in args.bounds.split(",") if kv)}
    m = find_model("kafka.eos").machine(bounds=bounds)
    explore(m, ExploreOptions(symmetry=True, stop_at_first=False, max_states=args.max_states))
    plan = m._plan
    rules: list[tuple[Any, Any]] = []
    functions = 0
    for rule in plan.rules:
        if isinstance(rule, _Rule):
            for b in [*rule.bindings, *(b for bs in rule.by_msg.values() for b in bs)]:
                for key, outs in b.memo.items():
                    rules.append((key, tuple((o[0], tuple(a for a in o[2] if _plain(a)), o[3]) for o in outs)))
                    functions += sum(1 for o in outs for a in o[2] if not _plain(a))
    invariants: list[tuple[Any, Any]] = []
    for obj in plan.property_objs.values():
        if isinstance(obj, _Invariant):
            for _combo, _reads, _terms, memo in obj.bindings:
                invariants.extend(memo.items())
    for name, entries in (("rule", rules), ("invariant", invariants)):
        best = float("inf")
        size = 0
        for _ in range(5):
            t = time.process_time()
            blob = pickle.dumps(entries, protocol=5)
            into: dict[Any, Any] = {}
            into.update(pickle.loads(blob))
            best = min(best, time.process_time() - t)
            size = len(blob)
        print(f"{name} memos: {len(entries):,} entries, {size / max(1, len(entries)):.0f} bytes each; pickle, "
              f"unpickle and insert: {1e6 * best / max(1, len(entries)):.2f} us per entry")
    print(f"outcome values that are functions (left out above; to be re-created by the receiver): {functions:,}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

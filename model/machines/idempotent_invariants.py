"""The invariants of ``kafka.idempotent_produce`` memoised on the parts of a flat state they read.

An invariant is checked on every new state, but it reads only the log (and one client), which
recur across thousands of states. These are module-level callables, not closures, so a machine
pickles with plain ``pickle`` and ships with empty memos.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import properties as props
from .idempotent_packed import CLIENT0, CLIENTS, PART, PARTITIONS, PackedIdempotentState


class LogInvariant:
    """An invariant of the partition log alone, memoised on the partition's id."""

    def __init__(self, check: Callable[[Any], bool], memoize: bool) -> None:
        self.check, self.memoize = check, memoize
        self.memo: dict[int, bool] = {}
        self.__doc__ = check.__doc__

    def __call__(self, s: PackedIdempotentState) -> bool:
        ok = self.memo.get(s[PART])
        if ok is None:
            ok = self.check(s)
            if self.memoize:
                self.memo[s[PART]] = ok
        return ok

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "memo": {}}


class SendOrderNoLoss:
    """SendOrderNoLoss memoised per client on (log, client): each client's half recurs far more
    often than the pair."""

    def __init__(self, n_clients: int, memoize: bool) -> None:
        self.n_clients, self.memoize = n_clients, memoize
        self.memo: dict[tuple[int, int, int], bool] = {}
        self.__doc__ = props.send_order_no_loss.__doc__

    def __call__(self, s: PackedIdempotentState) -> bool:
        part = s[PART]
        memo = self.memo
        for c in range(self.n_clients):
            cid = s[CLIENT0 + c]
            key = (part, cid, c)
            ok = memo.get(key)
            if ok is None:
                ok = props.client_send_order_no_loss(PARTITIONS.values[part].log, c, CLIENTS.values[cid])
                if self.memoize:
                    memo[key] = ok
            if not ok:
                return False
        return True

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "memo": {}}

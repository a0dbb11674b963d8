"""The network between actors: messages in flight, in send order, with bounded faults.

Messages are delivered in send order per channel (a connection: a broker reads one request at a
time from it and answers in order) unless a reorder is spent; channels interleave freely;
responses can be lost (the client's request then times out). Tuples stay small, so removing one is
a slice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")


def remove_at(messages: tuple[T, ...], index: int) -> tuple[T, ...]:
    return messages[:index] + messages[index + 1:]


def deliverable(messages: tuple[Any, ...], key: Callable[[Any], Any], reorders_left: int) -> Iterator[tuple[int, bool]]:
    """(index, is_reorder) of every message that may be delivered next: the oldest message of
    each channel (key) in order, and any younger one if a reorder is still allowed."""
    seen: set[Any] = set()
    for i, msg in enumerate(messages):
        k = key(msg)
        if k not in seen:
            seen.add(k)
            yield i, False
        elif reorders_left > 0:
            yield i, True

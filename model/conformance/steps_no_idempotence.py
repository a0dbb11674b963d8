"""Steps on a producer without idempotence (``initial_state.producer.idempotent`` false: no TransactionManager), for
SenderTest's tests of it: ``send tpN rM`` (appended, drained and sent; several in one step go in one request, as the
tests' single broker gets them), ``append tpN rM`` (waiting in the accumulator), ``response rM`` (with ``error``,
``error_message``, ``record_errors``, ``base_offset``; ``(retries exhausted)`` as in steps_client), ``expire rM``
(delivery.timeout.ms passed while its request is in flight), ``resend rM`` and ``runOnce()`` (the Sender's drain: one
waiting batch per partition, a retried one first). A batch's size is ``(N records)`` in its send or append.

``initial_state.producer``: ``retries`` (default Integer.MAX_VALUE: ``attempts < retries``) and
``max_in_flight_requests_per_connection`` (1: ``guaranteeMessageOrder``, so a drained partition is muted until its
answer is read, ``Sender.sendProducerData`` / ``completeBatch``; an expiry does not unmute it). The rules are
``producer/no_idempotence.py``'s."""

from __future__ import annotations

import re
from typing import Any

from ..errors import Errors
from ..producer.no_idempotence import (
    attempts_left,
    can_retry,
    drained_batch_ids,
    is_idempotent,
    record_exceptions,
    splits,
    top_level_exception,
)
from .values import NotExpressible, error_code, integer
from .world import World

Observed = dict[str, Any]

#: a batch: appended and not drained, back in the accumulator for a retry, sent (in the Sender's in-flight list),
#: split (its records in the split batches), or done
_QUEUED, _RETRY, _SENT, _SPLIT, _DONE = "queued", "retry", "sent", "split", "done"
#: ProducerConfig's default retries (Integer.MAX_VALUE from KIP-91, 2.1.0)
_MAX_RETRIES = 2**31 - 1


def applies(w: World) -> bool:
    return w.client.get("idempotent") is False and not w.client.get("transactional")


def _batches(w: World) -> dict[str, dict[str, Any]]:
    return w.client.setdefault("_plain", {})


def _muted(w: World) -> set[str]:
    return w.client.setdefault("_muted", set())


def _guarantee_order(w: World) -> bool:
    return integer(w.client.get("max_in_flight_requests_per_connection", 5), "max_in_flight_requests_per_connection") == 1


def _batch(w: World, text: str) -> tuple[str, dict[str, Any]]:
    m = re.search(r"\b(r\d+)\b", text)
    if not m or m.group(1) not in _batches(w):
        raise NotExpressible(f"{text!r}: no batch of this vector's sends")
    return m.group(1), _batches(w)[m.group(1)]


def _records(text: str) -> int:
    m = re.search(r"(\d+)\s*records?\b", text)
    return int(m.group(1)) if m else 1


def _send(w: World, b: dict[str, Any]) -> None:
    # the request of this step (RecordAccumulator.drain collates a node's batches into one produce request)
    b.update(state=_SENT, request=w.client.get("_request", 0), request_outstanding=True, in_sender=True)
    if _guarantee_order(w):
        _muted(w).add(b["tp"])


def _append(w: World, t: str) -> tuple[str, dict[str, Any]]:
    tp = (re.findall(r"\btp\d+\b", t) or ["tp0"])[0]
    name = (re.findall(r"\br\d+\b", t) or [f"b{len(_batches(w))}"])[0]
    b: dict[str, Any] = {"tp": tp, "expired": False, "state": _QUEUED, "request_outstanding": False,
                         "in_sender": False, "records": _records(t), "attempts": 0, "order": len(_batches(w))}
    _batches(w)[name] = b
    w.client["_tp"] = tp
    return name, b


def _drain(w: World) -> list[str]:
    """``RecordAccumulator.drain``: per partition not muted, the first batch of its deque (a re-enqueued or split batch
    goes to the front)."""
    sent: list[str] = []
    waiting = sorted(((0 if b["state"] == _RETRY else 1, b["order"], n) for n, b in _batches(w).items()
                      if b["state"] in (_RETRY, _QUEUED)))
    taken: set[str] = set()
    for _, _, n in waiting:
        b = _batches(w)[n]
        if b["tp"] in taken or b["tp"] in _muted(w):
            continue
        taken.add(b["tp"])
        _send(w, b)
        sent.append(n)
    return sorted(sent)


def _response(w: World, t: str, inp: dict[str, Any], kip_91: bool) -> Observed:
    name, b = _batch(w, t)
    if not b["request_outstanding"]:
        raise NotExpressible(f"{t!r}: the batch's request is not in flight")
    named = [x for x in re.findall(r"[A-Z][A-Z_]+", t) if x in Errors.__members__]
    error = error_code(named[0] if named else str(inp.get("error", "NONE")))
    # the answer completes the whole request (Sender.handleProduceResponse)
    for other in _batches(w).values():
        if other.get("request") == b["request"] and other["request_outstanding"]:
            other["request_outstanding"] = False
    b["in_sender"] = False
    if _guarantee_order(w):
        # completeBatch's last step, for every answer (a late one to an expired batch too)
        _muted(w).discard(b["tp"])
    done = b["state"] == _DONE
    if splits(error, b["records"], done=done):
        return _split(w, name, b, t, inp)
    if done:
        # an expired batch: never retried or split, the answer changes nothing (failBatch of a done batch is a no-op)
        return {"can_retry": can_retry(error, attempts_left=True, done=True, delivery_timed_out=b["expired"],
                                       kip_91=kip_91), "ignored": True}
    if error == Errors.NONE:
        b["state"] = _DONE
        base = integer(inp.get("base_offset", 0), "base_offset")
        return {"can_retry": False, "ignored": False, "record_offset": base + b["records"] - 1}
    retries = integer(w.client.get("retries", _MAX_RETRIES), "retries")
    left = attempts_left(b["attempts"], retries) and not re.search(r"retries exhausted", t)
    if can_retry(error, attempts_left=left, done=False, delivery_timed_out=False, kip_91=kip_91):
        # Sender.reenqueueBatch: back at the front of the partition's deque, one attempt more
        b["state"], b["attempts"] = _RETRY, b["attempts"] + 1
        return {"can_retry": True, "ignored": False}
    message = inp.get("error_message")
    given = inp.get("record_errors") or {}
    if not isinstance(given, dict):
        raise NotExpressible("record_errors: an object of batch index -> message (null: none)")
    if not all(str(k).isdigit() for k in given):
        raise NotExpressible("record_errors: its keys are batch indexes")
    errors = {int(k): (None if v is None else str(v)) for k, v in given.items()}
    if any(i < 0 or i >= b["records"] for i in errors):
        raise NotExpressible(f"record_errors name an index outside the batch's {b['records']} records")
    per_record = record_exceptions(error, b["records"], None if message is None else str(message), errors,
                                   w.protocol.client_produce_exception)
    # batch_error: the top-level exception (ProducerBatch.completeExceptionally's); each record's future its own
    b.update(state=_DONE, error=top_level_exception(error),
             # by batch index; a message Kafka writes itself (the plain KafkaException's) is not kept
             record_exceptions={str(i): r.exception for i, r in enumerate(per_record)},
             record_messages={str(i): r.message for i, r in enumerate(per_record) if r.message is not None})
    return {"can_retry": False, "ignored": False, "batch_error": b["error"],
            "record_exceptions": b["record_exceptions"], "record_messages": b["record_messages"]}


def _split(w: World, name: str, b: dict[str, Any], t: str, inp: dict[str, Any]) -> Observed:
    """``splitAndReenqueue`` for a producer without idempotence: the new batches (named by 'split into r2, r3' or
    ``split_into``, one record each unless ``split_records`` gives their sizes) go back to the front of the deque; the
    big batch leaves the in-flight list and is not done (its futures complete through the new batches)."""
    m = re.search(r"split\s+into\s+((?:r\d+[\s,]*)+)", t)
    names = re.findall(r"r\d+", m.group(1)) if m else [str(x) for x in inp.get("split_into", ()) or ()]
    sizes = [integer(x, "split_records") for x in inp.get("split_records", ()) or ()] or [1] * len(names)
    if not names or len(sizes) != len(names) or sum(sizes) != b["records"]:
        raise NotExpressible(f"a split of {b['records']} records needs its batches named ('split into r2, r3', "
                             "split_into) and, unless of one record each, their sizes (split_records)")
    b["state"] = _SPLIT
    for i, (part, size) in enumerate(zip(names, sizes, strict=True)):
        _batches(w)[part] = {"tp": b["tp"], "expired": False, "state": _RETRY, "request_outstanding": False,
                             "in_sender": False, "records": size, "attempts": 0, "order": -len(names) + i}
    return {"split_batches": names, "can_retry": False, "ignored": False}


def _clause(w: World, t: str, inp: dict[str, Any]) -> Observed:
    kip_91 = "kip-91" not in w.protocol.lacks
    if re.match(r"^append\b", t):
        _append(w, t)
        return {}
    if re.match(r"^send\b", t):
        _, b = _append(w, t)
        if _guarantee_order(w) and b["tp"] in _muted(w):
            # the partition's batch in flight holds it (guaranteeMessageOrder): the new one waits in the accumulator
            return {"drained": False}
        _send(w, b)
        return {"drained": True, "idempotent_records": is_idempotent(drained_batch_ids()),
                "request": drained_batch_ids()._asdict()}
    if re.match(r"^expire\b", t):
        _, b = _batch(w, t)
        if b["state"] != _SENT:
            raise NotExpressible(f"{t!r}: only a batch whose request is in flight expires on this path")
        # Sender.sendProducerData's getExpiredInflightBatches (KIP-91): failed with a TimeoutException and out of the
        # Sender's in-flight batches; its request stays outstanding until answered, and the partition stays muted
        b.update(state=_DONE, expired=True, in_sender=False, error="TimeoutException",
                 record_exceptions=dict.fromkeys((str(i) for i in range(b["records"])), "TimeoutException"))
        return {"batch_error": "TimeoutException"}
    if re.match(r"^(produce_)?response\b", t):
        return _response(w, t, inp, kip_91)
    if re.match(r"^resend\b", t):
        _, b = _batch(w, t)
        if b["state"] != _RETRY:
            raise NotExpressible(f"{t!r}: the batch is not waiting for a retry")
        if b["tp"] in _muted(w):
            raise NotExpressible(f"{t!r}: the partition is muted")
        _send(w, b)
        return {"request": drained_batch_ids()._asdict()}
    if re.match(r"^runOnce\(\)$", t):
        return {"sent": _drain(w)}
    raise NotExpressible(f"free-text event of a producer without idempotence not understood: {t!r}")


def event(w: World, inp: dict[str, Any]) -> Observed:
    out: Observed = {}
    w.client["_request"] = integer(w.client.get("_request", 0), "_request") + 1
    for clause in [c.strip() for c in re.split(r";\s*", str(inp.get("event", ""))) if c.strip()]:
        out.update(_clause(w, clause, inp))
    view = _view(w)
    view.update(out)
    return view


def _view(w: World) -> Observed:
    tp = w.client.get("_tp", "tp0")
    batches = _batches(w)
    out: Observed = {
        "in_flight_requests": len({b["request"] for b in batches.values() if b["request_outstanding"]}),
        # Sender.inFlightBatches(tp)
        "in_flight_batches": sum(1 for b in batches.values() if b["in_sender"] and b["tp"] == tp),
        "has_undrained": any(b["state"] in (_RETRY, _QUEUED) for b in batches.values()),
        "undrained_batches": sorted(n for n, b in batches.items() if b["state"] in (_RETRY, _QUEUED)),
        "muted_partitions": sorted(_muted(w)),
        "batches_done": {n: b["state"] == _DONE for n, b in sorted(batches.items())},
        "batch_errors": {n: b.get("error") for n, b in sorted(batches.items()) if b["state"] == _DONE}}
    for part in sorted({b["tp"] for b in batches.values()}):
        out[f"in_flight_batches_{part}"] = sum(1 for b in batches.values() if b["in_sender"] and b["tp"] == part)
    return out

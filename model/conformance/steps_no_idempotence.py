"""Steps on a producer without idempotence (``initial_state.producer.idempotent`` false: no TransactionManager), for
SenderTest's tests of it: ``send tpN rM`` (drained and sent, one request), ``response rM`` (with ``error``; ``(retries
exhausted)`` as in steps_client), ``expire rM`` (delivery.timeout.ms passed while its request is in flight), ``resend rM``
and ``runOnce()`` (the re-enqueued batches sent again). The rules are ``producer/no_idempotence.py``'s."""

from __future__ import annotations

import re
from typing import Any

from ..errors import Errors
from ..producer.no_idempotence import can_retry, drained_batch_ids, is_idempotent
from ..producer.partition_sequences import failed_batch_error
from .values import NotExpressible, error_code
from .world import World

Observed = dict[str, Any]

#: a batch: waiting in the accumulator for a retry, sent (its request outstanding), or done
_RETRY, _SENT, _DONE = "retry", "sent", "done"


def applies(w: World) -> bool:
    return w.client.get("idempotent") is False and not w.client.get("transactional")


def _batches(w: World) -> dict[str, dict[str, Any]]:
    return w.client.setdefault("_plain", {})


def _batch(w: World, text: str) -> tuple[str, dict[str, Any]]:
    m = re.search(r"\b(r\d+)\b", text)
    if not m or m.group(1) not in _batches(w):
        raise NotExpressible(f"{text!r}: no batch of this vector's sends")
    return m.group(1), _batches(w)[m.group(1)]


def _send(b: dict[str, Any]) -> None:
    b["state"], b["request_outstanding"], b["in_sender"] = _SENT, True, True


def _clause(w: World, t: str, inp: dict[str, Any]) -> Observed:
    kip_91 = "kip-91" not in w.protocol.lacks
    if re.match(r"^send\b", t):
        tp = (re.findall(r"\btp\d+\b", t) or ["tp0"])[0]
        name = (re.findall(r"\br\d+\b", t) or [f"b{len(_batches(w))}"])[0]
        b: dict[str, Any] = {"tp": tp, "expired": False}
        _send(b)
        _batches(w)[name] = b
        w.client["_tp"] = tp
        return {"idempotent_records": is_idempotent(drained_batch_ids()), "request": drained_batch_ids()._asdict()}
    if re.match(r"^expire\b", t):
        name, b = _batch(w, t)
        if b["state"] != _SENT:
            raise NotExpressible(f"{t!r}: only a batch whose request is in flight expires on this path")
        # Sender.sendProducerData's getExpiredInflightBatches (KIP-91): failed with a TimeoutException and out of the
        # Sender's in-flight batches; its request stays outstanding until answered
        b.update(state=_DONE, expired=True, in_sender=False, error="TimeoutException")
        return {"batch_error": "TimeoutException"}
    if re.match(r"^(produce_)?response\b", t):
        name, b = _batch(w, t)
        if not b["request_outstanding"]:
            raise NotExpressible(f"{t!r}: the batch's request is not in flight")
        named = [x for x in re.findall(r"[A-Z][A-Z_]+", t) if x in Errors.__members__]
        error = error_code(named[0] if named else str(inp.get("error", "NONE")))
        b["request_outstanding"], b["in_sender"] = False, False
        if b["state"] == _DONE:
            # an expired batch: never retried, the answer changes nothing (failBatch of a done batch is a no-op)
            return {"can_retry": can_retry(error, attempts_left=True, done=True, delivery_timed_out=b["expired"],
                                           kip_91=kip_91), "ignored": True}
        if error == Errors.NONE:
            b["state"] = _DONE
            return {"can_retry": False}
        retry = can_retry(error, attempts_left=not re.search(r"retries exhausted", t), done=False,
                          delivery_timed_out=False, kip_91=kip_91)
        if retry:
            b["state"] = _RETRY
            return {"can_retry": True}
        b.update(state=_DONE, error=failed_batch_error(error, transactional=False, wrap_in_abortable=False))
        return {"can_retry": False, "batch_error": b["error"]}
    if re.match(r"^resend\b", t):
        name, b = _batch(w, t)
        if b["state"] != _RETRY:
            raise NotExpressible(f"{t!r}: the batch is not waiting for a retry")
        _send(b)
        return {"request": drained_batch_ids()._asdict()}
    if re.match(r"^runOnce\(\)$", t):
        # the next loop drains what was re-enqueued (an expired batch never is)
        sent = sorted(n for n, b in _batches(w).items() if b["state"] == _RETRY)
        for n in sent:
            _send(_batches(w)[n])
        return {"sent": sent}
    raise NotExpressible(f"free-text event of a producer without idempotence not understood: {t!r}")


def event(w: World, inp: dict[str, Any]) -> Observed:
    out: Observed = {}
    for clause in [c.strip() for c in re.split(r";\s*", str(inp.get("event", ""))) if c.strip()]:
        out.update(_clause(w, clause, inp))
    view = _view(w)
    view.update(out)
    return view


def _view(w: World) -> Observed:
    tp = w.client.get("_tp", "tp0")
    batches = _batches(w)
    return {"in_flight_requests": sum(1 for b in batches.values() if b["request_outstanding"]),
            # Sender.inFlightBatches(tp)
            "in_flight_batches": sum(1 for b in batches.values() if b["in_sender"] and b["tp"] == tp),
            "has_undrained": any(b["state"] == _RETRY for b in batches.values()),
            "batches_done": {n: b["state"] == _DONE for n, b in sorted(batches.items())},
            "batch_errors": {n: b.get("error") for n, b in sorted(batches.items()) if b["state"] == _DONE}}

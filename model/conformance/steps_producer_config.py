"""``new ProducerConfig(props)`` as KafkaProducerTest builds one (``api``: "new ProducerConfig", ``props``: the user's
settings as strings): the idempotence settings it settles on or the ConfigException it throws, under the profile's
``Protocol.idempotence_config`` (the rules are ``producer/idempotence_config.py``'s)."""

from __future__ import annotations

from typing import Any

from ..producer.idempotence_config import settle
from .values import NotExpressible
from .world import World

Observed = dict[str, Any]


def new_producer_config(w: World, inp: dict[str, Any]) -> Observed:
    props = inp.get("props")
    if not isinstance(props, dict):
        raise NotExpressible(f"props {props!r}: give the producer's settings as an object of strings")
    try:
        s = settle({str(k): str(v) for k, v in props.items()}, w.protocol.idempotence_config)
    except ValueError as e:
        raise NotExpressible(str(e)) from None
    if s.refused_by:
        return {"exception": "ConfigException", "throws": True, "refused_by": s.refused_by}
    return {"exception": None, "throws": False, "enable_idempotence": s.enable_idempotence, "acks": s.acks,
            "retries": s.retries, "max_in_flight_requests_per_connection": s.max_in_flight}

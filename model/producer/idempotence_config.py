"""The producer's idempotence settings as ``new ProducerConfig(props)`` settles them
(``ProducerConfig.postProcessAndValidateIdempotenceConfigs``): whether the producer is idempotent, the acks it sends,
and the settings it refuses with a ConfigException.

KIP-679 (KAFKA-10619, c92d013fd4b, 3.0.0) made ``enable.idempotence`` default to true and ``acks`` to all. Which rule
applies after that (``IdempotenceConfigRule``):

- "3.1.1": KAFKA-13673 (7c280c1d5f6 on trunk, first tag 3.2.0; af1f68ab487 on the 3.0 branch, 3.0.1; b7f289ecad4 on
  the 3.1 branch, 3.1.1), read at 1eb7644 and 3.9.1: a default (not user-set) idempotence that conflicts with
  ``retries`` = 0, ``acks`` other than all or ``max.in.flight.requests.per.connection`` > 5 is turned off; a user-set
  one is refused. A ``transactional.id`` without idempotence (turned off or set false) is refused after that.
- "4.0": KAFKA-17927 (e1dcd383bc, first tag 4.0.0; read at 4.0.0 and 4.2.0-rc1): ``max.in.flight`` > 5 with
  idempotence on is refused whether or not the user set it; retries and acks as before.
- "unread": 3.0.0, 3.1.0 and every version before KIP-679 (idempotence off by default, KafkaProducer's own checks):
  not modelled.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, NamedTuple

IdempotenceConfigRule = Literal["unread", "3.1.1", "4.0"]

#: ProducerConfig's defaults since KIP-679 (3.0.0): acks all, retries Integer.MAX_VALUE, 5 requests in flight
DEFAULT_ACKS = "all"
DEFAULT_RETRIES = 2**31 - 1
DEFAULT_MAX_IN_FLIGHT = 5
#: MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION_FOR_IDEMPOTENCE: the sequence cache of a partition's leader holds 5 batches
MAX_IN_FLIGHT_FOR_IDEMPOTENCE = 5

ENABLE_IDEMPOTENCE = "enable.idempotence"
ACKS = "acks"
RETRIES = "retries"
MAX_IN_FLIGHT = "max.in.flight.requests.per.connection"
TRANSACTIONAL_ID = "transactional.id"


class SettledConfig(NamedTuple):
    """What the ProducerConfig holds after its post-processing, or the check that refused it (``refused_by``: the
    setting the ConfigException names, '' when the config was built)."""

    enable_idempotence: bool
    acks: str
    retries: int
    max_in_flight: int
    refused_by: str


def _bool(text: str) -> bool:
    value = text.strip().lower()
    if value not in ("true", "false"):
        raise ValueError(f"{ENABLE_IDEMPOTENCE} = {text!r}: not a boolean")
    return value == "true"


def _acks(text: str) -> str:
    """``parseAcks``: "all" is -1, a number keeps its value (ConfigDef allows all, -1, 0 and 1)."""
    value = text.strip()
    if value.lower() == "all":
        return "-1"
    if value not in ("-1", "0", "1"):
        raise ValueError(f"{ACKS} = {text!r}: not one of all, -1, 0, 1")
    return value


def settle(props: Mapping[str, str], rule: IdempotenceConfigRule) -> SettledConfig:
    """``new ProducerConfig(props)``'s idempotence post-processing under ``rule``; ``props`` are the user's settings
    (strings, as a Properties object holds them). Raises ValueError for a value ConfigDef itself refuses."""
    if rule == "unread":
        raise ValueError("the idempotence defaults before KAFKA-13673 (3.0.0, 3.1.0, before KIP-679) are not modelled")
    user_idempotence = ENABLE_IDEMPOTENCE in props
    idempotent = _bool(props[ENABLE_IDEMPOTENCE]) if user_idempotence else True
    acks = _acks(props.get(ACKS, DEFAULT_ACKS))
    retries = int(props.get(RETRIES, DEFAULT_RETRIES))
    in_flight = int(props.get(MAX_IN_FLIGHT, DEFAULT_MAX_IN_FLIGHT))
    disable = False
    if idempotent:
        # checked in this order, each refusing a user-set idempotence and turning a default one off
        for setting, conflicts in ((RETRIES, retries == 0), (ACKS, acks != "-1")):
            if conflicts:
                if user_idempotence:
                    return SettledConfig(True, acks, retries, in_flight, setting)
                disable = True
        if in_flight > MAX_IN_FLIGHT_FOR_IDEMPOTENCE:
            # KAFKA-17927 (4.0.0): refused even when idempotence is only the default
            if user_idempotence or rule == "4.0":
                return SettledConfig(True, acks, retries, in_flight, MAX_IN_FLIGHT)
            disable = True
    if disable:
        idempotent = False
    if not idempotent and TRANSACTIONAL_ID in props:
        return SettledConfig(False, acks, retries, in_flight, TRANSACTIONAL_ID)
    return SettledConfig(idempotent, acks, retries, in_flight, "")

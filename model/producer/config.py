"""The client's fixed configuration for one machine (switches and bounds resolved once)."""

from __future__ import annotations

from typing import NamedTuple

#: client versions: how sequences and errors are handled
CLIENT_VERSIONS = ("0.11", "pre-kip360", "kip360")
#: KIP-360's epoch bump: what happens to batches that already carry a sequence
EPOCH_BUMP_MODES = ("resequence_inflight", "fail_inflight")


class ClientConfig(NamedTuple):
    version: str  # one of CLIENT_VERSIONS
    epoch_bump: str  # one of EPOCH_BUMP_MODES (KIP-360 client only)
    max_in_flight: int  # max.in.flight.requests.per.connection
    delivery_timeout: int  # delivery.timeout.ms, in ticks
    max_seq: int
    max_epoch: int
    #: in-flight batches can expire (time passes while a request is outstanding): remember which
    #: batches were retried (``inRetry``). Off, the flag is never set, so states stay as before.
    in_flight_expiry: bool = False

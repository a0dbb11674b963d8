"""The ``kafka.eos`` bounds and liveness docs of its idempotent-only producers (``eos_idempotent``): each switches a
mechanism of the older ``kafka.idempotent_produce`` on; ``idempotent_producers = 0`` switches them
all off."""

from __future__ import annotations

from eoscheck.checker.registry import Bound

from ..properties import sends_completed

#: the liveness property of the idempotent producers (``IdempotentProducers.temporal_properties``)
TEMPORAL_DOCS: dict[str, str] = {"IdempotentSendsEventuallyComplete": sends_completed.__doc__ or ""}

IDEMPOTENT_BOUNDS: dict[str, Bound] = {
    "idempotent_producers": Bound("idempotent producers without a transactional id (each with its own producer "
                                  "id), writing to a partition of their own", 0, 0, 3),
    "idempotent_records": Bound("records each idempotent producer sends during the run (one record per batch)",
                                2, 1, 6),
    "acked_prefix": Bound("records each idempotent producer had written and acknowledged before the run starts "
                          "(its first sequence in the run is not 0)", 0, 0, 3),
    "delivery_timeout": Bound("an idempotent producer's delivery.timeout.ms in ticks: a batch older than this is "
                              "never sent again", 3, 1, 50),
    "transient_errors": Bound("idempotent produce requests the leader refuses with a retriable error "
                              "(NOT_ENOUGH_REPLICAS), letting a later batch overtake", 0, 0, 5),
    "leader_failovers": Bound("leaderships of the idempotent partition moved to the in-sync follower, whose log "
                              "start offset may lag and whose producer state is its own", 0, 0, 3),
    "restarted_replica_failovers": Bound("leaderships moved to a replica that restarted without its producer-state "
                                         "snapshots and rebuilt the state from its log", 0, 0, 3),
    "snapshot_restored_failovers": Bound("leaderships moved to a replica restored from a producer-state snapshot "
                                         "taken at its log end (one cached batch per producer)", 0, 0, 3),
    "late_delivery": Bound("1: time may pass while idempotent requests and responses are in flight (a request may "
                           "reach the leader after the delivery timeout; Sender.getExpiredInflightBatches)", 0, 0, 1),
    "clock_skew": Bound("ticks an idempotent producer's clock lags the broker's (CreateTime looks that much older "
                        "to producer-id expiry)", 0, 0, 10),
    "new_producer_ids": Bound("producer ids an idempotent producer may get after its first (resets, epoch "
                              "overflow)", 1, 0, 5),
}

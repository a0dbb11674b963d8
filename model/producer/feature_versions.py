"""What the transactional producer reads from its brokers' ApiVersions: whether the transaction coordinator can bump
the epoch for it (InitProducerId v3+, KIP-360) and whether transaction version 2 is on (the finalized
``transaction.version`` feature, KIP-890 part 2).

Read at apache/kafka's tags (TransactionManager.java, ApiVersions.java, KafkaProducer.java) and at the 2024-10
snapshot 1eb7644. No machine reads this module (kafka.eos gives each producer its transaction version and its
coordinator's support); the conformance interface (``model/api/client.py``) does, for TransactionManagerTest.

- ``ApiVersions.update(node, versions)`` keeps the node's versions and, when the node's finalized-features epoch is
  above the largest seen, that epoch and its finalized features; ``remove(node)`` drops the node's versions only.
- ``handleCoordinatorReady`` (the Sender, once the transaction coordinator's connection is ready; KAFKA-8805,
  937f1f741c, first tag 2.5.0) sets ``coordinatorSupportsBumpingEpoch`` from that node's InitProducerId max version
  (>= 3). Nothing else changes it: a lost connection, which drops the node's ApiVersions, leaves it.
- ``maybeUpdateTransactionV2Enabled`` reads the features only when their epoch is newer than the one it last read;
  transaction version 2 is on when ``transaction.version`` is finalized at 2 or more. When it is called is the
  version's (``FeatureCheck``).
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from ..since import Since

#: when the client reads transaction.version, named for its first release line:
#: "none" - never (2.0.0 .. 3.9.x: no client transaction version; the KIP-360 client's ``canBumpEpoch``);
#: "2024-10" - at ``beginTransaction`` (KAFKA-14563 [client], e512b634d4, in 1eb7644 and 4.0.0, not 3.9.1), no epoch
#: bump on an upgrade, ``canBumpEpoch`` = the coordinator's support;
#: "4.0" - when a commit or abort begins (``beginCompletingTransaction``: after building its EndTxn, with
#: onInitialization false) and after ``initTransactions`` (true), an upgrade seen while completing bumps the epoch
#: (``clientSideEpochBumpRequired``: KAFKA-18227, 9f511c6304 in 4.0.0, f7f3cffb48 in 4.1.0); the client triggers an
#: epoch bump only without TV2 (``needToTriggerEpochBumpFromClient`` = support and not TV2: KAFKA-17898, 4fc9e442c3,
#: first tag 4.0.0). The same at 4.0.0, 4.1.0 and 4.2.0-rc1
FeatureCheck = Literal["none", "2024-10", "4.0"]

FEATURE_CHECK_SINCE: dict[FeatureCheck, Since] = {
    "none": Since((2, 0, 0), "2.0.0 .. 3.9.1 TransactionManager: no isTransactionV2Enabled"),
    "2024-10": Since((3, 9, 50), "1eb7644 TransactionManager.beginTransaction l.310-316: maybeUpdateTransactionV2Enabled() "
                     "(KAFKA-14563, e512b634d4, PR 17265)"),
    "4.0": Since((4, 0, 0), "4.0.0 TransactionManager.beginCompletingTransaction l.354 maybeUpdateTransactionV2Enabled(false), "
                 "KafkaProducer.initTransactions l.652 (true), l.456-468; the same at 4.1.0 (l.392, 494-506) and "
                 "4.2.0-rc1; KAFKA-18227, KAFKA-17898"),
}

#: the first InitProducerId version with the producer's id and epoch (KIP-360): a coordinator that answers it can
#: bump a transactional producer's epoch
INIT_PRODUCER_ID_BUMP_VERSION = 3

#: ``latestFinalizedFeaturesEpoch`` and ``maxFinalizedFeaturesEpoch`` before anything was read
NO_FEATURES_EPOCH = -1


class ApiVersionsCache(NamedTuple):
    """The producer's ``ApiVersions``: each node's InitProducerId max version (None: the node's versions hold no
    InitProducerId), the largest finalized-features epoch seen and the ``transaction.version`` level finalized at it
    (None: not finalized)."""

    init_producer_id_max: tuple[tuple[str, int | None], ...] = ()
    features_epoch: int = NO_FEATURES_EPOCH
    transaction_version: int | None = None


def update(cache: ApiVersionsCache, node: str, init_producer_id_max: int | None, features_epoch: int,
           transaction_version: int | None) -> ApiVersionsCache:
    nodes = dict(cache.init_producer_id_max)
    nodes[node] = init_producer_id_max
    cache = cache._replace(init_producer_id_max=tuple(sorted(nodes.items())))
    if cache.features_epoch < features_epoch:
        cache = cache._replace(features_epoch=features_epoch, transaction_version=transaction_version)
    return cache


def remove(cache: ApiVersionsCache, node: str) -> ApiVersionsCache:
    return cache._replace(init_producer_id_max=tuple((n, v) for n, v in cache.init_producer_id_max if n != node))


def coordinator_supports_epoch_bump(cache: ApiVersionsCache, coordinator: str) -> bool:
    """``handleCoordinatorReady``: the coordinator's InitProducerId max version is at least 3 (no versions known for
    it: false)."""
    version = dict(cache.init_producer_id_max).get(coordinator)
    return version is not None and version >= INIT_PRODUCER_ID_BUMP_VERSION


class FeatureRead(NamedTuple):
    """The client's record of what it read: ``latestFinalizedFeaturesEpoch`` and ``isTransactionV2Enabled``."""

    epoch: int = NO_FEATURES_EPOCH
    tv2_enabled: bool = False


def maybe_update_tv2_enabled(read: FeatureRead, cache: ApiVersionsCache, *, on_initialization: bool,
                             check: FeatureCheck) -> tuple[FeatureRead, bool]:
    """``maybeUpdateTransactionV2Enabled``: (what the client now holds, whether it must bump its epoch). Nothing newer
    than what it read: unchanged. From "4.0" an upgrade to TV2 outside initialization requires an epoch bump, so the
    next transaction does not see the old one's partitions as added."""
    if check == "none" or read.epoch >= cache.features_epoch:
        return read, False
    enabled = cache.transaction_version is not None and cache.transaction_version >= 2
    bump = check == "4.0" and not on_initialization and not read.tv2_enabled and enabled
    return FeatureRead(cache.features_epoch, enabled), bump


def can_bump_epoch(transactional: bool, coordinator_supports: bool) -> bool:
    """``canBumpEpoch`` (2.5.0 .. 1eb7644): an idempotent producer always; a transactional one if its coordinator
    supports it."""
    return not transactional or coordinator_supports


def need_to_trigger_epoch_bump_from_client(coordinator_supports: bool, read: FeatureRead) -> bool:
    """``needToTriggerEpochBumpFromClient`` (4.0.0 on, KAFKA-17898): the coordinator supports the bump and transaction
    version 2, which bumps at every EndTxn, is off."""
    return coordinator_supports and not read.tv2_enabled

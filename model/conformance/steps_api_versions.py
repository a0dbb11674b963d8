"""The producer's ApiVersions and what TransactionManager reads from them (``model.producer.feature_versions``):
``apiVersions.update`` with ``node``, ``init_producer_id_max_version``, ``finalized_features`` (name -> level) and
``finalized_features_epoch``; ``apiVersions.remove`` with ``node``; and the manager's own calls
``maybeUpdateTransactionV2Enabled(onInitialization)``, ``handleCoordinatorReady()`` (``coordinator``: the node the
Sender found ready, "0" unless given), ``isTransactionV2Enabled()``, ``canBumpEpoch()`` (to 3.9.x and the 2024-10
snapshot) and ``needToTriggerEpochBumpFromClient()`` (4.0.0 on). The client's record lives in ``World.client``:
``_api_versions``, ``_features_read``, and the flags the other client steps read (``transaction_v2``,
``coordinator_supports_epoch_bump``, ``_epoch_bump_required``)."""

from __future__ import annotations

from typing import Any

from ..api import client as api
from .values import NotExpressible, integer
from .world import World

Observed = dict[str, Any]

#: the test's broker node (TransactionManagerTest's ``brokerNode``, id 0): the coordinator unless a step says
DEFAULT_NODE = "0"


def cache_of(w: World) -> api.ApiVersionsCache:
    held = w.client.get("_api_versions")
    return held if isinstance(held, api.ApiVersionsCache) else api.ApiVersionsCache()


def read_of(w: World) -> api.FeatureRead:
    held = w.client.get("_features_read")
    return held if isinstance(held, api.FeatureRead) else api.FeatureRead(tv2_enabled=bool(w.client.get("transaction_v2")))


def _node(inp: dict[str, Any]) -> str:
    node = inp.get("node", DEFAULT_NODE)
    return str(node)


def api_versions(w: World, inp: dict[str, Any]) -> Observed:
    kind = str(inp.get("call") or inp.get("event") or "")
    cache = cache_of(w)
    if kind.endswith("remove"):
        cache = api.remove_api_versions(cache, _node(inp))
    else:
        features = inp.get("finalized_features", {}) or {}
        if not isinstance(features, dict):
            raise NotExpressible(f"finalized_features {features!r}: give name -> finalized level")
        version = inp.get("init_producer_id_max_version")
        tv = features.get("transaction.version")
        cache = api.update_api_versions(cache, _node(inp), None if version is None else integer(version, "init_producer_id_max_version"),
                                        integer(inp.get("finalized_features_epoch", -1), "finalized_features_epoch"),
                                        None if tv is None else integer(tv, "transaction.version"))
    w.client["_api_versions"] = cache
    return view(w)


def view(w: World) -> Observed:
    read = read_of(w)
    supports = bool(w.client.get("coordinator_supports_epoch_bump", True))
    out: Observed = {"transaction_v2_enabled": read.tv2_enabled,
                     "epoch_bump_required": bool(w.client.get("_epoch_bump_required", False))}
    if w.protocol.client_feature_check == "4.0":
        out["need_to_trigger_epoch_bump_from_client"] = api.need_to_trigger_epoch_bump_from_client(supports, read)
    else:
        out["can_bump_epoch"] = api.can_bump_epoch(bool(w.client.get("transactional", False)), supports)
    return out


def maybe_update(w: World, on_initialization: bool) -> None:
    """``maybeUpdateTransactionV2Enabled``: the client's record, ``transaction_v2`` for the other client steps, and
    the epoch bump an upgrade asks for (4.0.0 on)."""
    read, bump = api.maybe_update_tv2_enabled(read_of(w), cache_of(w), on_initialization=on_initialization,
                                              check=w.protocol.client_feature_check)
    w.client["_features_read"] = read
    w.client["transaction_v2"] = read.tv2_enabled
    if bump:
        w.client["_epoch_bump_required"] = True


#: TransactionManager's calls about ApiVersions -> the feature checks that have them
CALLS: dict[str, tuple[str, ...]] = {
    "maybeUpdateTransactionV2Enabled": ("2024-10", "4.0"), "isTransactionV2Enabled": ("2024-10", "4.0"),
    "handleCoordinatorReady": ("none", "2024-10", "4.0"), "canBumpEpoch": ("none", "2024-10"),
    "needToTriggerEpochBumpFromClient": ("4.0",),
}


def call(w: World, name: str, arg: str, inp: dict[str, Any]) -> Observed:
    check = w.protocol.client_feature_check
    if check not in CALLS[name]:
        raise NotExpressible(f"transactionManager.{name}: not a method of this profile's TransactionManager "
                             f"(feature check {check!r})")
    if name == "maybeUpdateTransactionV2Enabled":
        if check == "4.0" and arg not in ("true", "false"):
            raise NotExpressible("maybeUpdateTransactionV2Enabled takes onInitialization (true / false) from 4.0.0")
        if check == "2024-10" and arg:
            raise NotExpressible("the 2024-10 snapshot's maybeUpdateTransactionV2Enabled() takes no argument")
        maybe_update(w, arg == "true")
    elif name == "handleCoordinatorReady":
        w.client["coordinator_supports_epoch_bump"] = api.coordinator_supports_epoch_bump(
            cache_of(w), str(inp.get("coordinator", DEFAULT_NODE)))
    return view(w)

"""Steps on the group coordinator: TxnOffsetCommit, OffsetFetch, the transaction marker on the
offsets partition, and the GroupMetadata events of the classic coordinator's unit tests."""

from __future__ import annotations

import re
from typing import Any

from ..api import group as api
from ..api import kafka_apis
from ..errors import Errors
from ..group.metadata import NO_INSTANCE_ID, NOT_APPENDED, GroupState
from ..group.offset_metadata_size import OFFSET_METADATA_MAX_SIZE_DEFAULT, oversized_partitions
from ..group.offsets_load import (
    COMMIT,
    EMPTY_CONTROL,
    GROUP,
    GROUP_TOMBSTONE,
    MARKER,
    NO_PRODUCER,
    TOMBSTONE,
)
from ..group.pending_offsets import (
    fail_pending_txn_offset_commit,
    on_txn_offset_commit_append,
    prepare_txn_offset_commit,
)
from .values import ANSWERED_BEFORE, NotExpressible, error_code, error_name, integer
from .world import World

Observed = dict[str, Any]
#: the producer id a TxnOffsetCommit without one is recorded under (the unit test's mock sends none)
ANONYMOUS_PRODUCER = 2**40


def _precondition(w: World, inp: dict[str, Any]) -> None:
    """A free-text setup of the group for this step ('separate test: empty classic group, no members',
    'group in CompletingRebalance, generation 3', ...)."""
    text = inp.get("precondition")
    if not isinstance(text, str):
        return
    g = w.group_meta()
    changed = False
    state = re.search(r"\b(empty|dead|stable|preparing ?rebalance|completing ?rebalance)\b", text, re.IGNORECASE)
    if state:
        g = g._replace(state=int(GroupState[state.group(1).upper().replace(" ", "_").replace("REBALANCE", "_REBALANCE")
                                            .replace("__", "_")]))
        changed = True
    if re.search(r"no members", text):
        g = g._replace(members=(), static_members=())
        changed = True
    gen = re.search(r"generation (\d+)", text)
    if gen:
        g = g._replace(generation_id=int(gen.group(1)))
        changed = True
    if not changed:
        raise NotExpressible(f"free-text precondition not understood: {text!r}")
    w.group = w.group._replace(group=g, member_epochs=None if "classic" in text else w.group.member_epochs)


def txn_offset_commit(w: World, inp: dict[str, Any]) -> Observed:
    if w.metadata_cache is not None:
        # KafkaApis first: partitions its metadata cache does not know are answered there; the rest go on
        requested = {str(p): o for p, o in (inp.get("offsets") or {}).items()}
        refused, valid = kafka_apis.txn_offset_commit_split(list(requested), kafka_apis.known_in(w.metadata_cache))
        answers = {tp: {"error": error_name(e), "error_code": e} for tp, e in refused.items()}
        if not valid:
            return {"per_partition": answers, "coordinator_called": False, "committed": w.committed_view(),
                    ANSWERED_BEFORE: "KafkaApis' metadata check",
                    "pending_txn": w.pending_view()}
        # the coordinator's share of the request, built as the step's own kind of dict so that the fields the
        # coordinator reads count as read (the harness lists an unread input field as unchecked)
        share = type(inp)({**inp, "offsets": {tp: requested[tp] for tp in valid}})
        out = _txn_offset_commit(w, share)
        read = getattr(inp, "read", None)
        if isinstance(read, set):
            read |= getattr(share, "read", set())
        out["per_partition"] = {**out["per_partition"], **answers}
        out["coordinator_called"] = True
        return out
    return _txn_offset_commit(w, inp)


def _txn_offset_commit(w: World, inp: dict[str, Any]) -> Observed:
    _precondition(w, inp)
    pid_raw = inp.get("producer_id")
    pid = ANONYMOUS_PRODUCER if pid_raw is None else integer(pid_raw, "producer_id")
    inst = inp.get("group_instance_id")
    offsets = tuple((w.partitions.id(p), integer(o, "offset")) for p, o in (inp.get("offsets") or {}).items())
    req = api.TxnOffsetCommitRequest(pid, w.members.id(str(inp.get("member_id", ""))),
                                     integer(inp.get("generation_id", -1), "generation_id", w.symbols), offsets,
                                     NO_INSTANCE_ID if inst is None else w.instances.id(str(inst)))
    new_coord = w.group.new_coordinator or "group-coordinator/" in w.source_file
    # the mocked KIP-890 verification's or the append's answer (testVerificationErrorsForTxnOffsetCommits)
    failed = next((inp[k] for k in ("verification_error", "append_error", "append_result") if k in inp), "NONE")
    # the classic storeOffsets' getMagic answers None: the broker no longer hosts the __consumer_offsets partition
    local = bool(inp.get("offsets_partition_local", True))
    errors, w.group = api.txn_offset_commit_errors(w.group._replace(new_coordinator=new_coord), req, w.protocol,
                                                   append_error=failed if isinstance(failed, int) else error_code(str(failed)),
                                                   oversized=_oversized(w, inp),
                                                   offsets_partition_local=local)
    if "request_version" in inp:
        version = integer(inp["request_version"], "request_version")
        errors = tuple((p, api.txn_offset_commit_answer(e, version)) for p, e in errors)
    err = errors[0][1] if errors else int(Errors.NONE)
    w.last_txn_pid = pid
    return {"error": error_name(err), "error_code": err,
            "per_partition": {w.partitions.name(p): {"error": error_name(e), "error_code": e} for p, e in errors},
            "committed": w.committed_view(), "pending_txn": w.pending_view(), **_partition_lists(w)}


def _oversized(w: World, inp: dict[str, Any]) -> frozenset[int]:
    """``metadata_lengths``: each partition's metadata length (null: no metadata); ``offset_metadata_max_bytes``: the
    broker's limit (default 4096)."""
    raw = inp.get("metadata_lengths")
    if raw is None:
        return frozenset()
    if not isinstance(raw, dict):
        raise NotExpressible("metadata_lengths: a map of partition -> metadata length")
    limit = integer(inp.get("offset_metadata_max_bytes", OFFSET_METADATA_MAX_SIZE_DEFAULT), "offset_metadata_max_bytes")
    lengths = {w.partitions.id(str(p)): None if n is None else integer(n, "metadata_lengths") for p, n in raw.items()}
    return oversized_partitions(lengths, limit)


def offset_fetch(w: World, inp: dict[str, Any]) -> Observed:
    raw = inp.get("partitions")
    # null = every partition: those with a committed offset (a partition with only a pending
    # transactional offset is not listed until its transaction commits)
    parts = sorted(w.committed_view()) if raw is None else [str(p) for p in raw]
    answers = api.handle_offset_fetch(w.group, tuple(w.partitions.id(p) for p in parts),
                                      require_stable=bool(inp.get("require_stable", False)))
    return {"group_error": "NONE", "error": "NONE", "partitions_returned": parts,
            "per_partition": {p: {"offset": off, "error": error_name(err), "error_code": err}
                              for p, (err, off) in zip(parts, answers)}}


def offset_delete(w: World, inp: dict[str, Any]) -> Observed:
    """OffsetDelete of ``partitions`` (one topic's) with ``group_subscribed_to_topic`` (the test's group set-up: the
    model's group keeps no subscriptions); the tombstones' replay follows, as the unit tests' context does."""
    if w.group.group is None:
        raise NotExpressible("OffsetDelete of a group the coordinator does not know (GROUP_ID_NOT_FOUND is not modelled)")
    parts = [str(p) for p in (inp.get("partitions") or [])]
    if not parts or len({p.rsplit("-", 1)[0] for p in parts}) != 1:
        raise NotExpressible("OffsetDelete with partitions of one topic ('bar-0', ...) is what the harness reads")
    new_coord = w.group.new_coordinator or "group-coordinator/" in w.source_file
    r, w.group = api.handle_offset_delete(w.group._replace(new_coordinator=new_coord),
                                          tuple(w.partitions.id(p) for p in parts),
                                          subscribed=bool(inp.get("group_subscribed_to_topic", False)), protocol=w.protocol)
    return {"per_partition": {p: {"error": error_name(e), "error_code": e} for p, e in zip(parts, r.errors, strict=True)},
            "tombstones": [w.partitions.name(p) for p in r.tombstones], "has_offset": _has_offset(w, parts),
            "committed": w.committed_view(), "pending_txn": w.pending_view()}


def cleanup_expired_offsets(w: World, inp: dict[str, Any]) -> Observed:
    """The new coordinator's ``cleanupExpiredOffsets`` at the world's clock, with ``offsets_retention_ms`` and the
    group's ``subscribed_topics`` (the test's mocked group; the model's group keeps no subscriptions)."""
    if w.group.group is None:
        raise NotExpressible("cleanupExpiredOffsets of a group the coordinator does not know")
    if not (w.group.new_coordinator or "group-coordinator/" in w.source_file):
        raise NotExpressible("the classic coordinator's offset retention (GroupMetadata.removeExpiredOffsets) is not "
                             "modelled")
    subscribed = {str(t) for t in (inp.get("subscribed_topics") or [])}
    unsubscribed = frozenset(p for p in range(len(w.group_meta().offsets))
                             if w.partitions.name(p).rsplit("-", 1)[0] not in subscribed)
    r, w.group = api.handle_cleanup_expired_offsets(w.group, w.commit_timestamps, unsubscribed, w.now,
                                                    integer(inp.get("offsets_retention_ms"), "offsets_retention_ms"),
                                                    w.protocol)
    return {"group_deletable": r.deletable, "tombstones": [w.partitions.name(p) for p in r.tombstones],
            "committed": w.committed_view(), "pending_txn": w.pending_view()}


def cleanup_group_metadata(w: World, inp: dict[str, Any]) -> Observed:
    """The classic coordinator's ``cleanupGroupMetadata`` of the group at the world's clock, with
    ``offsets_retention_ms``, the group's ``protocol_type`` (null: a simple consumer's group), its
    ``current_state_timestamp`` (when it entered its state; null: loaded from a record without it) and its
    ``subscribed_topics`` (null: not known), which the model's group does not keep."""
    if w.group.group is None:
        raise NotExpressible("cleanupGroupMetadata of a group the coordinator does not know")
    if w.group.new_coordinator or "group-coordinator/" in w.source_file:
        raise NotExpressible("cleanupGroupMetadata is the classic coordinator's (the new one's is cleanupExpiredOffsets)")
    kind_raw = inp.get("protocol_type", "consumer")
    subscribed_raw = inp.get("subscribed_topics")
    ts = inp.get("current_state_timestamp")
    subscribed = None if subscribed_raw is None else frozenset(
        p for p in range(len(w.group_meta().offsets))
        if w.partitions.name(p).rsplit("-", 1)[0] in {str(t) for t in subscribed_raw})
    state = w.group_meta().state
    if (subscribed is not None and kind_raw == "consumer" and "kip-496" not in w.protocol.lacks
            and state not in (GroupState.EMPTY, GroupState.STABLE, GroupState.DEAD)):
        raise NotExpressible("cleanupGroupMetadata of a rebalancing consumer group with known subscriptions: "
                             "KIP-496's branch before KAFKA-13636 (3.0.1, 3.1.1, 3.2.0) is not modelled")
    kind = api.GroupKind(None if kind_raw is None else str(kind_raw), None if ts is None else integer(ts, "current_state_timestamp"),
                         subscribed)
    r, w.group = api.handle_cleanup_group_metadata(w.group, kind, w.commit_timestamps, w.now,
                                                   integer(inp.get("offsets_retention_ms"), "offsets_retention_ms"),
                                                   w.protocol)
    return {"expired": [w.partitions.name(p) for p in r.expired], "group_tombstone": r.group_tombstone,
            "state": GroupState(w.group_meta().state).name, "committed": w.committed_view(),
            "pending_txn": w.pending_view()}


def leave_group(w: World, inp: dict[str, Any]) -> Observed:
    """A classic group's LeaveGroup of ``members`` ([{member_id, group_instance_id}], the batch of v3+; a single
    ``member_id`` is the v0-2 request): the top-level error, each member's error by its instance id (its member id
    when it has none), and the group
    after (its members, static members by instance id, state and generation)."""
    if w.group.group is None:
        raise NotExpressible("LeaveGroup of a group the coordinator does not know")
    if w.group.member_epochs is not None:
        raise NotExpressible("LeaveGroup of a KIP-848 consumer group: its classic members are not modelled")
    raw = inp.get("members")
    if raw is None and "member_id" in inp:
        raw = [{"member_id": inp.get("member_id")}]
    if not isinstance(raw, list) or not all(isinstance(m, dict) for m in raw):
        raise NotExpressible("LeaveGroup names its members: [{member_id, group_instance_id}]")
    leaving = tuple(api.LeavingMember(w.members.id(str(m.get("member_id") or "")),
                                      NO_INSTANCE_ID if m.get("group_instance_id") is None
                                      else w.instances.id(str(m["group_instance_id"]))) for m in raw)
    r, w.group = api.handle_leave_group(w.group, leaving, w.protocol)
    g = w.group_meta()
    return {"error": error_name(r.error), "error_code": r.error,
            # by instance id (else member id): the comparison reads a list as a multiset, so a list would lose the order
            "member_errors": {str(m.get("group_instance_id") if m.get("group_instance_id") is not None
                                  else m.get("member_id") or ""): error_name(e)
                              for m, e in zip(raw, r.member_errors)},
            "members": sorted(w.members.name(m) for m in g.members),
            # 'instance:member' strings: a list is compared whole, where a map's missing key would go unchecked
            "static_members": sorted(f"{w.instances.name(i)}:{w.members.name(m)}" for i, m in g.static_members),
            "state": GroupState(g.state).name, "generation": g.generation_id}


def _has_offset(w: World, parts: list[str]) -> dict[str, bool]:
    """``OffsetMetadataManagerTestContext.hasOffset``: a committed or a pending transactional offset."""
    pending = {e.partition for e in w.group_meta().pending}
    committed = w.committed_view()
    return {p: p in committed or w.partitions.id(p) in pending for p in parts}


def delete_all_offsets(w: World, inp: dict[str, Any]) -> Observed:
    """The new coordinator's ``deleteAllOffsets`` (DeleteGroups), then the tombstones' replay as the unit tests'
    context does; ``has_offset`` is read for the partitions the step's ``partitions`` name."""
    if w.group.group is None:
        raise NotExpressible("deleteAllOffsets of a group the coordinator does not know")
    if not (w.group.new_coordinator or "group-coordinator/" in w.source_file):
        raise NotExpressible("the classic coordinator's DeleteGroups (GroupMetadataManager.deleteGroups) is not modelled")
    tombstones, w.group = api.handle_delete_all_offsets(w.group, w.protocol)
    parts = [str(p) for p in (inp.get("partitions") or [])]
    return {"tombstones": [w.partitions.name(p) for p in tombstones], "num_deleted_offsets": len(tombstones),
            "has_offset": _has_offset(w, parts), "committed": w.committed_view(), "pending_txn": w.pending_view()}


def partitions_deleted(w: World, inp: dict[str, Any]) -> Observed:
    """The new coordinator's ``onPartitionsDeleted(partitions)`` over every group of the world (a topic deletion), then
    the tombstones' replay as the unit tests' context does: ``tombstones`` as (group, partition) pairs, ``has_offset``
    by group for the deleted partitions."""
    if not (w.group.new_coordinator or "group-coordinator/" in w.source_file):
        raise NotExpressible("the classic coordinator's topic deletion (GroupMetadataManager.cleanupGroupMetadata) is not "
                             "modelled")
    parts = [str(p) for p in (inp.get("partitions") or [])]
    if not parts:
        raise NotExpressible("onPartitionsDeleted names the deleted partitions ('foo-1', ...)")
    ids = tuple(w.partitions.id(p) for p in parts)
    current = w.group_id
    tombstones: list[list[str]] = []
    has_offset: dict[str, dict[str, bool]] = {}
    for gid in (list(w.groups) if w.groups else [w.group_id or ""]):
        if w.groups:
            w.use_group(gid)
        written, w.group = api.handle_partitions_deleted(w.group, ids, w.protocol)
        tombstones += [[gid, w.partitions.name(p)] for p in written]
        has_offset[gid] = _has_offset(w, parts)
    if current is not None and w.groups:
        w.use_group(current)
    return {"tombstones": sorted(tombstones), "has_offset": has_offset}


def replay_offset_tombstone(w: World, inp: dict[str, Any]) -> Observed:
    """The new coordinator's replay of an offset-commit tombstone for ``partition`` (a null record value)."""
    if w.group.group is None:
        raise NotExpressible("an offset tombstone of a group the coordinator does not know")
    if not (w.group.new_coordinator or "group-coordinator/" in w.source_file):
        raise NotExpressible("the classic coordinator's tombstone load (GroupMetadataManager.loadGroupsAndOffsets) is "
                             "not modelled")
    part = str(inp.get("partition", ""))
    if not part:
        raise NotExpressible("an offset tombstone names its partition ('bar-0')")
    w.group = api.replay_offset_tombstone_record(w.group, w.partitions.id(part), w.protocol)
    parts = [str(p) for p in (inp.get("partitions") or [part])]
    return {"has_offset": _has_offset(w, parts), "committed": w.committed_view(), "pending_txn": w.pending_view()}


def txn_marker(w: World, inp: dict[str, Any]) -> Observed:
    """The marker on __consumer_offsets partitions: in a world of several groups, every group on one of the step's
    ``offsets_partitions`` (``GroupMetadataManager.handleTxnCompletion`` / each partition's coordinator shard) completes
    the producer's pending offsets; the others keep theirs."""
    if not w.groups:
        return _txn_marker(w, inp)
    raw = inp.get("offsets_partitions")
    if not isinstance(raw, list):
        raise NotExpressible("a marker in a world of several groups names its offsets_partitions")
    hit = {integer(p, "offsets_partitions") for p in raw}
    current = w.group_id
    out: Observed = {}
    for gid, part in w.group_offsets_partition.items():
        if part in hit:
            w.use_group(gid)
            out = _txn_marker(w, inp)
    if current is not None:
        w.use_group(current)
    out["committed_by_group"] = {gid: _committed(w, gid) for gid in w.groups}
    return out


def _committed(w: World, gid: str) -> dict[str, int]:
    current = w.group_id
    w.use_group(gid)
    view = w.committed_view()
    if current is not None:
        w.use_group(current)
    return view


def _txn_marker(w: World, inp: dict[str, Any]) -> Observed:
    pid_raw = inp.get("producer_id")
    pid = w.last_txn_pid if pid_raw is None else integer(pid_raw, "producer_id")
    commit = str(inp.get("result", "COMMIT" if inp.get("is_commit", True) else "ABORT")) == "COMMIT"
    if "is_commit" in inp:
        commit = bool(inp["is_commit"])
    had = any(e.producer_id == pid for e in w.group_meta().pending)
    coordinator = str(inp.get("group_coordinator", "new"))
    if coordinator not in ("new", "old"):
        raise NotExpressible(f"group_coordinator {coordinator!r}: the model knows the old and the new one")
    raw = str(inp.get("group_coordinator_error", "NONE"))
    # the old coordinator's answer does not depend on which error onTransactionCompleted failed with (any name)
    failed = error_code(raw) if coordinator == "new" or raw == "NONE" else int(Errors.UNKNOWN_SERVER_ERROR)
    if failed != 0:
        # the group coordinator could not complete the transaction: nothing changes, the marker is answered
        answer = api.marker_answer(failed, new_coordinator=coordinator == "new")
        return {"error": error_name(answer), "error_code": answer}
    try:
        w.group = api.handle_txn_marker(w.group, pid, commit)
    except ValueError:  # a pending offset completed before its record was written
        return {"error": "EXCEPTION", "exception": "IllegalStateException"}
    return {"error": "NONE", "error_code": 0,
            "pending_dropped": had and not any(e.producer_id == pid for e in w.group_meta().pending),
            "committed": w.committed_view(), "pending_txn": w.pending_view(),
            "has_offsets": _has_offsets(w),
            "has_pending_from_producer": any(e.producer_id == pid for e in w.group_meta().pending),
            **_partition_lists(w)}


def _partition_lists(w: World) -> Observed:
    """The partitions with a committed offset and those with a pending transactional offset, as lists: a vector's
    ``committed`` and ``pending_txn`` compare partially (a key the model lacks is unchecked), these compare whole."""
    g = w.group.group
    return {"committed_partitions": sorted(w.committed_view()),
            "pending_partitions": sorted({w.partitions.name(e.partition) for e in (g.pending if g is not None else ())})}


def _has_offsets(w: World) -> bool:
    """``GroupMetadata.hasOffsets``: committed offsets, or plain or transactional commits pending."""
    return bool(w.committed_view()) or bool(w.plain_commits) or bool(w.group_meta().pending)


def fail_pending_txn_offset_commit_all(w: World, pid: int):
    g = w.group_meta()
    for e in g.pending:
        if e.producer_id == pid and e.appended_at == NOT_APPENDED:
            g = fail_pending_txn_offset_commit(g, pid, e.partition)
    return g


def group_event(w: World, inp: dict[str, Any]) -> Observed:
    """prepareTxnOffsetCommit / prepareOffsetCommit / onTxnOffsetCommitAppend / onOffsetCommitAppend /
    failPendingTxnOffsetCommit (GroupMetadataTest)."""
    ev = str(inp.get("event", ""))
    g = w.group_meta()
    if ev.startswith("prepareTxnOffsetCommit"):
        pid = integer(inp.get("producer_id", 0), "producer_id")
        w.last_txn_pid = pid
        g = prepare_txn_offset_commit(g, pid, ((w.partitions.id(str(inp["partition"])),
                                                integer(inp["offset"], "offset")),))
    elif ev.startswith("prepareOffsetCommit"):
        w.plain_commits[w.partitions.id(str(inp["partition"]))] = integer(inp["offset"], "offset")
    elif ev.startswith("onTxnOffsetCommitAppend"):
        at = integer(inp.get("log_offset", w.group.log_end_offset), "log_offset")
        only = inp.get("producer_id")  # none given: every producer's unwritten pending offsets
        for e in g.pending:
            if e.appended_at == NOT_APPENDED and (only is None or e.producer_id == integer(only, "producer_id")):
                g = on_txn_offset_commit_append(g, e.producer_id, e.partition, e.offset, at)
        w.group = w.group._replace(log_end_offset=max(w.group.log_end_offset, at + 1))
    elif ev.startswith("onOffsetCommitAppend"):
        at = integer(inp.get("log_offset", w.group.log_end_offset), "log_offset")
        w.group = w.group._replace(group=g)
        for p, off in sorted(w.plain_commits.items()):
            w.group = api.append_offset_commit(w.group, p, off, at)
        w.plain_commits.clear()
        g = w.group_meta()
    elif ev.startswith("failPendingTxnOffsetCommit"):
        pid = integer(inp.get("producer_id", w.last_txn_pid), "producer_id")
        w.group = w.group._replace(group=g)
        g = fail_pending_txn_offset_commit_all(w, pid)
    w.group = w.group._replace(group=g)
    pid = w.last_txn_pid
    out = {"committed": w.committed_view(), "pending_txn": w.pending_view(), "has_offsets": _has_offsets(w),
           "has_pending_from_producer": any(e.producer_id == pid for e in g.pending), **_partition_lists(w)}
    if "partition" in inp:
        # hasPendingOffsetCommitsForTopicPartition: a consumer commit not yet appended, or a producer's offsets
        part = w.partitions.id(str(inp["partition"]))
        out["has_pending"] = part in w.plain_commits or any(e.partition == part for e in g.pending)
    return out


def _log_records(w: World, raw: Any) -> tuple[api.OffsetsLogRecord, ...]:
    """A ``log`` of the group's __consumer_offsets partition, one object per batch in log order: ``{"commit":
    {partition: offset}}`` (with ``producer_id``: a transactional batch), ``{"tombstone": partition}`` (with
    ``producer_id``: in a transactional batch), ``{"marker": "COMMIT"|"ABORT", "producer_id"}``, ``{"empty_control_batch":
    true}``, ``{"group": {"generation", "members"}}`` or ``{"group_tombstone": true}``; ``at``: the batch's base offset (default: after the previous)."""
    if not isinstance(raw, list) or not all(isinstance(b, dict) for b in raw):
        raise NotExpressible("log: a list of batches ({'commit': {...}}, {'marker': 'COMMIT', 'producer_id': N}, ...)")
    out: list[api.OffsetsLogRecord] = []
    at = 0
    for b in raw:
        at = integer(b.get("at", at), "at")
        pid = integer(b.get("producer_id", NO_PRODUCER), "producer_id")
        if "commit" in b:
            commits = b["commit"]
            if not isinstance(commits, dict) or not commits:
                raise NotExpressible("log commit: a map of partition -> offset")
            out += [api.OffsetsLogRecord(COMMIT, at, w.partitions.id(str(p)), integer(o, "offset"), pid)
                    for p, o in commits.items()]
            at += len(commits)
            continue
        if "tombstone" in b:
            out.append(api.OffsetsLogRecord(TOMBSTONE, at, w.partitions.id(str(b["tombstone"])), producer_id=pid))
        elif "marker" in b:
            result = str(b["marker"])
            if result not in ("COMMIT", "ABORT") or pid == NO_PRODUCER:
                raise NotExpressible("log marker: 'COMMIT' or 'ABORT' with its producer_id")
            out.append(api.OffsetsLogRecord(MARKER, at, producer_id=pid, is_commit=result == "COMMIT"))
        elif b.get("empty_control_batch"):
            out.append(api.OffsetsLogRecord(EMPTY_CONTROL, at, producer_id=pid))
        elif isinstance(b.get("group"), dict):
            g = b["group"]
            out.append(api.OffsetsLogRecord(GROUP, at, generation=integer(g.get("generation", 0), "generation"),
                                            members=tuple(w.members.id(str(m)) for m in g.get("members") or [])))
        elif b.get("group_tombstone"):
            out.append(api.OffsetsLogRecord(GROUP_TOMBSTONE, at))
        else:
            raise NotExpressible(f"log batch {b!r}: not a record kind the harness reads")
        at += 1
    return tuple(out)


def _loaded_view(w: World, ran: bool) -> Observed:
    g = w.group.group
    out: Observed = {"loaded": ran, "coordinator_epoch": w.offsets_partition.epoch, "group_loaded": g is not None,
                     "committed": w.committed_view(), "pending_txn": w.pending_view(), "has_offsets": _has_offsets(w),
                     **_partition_lists(w)}
    if g is not None:
        out.update(group_state=GroupState(g.state).name.title().replace("_", ""), generation=g.generation_id,
                   members=sorted(w.members.name(m) for m in g.members),
                   committed_at={w.partitions.name(p): c.appended_at for p, c in enumerate(g.offsets) if c.offset >= 0})
    return out


def load_groups_and_offsets(w: World, inp: dict[str, Any]) -> Observed:
    """The classic coordinator's ``loadGroupsAndOffsets`` of the group's partition at ``coordinator_epoch``, replaying
    ``log`` (``_log_records``; without it, the log the last load read)."""
    if w.group.new_coordinator or "group-coordinator/" in w.source_file:
        raise NotExpressible("the new coordinator's partition load (CoordinatorRuntime) is not modelled")
    if "log" in inp:
        w.offsets_partition = w.offsets_partition._replace(log=_log_records(w, inp["log"]))
    ran, w.offsets_partition, w.group = api.handle_load_offsets_partition(
        w.group, w.offsets_partition, integer(inp.get("coordinator_epoch"), "coordinator_epoch"), w.protocol)
    return _loaded_view(w, ran)


def remove_groups_and_offsets(w: World, inp: dict[str, Any]) -> Observed:
    """The classic coordinator's ``removeGroupsAndOffsets`` of the group's partition at ``coordinator_epoch`` (null: a
    StopReplica without one)."""
    if w.group.new_coordinator or "group-coordinator/" in w.source_file:
        raise NotExpressible("the new coordinator's partition unload (CoordinatorRuntime) is not modelled")
    raw = inp.get("coordinator_epoch")
    ran, w.offsets_partition, w.group = api.handle_unload_offsets_partition(
        w.group, w.offsets_partition, None if raw is None else integer(raw, "coordinator_epoch"), w.protocol)
    return _loaded_view(w, ran)

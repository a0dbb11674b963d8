"""Steps of the log cleaner on a compacted partition (LogCleanerTest): the records' keys a produce step gives, and a
cleaning pass that reports what the log keeps (offsets, keys, batches, last sequences, the aborted transaction index)."""

from __future__ import annotations

from typing import Any

from ..api import leader as api
from ..partition import log_cleaner as cleaner
from ..partition.stable_read import AbortedTxn
from ..transactions.codes import TxnResult
from .values import NotExpressible, integer
from .world import World

Observed = dict[str, Any]

#: LogConfig's default delete.retention.ms (24 h), which LogCleanerTest's logs keep unless a test sets it
DEFAULT_DELETE_RETENTION_MS = 86_400_000


def record_data(w: World, inp: dict[str, Any], batch: api.ProduceBatch, res: api.ProduceResult) -> None:
    """A data batch appended: its records as the cleaner reads them (``keys``: one per record, in offset order; a
    batch given without keys cannot be cleaned)."""
    if res.result != api.APPENDED:
        return
    raw = inp.get("keys")
    count = res.last_offset - res.first_offset + 1
    if raw is not None and (not isinstance(raw, list) or len(raw) != count):
        raise NotExpressible(f"keys {raw!r}: one key per record of the batch's {count}")
    keys: list[str | None] = [None] * count if raw is None else [str(k) for k in raw]
    w.keyed_log.append(cleaner.LogBatch(
        res.first_offset, res.last_offset, batch.producer_id, batch.epoch,
        batch.last_sequence if batch.producer_id >= 0 and batch.base_sequence >= 0 else -1, batch.transactional,
        cleaner.DATA, tuple(zip(range(res.first_offset, res.last_offset + 1), keys))))


def record_marker(w: World, req: api.MarkerRequest, offset: int) -> None:
    kind = cleaner.ABORT if req.result == TxnResult.ABORT else cleaner.COMMIT
    w.keyed_log.append(cleaner.LogBatch(offset, offset, req.producer_id, req.epoch, -1, True, kind,
                                        ((offset, "<control>"),)))


def _active_base(w: World) -> int:
    return max([w.first_segment_base, *w.segment_bases])


def clean(w: World, inp: dict[str, Any]) -> Observed:
    """``Cleaner.clean`` / ``doClean(currentTime)`` / ``cleanSegments``: the batches below ``clean_upto`` (default the
    active segment's base) are cleaned with an offset map of the keys in [``first_dirty_offset``, ``map_upto``)
    (default: up to ``clean_upto``; a test's small map stops earlier), at ``now`` with ``delete_retention_ms``."""
    if "kafka-8335" in w.protocol.lacks and any(b.kind != cleaner.DATA for b in w.keyed_log):
        raise NotExpressible("before KAFKA-8335 / KAFKA-8351 (2.2.2, 2.3.0) the cleaner kept COMMIT markers and did not "
                             "carry transactions between segment groups: the model has the later rule only")
    if any(k is None for b in w.keyed_log for _, k in b.records):
        raise NotExpressible("a data batch appended without 'keys': the cleaner's offset map needs them")
    upto = integer(inp.get("clean_upto", _active_base(w)), "clean_upto")
    lo = integer(inp.get("first_dirty_offset", 0), "first_dirty_offset")
    hi = integer(inp.get("map_upto", upto), "map_upto")
    if not lo <= hi <= upto:
        raise NotExpressible(f"offset map [{lo}, {hi}) is not inside the cleaned range below {upto}")
    cleaning = cleaner.CleanPass(upto, lo, hi, integer(inp.get("now", w.now), "now"),
                                 integer(inp.get("delete_retention_ms", DEFAULT_DELETE_RETENTION_MS),
                                         "delete_retention_ms"))
    aborted = tuple(cleaner.IndexedAbort(a.producer_id, a.first_offset, a.last_offset) for a in w.aborted_txns)
    out = api.clean_log(tuple(w.keyed_log), aborted, w.leader, cleaning)
    if out.horizon_consulted and "kafka-8522" in w.protocol.lacks:
        raise NotExpressible("a marker with nothing left of its transaction: before KIP-534 (KAFKA-8522, 3.1.0) its "
                             "removal hung on the cleaned segments' last-modified times, which the model does not keep")
    w.keyed_log = list(out.batches)
    w.aborted_txns = [AbortedTxn(a.producer_id, a.first_offset, a.last_offset) for a in out.aborted_index]
    return {**view(w), "dirty_offset": hi}


def view(w: World) -> Observed:
    """What LogCleanerTest reads of the log: ``offsetsInLog``, ``keysInLog`` (data records), ``lastOffsetsPerBatchInLog``,
    ``lastSequencesInLog`` (each producer's last data batch) and the aborted transaction index."""
    data = [(o, k) for b in w.keyed_log if b.kind == cleaner.DATA for o, k in b.records]
    seqs: dict[str, int] = {}
    for b in w.keyed_log:
        if b.kind == cleaner.DATA and b.producer_id >= 0 and b.last_sequence >= 0:
            seqs[str(b.producer_id)] = b.last_sequence
    return {"offsets": sorted([o for b in w.keyed_log for o, _ in b.records]),
            "keys": [k for _, k in sorted(data)],
            "last_offsets_per_batch": [b.last_offset for b in w.keyed_log],
            "last_sequences": seqs,
            "aborted_txns": [[a.producer_id, a.first_offset, a.last_offset] for a in w.aborted_txns]}


def read_log(w: World, inp: dict[str, Any]) -> Observed:
    return view(w)

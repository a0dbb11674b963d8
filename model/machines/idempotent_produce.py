"""Machine ``kafka.idempotent_produce``: idempotent producers writing to one partition whose leader
validates sequences and epochs, under retention / DeleteRecords, producer-id expiry, lost and
transient errors, and client timeouts.

Requests and responses travel per connection in order (the broker handles one request of a
connection at a time); after a timeout the client reconnects and the old connection's requests
may still be handled, interleaved with the new one's. Reordering within a connection is not a
fault Kafka has; a batch overtakes an earlier one when the earlier one gets a retriable error
(``transient_errors``: NOT_ENOUGH_REPLICAS) or across connections.

Time is abstract: ``Tick`` advances a clock (bounded by ``max_ticks``) only when no message is in
flight, so every message is delivered or lost within the tick it was sent in. A tick is the unit
of ``delivery.timeout.ms`` and of ``producer.id.expiration.ms`` (both bounds, in ticks), so a spec
can set one shorter or longer than the other.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from eoscheck.checker.machine import Machine, Property

from .. import properties as props
from ..errors import error_name
from ..network import deliverable, remove_at
from ..errors import Errors
from ..partition.log import (advance_log_start_offset, append_batch, expire_producers, rebuild_producer_state,
                             record_batch)
from ..partition.producer_state import find_entry, is_producer_expired, remove_expired_producers, truncate_head
from ..partition.validation import validate_produce
from ..producer import client as cl
from ..producer.config import ClientConfig
from ..state import (BATCH_STATUS_NAMES, INFLIGHT, QUEUED, FollowerState, IdempotentFaults, IdempotentState,
                     LogRecord, PartitionState, ProduceResponse)

PROPERTY_DOCS: dict[str, str] = {
    "NoDuplicates": props.no_duplicates.__doc__ or "",
    "SendOrderNoLoss": props.send_order_no_loss.__doc__ or "",
    "OutOfOrderOnlyOnDataLoss": props.out_of_order_only_on_data_loss.__doc__ or "",
    "FencedEpochNeverWrites": props.fenced_epoch_never_writes.__doc__ or "",
}


class IdempotentProduceMachine(Machine):
    actions = {
        "Send": ("client",),
        "Drain": ("client", "record", "seq", "epoch"),
        "HandleProduce": ("client", "record", "seq", "epoch", "error"),
        "LoseResponse": ("client", "record"),
        "HandleProduceResponse": ("client", "record", "error", "outcome"),
        "RequestTimeout": ("client",),
        "ExpireBatch": ("client", "record"),
        "ResolveSequences": ("client",),
        "BumpEpoch": ("client",),
        "InitProducerId": ("client", "producer_id"),
        "DeleteRecords": ("offset",),
        "PropagateLogStartOffset": ("offset",),
        "LeaderFailover": ("rebuilt",),
        "ExpireProducerIds": (),
        "Tick": ("now",),
    }

    def __init__(self, switches: Mapping[str, Any], bounds: Mapping[str, int]) -> None:
        self.unknown_producer = str(switches["broker_unknown_producer"])
        self.retain_state = bool(switches["broker_retain_producer_state"])
        self.cache_size = int(switches["broker_batch_cache"])
        self.old_duplicate_error = bool(switches["broker_duplicate_sequence_error"])
        self.cfg = ClientConfig(version=str(switches["client_version"]), epoch_bump=str(switches["client_epoch_bump"]),
                                max_in_flight=bounds["max_in_flight"], delivery_timeout=bounds["delivery_timeout"],
                                max_seq=bounds["max_seq"], max_epoch=bounds["max_epoch"])
        self.n_clients = bounds["clients"]
        self.prefix = bounds["acked_prefix"]
        self.records = self.prefix + bounds["records"]
        self.expiration = bounds["producer_id_expiration"]
        self.max_ticks = bounds["max_ticks"]
        self.max_lost = bounds["lost_responses"]
        self.max_transient = bounds["transient_errors"]
        self.max_deletes = bounds["delete_records"]
        self.max_failovers = bounds["leader_failovers"]
        self.max_rebuilt = bounds["restarted_replica_failovers"]
        self.max_pids = self.n_clients + bounds["new_producer_ids"]

    # --- structure -------------------------------------------------------------------------

    def init_states(self) -> Iterator[IdempotentState]:
        """Each client starts with producer id = its index, epoch 0, and ``acked_prefix`` records
        already written and acknowledged (a producer that has been running for a while)."""
        partition = PartitionState(log=(), log_start_offset=0, producers=())
        clients = []
        for c in range(self.n_clients):
            client = cl.new_client(c)
            for r in range(self.prefix):
                partition, offset = append_batch(partition, LogRecord(c, r, c, 0, r, 0), self.cache_size)
                client = client._replace(last_acked_seq=r, last_acked_offset=offset, acked=client.acked | 1 << r)
            clients.append(client._replace(sent=self.prefix, next_seq=self.prefix % (self.cfg.max_seq + 1)))
        follower = (FollowerState(0, partition.producers),) if self.max_failovers + self.max_rebuilt else ()
        yield IdempotentState(now=0, next_producer_id=self.n_clients, partition=partition, follower=follower,
                              leader_epoch=0, clients=tuple(clients), requests=(), responses=(),
                              faults=IdempotentFaults(0, 0, 0, 0, 0))

    def within_bounds(self, s: IdempotentState) -> bool:
        return s.next_producer_id <= self.max_pids

    def is_terminal(self, s: IdempotentState) -> bool:
        if s.requests or s.responses:
            return False
        return all(c.fatal or (c.sent == self.records and not c.batches) for c in s.clients)

    def properties(self) -> dict[str, Property]:
        return {
            "NoDuplicates": Property("NoDuplicates", PROPERTY_DOCS["NoDuplicates"], "invariant", props.no_duplicates),
            "SendOrderNoLoss": Property("SendOrderNoLoss", PROPERTY_DOCS["SendOrderNoLoss"], "invariant",
                                        props.send_order_no_loss),
            "OutOfOrderOnlyOnDataLoss": Property("OutOfOrderOnlyOnDataLoss", PROPERTY_DOCS["OutOfOrderOnlyOnDataLoss"],
                                                 "transition", props.out_of_order_only_on_data_loss),
            "FencedEpochNeverWrites": Property("FencedEpochNeverWrites", PROPERTY_DOCS["FencedEpochNeverWrites"],
                                               "invariant", props.fenced_epoch_never_writes),
        }

    # --- transitions -------------------------------------------------------------------------

    @staticmethod
    def _set_client(s: IdempotentState, c: int, client: Any, requests: Any = None, responses: Any = None,
                    faults: Any = None, next_producer_id: int | None = None) -> IdempotentState:
        """``s`` with client ``c`` replaced (and the given parts). Built positionally: this is the
        hottest constructor of the model, and NamedTuple._replace costs a dict round trip."""
        return IdempotentState(
            s.now, s.next_producer_id if next_producer_id is None else next_producer_id, s.partition, s.follower,
            s.leader_epoch, s.clients[:c] + (client,) + s.clients[c + 1:],
            s.requests if requests is None else requests, s.responses if responses is None else responses,
            s.faults if faults is None else faults)

    def successors(self, s: IdempotentState) -> Iterator[tuple[tuple, IdempotentState]]:
        cfg, now = self.cfg, s.now
        for c, client in enumerate(s.clients):
            if client.sent < self.records and not client.fatal:
                yield ("Send", c), self._set_client(s, c, cl.send(client, now))
            drained = cl.drain(client, c, now, cfg)
            if drained is not None:
                new_client, req = drained
                req = req._replace(leader_epoch=client.known_leader_epoch)  # the leader in the client's metadata
                yield ("Drain", c, req.record, req.seq, req.epoch), self._set_client(
                    s, c, new_client, requests=s.requests + (req,))
            if client.batches:
                yield from self._client_housekeeping(s, c, client)
            if client.producer_id < 0 and not client.fatal:
                pid = s.next_producer_id
                yield ("InitProducerId", c, pid), self._set_client(s, c, cl.init_producer_id(client, pid),
                                                                   next_producer_id=pid + 1)
            elif client.unresolved >= 0 and not any(b.status != QUEUED for b in client.batches):
                yield ("ResolveSequences", c), self._set_client(s, c, cl.resolve_sequences(client, cfg))
            elif (client.epoch_bump_required and cfg.version == "kip360"
                  and not any(b.status == INFLIGHT for b in client.batches)):
                yield ("BumpEpoch", c), self._set_client(s, c, cl.bump_epoch(client, cfg))

        transient_left = s.faults.transient_errors < self.max_transient
        for i, _ in deliverable(s.requests, lambda r: (r.client, r.connection), 0):
            yield self._handle_produce(s, i)
            if transient_left and s.requests[i].leader_epoch == s.leader_epoch:
                yield self._transient_error(s, i)
        for i, _ in deliverable(s.responses, lambda r: (r.client, r.connection), 0):
            yield self._handle_response(s, i)
        if s.faults.lost_responses < self.max_lost:
            for i, resp in enumerate(s.responses):
                yield ("LoseResponse", resp.client, resp.record), s._replace(
                    responses=remove_at(s.responses, i),
                    faults=s.faults._replace(lost_responses=s.faults.lost_responses + 1))

        part = s.partition
        if s.faults.delete_records < self.max_deletes:
            for offset in range(part.log_start_offset + 1, len(part.log) + 1):
                yield ("DeleteRecords", offset), s._replace(
                    partition=advance_log_start_offset(part, offset, self.retain_state),
                    faults=s.faults._replace(delete_records=s.faults.delete_records + 1))
        if s.follower:
            yield from self._replica_steps(s)
        expirable = any(is_producer_expired(e, now, self.expiration) for e in part.producers)
        if s.follower:
            expirable = expirable or any(is_producer_expired(e, now, self.expiration) for e in s.follower[0].producers)
        if expirable:
            # every replica runs the same periodic check against the same timestamps
            follower = tuple(f._replace(producers=remove_expired_producers(f.producers, now, self.expiration))
                             for f in s.follower)
            yield ("ExpireProducerIds",), s._replace(partition=expire_producers(part, now, self.expiration),
                                                     follower=follower)
        if now < self.max_ticks and not s.requests and not s.responses:
            yield ("Tick", now + 1), s._replace(now=now + 1)

    def _client_housekeeping(self, s: IdempotentState, c: int, client: Any) -> Iterator[tuple[tuple, IdempotentState]]:
        if s.now - client.batches[0].created < self.cfg.delivery_timeout and not any(
                b.status == INFLIGHT for b in client.batches):
            return  # nothing can expire (the oldest batch is first) and nothing waits for a response
        for i, b in enumerate(client.batches):
            if b.status != INFLIGHT and cl.is_expired(b, s.now, self.cfg):
                yield ("ExpireBatch", c, b.record), self._set_client(s, c, cl.expire_batch(client, i, self.cfg))
                break  # the accumulator expires batches oldest first
        # request.timeout.ms: only once a request has really gone unanswered (its response lost)
        waiting = {r.record for r in s.requests if r.client == c and r.connection == client.connection}
        waiting |= {r.record for r in s.responses if r.client == c and r.connection == client.connection}
        if any(b.status == INFLIGHT and b.record not in waiting for b in client.batches):
            responses = tuple(r for r in s.responses if r.client != c)  # dropped with the connection
            yield ("RequestTimeout", c), self._set_client(s, c, cl.connection_closed(client), responses=responses)

    def _replica_steps(self, s: IdempotentState) -> Iterator[tuple[tuple, IdempotentState]]:
        part, (f,) = s.partition, s.follower
        if f.log_start_offset < part.log_start_offset:
            # a fetch response carries the leader's log start offset to the follower
            lso = part.log_start_offset
            producers = f.producers if self.retain_state else truncate_head(f.producers, lso)
            yield ("PropagateLogStartOffset", lso), s._replace(follower=(FollowerState(lso, producers),))
        old = FollowerState(part.log_start_offset, part.producers)
        faults = s.faults
        if faults.leader_failovers < self.max_failovers:
            # to the in-sync follower, with the producer state it built by replication
            yield ("LeaderFailover", 0), s._replace(
                partition=PartitionState(part.log, f.log_start_offset, f.producers), follower=(old,),
                leader_epoch=s.leader_epoch + 1, faults=faults._replace(leader_failovers=faults.leader_failovers + 1))
        if faults.restarted_replica_failovers < self.max_rebuilt:
            # to a replica that restarted without its producer-state snapshots: state rebuilt from its log
            producers = rebuild_producer_state(part.log, f.log_start_offset, self.cache_size)
            yield ("LeaderFailover", 1), s._replace(
                partition=PartitionState(part.log, f.log_start_offset, producers), follower=(old,),
                leader_epoch=s.leader_epoch + 1,
                faults=faults._replace(restarted_replica_failovers=faults.restarted_replica_failovers + 1))

    def _transient_error(self, s: IdempotentState, i: int) -> tuple[tuple, IdempotentState]:
        """The leader refuses the batch with a retriable error (e.g. NOT_ENOUGH_REPLICAS while the
        ISR is too small): nothing is appended."""
        req = s.requests[i]
        error = int(Errors.NOT_ENOUGH_REPLICAS)
        resp = ProduceResponse(req.client, req.connection, req.record, error, -1, s.partition.log_start_offset)
        open_conn = req.connection == s.clients[req.client].connection
        return ("HandleProduce", req.client, req.record, req.seq, req.epoch, error), s._replace(
            requests=remove_at(s.requests, i), responses=s.responses + (resp,) if open_conn else s.responses,
            faults=s.faults._replace(transient_errors=s.faults.transient_errors + 1))

    def _handle_produce(self, s: IdempotentState, i: int) -> tuple[tuple, IdempotentState]:
        req = s.requests[i]
        part = s.partition
        faults = s.faults
        if req.leader_epoch != s.leader_epoch:
            # sent to the previous leader: refused, the client retries against the new one
            resp = ProduceResponse(req.client, req.connection, req.record, int(Errors.NOT_LEADER_OR_FOLLOWER), -1, -1)
            step = ("HandleProduce", req.client, req.record, req.seq, req.epoch, int(Errors.NOT_LEADER_OR_FOLLOWER))
            open_conn = req.connection == s.clients[req.client].connection
            return step, s._replace(requests=remove_at(s.requests, i), faults=faults,
                                    responses=s.responses + (resp,) if open_conn else s.responses)
        decision = validate_produce(find_entry(part.producers, req.producer_id), epoch=req.epoch, seq=req.seq,
                                    max_seq=self.cfg.max_seq, unknown_producer=self.unknown_producer,
                                    old_duplicate_error=self.old_duplicate_error)
        offset = decision.duplicate_offset
        follower = s.follower
        if decision.append:
            record = LogRecord(req.client, req.record, req.producer_id, req.epoch, req.seq, req.created)
            part, offset = append_batch(part, record, self.cache_size)
            if follower:  # replicated before the ack (acks=all); the follower skips sequence checks
                f = follower[0]
                follower = (f._replace(producers=record_batch(f.producers, record, offset, self.cache_size)),)
        resp = ProduceResponse(req.client, req.connection, req.record, int(decision.error), offset,
                               part.log_start_offset)
        # the client closed that connection on a timeout: the response goes nowhere
        responses = s.responses + (resp,) if req.connection == s.clients[req.client].connection else s.responses
        step = ("HandleProduce", req.client, req.record, req.seq, req.epoch, int(decision.error))
        return step, IdempotentState(s.now, s.next_producer_id, part, follower, s.leader_epoch, s.clients,
                                     remove_at(s.requests, i), responses, faults)

    def _handle_response(self, s: IdempotentState, i: int) -> tuple[tuple, IdempotentState]:
        resp = s.responses[i]
        c = resp.client
        new_client, outcome = cl.handle_produce_response(s.clients[c], resp, s.now, self.cfg)
        if resp.error == Errors.NOT_LEADER_OR_FOLLOWER:
            new_client = new_client._replace(known_leader_epoch=s.leader_epoch)  # metadata refresh
        step = ("HandleProduceResponse", c, resp.record, resp.error, outcome)
        return step, self._set_client(s, c, new_client, responses=remove_at(s.responses, i))

    # --- presentation ----------------------------------------------------------------------------

    def format_step(self, step: tuple) -> str:
        name = step[0]
        if name == "HandleProduce":
            _, c, r, seq, epoch, err = step
            return f"HandleProduce(client={c}, record={r}, epoch={epoch}, seq={seq}) -> {error_name(err)}"
        if name == "HandleProduceResponse":
            _, c, r, err, outcome = step
            return f"HandleProduceResponse(client={c}, record={r}, {error_name(err)}) -> {cl.OUTCOME_NAMES[outcome]}"
        return super().format_step(step)

    def fields(self, s: IdempotentState) -> dict[str, Any]:
        part = s.partition
        out: dict[str, Any] = {
            "time.now": s.now,
            "allocator.next_producer_id": s.next_producer_id,
            "leader.log": [f"{o}: client{r.client}/r{r.record} (pid {r.producer_id}, epoch {r.epoch}, seq {r.seq})"
                           for o, r in enumerate(part.log)],
            "leader.log_start_offset": part.log_start_offset,
            "leader.producers": [f"pid {e.producer_id}: epoch {e.epoch}, batches "
                                 f"{[(b.seq, b.offset) for b in e.batches]} (seq, offset), lastTimestamp {e.last_timestamp}"
                                 for e in part.producers],
        }
        for c, client in enumerate(s.clients):
            p = f"client[{c}]."
            out[p + "producer_id"] = client.producer_id
            out[p + "epoch"] = client.epoch
            out[p + "next_seq"] = client.next_seq
            out[p + "last_acked_seq"] = client.last_acked_seq
            out[p + "last_acked_offset"] = client.last_acked_offset
            out[p + "sent"] = client.sent
            out[p + "batches"] = [f"r{b.record} {BATCH_STATUS_NAMES[b.status]} (pid {b.producer_id}, epoch {b.epoch}, "
                                  f"seq {b.seq}{', reset' if b.sequence_reset else ''}, created {b.created})"
                                  for b in client.batches]
            out[p + "acked"] = [r for r in range(client.sent) if client.acked >> r & 1]
            out[p + "failed"] = [r for r in range(client.sent) if client.failed >> r & 1]
            out[p + "connection"] = client.connection
            out[p + "epoch_bump_required"] = client.epoch_bump_required
            out[p + "unresolved"] = client.unresolved
            out[p + "fatal"] = client.fatal
        if s.follower:
            f = s.follower[0]
            out["leader.leader_epoch"] = s.leader_epoch
            out["follower.log_start_offset"] = f.log_start_offset
            out["follower.producers"] = [f"pid {e.producer_id}: epoch {e.epoch}, batches "
                                         f"{[(b.seq, b.offset) for b in e.batches]} (seq, offset), lastTimestamp "
                                         f"{e.last_timestamp}" for e in f.producers]
        out["network.requests"] = [f"Produce(client{r.client}/r{r.record}, pid {r.producer_id}, epoch {r.epoch}, "
                                   f"seq {r.seq}, conn {r.connection}, leader epoch {r.leader_epoch})"
                                   for r in s.requests]
        out["network.responses"] = [f"ProduceResponse(client{r.client}/r{r.record}, {error_name(r.error)}, offset "
                                    f"{r.base_offset}, logStartOffset {r.log_start_offset})" for r in s.responses]
        out["faults.lost_responses"] = s.faults.lost_responses
        out["faults.transient_errors"] = s.faults.transient_errors
        out["faults.delete_records"] = s.faults.delete_records
        out["faults.leader_failovers"] = s.faults.leader_failovers
        out["faults.restarted_replica_failovers"] = s.faults.restarted_replica_failovers
        return out

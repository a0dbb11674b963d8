"""The ``kafka.eos`` model definition: its switches are the protocol decisions (``model.protocol``),
its variants the named ``Protocol`` values, and its bounds switch each mechanism on."""

from __future__ import annotations

from collections.abc import Mapping

from eoscheck.checker.machine import Machine
from eoscheck.checker.registry import Bound, ModelDef, SwitchValue

from ..protocol import DEFAULT_VARIANT, protocol_switches, protocol_variants
from .eos_failover import TXN_FAILOVER_BOUNDS
from .eos_idempotent_bounds import IDEMPOTENT_BOUNDS, TEMPORAL_DOCS

BOUNDS: dict[str, Bound] = {
    "producers": Bound("transactional producers, each with its own transactional id (0: none; with instances, "
                       "the instances' transactional id alone; with members and deployment=per-partition, each "
                       "member's instance of the task's producer, all with the task's one transactional id)",
                       1, 0, 3),
    "partitions": Bound("output partitions every transaction writes to", 2, 0, 3),
    "transactions": Bound("transactions each producer runs", 1, 1, 4),
    "batches": Bound("records (one per batch) each transaction writes to each partition", 1, 1, 3),
    "input_records": Bound("consume-transform-produce: records in each producer's input partition; each transaction "
                           "processes the next one and commits its offset with TxnOffsetCommit (0: producers only "
                           "produce)", 0, 0, 3),
    "members": Bound("consumer group members, each an application instance: one input partition of input_records "
                     "records moves between them; deployment=per-thread (KIP-447, exactly_once_v2): each member has "
                     "its own transactional producer; deployment=per-partition (Streams exactly_once): the task's "
                     "producer, created by the member that runs the task, whose InitProducerId fences the previous "
                     "owner's; needs producers = members (0: no group, each producer keeps its own input partition)",
                     0, 0, 3),
    "rebalances": Bound("group generations after the first (session timeouts and rejoins move the input "
                        "partition); 0 removes session timeouts and rebalances", 0, 0, 3),
    "rejoins": Bound("times each member may rejoin with a new member id (after it learned it left the group, or "
                     "with a new producer after its producer was fenced); states past it are not explored (0: no "
                     "member rejoins; Rejoin still counts as enabled for liveness)", 0, 0, 3),
    "readers": Bound("1: a read_committed consumer on each output partition fetches up to the LSO, skips aborted "
                     "data, and NoAbortedRead checks what it delivered (0: NoAbortedRead reads the leaders' LSO)",
                     0, 0, 1),
    "max_in_flight": Bound("max.in.flight.requests.per.connection (<= 5 with idempotence)", 1, 1, 5),
    "lost_responses": Bound("produce responses the network may lose (then request.timeout.ms and a retry)",
                            0, 0, 3),
    "produce_timeouts": Bound("in-flight batches whose delivery.timeout.ms passes while the request is still "
                              "on the network (it may arrive late)", 0, 0, 2),
    "txn_timeouts": Bound("transactions the coordinator aborts on transaction.timeout.ms", 0, 0, 2),
    "endtxn_timeouts": Bound("EndTxn requests whose request.timeout.ms passes on the client: it sends the request "
                             "again while the first copy may still reach the coordinator, before or after the retry "
                             "(TV1: a late EndTxn may end the next transaction, KIP-890's motivation; TV2, KIP-890 "
                             "part 2: the epoch bump per transaction fences it or makes it a retry)", 0, 0, 2),
    "failed_fence_appends": Bound("coordinator fences (transaction timeout, InitProducerId on an Ongoing transaction; "
                                  "with instances, also the instances' InitProducerId) "
                                  "whose PrepareAbort append to __transaction_state fails: the fenced epoch stays in "
                                  "memory, the transaction Ongoing, and since KAFKA-9666 (2.6.0) the next fence keeps "
                                  "that epoch (failed_fence_keeps_epoch; 0 removes the fault)", 0, 0, 2),
    "send_errors": Bound("send() calls of a transactional producer that fail in the application thread (a record "
                         "larger than max.request.size, a serialization error): the record never reaches the "
                         "accumulator and only the returned future reports it; from 3.2.0 the transaction also gets "
                         "an abortable error (client_send_error_aborts, KAFKA-9279; 0 removes it)", 0, 0, 2),
    "delayed_offset_completions": Bound("COMMIT/ABORT markers on __consumer_offsets whose completion of the "
                                        "producer's pending offsets the group coordinator's scheduler runs later, "
                                        "after WriteTxnMarkers answered (txn_offsets_completion_async, 2.0-3.9, "
                                        "KAFKA-17507; 0 removes it)", 0, 0, 2),
    "verification_steps": Bound("produce requests each output partition's leader may hold between KIP-890 part 1's "
                                "verification and the append (0: the two are one step); with partition_verification "
                                "a marker, another produce or a timeout abort can come between them, and the append "
                                "checks the request's VerificationGuard", 0, 0, 3),
    "verification_answers": Bound("1: the transaction coordinator answers a leader's verification request "
                                  "(AddPartitionsToTxnManager's verify-only AddPartitionsToTxn, or a TV2 leader's "
                                  "add) in a step of its own, from its state then, and the leader takes the answer "
                                  "in the append step (AnswerVerification; 3.6.0 to trunk); 0: the coordinator "
                                  "answers when the leader starts the verification. Needs verification_steps",
                                  0, 0, 1),
    "delete_records": Bound("log start offset moves (retention or DeleteRecords)", 0, 0, 3),
    "coordinator_failovers": Bound("transaction coordinator failovers (reload from __transaction_state with a "
                                   "higher coordinator epoch; the old coordinator's markers stay in flight)", 0, 0, 2),
    "restarts": Bound("producer instances started anew for a transactional id (the old instance lives on as a "
                      "zombie that may still end its transaction or commit offsets)", 0, 0, 2),
    "max_ticks": Bound("the clock stops here; 0 removes time and producer-id expiry", 0, 0, 6),
    "producer_id_expiration": Bound("producer.id.expiration.ms in ticks (KIP-854)", 1, 1, 100),
    "max_seq": Bound("largest sequence number before the wrap to 0", 2**31 - 1, 1, 2**31 - 1),
    "instances": Bound("producer instances sharing one more transactional id, racing InitProducerId (KIP-360 "
                       "cases 1a-2c) with retries, lost responses and transactions without data (0: none)", 0, 0, 3),
    "instance_transactions": Bound("transactions (AddPartitionsToTxn) the instances begin in total", 0, 0, 3),
    "abortable_errors": Bound("abortable errors inside an instance's transaction (a failed batch): EndTxn(ABORT), "
                              "then InitProducerId with its producer id/epoch (KIP-360); each needs a transaction",
                              0, 0, 4),
    "txn_id_expirations": Bound("expirations of transactional ids (transactional.id.expiration.ms: an idle id, Empty or "
                                "CompleteX with no pending transition, is removed): the instances' and, without a group, "
                                "the data producers' (eos_txn_id_expiry: then, with restarts, a zombie told "
                                "INVALID_PRODUCER_ID_MAPPING may re-initialise, KAFKA-18019); 0: no id expires",
                                0, 0, 2),
    "instance_producer_ids": Bound("with instances: producer ids the allocator may hand out; states beyond are not "
                                   "explored",
                              2**31 - 1, 1, 2**31 - 1),
    "max_epoch": Bound("largest producer epoch (Short.MAX_VALUE); states beyond it are not explored",
                       32767, 3, 32767),
    "exhausted_epochs": Bound("1: states whose epoch is exhausted (>= max_epoch - 1: InitProducerId, KIP-360, and a "
                              "TV2 EndTxn, KIP-890 part 2, rotate to a new producer id) are explored; 0: they are "
                              "not, as kafka.eos_pipeline's max_epoch (no rotation; epochs up to max_epoch - 2)",
                              1, 0, 1),
    **IDEMPOTENT_BOUNDS,
    **TXN_FAILOVER_BOUNDS,
}


def _build(switches: Mapping[str, SwitchValue], bounds: Mapping[str, int]) -> Machine:
    from .eos import build
    return build(switches, bounds)


def _temporal_docs() -> dict[str, str]:
    from .eos_instances import TEMPORAL_DOCS
    from .eos_liveness import TEMPORAL_DOCS as TRANSACTION_DOCS
    return {**TEMPORAL_DOCS, **TRANSACTION_DOCS}


def _property_docs() -> dict[str, str]:
    from .eos import PROPERTY_DOCS
    return PROPERTY_DOCS


MODEL = ModelDef(
    name="kafka.eos",
    doc="One Kafka machine: transactional producers with sequences and an in-flight window, the transaction "
        "coordinator (InitProducerId, EndTxn TV1/TV2 with producer-id rotation, timeout abort, markers, failover), "
        "two or more output partition leaders (5-batch cache, sequence and transactional validation, KIP-890 "
        "verification, markers, LSO, DeleteRecords/retention and producer-id expiry) and, with input_records, a "
        "consume-transform-produce loop through the group coordinator, with members a consumer group with generations, "
        "rebalances and KIP-447 fencing; with instances, producer instances of one more transactional id racing "
        "InitProducerId (retries, lost responses, expiry, epoch overflow); every mechanism switched on by its bounds. "
        "With a group, deployment=per-partition gives the input partition's task one producer (one transactional id) "
        "re-created by each owner; liveness: TransactionsComplete, MarkersComplete, RebalanceSettles under weak "
        "fairness of the protocol's steps.",
    variants=protocol_variants(),
    default_variant=DEFAULT_VARIANT,
    switches=protocol_switches(),
    bounds=BOUNDS,
    properties=_property_docs(),
    build=_build,
    temporal={**TEMPORAL_DOCS, **_temporal_docs()},
)

"""eoscheck: an explicit-state model checker for Kafka's exactly-once producer protocol."""

__version__ = "0.1.0"

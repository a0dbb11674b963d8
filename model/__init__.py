"""The Kafka protocol model: actors as pure functions over immutable state (see model/README)."""

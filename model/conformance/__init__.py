"""``eoscheck conform``: run Kafka unit-test vectors against the model's rules.

``vectors`` reads and checks a vector file; ``world`` holds one vector's state in the model's
records; ``steps_*`` turn a step's ``input`` into a call of the model's interface (``model.api``)
and its answer into the vector's vocabulary; ``compare`` matches that against ``expected``;
``harness`` runs a file and ``report`` prints and writes the result. The CLI finds this package
through the ``eoscheck.conformance`` entry point (``cli.COMMAND``); the engine never imports it.
"""

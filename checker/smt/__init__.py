"""Z3 proofs over the same rules the explorer runs.

* ``ops`` — the ``checker.ops`` protocol on signed bit-vectors (``Z3OPS``), so a rule written over
  ops is a Z3 term at Kafka's real widths; ``evaluate`` substitutes values for the agreement test.
* ``obligations`` — what a model publishes: ``ValidProblem`` (for all inputs), ``TransitionSystem``
  (initial states, guarded actions, an invariant as named conjuncts, state and step claims),
  ``Obligation`` (kind valid / inductive / bmc) and ``ProofSet`` (obligations plus named mutations).
* ``runner`` — ``prove(obligation, timeout)``: direct validity, one-step induction, bounded
  unrolling for the shortest counterexample, k-induction; a timeout is "unknown", never "proved".
* ``replay`` — every counterexample is re-executed on Python ints before it is reported.
* ``cli_prove`` — ``eoscheck prove SPEC...``.

Nothing here knows Kafka: a spec names its ``ProofSet`` by import path.
"""

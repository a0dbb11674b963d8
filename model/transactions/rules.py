"""The part-2 rules written over ``ops`` (AddPartitionsToTxn, EndTxn, the leader's marker check,
TxnOffsetCommit), as described for the prover: their definitions live with part 1's in
``model.proof_rules`` (one list, ``RULES``); this is the part-2 subset.
"""

from __future__ import annotations

from eoscheck.model.proof_rules import PART2_RULES as RULES

__all__ = ["RULES"]

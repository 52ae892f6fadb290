"""Diagnoses of a trainer's run, measured exactly on the enumerated game tree.

- :mod:`agents.diagnostics.nfsp`: where an NFSP or ANFSP run's exploitability comes from
  (Pi's fit of its reservoir, Q's greedy gain against the exact best response, the floor
  exploration puts in the reservoir, the information sets where Q's greedy action loses);
  ``python -m agents.diagnostics.nfsp RUN_DIR``.
- :mod:`agents.diagnostics.anfsp_frozen_pi`: how much of the exact best-response gain
  ANFSP's Q takes when Pi stands still; ``python -m agents.diagnostics.anfsp_frozen_pi RUN_DIR``.
"""

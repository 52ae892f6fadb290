"""Exact analysis of enumerable games: the game tree as arrays, tabular policies,
expected returns, best responses, NashConv and exploitability.

>>> import hiddenenvs
>>> from hiddenenvs.analysis import GameTree, TabularPolicy, exploitability
>>> tree = GameTree.build(hiddenenvs.load_game("kuhn_poker"))
>>> round(exploitability(tree, TabularPolicy.uniform(tree)), 6)
0.458333
"""

from hiddenenvs.analysis.exploitability import (
    best_response,
    best_response_action_values,
    expected_returns,
    exploitability,
    nash_conv,
)
from hiddenenvs.analysis.policy import TabularPolicy, as_tabular_policy
from hiddenenvs.analysis.tree import GameTree, tree_is_small

__all__ = [
    "GameTree",
    "TabularPolicy",
    "as_tabular_policy",
    "best_response",
    "best_response_action_values",
    "expected_returns",
    "exploitability",
    "nash_conv",
    "tree_is_small",
]

"""ReBeL search: what the one belief-weighted subgame buys, and what it costs.

    python benchmarks/bench_rebel.py          # about 15 s

1. Monty Hall, at the switch decision: the switch probability of our one subgame per
   decision (a chance root over the posterior, one information set) against the GDL-II
   paper's per-state solving (solve each consistent history on its own, average the
   policies weighted by the posterior) measured in the same run: strategy fusion gives 2/3.
2. Liar's Dice, one four-faced die: exact exploitability and seconds of the ReBeL policy
   (the search run at every information set, full depth, 200 CFR+ iterations per solve)
   against OpenSpiel's C++ CFR+ solver (``pyspiel.CFRPlusSolver``, 200 iterations), and
   of the depth-limited search (max_depth 2) with random-playout values at the frontier.
"""

from __future__ import annotations

import time

import hiddenenvs
from agents.cfr import CFRSolver
from agents.rebel import ReBeLSearch, rebel_exploitability
from hiddenenvs.analysis.tree import build_subgame_tree
from hiddenenvs.beliefs import consistent_histories

SWITCH = 5


def monty_switch_view(game):
    state = game.new_initial_state()
    state.apply_action(2)  # the car is behind door 3
    state.apply_actions([0])  # the candidate chooses door 1
    while state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    return state.seat_view(0)


def per_state_switch_probability(game, view) -> float:
    """The paper's S0: every consistent history solved alone, policies averaged by posterior."""
    total = 0.0
    for history, posterior in consistent_histories(game, view.player, view.information_state_key):
        tree = build_subgame_tree(game, [(game.state_from_history(history), 1.0)])
        solver = CFRSolver(tree, variant="cfr+")
        solver.iterate(100)
        total += (
            posterior
            * solver.average_policy().probabilities(view.player, view.information_state_key)[SWITCH]
        )
    return total


def main() -> None:
    game = hiddenenvs.load_game("monty_hall")
    view = monty_switch_view(game)
    ours = ReBeLSearch(game, iterations=100).policy(view)[SWITCH]
    peer = per_state_switch_probability(game, view)
    print("Monty Hall, P(switch) at the switch decision")
    print(
        f"  one subgame (ours): {ours:.4f}   per-state solving (GDL-II paper): {peer:.4f}   "
        f"ratio {ours / peer:.2f}"
    )

    game = hiddenenvs.load_game("liars_dice", faces=4)
    start = time.perf_counter()
    search = ReBeLSearch(game, iterations=200)
    ours_exploitability = rebel_exploitability(search)
    ours_seconds = time.perf_counter() - start
    start = time.perf_counter()
    limited = ReBeLSearch(game, iterations=200, max_depth=2)
    limited_exploitability = rebel_exploitability(limited)
    limited_seconds = time.perf_counter() - start
    print("Liar's Dice 1x4f, exact exploitability of the policy (seconds)")
    print(
        f"  ReBeL full depth (ours): {ours_exploitability:.6f} ({ours_seconds:.1f} s, "
        f"{len(search._solved)} solve)"
    )
    print(
        f"  ReBeL depth 2, playout values (ours): {limited_exploitability:.4f} ({limited_seconds:.1f} s, "
        f"{len(limited._solved)} solves)"
    )
    try:
        import pyspiel
    except ImportError:
        print("  OpenSpiel is not installed: no peer figure")
        return
    reference = pyspiel.load_game("liars_dice", {"numdice": 1, "dice_sides": 4})
    start = time.perf_counter()
    solver = pyspiel.CFRPlusSolver(reference)
    for _ in range(200):
        solver.evaluate_and_update_policy()
    peer_exploitability = pyspiel.exploitability(reference, solver.average_policy())
    peer_seconds = time.perf_counter() - start
    print(
        f"  OpenSpiel CFRPlusSolver, 200 iterations (C++): {peer_exploitability:.6f} ({peer_seconds:.1f} s)"
    )
    print(
        f"  time ratio ours/OpenSpiel: {ours_seconds / peer_seconds:.2f}; "
        f"exploitability difference {abs(ours_exploitability - peer_exploitability):.2e}"
    )


if __name__ == "__main__":
    main()

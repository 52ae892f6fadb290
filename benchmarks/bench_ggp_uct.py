"""UCT against random on GDL sheets: win rate (95% Wilson interval) and UCT iterations/s.

Ours: :class:`agents.search.montecarlo.TreeSearch` (UCT, ``C = 40`` on the 0..100 goal
scale, decoupled statistics) on the ggp-base sheets connectFour and breakthroughSmall
through the propnet game model, a fixed number of iterations per move, seats
alternating, ``--games`` games per sheet against a uniformly random player (a draw is
not a win). The peer, measured in the same run: OpenSpiel's ``MCTSBot`` (UCT with random
rollouts, its default ``C = 2`` on returns in [-1, 1], the same iterations per move)
against OpenSpiel's ``UniformRandomBot`` on pyspiel's ``connect_four`` (7x6; the GDL
sheet's board is 8x6) and ``breakthrough(rows=6, columns=6)`` (breakthroughSmall's board;
the rules match). Ratio: our iterations/s over the peer's.

    python benchmarks/bench_ggp_uct.py --games 200 --peer-games 50 --iterations 300
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import hiddenenvs
from agents.leaderboard.stats import wilson_interval
from agents.search.classic import apply_choices
from agents.search.montecarlo import TreeSearch

SHEETS = (
    Path(__file__).resolve().parent.parent.parent / "shared" / "gdl" / "ggp-base" / "rulesheets"
)
PEER_GAMES = {
    "connectFour": ("connect_four", {}),
    "breakthroughSmall": ("breakthrough", {"rows": 6, "columns": 6}),
}


def play_ours(game, seat: int, iterations: int, seed: int) -> tuple[float, int, float]:
    """(UCT's goal, UCT iterations, seconds searching) of one game against random."""
    rng = np.random.default_rng(seed)
    searcher = TreeSearch(game, seat, seed=seed)
    state = game.new_initial_state()
    runs, seconds = 0, 0.0
    while not state.is_terminal():
        choices = {}
        for player in state.movers():
            if player == seat:
                start = time.perf_counter()
                choices[player] = searcher.search(state, iterations=iterations)
                seconds += time.perf_counter() - start
                runs += iterations
            else:
                legal = state.legal_actions(player)
                choices[player] = legal[int(rng.integers(len(legal)))]
        apply_choices(state, choices)
    return float(state.returns()[seat]), runs, seconds


def play_peer(
    name: str, params: dict, seat: int, iterations: int, seed: int
) -> tuple[float, int, float]:
    import pyspiel
    from open_spiel.python.algorithms import mcts

    game = pyspiel.load_game(name, params)
    rng = np.random.RandomState(seed)
    bot = mcts.MCTSBot(game, 2.0, iterations, mcts.RandomRolloutEvaluator(1, rng), random_state=rng)
    state = game.new_initial_state()
    runs, seconds = 0, 0.0
    while not state.is_terminal():
        if state.current_player() == seat:
            start = time.perf_counter()
            state.apply_action(bot.step(state))
            seconds += time.perf_counter() - start
            runs += iterations
        else:
            legal = state.legal_actions()
            state.apply_action(legal[rng.randint(len(legal))])
    return float(state.returns()[seat]), runs, seconds


def report(label: str, results: list[tuple[float, int, float]], win: float) -> float:
    wins = sum(goal == win for goal, _, _ in results)
    low, high = wilson_interval(wins, len(results))
    rate = sum(r for _, r, _ in results) / sum(s for _, _, s in results)
    print(
        f"{label}: won {wins}/{len(results)} = {wins / len(results):.3f} "
        f"[95% Wilson {low:.3f}, {high:.3f}], {rate:,.0f} iterations/s"
    )
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=200, help="our games per sheet (default 200)")
    parser.add_argument(
        "--peer-games", type=int, default=50, help="the peer's games per game (default 50)"
    )
    parser.add_argument(
        "--iterations", type=int, default=300, help="UCT iterations per move (default 300)"
    )
    parser.add_argument("--sheets", nargs="+", default=list(PEER_GAMES))
    args = parser.parse_args()
    for sheet in args.sheets:
        game = hiddenenvs.load_game("gdl", rules=str(SHEETS / f"{sheet}.kif"))
        ours = [play_ours(game, g % 2, args.iterations, g) for g in range(args.games)]
        our_rate = report(f"{sheet}, ours (UCT {args.iterations}/move) vs random", ours, 100.0)
        name, params = PEER_GAMES[sheet]
        peer = [play_peer(name, params, g % 2, args.iterations, g) for g in range(args.peer_games)]
        peer_rate = report(
            f"{name}{params or ''}, OpenSpiel MCTSBot ({args.iterations}/move) vs random", peer, 1.0
        )
        print(f"{sheet}: iterations/s ours / peer = {our_rate / peer_rate:.2f}x")


if __name__ == "__main__":
    main()

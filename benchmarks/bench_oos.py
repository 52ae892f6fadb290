"""OOS speed: the compiled tree backend against the model path and OpenSpiel's C++
outcome sampling, measured in the same run; then the iterations each searcher gets per
move at a time budget in play.

    python benchmarks/bench_oos.py                        # about 2 minutes
    python benchmarks/bench_oos.py --seconds 3 --games 4  # about 40 s

1. Iterations per second of a search targeted at the first decision (player 0's
   information set after the deal) on Liar's Dice(1) (6 faces) and II-Goofspiel(6)
   (ascending points), taking turns (``benchmarks/timing.py``) so load from other jobs
   falls on all alike:

   - ours, compiled: :class:`agents.search.oos.OOS`, ``backend="tree"``
     (``_tree_mccfr.pyx``);
   - ours, model path: the same class with ``backend="model"`` (the generic path that
     walks Python ``State`` objects; the baseline the compiled path replaces);
   - peer: OpenSpiel C++ ``OutcomeSamplingMCCFRSolver`` through pyspiel (pyspiel binds no
     OOS; outcome-sampling MCCFR is OOS without targeting or incremental tree, so its
     iteration does the same sampling and regret work), on ``liars_dice`` and on
     ``convert_to_turn_based(goofspiel(num_cards=6,imp_info=True,points_order=ascending))``;
   - ours, IS-MCTS (:mod:`agents.search.ismcts`), the opponent of the leaderboards, for scale.

   One iteration is one sampled history per player for both OOS backends and OpenSpiel's
   solver, one determinised descent for IS-MCTS.
2. Iterations per move in play: ``--games`` matches per game of OOS against IS-MCTS at
   ``--move-seconds`` each per move (the budget of the README's leaderboards); mean and
   range of the iterations each search ran.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import hiddenenvs  # noqa: E402
from agents.search.ismcts import ISMCTS, ISMCTSAgent  # noqa: E402
from agents.search.oos import OOS, OOSAgent  # noqa: E402
from timing import interleaved_rates  # noqa: E402
from hiddenenvs.game import CHANCE, SIMULTANEOUS  # noqa: E402

GAMES = {
    "Liar's Dice(1)": (("liars_dice", {}), "liars_dice"),
    "II-Goofspiel(6)": (
        ("goofspiel", {"num_cards": 6, "imp_info": True}),
        "turn_based_simultaneous_game(game=goofspiel(num_cards=6,imp_info=True,points_order=ascending))",
    ),
}


def first_decision_key(game) -> tuple:
    state = game.new_initial_state()
    while state.current_player() == CHANCE:
        state.apply_action(state.chance_outcomes()[0][0])
    return state.information_state_key(0)


def rates(game, spiel_name: str, seconds: float) -> dict[str, float]:
    import pyspiel

    key = first_decision_key(game)
    compiled = OOS(game, 0, seed=0, backend="tree")
    model = OOS(game, 0, seed=0, backend="model")
    ismcts = ISMCTS(game, seed=0)
    peer = pyspiel.OutcomeSamplingMCCFRSolver(pyspiel.load_game(spiel_name))

    def peer_iterations() -> int:
        for _ in range(100):
            peer.run_iteration()
        return 100

    return interleaved_rates(
        seconds,
        {
            "ours, compiled OOS": lambda: compiled.search(key, iterations=2000) or 2000,
            "ours, model-path OOS": lambda: model.search(key, iterations=10) or 10,
            "OpenSpiel C++ OS-MCCFR": peer_iterations,
            "ours, IS-MCTS": lambda: int(ismcts.search(0, key, iterations=50).sum()),
        },
    )


def iterations_in_play(game, games: int, move_seconds: float) -> tuple[list[int], list[int]]:
    """Iterations per move of OOS and IS-MCTS playing each other (both seats)."""
    oos_counts, ismcts_counts = [], []
    rng = np.random.default_rng(0)
    for index in range(games):
        agents = [
            OOSAgent(game, 0, seconds=move_seconds, seed=index),
            ISMCTSAgent(game, 1, seconds=move_seconds, seed=index),
        ]
        if index % 2:
            agents = [
                ISMCTSAgent(game, 0, seconds=move_seconds, seed=index),
                OOSAgent(game, 1, seconds=move_seconds, seed=index),
            ]
        state = game.new_initial_state()
        while not state.is_terminal():
            player = state.current_player()
            if player == CHANCE:
                outcomes = state.chance_outcomes()
                state.apply_action(
                    outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0]
                )
                continue
            movers = state.movers() if player == SIMULTANEOUS else [player]
            actions = []
            for mover in movers:
                agent = agents[mover]
                before = agent.search.iterations if isinstance(agent, OOSAgent) else 0
                probabilities = agent.search_policy(state.seat_view(mover))
                if isinstance(agent, OOSAgent):
                    oos_counts.append(agent.search.iterations - before)
                else:
                    key = (mover, tuple(state.information_state_key(mover)))
                    ismcts_counts.append(int(agent.search.nodes[key].visits.sum()))
                actions.append(int(rng.choice(len(probabilities), p=probabilities)))
            if player == SIMULTANEOUS:
                joint = [-1] * game.info.num_players
                for mover, action in zip(movers, actions):
                    joint[mover] = action
                state.apply_actions(joint)
            else:
                state.apply_action(actions[0])
    return oos_counts, ismcts_counts


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--seconds", type=float, default=10.0, help="seconds per contender per game (part 1)"
    )
    parser.add_argument("--games", type=int, default=10, help="matches per game (part 2)")
    parser.add_argument("--move-seconds", type=float, default=0.05, help="time per move (part 2)")
    arguments = parser.parse_args()
    for title, ((name, params), spiel_name) in GAMES.items():
        game = hiddenenvs.load_game(name, **params)
        started = time.perf_counter()
        OOS(game, 0, backend="tree")  # builds and caches the tree
        print(f"{title}: tree built in {time.perf_counter() - started:.1f} s")
        measured = rates(game, spiel_name, arguments.seconds)
        peer = measured["OpenSpiel C++ OS-MCCFR"]
        baseline = measured["ours, model-path OOS"]
        for contender, per_second in measured.items():
            print(
                f"  {contender:24s} {per_second:12,.0f} iterations/s   "
                f"{per_second / peer:8.1f}x OpenSpiel C++   {per_second / baseline:8.1f}x model path"
            )
        oos_counts, ismcts_counts = iterations_in_play(
            game, arguments.games, arguments.move_seconds
        )
        for label, counts in (("OOS (compiled)", oos_counts), ("IS-MCTS", ismcts_counts)):
            print(
                f"  in play at {arguments.move_seconds} s/move, {label}: {np.mean(counts):,.0f} iterations per move "
                f"(min {min(counts):,}, max {max(counts):,}, {len(counts)} moves)"
            )


if __name__ == "__main__":
    main()

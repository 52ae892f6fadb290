"""Random playouts per second on Goofspiel, Liar's Dice and Othello: ours vs OpenSpiel.

For each game: our raw game model (``hiddenenvs.game.random_playout``), our PettingZoo
AEC env (the full loop: agent_iter, last, action mask, step) and, for Goofspiel, our
parallel env; the peer is OpenSpiel's C++ implementation of the same game driven
through its Python bindings (pyspiel states, one Python call per move, as a Python
search would use it), measured in the same run, in turns with ours
(timing.interleaved_rates), when open_spiel is installed.
PettingZoo ships none of these three games. The ratio is ours / peer.

    python benchmarks/bench_playouts_games.py [--seconds 2]
"""

from __future__ import annotations

import argparse

import numpy as np

import hiddenenvs
from hiddenenvs.game import random_playout
from timing import aec_playout, interleaved_rates

# (label, our name and parameters, OpenSpiel name and parameters)
GAMES = [
    (
        "II-Goofspiel(13), ascending",
        ("goofspiel", {"num_cards": 13, "imp_info": True}),
        ("goofspiel", {"num_cards": 13, "imp_info": True, "points_order": "ascending"}),
    ),
    (
        "Goofspiel(5), random deck",
        ("goofspiel", {"num_cards": 5, "points_order": "random"}),
        ("goofspiel", {"num_cards": 5, "points_order": "random"}),
    ),
    ("Liar's Dice(1)", ("liars_dice", {"num_dice": 1}), ("liars_dice", {"numdice": 1})),
    ("Liar's Dice(2)", ("liars_dice", {"num_dice": 2}), ("liars_dice", {"numdice": 2})),
    ("Othello 6x6", ("othello", {"board_size": 6}), None),
    ("Othello 8x8", ("othello", {"board_size": 8}), ("othello", {})),
]


def parallel_playout(env, rng: np.random.Generator) -> None:
    observations, _ = env.reset(seed=int(rng.integers(2**31)))
    while env.agents:
        actions = {}
        for agent in env.agents:
            legal = observations[agent]["action_mask"].nonzero()[0]  # as timing.aec_playout
            actions[agent] = int(legal[rng.integers(len(legal))]) if len(legal) else 0
        observations, *_ = env.step(actions)


def spiel_playout(pyspiel, game, rng: np.random.Generator) -> None:
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probabilities = zip(*state.chance_outcomes())
            state.apply_action(outcomes[rng.choice(len(outcomes), p=probabilities)])
        elif state.is_simultaneous_node():
            joint = []
            for player in range(game.num_players()):
                legal = state.legal_actions(player)
                joint.append(legal[rng.integers(len(legal))])
            state.apply_actions(joint)
        else:
            legal = state.legal_actions()
            state.apply_action(legal[rng.integers(len(legal))])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    try:
        import pyspiel
    except ImportError:
        pyspiel = None
        print("peer open_spiel not installed (pip install open_spiel); printing ours only")

    print(f"{'game':<30}{'what':<26}{'games/s':>12}{'vs OpenSpiel':>14}")
    peer_label = "peer: OpenSpiel (pyspiel)"
    for label, (name, params), peer in GAMES:
        game = hiddenenvs.load_game(name, **params)
        aec_env = hiddenenvs.make(name, **params)
        contenders = {
            "raw game model": lambda: random_playout(game.new_initial_state(), rng),
            "AEC env": lambda: aec_playout(aec_env, rng),
        }
        if name == "goofspiel":
            parallel_env = hiddenenvs.make_parallel(name, **params)
            contenders["parallel env"] = lambda: parallel_playout(parallel_env, rng)
        if pyspiel is not None and peer is not None:
            spiel_game = pyspiel.load_game(*peer)
            contenders[peer_label] = lambda: spiel_playout(pyspiel, spiel_game, rng)
        rates = interleaved_rates(args.seconds, contenders)
        peer_rate = rates.get(peer_label)
        for what, rate in rates.items():
            ratio = f"{rate / peer_rate:.2f}x" if peer_rate else "-"
            print(f"{label:<30}{what:<26}{rate:>12,.0f}{ratio:>14}")


if __name__ == "__main__":
    main()

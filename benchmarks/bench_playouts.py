"""Random playouts per second: our raw game model and our AEC env vs PettingZoo's leduc_holdem_v4.

Both sides play uniformly random legal moves to the end of the game, the AEC envs
through the full PettingZoo loop (agent_iter, last, action mask, step). The peer is
measured in the same run, in turns with ours (timing.interleaved_rates); the ratio is
ours / peer.

    python benchmarks/bench_playouts.py [--seconds 3]
"""

from __future__ import annotations

import argparse

import numpy as np

import hiddenenvs
from hiddenenvs.game import random_playout
from timing import aec_playout, interleaved_rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    args = parser.parse_args()
    rng = np.random.default_rng(0)

    contenders = {}
    for name in ("kuhn_poker", "leduc_holdem"):
        game, env = hiddenenvs.load_game(name), hiddenenvs.make(name)
        contenders[f"{name}: raw game model"] = lambda game=game: random_playout(
            game.new_initial_state(), rng
        )
        contenders[f"{name}: hiddenenvs AEC env"] = lambda env=env: aec_playout(env, rng)
    peer_label = "peer: pettingzoo leduc_holdem_v4 AEC env"
    try:
        from pettingzoo.classic import leduc_holdem_v4

        peer_env = leduc_holdem_v4.env()
        contenders[peer_label] = lambda: aec_playout(peer_env, rng)
    except ImportError as error:
        print(
            f"peer pettingzoo leduc_holdem_v4 not installed ({error}); pip install 'pettingzoo[classic]'"
        )

    rates = interleaved_rates(args.seconds, contenders)
    peer = rates.get(peer_label)
    print(f"{'what':<42}{'games/s':>12}{'vs peer':>10}")
    for label, rate in rates.items():
        ratio = f"{rate / peer:.1f}x" if peer else "-"
        print(f"{label:<42}{rate:>12,.0f}{ratio:>10}")


if __name__ == "__main__":
    main()

"""Random playouts per second: our raw game model and our AEC env vs PettingZoo's leduc_holdem_v4.

Both sides play uniformly random legal moves to the end of the game, the AEC envs
through the full PettingZoo loop (agent_iter, last, action mask, step). The peer is
measured in the same run; the ratio is ours / peer.

    python benchmarks/bench_playouts.py [--seconds 3]
"""

from __future__ import annotations

import argparse

import numpy as np

import hiddenenvs
from hiddenenvs.game import random_playout
from timing import aec_playout, games_per_second


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    args = parser.parse_args()
    rng = np.random.default_rng(0)

    peer = None
    try:
        from pettingzoo.classic import leduc_holdem_v4

        peer_env = leduc_holdem_v4.env()
        peer = games_per_second(args.seconds, aec_playout, peer_env, rng)
    except ImportError as error:
        print(f"peer pettingzoo leduc_holdem_v4 not installed ({error}); pip install 'pettingzoo[classic]'")

    print(f"{'what':<42}{'games/s':>12}{'vs peer':>10}")
    for name in ("kuhn_poker", "leduc_holdem"):
        game = hiddenenvs.load_game(name)
        raw = games_per_second(args.seconds, lambda: random_playout(game.new_initial_state(), rng))
        env = hiddenenvs.make(name)
        aec = games_per_second(args.seconds, aec_playout, env, rng)
        for label, rate in ((f"{name}: raw game model", raw), (f"{name}: hiddenenvs AEC env", aec)):
            ratio = f"{rate / peer:.1f}x" if peer else "-"
            print(f"{label:<42}{rate:>12,.0f}{ratio:>10}")
    if peer:
        print(f"{'peer: pettingzoo leduc_holdem_v4 AEC env':<42}{peer:>12,.0f}{'1.0x':>10}")


if __name__ == "__main__":
    main()

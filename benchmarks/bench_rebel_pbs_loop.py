"""ReBeL proper through the trainer: exact exploitability against training time.

    python benchmarks/bench_rebel_pbs_loop.py --game liars_dice --seconds 180
    python benchmarks/bench_rebel_pbs_loop.py --game leduc_holdem --seconds 180 --every 60

Trains ``ReBeLLearner`` with ``values: pbs`` (the loop's step: one self-play game over
public belief states plus minibatches) from ``configs/rebel_pbs_liars_dice.yaml``'s
settings, pausing the training clock every ``--every`` seconds to compute the exact
exploitability of the evaluation policy (the search with the PBS network at its frontier,
run at every information set) for each ``--resolve`` mode. The peer, same run: the same
search with per-history random-playout values at the frontier (``ReBeLSearch``'s default,
no training), and the ratio ours / peer at the end.
"""

from __future__ import annotations

import argparse
import os
import time

import torch

import hiddenenvs
from agents.config import load_config, trainer_config
from agents.rebel import (
    RESOLVE_MODES,
    ReBeLLearner,
    ReBeLSearch,
    rebel_exploitability,
    rebel_policy,
)
from hiddenenvs.analysis import GameTree, exploitability

CONFIG = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "configs", "rebel_pbs_liars_dice.yaml"
)
GAMES = {"liars_dice": {"faces": 4}, "leduc_holdem": {}, "kuhn_poker": {}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", choices=sorted(GAMES), default="liars_dice")
    parser.add_argument(
        "--seconds", type=float, default=180.0, help="training time (evaluations excluded)"
    )
    parser.add_argument(
        "--every", type=float, default=30.0, help="training seconds between evaluations"
    )
    parser.add_argument(
        "--resolve", choices=RESOLVE_MODES, nargs="+", default=["frontier", "gadget"]
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    game = hiddenenvs.load_game(args.game, **GAMES[args.game])
    params = trainer_config(load_config(CONFIG))
    print(
        f"{args.game} {GAMES[args.game]}: ReBeL, PBS values, depth {params.max_depth}, {params.iterations} "
        f"CFR+ iterations per solve, hidden {params.hidden_size}; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    tree = GameTree.build(game)
    learner = ReBeLLearner(game, params, args.seed)

    def evaluate(trained: float) -> dict[str, float]:
        values = {}
        for resolve in args.resolve:
            start = time.perf_counter()
            values[resolve] = exploitability(
                tree, rebel_policy(learner.search(learner.seed, resolve), tree)
            )
            values[resolve + " s"] = time.perf_counter() - start
        print(
            f"  training {trained:6.0f} s, {learner.episodes:5d} games: exploitability "
            + ", ".join(f"{r} {values[r]:.4f} ({values[r + ' s']:.0f} s)" for r in args.resolve)
            + f"; load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        return values

    trained = 0.0
    values = evaluate(trained)
    while trained < args.seconds:
        start = time.perf_counter()
        while time.perf_counter() - start < args.every:
            learner.step(None)
        trained += time.perf_counter() - start
        values = evaluate(trained)
    for resolve in args.resolve:
        start = time.perf_counter()
        peer = rebel_exploitability(
            ReBeLSearch(
                game, iterations=params.iterations, max_depth=params.max_depth, resolve=resolve
            )
        )
        print(
            f"  peer, {resolve}: the same search with playout frontier values {peer:.4f} "
            f"({time.perf_counter() - start:.0f} s); ratio ours / peer {values[resolve] / peer:.2f}"
        )


if __name__ == "__main__":
    main()

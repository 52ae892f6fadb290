"""ReBeL training speed on the GDL-II sheets: seconds per self-play game of the trainer.

    python benchmarks/bench_rebel_training.py                          # meier, 4 games, ~20 s
    python benchmarks/bench_rebel_training.py --env blind_tictactoe --games 2
    PYTHONPATH=<other checkout> python benchmarks/bench_rebel_training.py   # the same, another commit

One loop step of ``ReBeLLearner`` (trainer ``rebel``, ``values: history``) is one self-play
game where every decision solves a depth-limited subgame (``--depth`` public steps,
``--iterations`` CFR+ iterations, the network at the frontier and as CFR's starting
policy), then ``batches_per_episode`` minibatches. The first game is run untimed (the
propnet's caches, torch's first calls). Printed: our seconds per game and, measured in
the same run, the peer's: the same trainer on Liar's Dice with one four-faced die (a
native game whose states are cheap), and the ratio. The fingerprint (the training loss
of the last game, the buffer size and a checksum of the network's weights) is equal
between two commits whenever a speed-up leaves the computation unchanged.
"""

from __future__ import annotations

import argparse
import time

import torch

import hiddenenvs
from agents.rebel import ReBeLConfig, ReBeLLearner


def seconds_per_game(env: str, params: dict, games: int, config: ReBeLConfig) -> tuple[float, str]:
    """Mean seconds per training game after one untimed game, and the run's fingerprint."""
    learner = ReBeLLearner(hiddenenvs.load_game(env, **params), config, seed=0)
    learner.step(None)
    start = time.process_time()
    for _ in range(games):
        report = learner.step(None)
    seconds = (time.process_time() - start) / games
    checksum = sum(float(p.detach().double().abs().sum()) for p in learner.network.parameters())
    return seconds, (
        f"loss {report.metrics['loss']:.6f}, buffer {len(learner.buffer)}, weights {checksum:.6f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--env", default="meier")
    parser.add_argument("--games", type=int, default=4, help="timed games after one untimed")
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=30)
    arguments = parser.parse_args()
    torch.set_num_threads(1)
    config = ReBeLConfig(iterations=arguments.iterations, max_depth=arguments.depth)
    ours, fingerprint = seconds_per_game(arguments.env, {}, arguments.games, config)
    peer, _ = seconds_per_game("liars_dice", {"faces": 4}, arguments.games, config)
    print(
        f"ReBeL training, depth {arguments.depth}, {arguments.iterations} CFR+ iterations, CPU s per game "
        f"({arguments.games} games after one untimed)"
    )
    print(
        f"  {arguments.env}: {ours:.3f} s/game ({1 / ours:.3f} games/s)   fingerprint: {fingerprint}"
    )
    print(f"  peer, liars_dice(faces=4): {peer:.3f} s/game   ratio {ours / peer:.1f}")


if __name__ == "__main__":
    main()

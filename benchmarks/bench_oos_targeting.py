"""OOS's model path on GDL-II games, keeping what it computed or computing it again.

    taskset -c 1 python benchmarks/bench_oos_targeting.py                  # a few minutes
    taskset -c 1 python benchmarks/bench_oos_targeting.py --train-config \
        configs/exit_oos_blind_tictactoe.yaml evaluation.every_episodes=100000
    taskset -c 1 python benchmarks/bench_oos_targeting.py --train-only --repo <old checkout> ...

1. OOS simulations (iterations) per CPU second on the model path, in blind tic-tac-toe and
   Meier: one searcher (seed 0, the shipped ExIt-OOS parameters but the uniform rollout)
   searching in turn at its keys of one seeded uniform game, ``--simulations`` a key, as
   ExIt-OOS does through a match. Each search's rate is given at its key's length, twice
   from the same seed: as OOS did before, playing every child to test it against the
   target at every visit (``child_views = None``) and asking the tables for every
   strategy the belief sampler weighs (``_strategy_from_tables``), and keeping both
   (:class:`agents.search.oos.ChildViews`, empty at the match's start so that its misses
   are counted; ``OOS._strategy_of``). The two runs' tables are checked to be the same,
   bit for bit.
2. With ``--train-config``: ExIt-OOS games per CPU minute, ``train.py`` on that config in
   one process (``trainer.params.workers=0``, then the overrides given) from ``--repo``
   (default this checkout; another checkout times older code), run to each of
   ``--train-games`` games (a step plays ``games_per_iteration``) within ``--train-seconds``.
   The CPU seconds of the two runs differ by the games between them: the start, the
   admission check and the first evaluation cancel out.

Measured (taskset -c 1, nice 5, load 1.8-1.9, CPU figures; commit 09ca32a), 50 simulations
a key, computing again -> keeping: blind tic-tac-toe at keys of 1, 3, 5 and 7 entries
1,857 -> 1,928, 636 -> 1,702, 344 -> 930 and 195 -> 868 simulations/s (the match 395 ->
1,200); Meier at 2, 10, 14 and 22 entries 1,365 -> 2,959, 261 -> 1,408, 418 -> 1,022 and
292 -> 893 (the match 385 -> 1,271). ExIt-OOS on blind tic-tac-toe as shipped (evaluation
off): 63.8 games per CPU minute (8 games in 16.2 CPU s, 32 in 38.7) against 28.7 (27.8 and
77.9) for the code before it (commit 6019a0e, ``--repo`` a copy of it, load 2.5-2.6).
The printed load is the machine's, not this process's.
"""

from __future__ import annotations

import argparse
import csv
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import hiddenenvs  # noqa: E402
from agents.search.oos import OOS, ChildViews  # noqa: E402
from benchmarks.bench_gdl_beliefs import train_cpu_seconds  # noqa: E402
from hiddenenvs.game import CHANCE  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
# The shipped ExIt-OOS parameters (agents/exit_oos/config.py defaults, model backend).
OOS_PARAMETERS = {"delta": 0.9, "epsilon": 0.4, "gamma": 0.01, "targeting": "ist"}


def match_keys(game, player: int, decisions: int, seed: int) -> list[tuple]:
    """``player``'s keys at its first ``decisions`` decisions of a seeded uniform game (the
    first game from ``seed`` on that lasts that long)."""
    rng = np.random.default_rng(seed)
    keys: list[tuple] = []
    state = game.new_initial_state()
    while not state.is_terminal() and len(keys) < decisions:
        if state.current_player() == CHANCE:
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.integers(len(outcomes))][0])
            continue
        if player in state.movers():
            keys.append(state.information_state_key(player))
        state.apply_actions(
            [
                int(rng.choice(state.legal_actions(p))) if state.legal_actions(p) else -1
                for p in range(game.info.num_players)
            ]
        )
    return keys if len(keys) == decisions else match_keys(game, player, decisions, seed + 1)


def match_rates(
    game, player: int, keys: list[tuple], simulations: int, keep: bool
) -> tuple[list[float], dict]:
    """(simulations per CPU second of each search, the tables at the end) of one searcher
    through ``keys``, keeping what it computed or (``keep=False``) not."""
    search = OOS(game, player, seed=0, backend="model", **OOS_PARAMETERS)
    search.child_views = ChildViews() if keep else None
    if not keep:  # the tables asked at every draw (an instance attribute hides the method)
        search._strategy_of = search._strategy_from_tables  # type: ignore[method-assign]
    rates = []
    for key in keys:
        start = time.process_time()
        search.search(key, iterations=simulations)
        rates.append(simulations / (time.process_time() - start))
    tables = {k: (e.regret, e.average) for k, e in search.tables.entries.items()}
    return rates, tables


def same_tables(first: dict, second: dict) -> bool:
    return first.keys() == second.keys() and all(
        np.array_equal(first[k][0], second[k][0]) and np.array_equal(first[k][1], second[k][1])
        for k in first
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--simulations", type=int, default=50, help="OOS simulations a key")
    parser.add_argument("--seed", type=int, default=0, help="seed of the game the keys come from")
    parser.add_argument("--train-config", default="", help="an ExIt-OOS config to time (part 2)")
    parser.add_argument(
        "--train-games", type=int, nargs=2, default=[8, 32], help="games of the two runs"
    )
    parser.add_argument("--train-seconds", type=float, default=900.0, help="each run's cap")
    parser.add_argument("--train-only", action="store_true", help="part 2 alone")
    parser.add_argument("--repo", default=str(REPO), help="the checkout whose train.py part 2 runs")
    parser.add_argument(
        "overrides", nargs="*", help="train.py overrides, e.g. evaluation.every_episodes=100000"
    )
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} (1 min)", flush=True)
    if not args.train_only:
        for name, player, decisions in (("blind_tictactoe", 0, 4), ("meier", 0, 4)):
            keys = match_keys(hiddenenvs.load_game(name), player, decisions, args.seed)
            # A game instance each: its propnet caches start empty for both runs.
            played, played_tables = match_rates(
                hiddenenvs.load_game(name), player, keys, args.simulations, False
            )
            kept, kept_tables = match_rates(
                hiddenenvs.load_game(name), player, keys, args.simulations, True
            )
            same = "same tables" if same_tables(played_tables, kept_tables) else "TABLES DIFFER"
            print(f"{name}, player {player}, {args.simulations} simulations a key ({same}):")
            for key, before, after in zip(keys, played, kept):
                print(
                    f"  key length {len(key):3d}: {before:7.1f} simulations/s computing again, "
                    f"{after:7.1f} keeping ({after / before:.1f}x)"
                )
            total = len(keys) * args.simulations
            print(
                f"  the match: {total / sum(args.simulations / r for r in played):.1f} -> "
                f"{total / sum(args.simulations / r for r in kept):.1f} simulations/s",
                flush=True,
            )
    if args.train_config:
        runs = [
            train_cpu_seconds(
                Path(args.repo), args.train_config, args.train_seconds, args.overrides, games
            )
            for games in args.train_games
        ]
        (first_games, first_cpu), (games, cpu) = runs
        print(
            f"ExIt-OOS {args.train_config} ({args.repo}): {first_games} games in "
            f"{first_cpu:.1f} CPU s, {games} in {cpu:.1f}: "
            f"{(games - first_games) * 60.0 / (cpu - first_cpu):.1f} games per CPU minute"
        )
    print(f"load average {os.getloadavg()[0]:.2f} (1 min)")


if __name__ == "__main__":
    main()

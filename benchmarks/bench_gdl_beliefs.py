"""The GDL-II belief sampler under a changing policy, as OOS draws from it.

    python benchmarks/bench_gdl_beliefs.py                      # draws/s, about a minute
    python benchmarks/bench_gdl_beliefs.py --chains 6           # ... and extended passes
    python benchmarks/bench_gdl_beliefs.py --train-config configs/exit_oos_blind_tictactoe.yaml \
        --train-seconds 240 evaluation.every_episodes=100000 \
        trainer.params.games_per_iteration=1 trainer.params.concurrent_games=1

1. Draws per second of ``game.sample_consistent_history`` at player 0's information-state
   keys of blind tic-tac-toe after 2 and after 4 GDL steps (key lengths 5 and 9: each step
   adds random's entry and the joint move's), the policy switching between two every draw
   as in OOS's ``_restored_iteration_steps``, whose ``_strategy_of`` (``gamma`` uniform
   plus regret matching, positive on every legal action) changes every iteration: here
   the strategies of two OOS searchers (seeds 1 and 2) after ``--iterations`` untargeted
   iterations each; and under the uniform policy. The first draw at a key builds what
   later draws reuse; it is timed apart. Figures are CPU seconds of this process (``time.process_time``).
2. With ``--train-config``: ExIt-OOS games per minute of budget and per CPU minute,
   ``train.py`` on that config for ``--train-seconds`` in one process
   (``trainer.params.workers=0``, then the overrides given), episodes read from the run's
   ``metrics.csv`` (a step plays ``games_per_iteration`` games: a run whose first step
   outlasts the budget counts 0).

Measured (taskset -c 1, nice 5, load 6-10, so CPU figures): at keys of 5, 9 and 13
entries, two OOS strategies alternating, 383, 20.4 and 2.0 draws/s before the pass was
kept per key, 4,985, 647 and 77 after. ExIt-OOS on blind tic-tac-toe (50 simulations a
move, evaluation off, one game a step and no concurrent games; CPU seconds include the
start and the first evaluation): 10 games in 242 CPU s before, 11 in 48 after; as
shipped (8 games a step) 24 games in 68 CPU s after, no step finished in 73 before.

3. With ``--chains N``: the structure kept for policies along a seat's keys, as a seat
   meets them in self-play (its key at each of its decisions in ``N`` seeded random
   playouts of blind tic-tac-toe and of Meier): built from the start at every key, and
   taken on from the previous key's pass (what the sampler does since 30670e4), in this
   process, on the same keys, every pair of structures checked equal; CPU seconds of each.

Measured (``--chains 6``, taskset -c 0, nice -15, load 0.6-1.0, three runs): blind
tic-tac-toe's 76 passes 9.1 / 9.4 / 10.0 CPU s from the start, 6.1 / 6.4 / 6.5 extending
(1.48-1.54x, median 1.50x); Meier's 19 (short random games) 0.12-0.13 s and 0.07-0.08 s
(1.65-1.70x). The newest layers are most of a pass, which caps the gain; a whole MCNFSP run
on blind tic-tac-toe, which also weighs the passes and searches, gains about 9% (the module
docstring of :mod:`hiddenenvs.envs.gdl.game`). No peer has a GDL-II belief sampler: the
comparison is with the pass from the start, in the same process.

Note the load (printed): on a shared machine wall-clock figures move with other jobs.
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
from agents.search.oos import OOS  # noqa: E402
from hiddenenvs.game import CHANCE, SIMULTANEOUS, random_playout  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def oos_strategies(game, seeds: list[int], iterations: int) -> list:
    """OOS's belief-sampler policies (``_strategy_of``: ``gamma`` uniform plus regret
    matching) of model-backend searchers for player 0 after ``iterations`` untargeted
    iterations each, one per seed: as different as OOS's from one iteration to the next."""
    strategies = []
    for seed in seeds:
        search = OOS(game, 0, seed=seed, backend="model")
        for _ in range(iterations):
            search.iteration(targeted=False)
        strategies.append(search._strategy_of)
    return strategies


def keys_of_blind_tictactoe(steps: list[int], seed: int) -> dict[int, tuple]:
    """Player 0's key at its decision after ``steps`` GDL steps of a seeded random game
    (the first game from ``seed`` on that lasts long enough)."""
    game = hiddenenvs.load_game("blind_tictactoe")
    rng = np.random.default_rng(seed)
    while True:
        found: dict[int, tuple] = {}
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.current_player() == CHANCE:
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.integers(len(outcomes))][0])
                continue
            assert state.current_player() == SIMULTANEOUS
            if state.steps in steps and 0 in state.movers():
                found[state.steps] = state.information_state_key(0)
            state.apply_actions(
                [int(rng.choice(state.legal_actions(p))) for p in range(game.info.num_players)]
            )
        if len(found) == len(steps):
            return found


def draw_rates(game, key: tuple, draws: int, policies: list, seed: int) -> tuple[float, float]:
    """(CPU seconds of the first draw, draws per CPU second of the next ``draws``),
    cycling through ``policies``."""
    rng = np.random.default_rng(seed)
    start = time.process_time()
    game.sample_consistent_history(0, key, rng, policies[0])
    first = time.process_time() - start
    start = time.process_time()
    for draw in range(draws):
        game.sample_consistent_history(0, key, rng, policies[(draw + 1) % len(policies)])
    return first, draws / (time.process_time() - start)


def train_cpu_seconds(
    repo: Path, config: str, seconds: float, overrides: list[str], games: int | None = None
) -> tuple[int, float]:
    """(episodes trained, CPU seconds) of one ``train.py`` run of the checkout ``repo`` on
    ``config`` (up to ``games`` episodes when given); a run whose first step outlasts the
    budget trains 0."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cap = [] if games is None else [f"budget.episodes={games}"]
    with tempfile.TemporaryDirectory() as output:
        subprocess.run(
            [
                sys.executable,
                str(repo / "train.py"),
                "--config",
                str(Path(config).resolve()),
                f"budget.seconds={seconds}",
                *cap,
                "trainer.params.workers=0",
                f"output_dir={output}/run",
                "progress_bar=false",
                *overrides,
            ],
            check=False,  # exit 1: nothing trained within the budget
            cwd=repo,
            env={**os.environ, "PYTHONPATH": str(repo)},
            stdout=subprocess.DEVNULL,
        )
        metrics = Path(output) / "run" / "metrics.csv"
        rows = list(csv.DictReader(metrics.open())) if metrics.exists() else []
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return max([0] + [int(float(row["episodes"])) for row in rows]), cpu


def decision_keys(game, seed: int) -> list[tuple[int, list[tuple]]]:
    """(player, its keys at its decisions) of one seeded random playout, per player."""
    state = game.new_initial_state()
    random_playout(state, np.random.default_rng(seed))
    history = state.history()
    chains: list[tuple[int, list[tuple]]] = [(p, []) for p in range(game.info.num_players)]
    for length in range(len(history)):
        past = game.state_from_history(history[:length])
        for player, keys in chains:
            if past.current_player() == SIMULTANEOUS and player in past.movers():
                keys.append(past.information_state_key(player))
    return chains


def chain_seconds(name: str, playouts: int) -> tuple[int, float, float]:
    """(passes, CPU seconds from the start, CPU seconds extending) over the seats' decision
    keys of ``playouts`` random playouts of ``name``; the structures are checked equal."""
    from hiddenenvs.envs.gdl.game import SAMPLER_MAX_NODES, _ForwardFilter

    game = hiddenenvs.load_game(name)
    passes, fresh_seconds, extended_seconds = 0, 0.0, 0.0
    for seed in range(playouts):
        for player, keys in decision_keys(game, seed):
            parent = None
            for key in keys:
                start = time.process_time()
                fresh = _ForwardFilter(game, player, key, SAMPLER_MAX_NODES, by_others=True)
                fresh_seconds += time.process_time() - start
                start = time.process_time()
                extending = parent if parent is not None and parent.can_extend_to(key) else None
                forward = _ForwardFilter(
                    game, player, key, SAMPLER_MAX_NODES, by_others=True, extending=extending
                )
                extended_seconds += time.process_time() - start
                assert (forward.out, forward.final) == (fresh.out, fresh.final), key
                parent, passes = forward, passes + 1
    return passes, fresh_seconds, extended_seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=40, help="timed draws per key and policy set")
    parser.add_argument("--seed", type=int, default=0, help="seed of the game the keys come from")
    parser.add_argument(
        "--iterations", type=int, default=300, help="OOS iterations behind each strategy"
    )
    parser.add_argument(
        "--steps", type=int, nargs="+", default=[2, 4], help="GDL steps before the keys"
    )
    parser.add_argument("--train-config", default="", help="an ExIt-OOS config to time (part 2)")
    parser.add_argument("--train-seconds", type=float, default=120.0)
    parser.add_argument(
        "--chains", type=int, default=0, help="random playouts whose key chains to time (part 3)"
    )
    parser.add_argument(
        "overrides", nargs="*", help="train.py overrides, e.g. evaluation.every_episodes=100000"
    )
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} (1 min)")
    keys = keys_of_blind_tictactoe(args.steps, args.seed)
    sets = {
        "two OOS strategies, alternating": oos_strategies(
            hiddenenvs.load_game("blind_tictactoe"), [1, 2], args.iterations
        ),
        "uniform": [None],
    }
    for steps, key in sorted(keys.items()):
        for label, policies in sets.items():
            game = hiddenenvs.load_game("blind_tictactoe")  # nothing cached from before
            first, rate = draw_rates(game, key, args.draws, policies, args.seed)
            print(
                f"blind tic-tac-toe, key length {len(key)} ({steps} steps), {label}: "
                f"first draw {first:.3f} s, then {rate:.1f} draws/s (CPU)"
            )
    if args.train_config:
        episodes, cpu = train_cpu_seconds(
            REPO, args.train_config, args.train_seconds, args.overrides
        )
        rate, cpu_rate = episodes * 60.0 / args.train_seconds, episodes * 60.0 / cpu
        print(
            f"ExIt-OOS {args.train_config}: {episodes} games in {args.train_seconds:g} s "
            f"budget, {rate:.1f} games/min (wall, one process), {cpu_rate:.1f} per CPU minute"
        )
    for name in ("blind_tictactoe", "meier") if args.chains else ():
        passes, fresh, extended = chain_seconds(name, args.chains)
        print(
            f"{name}: {passes} passes along the seats' decision keys of {args.chains} playouts: "
            f"{fresh:.2f} CPU s from the start, {extended:.2f} extending "
            f"({fresh / extended:.2f}x)"
        )
    print(f"load average {os.getloadavg()[0]:.2f} (1 min)")


if __name__ == "__main__":
    main()

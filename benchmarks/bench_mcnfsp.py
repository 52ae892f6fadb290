"""MCNFSP against NFSP at equal wall time (issue 15), and MCNFSP attackers in combat.

    python benchmarks/bench_mcnfsp.py                                  # everything, about an hour
    python benchmarks/bench_mcnfsp.py --only leduc rps --scale 0.5     # a part, shorter
    python benchmarks/bench_mcnfsp.py --only combat --output results/mcnfsp
    python benchmarks/bench_mcnfsp.py --only rps --trainers mcnfsp mcnfsp_sample   # the two searches
    python benchmarks/bench_mcnfsp.py --only othello4 --scale 1.6667 --seed 1     # 300 s each, seed 1

Parts (budgets per trainer at ``--scale 1``; both trainers run through ``agents.loop.train``
with the shipped configs, ``configs/mcnfsp_<game>.yaml`` and ``configs/nfsp_<game>.yaml``):

- ``othello4``, ``leduc``: exact exploitability of the average policies against training
  wall time, 180 s (Othello 4x4) and 150 s (Leduc) each. The two trainers take turns in
  ``--chunks`` slices (each slice resumes the run from its checkpoint), so the load of a
  shared machine falls on both alike, and every slice ends with an exact evaluation
  that is *not* counted in the training time (one Othello 4x4 evaluation takes 15-20 s).
- ``matching_pennies``, ``rps``: episodes (fictitious-play iterations) and seconds until
  the exact exploitability first reaches 0.05, 45 s each, evaluated every 500 episodes.
- ``combat``: MCNFSP attackers trained against the doctrine defenders on the default map
  (commander mode), 150 x 5 games, one update after every 5 games (the paper's "150
  episodes of 5 games"); the search starts from the true state (combat has no belief
  sampler). By default (issue 15's fix) the networks have the factored order head, the
  search is a Gumbel root search of 8 simulations among 8 sampled orders, and a new leaf
  is valued by 25 decisions of hold played out against the doctrine, then f_BR's value;
  ``--combat-root-selection puct --combat-rollout-decisions 0 --combat-order-head flat
  --combat-simulations 4`` is the run before it. Then the average policy Pi plays 200
  seeded episodes against the doctrine; the win rate has a 95% Wilson interval, beside
  random and doctrine attackers on the same seeds and (unless ``--combat-without-nfsp``)
  NFSP attackers trained for the same wall time with the same play loop.

Prints one table per part and writes ``<output>/results.json`` and
``<output>/mcnfsp_vs_nfsp.png`` (the curves). The peer is NFSP, measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents.base import load_agent_file, tabular_policy_of_agents  # noqa: E402
from agents.checkpoint import atomic_write, load_checkpoint  # noqa: E402
from agents.config import load_config  # noqa: E402
from agents.leaderboard.stats import wilson_interval  # noqa: E402
from agents.loop import train  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
# name -> (config family, overrides): the default MCNFSP, its sampled-opponent search, NFSP
VARIANTS = {
    "mcnfsp": ("mcnfsp", []),
    "mcnfsp_sample": ("mcnfsp", ["trainer.params.opponent_backup=sample"]),
    "mcnfsp_expectation": ("mcnfsp", ["trainer.params.opponent_backup=expectation"]),
    "nfsp": ("nfsp", []),
}
TRAINERS = ["mcnfsp", "nfsp"]  # --trainers replaces it
CURVES = {"othello4": 180.0, "leduc": 150.0}
THRESHOLDS = {"matching_pennies": 45.0, "rps": 45.0}
TARGET = 0.05
QUIET = [
    'evaluation.exact="no"',
    "evaluation.episodes_vs_random=0",
    "progress_bar=false",
    "budget.episodes=null",
    "evaluation.every_episodes=1000000000",
    "checkpoint_every_episodes=1000000000",
]


def _config(trainer: str, game: str, output: Path, overrides: list[str]):
    family, variant_overrides = VARIANTS[trainer]
    return load_config(
        REPO / "configs" / f"{family}_{game}.yaml",
        [f"output_dir={output}", *variant_overrides, *overrides],
    )


def exploitability_curve(
    game: str, seconds: float, chunks: int, output: Path, seed: int = 0
) -> dict:
    """Both trainers in turns of ``seconds / chunks``; exact exploitability after each turn."""
    from hiddenenvs.analysis import GameTree, exploitability

    tree = None
    curves = {trainer: [] for trainer in TRAINERS}
    for chunk in range(1, chunks + 1):
        for trainer in TRAINERS:
            run = output / f"{trainer}_{game}"
            config = _config(
                trainer,
                game,
                run,
                [*QUIET, f"seed={seed}", f"budget.seconds={seconds * chunk / chunks}"],
            )
            if tree is None:
                tree = GameTree.build(load_agent_game(config))
            train(config, resume=chunk > 1)
            loop_state = load_checkpoint(run / "checkpoint.pt")["loop"]
            started = time.perf_counter()
            policy = tabular_policy_of_agents(
                tree, lambda p: load_agent_file(run / f"policy_player{p}.pt")
            )
            value = float(exploitability(tree, policy))
            curves[trainer].append(
                {
                    "seconds": round(loop_state["wall_seconds"], 1),
                    "episodes": loop_state["episodes"],
                    "exploitability": value,
                    "evaluation_seconds": round(time.perf_counter() - started, 1),
                }
            )
            print(f"{game} {trainer:6s} {curves[trainer][-1]}", flush=True)
    return curves


def load_agent_game(config):
    import hiddenenvs

    return hiddenenvs.load_game(config.env.name, **config.env.params)


def iterations_to_target(game: str, seconds: float, output: Path) -> dict:
    """Each trainer for ``seconds`` with exact evaluation every 500 episodes."""
    import csv

    results = {}
    for trainer in TRAINERS:
        run = output / f"{trainer}_{game}"
        config = _config(
            trainer,
            game,
            run,
            [
                "progress_bar=false",
                "budget.episodes=null",
                f"budget.seconds={seconds}",
                "evaluation.every_episodes=500",
                "checkpoint_every_episodes=1000000000",
            ],
        )
        train(config)
        with (run / "metrics.csv").open() as handle:
            rows = [
                (int(r["episodes"]), float(r["wall_seconds"]), float(r["exploitability"]))
                for r in csv.DictReader(handle)
            ]
        reached = next((row for row in rows if row[2] <= TARGET), None)
        after = [e for episodes, _, e in rows if reached and episodes >= reached[0]]
        results[trainer] = {
            "episodes_to_target": reached[0] if reached else None,
            "seconds_to_target": reached[1] if reached else None,
            "share_of_later_evaluations_below": round(
                float(np.mean([e <= TARGET for e in after])), 2
            )
            if after
            else None,
            "final_exploitability": rows[-1][2],
            "episodes": rows[-1][0],
            "seconds": rows[-1][1],
            "curve": rows,
        }
        print(
            f"{game} {trainer:6s} "
            + json.dumps({k: v for k, v in results[trainer].items() if k != "curve"}),
            flush=True,
        )
    return results


def combat(
    updates: int,
    games_per_update: int,
    evaluation_episodes: int,
    search: dict,
    with_nfsp: bool,
    seed: int = 0,
) -> dict:
    """MCNFSP (and NFSP, same wall time) attackers against doctrine defenders; ``search``:
    the MCNFSPConfig fields of the search and the order head (``--combat-*`` options);
    ``seed``: the networks', the agents' and the training games' (evaluation seeds are fixed)."""
    import hiddenenvs
    from agents.mcnfsp import MCNFSPAgent, MCNFSPConfig, architecture_for, play_against_policy
    from agents.nfsp import NFSPAgent, NFSPConfig
    from hiddenenvs.envs.combat.doctrine import doctrine_action, play_episode

    torch.set_num_threads(1)
    torch.manual_seed(seed)
    game = hiddenenvs.load_game("combat", mode="commander")
    attackers = 0  # the doctrine plays the defenders, seat 1
    doctrine_rng = np.random.default_rng(
        0
    )  # the doctrine is deterministic; the signature wants one

    def doctrine(state, player):
        probabilities = np.zeros(game.info.num_distinct_actions)
        probabilities[doctrine_action(state, player, doctrine_rng)] = 1.0
        return probabilities

    config = MCNFSPConfig(
        network="mlp",
        hidden_sizes=[128],
        anticipatory=0.1,
        **search,
        learn_every_episodes=games_per_update,
        rl_steps=4,
        sl_steps=4,
        batch_size=64,
        min_buffer_size=64,
    )
    mcnfsp = MCNFSPAgent(
        game, attackers, architecture_for(game, config), config, doctrine, seed=seed
    )
    input_size = int(np.prod(game.info.information_state_tensor_shape))
    # NFSP stores two full action masks (12,961 actions) per transition: small memories.
    nfsp = NFSPAgent(
        input_size,
        game.info.num_distinct_actions,
        NFSPConfig(
            hidden_sizes=[128],
            replay_capacity=5_000,
            reservoir_capacity=20_000,
            batch_size=128,
            learn_every=16,
            min_buffer_size=256,
            sl_learning_rate=0.005,
            epsilon_start=0.06,
            epsilon_end=0.001,
            epsilon_decay_transitions=45_000,
        ),
        seed=seed,
    )
    rng = np.random.default_rng(seed + 1)
    started = time.perf_counter()
    for update in range(updates):
        for game_index in range(games_per_update):
            game_seed = seed * 100_000 + update * games_per_update + game_index
            play_against_policy(
                mcnfsp, attackers, doctrine, game.new_initial_state(seed=game_seed), rng
            )
        mcnfsp.learn()
        if (update + 1) % 25 == 0:
            print(
                f"combat mcnfsp: {update + 1} x {games_per_update} games, "
                f"{time.perf_counter() - started:.0f} s, {mcnfsp.searches} searches",
                flush=True,
            )
    mcnfsp_seconds = time.perf_counter() - started
    load_after_training = [round(load, 2) for load in os.getloadavg()]
    started, nfsp_games = time.perf_counter(), 0
    while with_nfsp and time.perf_counter() - started < mcnfsp_seconds:
        play_against_policy(nfsp, attackers, doctrine, game.new_initial_state(seed=nfsp_games), rng)
        nfsp.learn()
        nfsp_games += 1

    seeds = 1_000_000 + np.arange(evaluation_episodes)

    def wins_of(play) -> dict:
        won = sum(bool(play(int(seed)).returns()[attackers] > 0) for seed in seeds)
        low, high = wilson_interval(won, len(seeds))
        return {
            "wins": won,
            "episodes": len(seeds),
            "win_rate": won / len(seeds),
            "wilson_95": [round(low, 3), round(high, 3)],
        }

    def network_play(agent):
        return lambda seed: play_against_policy(
            agent,
            attackers,
            doctrine,
            game.new_initial_state(seed=seed),
            np.random.default_rng(seed),
            learn=False,
        )

    results = {
        "mcnfsp_average_policy": {
            **wins_of(network_play(mcnfsp.evaluation_agent())),
            "training_games": updates * games_per_update,
            "training_seconds": round(mcnfsp_seconds, 1),
            "searches": mcnfsp.searches,
            "search": search,
            "seed": seed,
            "load_average_after_training": load_after_training,
        },
    }
    if with_nfsp:
        results["nfsp_average_policy"] = {
            **wins_of(network_play(nfsp.evaluation_agent())),
            "training_games": nfsp_games,
            "training_seconds": round(mcnfsp_seconds, 1),
        }
    for name in ("random", "doctrine"):
        results[f"{name}_attackers"] = wins_of(
            lambda seed, name=name: play_episode(
                game.new_initial_state(seed=seed), name, "doctrine", np.random.default_rng(seed)
            )
        )
    for name, row in results.items():
        print(f"combat {name}: {row}", flush=True)
    return results


def plot(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    games = [g for g in (*CURVES, *THRESHOLDS) if g in results]
    if not games:
        return
    figure, axes = plt.subplots(1, len(games), figsize=(4 * len(games), 3.4), squeeze=False)
    for axis, game in zip(axes[0], games):
        for trainer in TRAINERS:
            if trainer not in results[game]:
                continue
            data = results[game][trainer]
            if game in CURVES:
                xs, ys = [r["seconds"] for r in data], [r["exploitability"] for r in data]
            else:
                xs, ys = [r[1] for r in data["curve"]], [r[2] for r in data["curve"]]
            axis.plot(xs, ys, marker="." if game in CURVES else None, label=trainer.upper())
        if game in THRESHOLDS:
            axis.axhline(TARGET, color="grey", linestyle=":", linewidth=1)
        axis.set_yscale("log")
        axis.set_title(game)
        axis.set_xlabel("training wall time (s)")
    axes[0][0].set_ylabel("exact exploitability")
    axes[0][0].legend()
    figure.tight_layout()
    atomic_write(path, lambda handle: figure.savefig(handle, format="png", dpi=90))
    plt.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--only",
        nargs="+",
        choices=[*THRESHOLDS, *CURVES, "combat"],
        default=[*THRESHOLDS, "leduc", "combat", "othello4"],
    )
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every time budget")
    parser.add_argument(
        "--chunks", type=int, default=5, help="turns per trainer in the curve parts"
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of both trainers in the curve parts"
    )
    parser.add_argument("--combat-updates", type=int, default=150)
    parser.add_argument("--combat-evaluation-episodes", type=int, default=200)
    parser.add_argument(
        "--combat-simulations", type=int, default=8, help="simulations per combat search"
    )
    parser.add_argument("--combat-root-selection", choices=["puct", "gumbel"], default="gumbel")
    parser.add_argument(
        "--combat-gumbel-actions", type=int, default=8, help="root actions a Gumbel search samples"
    )
    parser.add_argument(
        "--combat-rollout-decisions",
        type=int,
        default=25,
        help="decisions of hold played out from a new leaf (0: f_BR's value alone, the paper's)",
    )
    parser.add_argument("--combat-order-head", choices=["flat", "factored"], default="factored")
    parser.add_argument(
        "--combat-seed", type=int, default=0, help="seed of the networks and the training games"
    )
    parser.add_argument(
        "--combat-without-nfsp",
        action="store_true",
        help="skip the NFSP attackers (halves the time)",
    )
    parser.add_argument(
        "--trainers",
        nargs="+",
        choices=list(VARIANTS),
        default=TRAINERS,
        help="mcnfsp_sample / mcnfsp_expectation: MCNFSP with opponent_backup set so",
    )
    parser.add_argument("--output", type=Path, default=Path("runs/bench_mcnfsp"))
    arguments = parser.parse_args()
    TRAINERS[:] = arguments.trainers
    torch.set_num_threads(1)
    results_path = arguments.output / "results.json"
    results = json.loads(results_path.read_text()) if results_path.exists() else {}
    for part in arguments.only:
        started = time.perf_counter()
        if part in CURVES:
            results[part] = exploitability_curve(
                part,
                CURVES[part] * arguments.scale,
                arguments.chunks,
                arguments.output / "runs",
                arguments.seed,
            )
        elif part in THRESHOLDS:
            results[part] = iterations_to_target(
                part, THRESHOLDS[part] * arguments.scale, arguments.output / "runs"
            )
        else:
            search = {
                "num_simulations": arguments.combat_simulations,
                "root_selection": arguments.combat_root_selection,
                "gumbel_actions": arguments.combat_gumbel_actions,
                "rollout_decisions": arguments.combat_rollout_decisions,
                "order_head": arguments.combat_order_head,
            }
            results[part] = combat(
                arguments.combat_updates,
                5,
                arguments.combat_evaluation_episodes,
                search,
                not arguments.combat_without_nfsp,
                arguments.combat_seed,
            )
        results.setdefault("part_seconds", {})[part] = round(time.perf_counter() - started, 1)
        arguments.output.mkdir(parents=True, exist_ok=True)
        atomic_write(
            results_path, lambda handle: handle.write(json.dumps(results, indent=1).encode())
        )
        plot(results, arguments.output / "mcnfsp_vs_nfsp.png")
    print(f"results in {results_path}")


if __name__ == "__main__":
    main()

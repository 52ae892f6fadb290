"""The vector env's figures that ``python -m benchmarks speed`` does not take: memory per
game against pgx, combat fighter mode against our parallel env, and NFSP's self-play.

(Decisions per second against pgx, at every batch size, with the fused ``play_random``
path and on several cores, are ``python -m benchmarks speed --only vector fused``.)

- default: bytes per game at batch ``B``: for ``vector``, what numpy allocates in
  :func:`hiddenenvs.vector.make` and ``reset`` (the state arrays and every output buffer;
  ``tracemalloc``) over ``B``; for ``pgx``, the bytes of the batched initial state's arrays
  over ``B``.
- ``--combat``: combat's fighter mode (every fighter a player, all moving at once; pgx has
  no such game), ticks per second (one tick is one joint step of one game, every fighter
  acting), random legal play on the small and the default map: the vector env
  (``copy=False``) against our parallel PettingZoo env, one game at a time, whose joint
  action comes from the same compiled policy on its stacked masks; ``--batches`` defaults
  to 1 64 1024 there.
- ``--self-play``: NFSP's self-play on Leduc hold'em, episodes per second with 64 episodes
  in lockstep (fresh, untrained agents; acting and storing transitions, no gradient
  steps): :func:`agents.loop.play_episodes` over 64 AEC envs against
  :func:`agents.vector_self_play.play_vector_episodes` over one vector env.

The process pins itself to one core (``--core``) and asks XLA for one thread before JAX
is imported. Timed contenders take turns in slices (``timing.interleaved_rates``), so load
from other jobs falls on all of them alike.

    python benchmarks/bench_vector.py [--batches 1 64 1024 16384] [--combat | --self-play]
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import time
import tracemalloc

import numpy as np

GAMES = {"kuhn_poker": {}, "leduc_holdem": {}, "othello": {"board_size": 8}}
PGX_IDS = {"kuhn_poker": "kuhn_poker", "leduc_holdem": "leduc_holdem", "othello": "othello"}


def vector_bytes_per_game(name: str, params: dict, batch: int) -> float:
    import hiddenenvs.vector as vector

    tracemalloc.start()
    env = vector.make(name, num_envs=batch, seed=0, copy=False, **params)
    env.reset()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / batch


def pgx_bytes_per_game(name: str, batch: int) -> float:
    import jax
    import pgx

    env = pgx.make(PGX_IDS[name])
    state = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(0), batch))
    return sum(leaf.nbytes for leaf in jax.tree_util.tree_leaves(state)) / batch


COMBAT_MAPS = ("small", "default")


def combat_vector_contender(combat_map: str, batch: int):
    import hiddenenvs.vector as vector

    env = vector.make("combat", num_envs=batch, seed=0, copy=False, mode="fighter", map=combat_map)
    policy = vector.RandomLegalPolicy(seed=1)
    state = {"step": env.reset()}

    def run_once() -> int:
        state["step"] = env.step(policy(state["step"].legal_action_masks))
        return batch

    return run_once


def combat_parallel_contender(combat_map: str):
    import hiddenenvs
    import hiddenenvs.vector as vector

    env = hiddenenvs.make_parallel("combat", mode="fighter", map=combat_map)
    policy = vector.RandomLegalPolicy(seed=1)
    rng = np.random.default_rng(0)
    state = {"observations": env.reset(seed=0)[0]}
    seat = {agent: index for index, agent in enumerate(env.possible_agents)}
    masks = np.zeros((1, len(seat), env.action_space(env.possible_agents[0]).n), dtype=np.int8)

    def run_once() -> int:
        observations = state["observations"]
        if not env.agents:
            observations, _ = env.reset(seed=int(rng.integers(2**31)))
        masks[:] = 0  # the dead have left env.agents
        for agent in env.agents:
            masks[0, seat[agent]] = observations[agent]["action_mask"]
        actions = policy(masks)[0]
        joint = {agent: int(actions[seat[agent]]) for agent in env.agents}
        state["observations"] = env.step(joint)[0]
        return 1

    return run_once


def self_play_contenders(num_envs: int = 64) -> dict:
    import hiddenenvs
    import hiddenenvs.vector as vector
    from agents.loop import play_episodes
    from agents.nfsp import NFSP, NFSPConfig
    from agents.vector_self_play import play_vector_episodes

    game = hiddenenvs.load_game("leduc_holdem")
    aec_learner, vector_learner = NFSP(game, NFSPConfig(), seed=0), NFSP(game, NFSPConfig(), seed=0)
    envs = [hiddenenvs.make("leduc_holdem").unwrapped for _ in range(num_envs)]
    seat_agents = dict(zip(envs[0].possible_agents, aec_learner.agents))
    vector_env = vector.make("leduc_holdem", num_envs=num_envs, seed=0)
    rng = np.random.default_rng(0)

    def aec_once() -> int:
        return len(play_episodes(envs, seat_agents, rng.integers(2**31, size=num_envs)))

    def vector_once() -> int:
        return len(
            play_vector_episodes(vector_env, vector_learner.agents, seed=int(rng.integers(2**31)))
        )

    return {
        "play_episodes (64 AEC envs)": aec_once,
        "play_vector_episodes (vector env)": vector_once,
    }


def commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seconds", type=float, default=2.0, help="time per contender (--combat, --self-play)"
    )
    parser.add_argument("--batches", type=int, nargs="+", help="default: 1 64 1024 16384")
    parser.add_argument("--games", nargs="+", default=list(GAMES), choices=list(GAMES))
    parser.add_argument("--core", type=int, default=0, help="the CPU core to pin to")
    parser.add_argument("--no-pgx", action="store_true", help="measure without pgx")
    parser.add_argument(
        "--self-play", action="store_true", help="NFSP self-play episodes/s instead (see above)"
    )
    parser.add_argument(
        "--combat", action="store_true", help="combat fighter mode, ticks/s instead (see above)"
    )
    args = parser.parse_args()

    os.sched_setaffinity(0, {args.core})
    os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = "1"
    from timing import interleaved_rates

    if args.self_play:
        print(
            f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, commit {commit()}, pinned to core "
            f"{args.core}, load average {os.getloadavg()[0]:.1f}; NFSP on Leduc hold'em, 64 episodes in lockstep"
        )
        for label, rate in interleaved_rates(args.seconds, self_play_contenders()).items():
            print(f"{label:<36}{rate:>10,.0f} episodes/s")
        return
    if args.combat:
        print(
            f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, commit {commit()}, pinned to core "
            f"{args.core}, load average {os.getloadavg()[0]:.1f}; combat fighter mode, 20 fighters"
        )
        print("| map | batch | vector (ticks/s) | parallel env (ticks/s) | vector / parallel |")
        print("|---|---:|---:|---:|---:|")
        for combat_map in COMBAT_MAPS:
            for batch in args.batches or [1, 64, 1024]:
                rates = interleaved_rates(
                    args.seconds,
                    {
                        "vector": combat_vector_contender(combat_map, batch),
                        "parallel": combat_parallel_contender(combat_map),
                    },
                )
                print(
                    f"| {combat_map} | {batch:,} | {rates['vector']:,.0f} | "
                    f"{rates['parallel']:,.0f} | {rates['vector'] / rates['parallel']:.1f}x |",
                    flush=True,
                )
        return
    have_pgx = False
    if not args.no_pgx:
        try:
            import jax
            import pgx

            have_pgx = True
            pgx_version = f"pgx {pgx.__version__}, jax {jax.__version__}"
        except ImportError as error:
            print(f"pgx not measured: {error} (pip install -e '.[bench]')")
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, commit {commit()}, "
        f"{platform.processor() or platform.machine()}" + (f", {pgx_version}" if have_pgx else "")
    )
    print("| game | batch | vector bytes/game | pgx bytes/game |")
    print("|---|---:|---:|---:|")
    for name in args.games:
        for batch in args.batches or [1, 64, 1024, 16384]:
            ours = vector_bytes_per_game(name, GAMES[name], batch)
            theirs = f"{pgx_bytes_per_game(name, batch):,.0f}" if have_pgx else "-"
            print(f"| {name} | {batch:,} | {ours:,.0f} | {theirs} |", flush=True)


if __name__ == "__main__":
    main()

"""Decisions per second, random legal play: hiddenenvs.vector vs our AEC env, our game
model, and pgx on the CPU (JAX jit + vmap, auto-reset), at several batch sizes, on one core.

Every contender plays uniformly random legal actions to the end of each game and
starts the next one; a decision is one player's action (chance is not counted).

- ``vector``: :func:`hiddenenvs.vector.make` with ``copy=False`` (read-only views of the
  kernel's buffers) and :class:`hiddenenvs.vector.RandomLegalPolicy`: one compiled call
  draws the actions, one steps all ``B`` games.
- ``AEC env`` and ``game model``: one game at a time (batch does not apply): the full
  PettingZoo loop (``agent_iter``, ``last``, mask, ``step``), and the raw model's
  ``legal_actions`` / ``apply_action`` with chance drawn by its probabilities.
- ``pgx``: ``jax.jit(jax.vmap(auto_reset(env.step, env.init)))`` with the random legal
  action drawn inside the same jitted function (``jax.random.categorical`` on the
  mask's logits), one call per step of all ``B`` games.

Memory per game: for ``vector``, the bytes numpy allocates in ``make`` and ``reset`` (the
state arrays and every output buffer; ``tracemalloc``) over ``B``; for ``pgx``, the bytes
of the batched state's arrays over ``B``.

The process pins itself to one core (``--core``) and asks XLA for one thread before JAX
is imported. Contenders take turns in slices (``timing.interleaved_rates``), so load from
other jobs falls on all of them alike.

    python benchmarks/bench_vector.py [--seconds 2] [--batches 1 64 1024 16384] [--combat]

``--combat`` measures instead combat's fighter mode (every fighter a player, all moving at
once; pgx has no such game), ticks per second (one tick is one joint step of one game,
every fighter acting), random legal play on the small and the default map: the vector env
(``copy=False``) against our parallel PettingZoo env, one game at a time, whose joint
action comes from the same compiled policy on its stacked masks; ``--batches`` defaults
to 1 64 1024 there.

``--self-play`` measures instead NFSP's self-play on Leduc hold'em, episodes per second
with 64 episodes in lockstep (fresh, untrained agents; acting and storing transitions,
no gradient steps): :func:`agents.loop.play_episodes` over 64 AEC envs against
:func:`agents.vector_self_play.play_vector_episodes` over one vector env.
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


def vector_contender(name: str, params: dict, batch: int):
    import hiddenenvs.vector as vector

    tracemalloc.start()
    env = vector.make(name, num_envs=batch, seed=0, copy=False, **params)
    step = env.reset()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    policy = vector.RandomLegalPolicy(seed=1)
    state = {"step": step}

    def run_once() -> int:
        state["step"] = env.step(policy(state["step"].legal_action_masks))
        return batch

    return run_once, peak / batch


def aec_contender(name: str, params: dict):
    import hiddenenvs

    env = hiddenenvs.make(name, **params)
    rng = np.random.default_rng(0)

    def run_once() -> int:
        decisions = 0
        env.reset(seed=int(rng.integers(2**31)))
        for _ in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            legal = observation["action_mask"].nonzero()[0]
            env.step(int(legal[rng.integers(len(legal))]))
            decisions += 1
        return decisions

    return run_once


def model_contender(name: str, params: dict):
    import hiddenenvs
    from hiddenenvs.game import sample_chance_outcome

    game = hiddenenvs.load_game(name, **params)
    rng = np.random.default_rng(0)

    def run_once() -> int:
        decisions = 0
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(sample_chance_outcome(state, rng))
                continue
            legal = state.legal_actions()
            state.apply_action(legal[rng.integers(len(legal))])
            decisions += 1
        return decisions

    return run_once


def pgx_contender(name: str, batch: int):
    import jax
    import jax.numpy as jnp
    import pgx
    from pgx.experimental import auto_reset

    env = pgx.make(PGX_IDS[name])
    step_with_reset = jax.vmap(auto_reset(env.step, env.init))

    @jax.jit
    def play(state, key):
        key, action_key, reset_key = jax.random.split(key, 3)
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        actions = jax.random.categorical(action_key, logits, axis=-1)
        return step_with_reset(state, actions, jax.random.split(reset_key, batch)), key

    key = jax.random.PRNGKey(0)
    holder = {"state": jax.jit(jax.vmap(env.init))(jax.random.split(key, batch)), "key": key}
    memory = sum(leaf.nbytes for leaf in jax.tree_util.tree_leaves(holder["state"])) / batch
    holder["state"], holder["key"] = play(holder["state"], holder["key"])  # compile
    jax.block_until_ready(holder["state"])

    def run_once() -> int:
        holder["state"], holder["key"] = play(holder["state"], holder["key"])
        jax.block_until_ready(holder["state"].current_player)
        return batch

    return run_once, memory


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
        "--seconds", type=float, default=2.0, help="time per contender and batch size"
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
            pgx_version = (
                f"pgx {pgx.__version__}, jax {jax.__version__} ({jax.devices()[0].platform})"
            )
        except ImportError as error:
            print(f"pgx not measured: {error} (pip install -e '.[bench]')")
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, commit {commit()}, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores (pinned to core {args.core}), load average {os.getloadavg()[0]:.1f}"
        + (f", {pgx_version}" if have_pgx else "")
    )
    print(
        "| game | batch | vector (decisions/s) | AEC env | game model | pgx CPU | vector / pgx | vector bytes/game | pgx bytes/game |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in args.games:
        params = GAMES[name]
        single = interleaved_rates(
            args.seconds,
            {"aec": aec_contender(name, params), "model": model_contender(name, params)},
        )
        for batch in args.batches or [1, 64, 1024, 16384]:
            contenders, memory = {}, {}
            contenders["vector"], memory["vector"] = vector_contender(name, params, batch)
            if have_pgx:
                contenders["pgx"], memory["pgx"] = pgx_contender(name, batch)
            rates = interleaved_rates(args.seconds, contenders)
            pgx_rate = rates.get("pgx")
            print(
                f"| {name} | {batch:,} | {rates['vector']:,.0f} | {single['aec']:,.0f} | {single['model']:,.0f} | "
                + (
                    f"{pgx_rate:,.0f} | {rates['vector'] / pgx_rate:.1f}x | "
                    if pgx_rate
                    else "- | - | "
                )
                + f"{memory['vector']:,.0f} | "
                + (f"{memory['pgx']:,.0f} |" if pgx_rate else "- |"),
                flush=True,
            )


if __name__ == "__main__":
    main()

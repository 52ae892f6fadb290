"""Combat sim speed: commander-mode episodes/s and fighter-mode agent-steps/s, with
MAgent2's battle env (the MARL peer: C++ grid world, 162 agents) measured in the same run.

- commander mode: whole episodes through the game model (what MCTS-style trainers
  search), scripted doctrine attackers vs random defenders, small and default maps;
- fighter mode: agent-steps/s (one agent acting once = one agent-step) through the
  PettingZoo parallel env with uniformly random *legal* actions drawn from the masks in
  one vectorised draw, and through the raw game model; 20 agents (the research's 10 v 10)
  and 160 agents (80 v 80, MAgent2 battle's size);
- MAgent2 ``battle_v4`` (``map_size=45``: 162 agents) with the same vectorised random
  actions, and with ``action_space(agent).sample()`` per agent (the usual MAgent loop).

    python benchmarks/bench_combat.py [--seconds 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import hiddenenvs
from hiddenenvs.envs.combat.doctrine import play_episode

MAGENT2_QUOTED_AGENT_STEPS_PER_SECOND = 162_000  # the anchor, 160 agents, this kind of machine


def rate(run_once, seconds: float) -> float:
    """Units per second of ``run_once() -> units done``, over about ``seconds``."""
    run_once()  # warm-up: tables, caches
    units, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        units += run_once()
    return units / (time.perf_counter() - start)


def parallel_random_steps(env, rng: np.random.Generator, holder: dict, ticks: int = 50) -> int:
    """Step ``env`` ``ticks`` times with random legal actions; returns agent-steps."""
    done = 0
    for _ in range(ticks):
        if "observations" not in holder or not env.agents:
            holder["observations"], _ = env.reset(seed=int(rng.integers(2**31)))
        observations = holder["observations"]
        agents = env.agents
        masks = np.stack([observations[agent]["action_mask"] for agent in agents])
        actions = (rng.random(masks.shape) * masks).argmax(axis=1)
        holder["observations"], *_ = env.step(dict(zip(agents, actions.tolist())))
        done += len(agents)
    return done


def model_random_steps(game, rng: np.random.Generator, holder: dict, ticks: int = 50) -> int:
    done = 0
    for _ in range(ticks):
        state = holder.get("state")
        if state is None or state.is_terminal():
            state = holder["state"] = game.new_initial_state(seed=int(rng.integers(2**31)))
        masks = state.legal_actions_masks()  # every fighter's mask in one array
        actions = (rng.random(masks.shape) * masks).argmax(axis=1)
        done += int(masks.any(axis=1).sum())
        state.apply_actions(actions.tolist())
    return done


def magent2_steps(env, rng: np.random.Generator, use_sample: bool, ticks: int = 50) -> int:
    done = 0
    for _ in range(ticks):
        if not env.agents:
            env.reset(seed=int(rng.integers(2**31)))
        agents = env.agents
        if use_sample:
            actions = {agent: env.action_space(agent).sample() for agent in agents}
        else:
            actions = dict(zip(agents, rng.integers(env.action_space(agents[0]).n, size=len(agents)).tolist()))
        env.step(actions)
        done += len(agents)
    return done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    args = parser.parse_args()
    rng = np.random.default_rng(0)

    print("commander mode (game model, doctrine attackers vs random defenders)")
    print(f"{'map':<10}{'episodes/s':>12}{'ticks/s':>12}")
    for map_name in ("small", "default"):
        game = hiddenenvs.load_game("combat", map=map_name)
        ticks = []

        def episode(game=game, ticks=ticks):
            state = play_episode(game.new_initial_state(seed=int(rng.integers(2**31))), "doctrine", "random", rng)
            ticks.append(state.battle.tick)
            return 1

        episodes_per_second = rate(episode, args.seconds)
        print(f"{map_name:<10}{episodes_per_second:>12.1f}{episodes_per_second * np.mean(ticks):>12.0f}")

    peer_vectorised = peer_sampled = None
    try:
        from magent2.environments import battle_v4

        peer_env = battle_v4.parallel_env(map_size=45, max_cycles=1000)
        peer_env.reset(seed=0)
        peer_agents = len(peer_env.agents)
        peer_vectorised = rate(lambda: magent2_steps(peer_env, rng, use_sample=False), args.seconds)
        peer_sampled = rate(lambda: magent2_steps(peer_env, rng, use_sample=True), args.seconds)
    except ImportError as error:
        print(f"\npeer magent2 not installed ({error}); pip install magent2 to measure it here")

    print("\nfighter mode (default map, random legal actions), agent-steps/s")
    print(f"{'what':<46}{'agent-steps/s':>14}{'vs MAgent2':>12}")
    reference = peer_vectorised or MAGENT2_QUOTED_AGENT_STEPS_PER_SECOND
    for team_size in (10, 80):
        env = hiddenenvs.make_parallel("combat", mode="fighter", team_size=team_size)
        env_holder = {}
        ours_env = rate(lambda env=env, holder=env_holder: parallel_random_steps(env, rng, holder), args.seconds)
        game = hiddenenvs.load_game("combat", mode="fighter", team_size=team_size)
        holder = {}
        ours_model = rate(lambda game=game, holder=holder: model_random_steps(game, rng, holder), args.seconds)
        agents = 2 * team_size
        print(f"{f'ours, parallel env, {agents} agents':<46}{ours_env:>14,.0f}{ours_env / reference:>11.2f}x")
        print(f"{f'ours, game model, {agents} agents':<46}{ours_model:>14,.0f}{ours_model / reference:>11.2f}x")
    if peer_vectorised is not None:
        print(f"{f'MAgent2 battle_v4, {peer_agents} agents, vectorised':<46}{peer_vectorised:>14,.0f}{1:>11.2f}x")
        print(f"{f'MAgent2 battle_v4, {peer_agents} agents, sample()':<46}{peer_sampled:>14,.0f}"
              f"{peer_sampled / reference:>11.2f}x")
    else:
        print(f"{'MAgent2 battle, 160 agents (QUOTED, not measured)':<46}"
              f"{MAGENT2_QUOTED_AGENT_STEPS_PER_SECOND:>14,.0f}{1:>11.2f}x")


if __name__ == "__main__":
    main()

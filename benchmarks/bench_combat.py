"""Combat sim speed: commander-mode episodes/s and fighter-mode agent-steps/s, with
MAgent2's battle env (the MARL peer: C++ grid world, 162 agents) measured in the same run.

- commander mode: whole episodes through the game model (what MCTS-style trainers
  search), scripted doctrine attackers vs random defenders, small and default maps;
- fighter mode: agent-steps/s (one agent acting once = one agent-step) through the
  PettingZoo parallel env with uniformly random *legal* actions drawn from the masks in
  one vectorised draw (the masks stacked by the env, ``env.action_masks()``: the rows the
  observations carry), and through the raw game model; 20 agents (the research's 10 v 10)
  and 160 agents (80 v 80, MAgent2 battle's size);
- MAgent2 ``battle_v4`` (``map_size=45``: 162 agents) with the same vectorised random
  actions, and with ``action_space(agent).sample()`` per agent (the usual MAgent loop),
  measured in turns with ours (``timing.interleaved_rates``).

    python benchmarks/bench_combat.py [--seconds 3]
"""

from __future__ import annotations

import argparse

import numpy as np

import hiddenenvs
from hiddenenvs.envs.combat.doctrine import play_episode
from timing import interleaved_rates

MAGENT2_QUOTED_AGENT_STEPS_PER_SECOND = (
    162_000  # the anchor, 160 agents, this kind of machine
)


def parallel_random_steps(env, rng: np.random.Generator, holder: dict, ticks: int = 50) -> int:
    """Step ``env`` ``ticks`` times with random legal actions; returns agent-steps."""
    done = 0
    for _ in range(ticks):
        if "observations" not in holder or not env.agents:
            holder["observations"], _ = env.reset(seed=int(rng.integers(2**31)))
        agents = env.agents
        masks = env.action_masks()  # the observations' masks, already stacked in agents order
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
            actions = dict(
                zip(agents, rng.integers(env.action_space(agents[0]).n, size=len(agents)).tolist())
            )
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
    ticks = {map_name: [] for map_name in ("small", "default")}

    def episode(game, ticks_of_map):
        state = play_episode(
            game.new_initial_state(seed=int(rng.integers(2**31))), "doctrine", "random", rng
        )
        ticks_of_map.append(state.battle.tick)

    commander = {}
    for map_name, ticks_of_map in ticks.items():
        game = hiddenenvs.load_game("combat", map=map_name)
        commander[map_name] = lambda game=game, ticks_of_map=ticks_of_map: episode(
            game, ticks_of_map
        )
    episodes_per_second = interleaved_rates(args.seconds, commander)
    for map_name, rate in episodes_per_second.items():
        print(f"{map_name:<10}{rate:>12.1f}{rate * np.mean(ticks[map_name]):>12.0f}")

    contenders = {}
    for team_size in (10, 80):
        agents = 2 * team_size
        env = hiddenenvs.make_parallel("combat", mode="fighter", team_size=team_size)
        game = hiddenenvs.load_game("combat", mode="fighter", team_size=team_size)
        env_holder, model_holder = {}, {}  # each contender's episode in progress
        contenders[f"ours, parallel env, {agents} agents"] = lambda env=env, holder=env_holder: (
            parallel_random_steps(env, rng, holder)
        )
        contenders[f"ours, game model, {agents} agents"] = lambda game=game, holder=model_holder: (
            model_random_steps(game, rng, holder)
        )
    vectorised_label = sampled_label = None
    try:
        from magent2.environments import battle_v4

        peer_env = battle_v4.parallel_env(map_size=45, max_cycles=1000)
        peer_env.reset(seed=0)
        vectorised_label = f"MAgent2 battle_v4, {len(peer_env.agents)} agents, vectorised"
        sampled_label = f"MAgent2 battle_v4, {len(peer_env.agents)} agents, sample()"
        contenders[vectorised_label] = lambda: magent2_steps(peer_env, rng, use_sample=False)
        contenders[sampled_label] = lambda: magent2_steps(peer_env, rng, use_sample=True)
    except ImportError as error:
        print(f"\npeer magent2 not installed ({error}); pip install magent2 to measure it here")
    rates = interleaved_rates(args.seconds, contenders)

    print("\nfighter mode (default map, random legal actions), agent-steps/s")
    print(f"{'what':<46}{'agent-steps/s':>14}{'vs MAgent2':>12}")
    reference = rates.get(vectorised_label, MAGENT2_QUOTED_AGENT_STEPS_PER_SECOND)
    for label, rate in rates.items():
        print(f"{label:<46}{rate:>14,.0f}{rate / reference:>11.2f}x")
    if vectorised_label is None:
        print(
            f"{'MAgent2 battle, 160 agents (QUOTED, not measured)':<46}"
            f"{MAGENT2_QUOTED_AGENT_STEPS_PER_SECOND:>14,.0f}{1:>11.2f}x"
        )


if __name__ == "__main__":
    main()

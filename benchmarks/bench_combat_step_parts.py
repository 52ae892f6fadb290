"""Where a combat fighter-mode parallel step spends its time: per-call timers over the
loop ``bench_combat.py`` times (random legal actions drawn from the masks at once), with
``env.step`` taken apart into the calls it makes (the adapter's internals, so this
script follows them when they change). CPU time per tick (``time.process_time``, which
other jobs' load inflates less than wall time), 20 and 160 agents; each timer adds about
a microsecond of its own.

    python benchmarks/bench_combat_step_parts.py [--seconds 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import hiddenenvs
from hiddenenvs._adapters import parallel_step_dicts


def step_parts(team_size: int, seconds: float) -> tuple[int, dict[str, float]]:
    env = hiddenenvs.make_parallel("combat", mode="fighter", team_size=team_size)
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    totals: dict[str, float] = {}
    ticks = 0

    def lap(name: str, start: float) -> float:
        now = time.process_time()
        totals[name] = totals.get(name, 0.0) + now - start
        return now

    end = time.process_time() + seconds
    while time.process_time() < end:
        if not env.agents:
            env.reset(seed=int(rng.integers(2**31)))
        agents = env.agents
        t = time.process_time()
        masks = env.action_masks()
        t = lap("loop: the stacked masks", t)
        actions = dict(zip(agents, (rng.random(masks.shape) * masks).argmax(axis=1).tolist()))
        t = lap("loop: draw the actions, their dict", t)
        # env.step for a fighter-mode tick, call by call
        state = env.game_state
        joint = env._joint_action(actions, {})
        t = lap("step: check the actions (compiled)", t)
        state._apply_actions(joint)
        t = lap("step: the fused tick and its arrays", t)
        step_rewards = env._add_rewards(None)
        env._resolve_automatic_nodes()
        done = state.is_terminal()
        t = lap("step: rewards, node and end tests", t)
        env._masks = None
        node_masks = env._node_masks()
        rows = list(env._tensors_of_all(state))
        finished = None if done else set(state.finished_players())
        mask_rows = env._mask_rows(node_masks)
        t = lap("step: masks, tensor rows, finished", t)
        result = parallel_step_dicts(
            agents,
            env.agent_to_player,
            rows,
            mask_rows,
            step_rewards.tolist(),
            done,
            finished,
            False,
        )
        t = lap("step: the five dicts (compiled)", t)
        if len(result[5]) != len(agents):
            env.agents = result[5]
        ticks += 1
    return ticks, totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per team size")
    args = parser.parse_args()
    for team_size in (10, 80):
        ticks, totals = step_parts(team_size, args.seconds)
        print(f"\n{2 * team_size} agents, {ticks:,} ticks: CPU microseconds per tick")
        for name, total in totals.items():
            print(f"  {name:<42}{total / ticks * 1e6:>8.1f}")
        print(f"  {'all':<42}{sum(totals.values()) / ticks * 1e6:>8.1f}")


if __name__ == "__main__":
    main()

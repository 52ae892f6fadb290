"""Smoke test of an installed wheel (run by .ci/wheel_smoke.sh outside the checkout, in a
venv with no C compiler), in two stages:

- ``python wheel_smoke.py envs``, on the base install (no extras, so no torch): every
  registered env is made through PettingZoo's registry, reset, and played to the end with
  random legal actions, as an AEC env and, where the game has simultaneous moves, as a
  parallel env too;
- ``python wheel_smoke.py train``, once the ``train`` extra is installed: the ``hiddenenvs``
  command trains the shipped quickstart config briefly.
"""

import importlib.util
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pettingzoo

import hiddenenvs
from hiddenenvs import pettingzoo_env
from hiddenenvs.registry import REGISTRY

# The registered env that plays nothing without a rule sheet: give it a shipped one.
REQUIRED_PARAMS = {"gdl": {"sheet": "tictactoe"}}
MAX_AGENT_STEPS = 5000  # combat's default map ends (timeout) well within this


def check_installed_wheel() -> None:
    assert pettingzoo_env.COMPILED, "the wheel should carry the compiled adapters"
    assert not any(shutil.which(name) for name in ("cc", "gcc", "clang")), "a C compiler is on PATH"
    assert "site-packages" in hiddenenvs.__file__, (
        f"hiddenenvs from {hiddenenvs.__file__}, not the wheel"
    )


def random_action(mask: np.ndarray, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


def play_aec(name: str, rng: np.random.Generator) -> int:
    env = pettingzoo.make("aec", hiddenenvs.pettingzoo_id(name), **REQUIRED_PARAMS.get(name, {}))
    env.reset(seed=0)
    steps = 0
    for _ in env.agent_iter(max_iter=MAX_AGENT_STEPS):
        observation, _, termination, truncation, _ = env.last()
        done = termination or truncation
        env.step(None if done else random_action(observation["action_mask"], rng))
        steps += 1
    assert not env.agents, f"{name} (AEC): not over after {MAX_AGENT_STEPS} agent steps"
    env.close()
    return steps


def play_parallel(name: str, rng: np.random.Generator) -> int:
    params = REQUIRED_PARAMS.get(name, {})
    env = pettingzoo.make("parallel", hiddenenvs.pettingzoo_id(name), **params)
    observations, _ = env.reset(seed=0)
    steps = 0
    while env.agents and steps < MAX_AGENT_STEPS:
        actions = {
            agent: random_action(observations[agent]["action_mask"], rng) for agent in env.agents
        }
        observations, *_ = env.step(actions)
        steps += 1
    assert not env.agents, f"{name} (parallel): not over after {MAX_AGENT_STEPS} steps"
    env.close()
    return steps


def smoke_envs() -> None:
    """Every registered env on the base install: no torch, no extras."""
    assert importlib.util.find_spec("torch") is None, "torch is installed: not the base install"
    rng = np.random.default_rng(0)
    for name in REGISTRY:
        line = f"wheel smoke: {name}: AEC {play_aec(name, rng)} agent steps"
        if pettingzoo_env.PETTINGZOO_ENVS.get(name, (0, False))[1]:
            line += f", parallel {play_parallel(name, rng)} steps"
        print(line)


def smoke_train() -> None:
    """The shipped quickstart config through the ``hiddenenvs`` command, briefly."""
    with tempfile.TemporaryDirectory() as folder:  # outside any checkout: the shipped config
        command = [
            str(Path(sys.executable).with_name("hiddenenvs")),
            "train",
            "--config",
            "quickstart",
            "budget.episodes=300",
            "budget.seconds=60",
            "evaluation.every_episodes=300",
            "checkpoint_every_episodes=300",
            "num_envs=4",
            f"output_dir={folder}/run",
        ]
        subprocess.run(command, cwd=folder, check=True)
        assert (Path(folder) / "run" / "metrics.csv").is_file()


STAGES = {"envs": smoke_envs, "train": smoke_train}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in STAGES:
        sys.exit(f"usage: python wheel_smoke.py {{{','.join(STAGES)}}}")
    check_installed_wheel()
    STAGES[sys.argv[1]]()
    print(f"wheel smoke ({sys.argv[1]}): ok")

"""Smoke test of an installed wheel (run by .ci/run outside the checkout, in a venv with no
C compiler): an env of each family plays a random episode through PettingZoo's registry,
and the ``hiddenenvs`` command trains the shipped quickstart config briefly."""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pettingzoo

import hiddenenvs
from hiddenenvs import pettingzoo_env

assert pettingzoo_env.COMPILED, "the wheel should carry the compiled adapters"
assert not any(shutil.which(name) for name in ("cc", "gcc", "clang")), "a C compiler is on PATH"
assert "site-packages" in hiddenenvs.__file__, (
    f"hiddenenvs from {hiddenenvs.__file__}, not the wheel"
)

FAMILIES = {  # one env per family: poker, matrix, simultaneous cards, dice, board, combat, GDL
    "kuhn_poker": {},
    "leduc_holdem": {},
    "rps": {},
    "goofspiel": {"imp_info": True},
    "liars_dice": {},
    "othello": {"board_size": 6},
    "combat": {"map": "small"},
    "monty_hall": {},
}
rng = np.random.default_rng(0)
for name, params in FAMILIES.items():
    env = pettingzoo.make("aec", hiddenenvs.pettingzoo_id(name), **params)
    env.reset(seed=0)
    steps = 0
    for _ in env.agent_iter(max_iter=2000):
        observation, _, termination, truncation, _ = env.last()
        mask = observation["action_mask"]
        env.step(None if termination or truncation else int(rng.choice(np.flatnonzero(mask))))
        steps += 1
    print(f"wheel smoke: {name} played {steps} agent steps; state {env.state().shape}")

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
print("wheel smoke: ok")

"""Smoke test of an installed wheel (run by .ci/wheel_smoke.sh outside the checkout, in a
venv with no C compiler), in two stages:

- ``python wheel_smoke.py envs``, on the base install (no extras, so no torch): every
  registered env is made through PettingZoo's registry, reset, and played to the end with
  random legal actions, as an AEC env and, where the game has simultaneous moves, as a
  parallel env too; then random games of Kuhn poker and Meier go into a results store and
  ``hiddenenvs leaderboard export`` writes its site (the style sheet and script come from
  the wheel's ``agents/leaderboard/site_static/``; every match page replays its match);
- ``python wheel_smoke.py train``, once the ``train`` extra is installed: the ``hiddenenvs``
  command trains the shipped quickstart config briefly, ``hiddenenvs evaluate --html``
  puts the run on a board against ``random``, and the run's agent page shows the run.
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


def hiddenenvs_command(*arguments: str, cwd: str) -> None:
    subprocess.run(
        [str(Path(sys.executable).with_name("hiddenenvs")), *arguments], cwd=cwd, check=True
    )


def store_random_games(db: Path, rng: np.random.Generator) -> None:
    """Two random games of Kuhn poker and one of Meier in a results store, as evaluate.py
    keeps them (the action of every step, None for a finished agent's)."""
    from agents.leaderboard.matches import EnvVariant
    from agents.leaderboard.store import MatchKey, MatchResult, ResultStore

    with ResultStore(db) as store:
        for name, index in (("kuhn_poker", 0), ("kuhn_poker", 1), ("meier", 0)):
            variant = EnvVariant.resolve(name, {})
            env = hiddenenvs.make(name)
            env.reset(seed=index)
            actions: list[int | None] = []
            totals = dict.fromkeys(env.possible_agents, 0.0)
            for _ in env.agent_iter():
                observation, _, termination, truncation, _ = env.last()
                action = (
                    None
                    if termination or truncation
                    else random_action(observation["action_mask"], rng)
                )
                env.step(action)
                actions.append(action)
                for agent, reward in env.rewards.items():
                    totals[agent] += reward
            key = MatchKey(name, variant.params_json, ("random", "uniform"), 0, index)
            returns = tuple(totals[agent] for agent in env.possible_agents)
            store.add(MatchResult(key, index, returns, 0.0, tuple(actions)))


def smoke_site(folder: Path) -> None:
    """``hiddenenvs leaderboard export`` of a store of random games, on the base install."""
    from agents.leaderboard import site

    static = [path.name for path in site.STATIC.iterdir()]
    assert "site-packages" in str(site.STATIC) and {"site.css", "site.js"} <= set(static), static
    db = folder / "board.sqlite"
    store_random_games(db, np.random.default_rng(1))
    hiddenenvs_command("leaderboard", "export", str(db), str(folder / "site"), cwd=str(folder))
    board = (folder / "site" / "kuhn_poker" / "index.html").read_text()
    assert "Matches (2)" in board and "Sortable tables" in board, "the site's script is missing"
    for page in (folder / "site").glob("*/match-*.html"):
        text = page.read_text()
        assert "id='replay-data'" in text and "class='warning'" not in text, page
    print(f"wheel smoke: leaderboard export: {len(list((folder / 'site').rglob('*.html')))} pages")


def smoke_envs() -> None:
    """Every registered env on the base install: no torch, no extras."""
    assert importlib.util.find_spec("torch") is None, "torch is installed: not the base install"
    rng = np.random.default_rng(0)
    for name in REGISTRY:
        line = f"wheel smoke: {name}: AEC {play_aec(name, rng)} agent steps"
        if pettingzoo_env.PETTINGZOO_ENVS.get(name, (0, False))[1]:
            line += f", parallel {play_parallel(name, rng)} steps"
        print(line)
    with tempfile.TemporaryDirectory() as folder:
        smoke_site(Path(folder))


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
        # The run on a board against random, with the site: its agent page shows the run.
        hiddenenvs_command(
            "evaluate", "--env", "kuhn_poker", "--agents", "random", "run", "--games", "2",
            "--workers", "1", "--db", "board.sqlite", "--out", "tables", "--html", "site",
            "--quiet", cwd=folder,
        )  # fmt: skip
        pages = [p.read_text() for p in (Path(folder) / "site" / "kuhn_poker").glob("agent-*.html")]
        (run_page,) = [page for page in pages if "Training run" in page]
        assert "nfsp on kuhn_poker" in run_page and "<svg class='curve'" in run_page
        print("wheel smoke: evaluate --html: the run's page shows its config and curve")


STAGES = {"envs": smoke_envs, "train": smoke_train}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in STAGES:
        sys.exit(f"usage: python wheel_smoke.py {{{','.join(STAGES)}}}")
    check_installed_wheel()
    STAGES[sys.argv[1]]()
    print(f"wheel smoke ({sys.argv[1]}): ok")

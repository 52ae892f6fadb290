"""What the package promises its users: envs without torch, one version, the ``hiddenenvs``
command and its shipped configs."""

import os
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

import hiddenenvs
from agents import cli

ROOT = Path(__file__).resolve().parent.parent


def run_python(code: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *kwargs.pop("flags", []), "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        **kwargs,
    )


def test_the_version_has_one_source():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "hiddenenvs.__version__"}
    assert f"## {hiddenenvs.__version__}" in (ROOT / "CHANGELOG.md").read_text()


def test_torch_is_only_in_the_train_extra():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not any(requirement.startswith("torch") for requirement in project["dependencies"])
    assert any(
        requirement.startswith("torch") for requirement in project["optional-dependencies"]["train"]
    )


# hiddenenvs modules that exist to hand envs to a torch library, and import it.
TORCH_LIBRARY_ADAPTERS = ("hiddenenvs.vector.sb3_env",)  # Stable-Baselines3's VecEnv


def test_importing_every_hiddenenvs_module_never_imports_torch():
    """Apart from the adapters to torch libraries (which need their library anyway)."""
    result = run_python(
        "import importlib, pkgutil, sys, hiddenenvs\n"
        "for module in pkgutil.walk_packages(hiddenenvs.__path__, 'hiddenenvs.'):\n"
        f"    if not module.name.endswith('__main__') and module.name not in {TORCH_LIBRARY_ADAPTERS!r}:\n"
        "        importlib.import_module(module.name)\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] in ('torch', 'agents')))\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@pytest.fixture(scope="module")
def site_without_torch(tmp_path_factory):
    """A copy of site-packages (as links) without torch, for a Python run with -S."""
    site = Path(sysconfig.get_paths()["purelib"])
    folder = tmp_path_factory.mktemp("site_without_torch")
    for entry in site.iterdir():
        if (
            not entry.name.lower().startswith(("torch", "__editable__", "_hiddenenvs"))
            and entry.suffix != ".pth"
        ):
            (folder / entry.name).symlink_to(entry)
    return folder


def test_the_envs_work_without_torch_and_a_trainer_names_the_extra(site_without_torch):
    """Without torch installed, hiddenenvs makes and plays envs; importing a trainer says
    which extra to install, not a bare "No module named 'torch'"."""
    environment = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{site_without_torch}"}
    result = run_python(
        "import hiddenenvs, pettingzoo\n"
        "env = pettingzoo.make('aec', 'hiddenenvs/leduc_holdem-v0')\n"
        "env.reset(seed=0)\n"
        "print(env.state().shape)\n"
        "try:\n"
        "    import agents.nfsp\n"
        "except ModuleNotFoundError as error:\n"
        "    print(error)\n",
        flags=["-S"],
        env=environment,
    )
    assert result.returncode == 0, result.stderr
    shape, message = result.stdout.strip().splitlines()
    assert shape == "(64,)"
    assert (
        message.startswith("No module named 'torch'")
        and "pip install 'hiddenenvs[train]'" in message
    )


def test_config_names_resolve_to_shipped_configs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no configs/ here: the package's own
    assert Path(cli.resolve_config("quickstart")) == ROOT / "configs" / "quickstart.yaml"
    assert set(cli.shipped_configs()) == {path.stem for path in (ROOT / "configs").glob("*.yaml")}
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "quickstart.yaml").write_text("seed: 1\n")
    assert cli.resolve_config("quickstart") == str(
        Path("configs") / "quickstart.yaml"
    )  # the user's first
    assert cli.resolve_config("my/run.yaml") == "my/run.yaml"  # a path stays a path
    assert cli._with_resolved_config(["--config=nfsp_kuhn", "seed=3"]) == [
        f"--config={ROOT / 'configs' / 'nfsp_kuhn.yaml'}",
        "seed=3",
    ]
    with pytest.raises(
        SystemExit, match="no config named 'quickstrat'.*shipped configs: .*quickstart"
    ):
        cli.resolve_config("quickstrat")


def test_the_command_lists_its_subcommands_and_refuses_others(capsys):
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"hiddenenvs {hiddenenvs.__version__}"
    assert cli.main(["--help"]) == 0
    usage = capsys.readouterr().out
    assert all(command in usage for command in cli.COMMANDS)
    assert cli.main(["trian"]) == 2
    assert "no command 'trian'" in capsys.readouterr().err


@pytest.mark.slow  # a minute on a busy 2-core machine, most of it loading torch
def test_hiddenenvs_train_runs_a_shipped_config_by_name(tmp_path):
    """The console command's path end to end (python -m agents.cli is what the ``hiddenenvs``
    script runs), outside the checkout: a few hundred episodes of the quickstart."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "agents.cli",
            "train",
            "--config",
            "quickstart",
            "budget.episodes=200",
            "budget.seconds=60",
            "evaluation.every_episodes=200",
            "checkpoint_every_episodes=200",
            "num_envs=4",
            f"output_dir={tmp_path / 'run'}",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert (tmp_path / "run" / "metrics.csv").is_file()


def test_the_install_guide_lists_every_compiled_module():
    guide = (ROOT / "docs" / "guides" / "install.md").read_text()
    listed = guide.split("<!-- compiled-modules -->\n", 1)[1].split("\n\n", 1)[0]
    modules = sorted(
        str(path.relative_to(ROOT))
        for package in ("hiddenenvs", "agents")
        for path in (ROOT / package).rglob("*.pyx")
    )
    assert listed.splitlines() == [f"- `{module}`" for module in modules]

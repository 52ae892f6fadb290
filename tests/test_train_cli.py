"""train.py: validated configs with helpful errors, shipped configs, outputs of a tiny run."""

import csv
import time
from pathlib import Path

import numpy as np
import pytest

import train
from agents import load_agent
from agents.capabilities import check_run_data
from agents.config import TRAINERS, ConfigError, config_data, load_config

REPO = Path(__file__).resolve().parent.parent
CONFIGS = sorted((REPO / "configs").glob("*.yaml"))


@pytest.mark.parametrize("path", CONFIGS, ids=[p.name for p in CONFIGS])
def test_shipped_configs_validate(path):
    config = load_config(path)
    assert config.trainer.name in TRAINERS
    check_run_data(
        config_data(path)
    )  # the trainer fits the env (and an exact evaluation, the tree)


def test_quickstart_and_issue_configs_exist():
    names = {p.name for p in CONFIGS}
    assert {
        "quickstart.yaml",
        "nfsp_kuhn.yaml",
        "nfsp_leduc.yaml",
        "nfsp_matching_pennies.yaml",
        "nfsp_rps.yaml",
        "cfr_leduc.yaml",
    } <= names


@pytest.mark.parametrize(
    "override, message",
    [
        (
            "budget.episodez=5",
            "unknown key(s) ['budget.episodez']; allowed keys of budget: ['episodes', 'iterations', 'seconds']",
        ),
        ("trainer.params.learning_rate=0.1", "trainer.params.learning_rate"),
        ("trainer.params.anticipatory=2", "anticipatory must be in [0, 1]"),
        ("seed=abc", "seed must be int, got 'abc'"),
        ("num_envs=0", "num_envs must be >= 1"),
        ("trainer.name=ppo", f"unknown trainer 'ppo'; allowed: {sorted(TRAINERS)}"),
        ("env.name=chess", "unknown env 'chess'"),
        ("evaluation.exact=maybe", "evaluation.exact must be one of"),
        ("nonsense", "must look like key=value"),
    ],
)
def test_bad_config_errors_name_the_key(override, message):
    with pytest.raises(ConfigError) as error:
        load_config(REPO / "configs" / "nfsp_kuhn.yaml", [override])
    assert message in str(error.value)


@pytest.mark.parametrize(
    "raw, meaning", [("yes", "yes"), ("no", "no"), ('"yes"', "yes"), ("auto", "auto")]
)
def test_exact_evaluation_reads_yaml_booleans(raw, meaning):
    # YAML 1.1 reads an unquoted yes / no as a boolean; both spellings mean the same.
    config = load_config(REPO / "configs" / "nfsp_kuhn.yaml", [f"evaluation.exact={raw}"])
    assert config.evaluation.exact == meaning


def test_allowed_trainer_keys_are_listed():
    with pytest.raises(ConfigError, match="allowed keys of trainer.params: .*'anticipatory'"):
        load_config(None, ["trainer.params.eta=0.1"])


def test_cli_reports_config_errors(capsys):
    assert (
        train.main(["--config", str(REPO / "configs" / "nfsp_kuhn.yaml"), "budget.episodez=5"]) == 2
    )
    assert "budget.episodez" in capsys.readouterr().err
    assert train.main(["--resume", "/nonexistent-run-dir"]) == 2


def test_a_run_needs_no_yaml_file_when_it_names_its_trainer_and_env(tmp_path, capsys):
    """Without --config a run starts from the config defaults: trainer.name and env.name
    must then be among the overrides (a new trainer trains before it ships a YAML file)."""
    with pytest.raises(SystemExit) as refused:
        train.main(["trainer.name=cfr+", "budget.iterations=2"])
    assert refused.value.code == 2
    assert "env.name=..." in capsys.readouterr().err
    status = train.main(
        [
            "trainer.name=cfr+",
            "env.name=kuhn_poker",
            "budget.iterations=30",
            f"output_dir={tmp_path}",
            "progress_bar=false",
        ]
    )
    assert status == 0
    assert "cfr+ on kuhn_poker: 0 episodes, 30 iterations" in capsys.readouterr().out
    assert (tmp_path / "checkpoint.pt").exists()


def test_a_ray_address_nobody_listens_at_ends_the_run_in_one_line(tmp_path, capsys):
    """NFSP's workers on a cluster that is not there: one line naming the address, exit 1;
    overrides may come before and after --address."""
    pytest.importorskip("ray")
    status = train.main(
        [
            "--config",
            "nfsp_kuhn",
            "trainer.params.workers=2",
            "--address",
            "127.0.0.1:1",
            f"output_dir={tmp_path}",
            "progress_bar=false",
        ]
    )
    error = capsys.readouterr().err
    assert status == 1
    assert "ray_address='127.0.0.1:1': no Ray cluster there" in error
    assert "Traceback" not in error


def test_tiny_run_writes_every_output_and_resumes(tmp_path, capsys):
    out = tmp_path / "run"
    arguments = [
        "--config",
        str(REPO / "configs" / "nfsp_matching_pennies.yaml"),
        f"output_dir={out}",
        "budget.episodes=600",
        "evaluation.every_episodes=200",
        "progress_bar=false",
        "trainer.params.min_buffer_size=50",
    ]
    assert train.main(arguments) == 0
    for name in (
        "checkpoint.pt",
        "metrics.csv",
        "metrics.png",
        "policy_player0.pt",
        "policy_player1.pt",
    ):
        assert (out / name).is_file(), name
    assert any((out / "tensorboard").iterdir())
    rows = (out / "metrics.csv").read_text().splitlines()
    assert rows[0].startswith("episodes,iterations,wall_seconds,episodes_per_second")
    assert [row.split(",")[0] for row in rows[1:]] == ["0", "200", "400", "600"]
    agent = load_agent(str(out), "matching_pennies", player=1)
    probabilities = agent.policy_probabilities(np.zeros(6, dtype=np.float32), np.array([1, 1]))
    assert probabilities.shape == (2,) and probabilities.sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="trained on matching_pennies, not rps"):
        load_agent(str(out), "rps")
    # Resuming with a larger budget continues from episode 600.
    assert train.main(["--resume", str(out), "budget.episodes=800", "progress_bar=false"]) == 0
    rows = (out / "metrics.csv").read_text().splitlines()
    assert [row.split(",")[0] for row in rows[1:]] == ["0", "200", "400", "600", "800"]
    assert "800 episodes" in capsys.readouterr().out


def test_cfr_leduc_config_trains_below_1e_3_and_resumes(tmp_path, capsys):
    """CFR+ is a trainer of the common loop: iterations as its unit, exact exploitability."""
    out = tmp_path / "cfr"
    base = [
        "--config",
        str(REPO / "configs" / "cfr_leduc.yaml"),
        f"output_dir={out}",
        "progress_bar=false",
    ]
    assert train.main(base + ["budget.iterations=300", "checkpoint_every_iterations=100"]) == 0
    rows = (out / "metrics.csv").read_text().splitlines()
    header = rows[0].split(",")
    iterations = [int(r.split(",")[header.index("iterations")]) for r in rows[1:]]
    assert iterations == list(range(0, 301, 50))
    assert train.main(["--resume", str(out), "budget.iterations=600", "progress_bar=false"]) == 0
    rows = (out / "metrics.csv").read_text().splitlines()[1:]
    exploitability = [float(r.split(",")[header.index("exploitability")]) for r in rows]
    assert len(rows) == 13 and exploitability[-1] < 1e-3 < exploitability[0]
    # The resumed run equals one never interrupted.
    straight = tmp_path / "straight"
    assert (
        train.main(
            [
                "--config",
                str(REPO / "configs" / "cfr_leduc.yaml"),
                f"output_dir={straight}",
                "progress_bar=false",
                "budget.iterations=600",
            ]
        )
        == 0
    )
    resumed = load_agent(str(out), "leduc_holdem", player=0)
    uninterrupted = load_agent(str(straight), "leduc_holdem", player=0)
    for key, row in uninterrupted.table.items():
        np.testing.assert_allclose(resumed.table[key], row, rtol=0, atol=1e-12)
    assert "600 iterations" in capsys.readouterr().out


def test_a_trainer_that_does_not_fit_is_refused_in_one_line(capsys):
    arguments = [
        "--config",
        str(REPO / "configs" / "cfr_kuhn.yaml"),
        "env.name=combat",
        "output_dir=unused",
    ]
    assert train.main(arguments) == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error
    assert error.startswith(
        "train.py: trainer cfr cannot train on combat: it needs chance outcomes with probabilities"
    )
    assert (
        "Trainers that fit combat: nfsp, anfsp, mcnfsp (trainer.params.search_from: true_state)"
        in error
    )


def test_list_prints_the_trainers_that_fit(capsys):
    assert train.main(["--list", "combat", "--param", "mode=fighter"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("combat(mode='fighter'): 20 player(s), simultaneous, chance sampled")
    assert "  fits: nfsp, anfsp\n" in out
    assert "  cfr: needs chance outcomes with probabilities" in out


def test_a_run_that_trains_nothing_exits_1_and_says_why(tmp_path, capsys):
    # The budget is spent before the first step: start-up alone takes longer than a microsecond.
    arguments = [
        "--config",
        str(REPO / "configs" / "nfsp_kuhn.yaml"),
        f"output_dir={tmp_path}",
        "budget.episodes=null",
        "budget.seconds=0.000001",
        "progress_bar=false",
    ]
    assert train.main(arguments) == 1
    error = capsys.readouterr().err
    assert "nfsp on kuhn_poker trained nothing" in error and "raise budget.seconds" in error


def test_a_time_budget_ends_with_a_final_evaluation_and_checkpoint(tmp_path):
    """A seconds budget: the last metrics row is the final state, checkpointed, its policies exported."""
    from agents.checkpoint import load_checkpoint

    arguments = [
        "--config",
        str(REPO / "configs" / "nfsp_kuhn.yaml"),
        f"output_dir={tmp_path}",
        "budget.episodes=null",
        "budget.seconds=4",
        "evaluation.every_episodes=100000",
        "progress_bar=false",
    ]
    assert train.main(arguments) == 0
    rows = (tmp_path / "metrics.csv").read_text().splitlines()
    header = rows[0].split(",")
    last = dict(zip(header, rows[-1].split(",")))
    loop = load_checkpoint(tmp_path / "checkpoint.pt")["loop"]
    assert int(last["episodes"]) == loop["episodes"] > 0 and last["exploitability"]
    assert (tmp_path / "policy_player0.pt").exists() and (tmp_path / "policy_player1.pt").exists()


# The flagship envs' configs (combat, the GDL-II sheets): the other configs' trainers and envs
# are trained by their own tests and by the matrix.
# ReBeL's Meier and blind tic-tac-toe configs are trained (two games, then matched against the
# table bots) by tests/test_rebel.py.
TRAINED_BY_THEIR_TESTS = {"rebel_meier", "rebel_blind_tictactoe", "rebel_biased_blind_tictactoe"}
FLAGSHIP_CONFIGS = [
    p
    for p in CONFIGS
    if any(name in p.stem for name in ("combat", "meier", "tictactoe", "monty"))
    and p.stem not in TRAINED_BY_THEIR_TESTS
]


@pytest.mark.slow
@pytest.mark.parametrize("path", FLAGSHIP_CONFIGS, ids=[p.name for p in FLAGSHIP_CONFIGS])
def test_every_flagship_config_trains_one_step(path, tmp_path):
    """Each flagship config, shrunk to one step and a short evaluation, trains and exits 0."""
    from agents.loop import train as run

    config = load_config(
        path,
        [
            f"output_dir={tmp_path}",
            "budget.episodes=null",
            "budget.iterations=1",
            "budget.seconds=600",
            "evaluation.episodes_vs_random=4",
            "evaluation.max_seconds=30",
            "progress_bar=false",
        ],
    )
    result = run(config)
    assert result["iterations"] >= 1 and (tmp_path / "checkpoint.pt").exists()


def test_a_step_past_the_deadline_still_leaves_a_final_evaluation(tmp_path, monkeypatch):
    """A step that cannot be cut runs past budget.seconds: the final evaluation still
    finishes an episode in every seat, however slow the process (a reserve in seconds came
    up empty once on a starved CI machine), so the last metrics row is not empty."""
    from agents.loop import train as run
    from agents.nfsp import NFSP

    step = NFSP.step

    def overrunning_step(self, loop):
        report = step(self, loop)
        time.sleep(max(0.0, loop.deadline - time.perf_counter()) + 2.0)  # past the whole budget
        return report

    monkeypatch.setattr(NFSP, "step", overrunning_step)
    config = load_config(
        REPO / "configs" / "nfsp_kuhn.yaml",
        [
            f"output_dir={tmp_path}",
            "budget.episodes=null",
            "budget.seconds=10",
            "evaluation.exact=no",
            "evaluation.episodes_vs_random=200",
            "progress_bar=false",
            "vector_self_play=false",  # the patched step is the trainer's own, not the loop's
        ],
    )
    result = run(config)
    assert result["wall_seconds"] > 10
    assert result["last_evaluation"]["evaluation_episodes"] > 0
    assert result["last_evaluation"]["return_vs_random"] is not None


def test_every_evaluated_seat_plays_an_episode_however_short_its_share(tmp_path, monkeypatch):
    """An evaluation whose share per seat is shorter than one episode (combat commander on a
    20 s budget: its 2 s cap) still plays one episode in every seat, past the cap, while the
    budget lasts: every metrics row has a metric."""
    from agents import RandomAgent
    from agents.loop import train as run

    act_batch = RandomAgent.act_batch

    def slow_act_batch(self, *arguments, **keywords):
        time.sleep(0.3)  # one Kuhn episode: at least 0.3 s, the evaluation's cap 0.1 s
        return act_batch(self, *arguments, **keywords)

    monkeypatch.setattr(RandomAgent, "act_batch", slow_act_batch)
    config = load_config(
        REPO / "configs" / "nfsp_kuhn.yaml",
        [
            f"output_dir={tmp_path}",
            "budget.episodes=64",
            "budget.seconds=300",
            "evaluation.every_episodes=32",
            "checkpoint_every_episodes=32",
            "evaluation.exact=no",
            "evaluation.episodes_vs_random=1000",
            "evaluation.max_seconds=0.1",
            "num_envs=8",
            "progress_bar=false",
        ],
    )
    result = run(config)
    rows = list(csv.DictReader((tmp_path / "metrics.csv").open()))
    assert [int(row["episodes"]) for row in rows] == [0, 32, 64]
    assert all(int(row["evaluation_episodes"]) >= 2 for row in rows)  # both seats
    assert all(row["return_vs_random"] != "" for row in rows)
    assert result["last_evaluation"]["return_vs_random"] is not None


def test_a_config_is_read_once_and_validated_once(tmp_path, monkeypatch, capsys):
    import agents.config

    calls = {"resolve_config_path": 0, "trainer_config": 0}

    def counted(name):
        original = getattr(agents.config, name)

        def count(*arguments, **keywords):
            calls[name] += 1
            return original(*arguments, **keywords)

        monkeypatch.setattr(agents.config, name, count)

    counted("resolve_config_path")
    counted("trainer_config")
    arguments = ["--config", "cfr_kuhn", f"output_dir={tmp_path}", "budget.iterations=2"]
    arguments += ["evaluation.every_iterations=1", "progress_bar=false"]
    assert train.main(arguments) == 0
    assert calls == {"resolve_config_path": 1, "trainer_config": 1}  # train.py, then the loop
    # --address amends the values read, without reading the file again.
    calls.update(resolve_config_path=0, trainer_config=0)
    arguments = ["--config", "anfsp_kuhn", "num_envs=0", "--address", "auto"]
    assert train.main(arguments) == 2
    assert "num_envs must be >= 1" in capsys.readouterr().err
    assert calls["resolve_config_path"] == 1


# ---- run directories: never overwritten, resumed only as the same run ----------------------------
def _cfr_kuhn_run(out, *overrides):
    arguments = [
        "--config",
        "cfr_kuhn",
        f"output_dir={out}",
        "budget.iterations=20",
        "evaluation.every_iterations=10",
        "checkpoint_every_iterations=10",
        "progress_bar=false",
    ]
    return train.main(arguments + list(overrides))


def _one_line(capsys) -> str:
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and "Traceback" not in error, error
    return error


def test_a_second_run_into_a_run_directory_is_refused_and_the_first_kept(tmp_path, capsys):
    out = tmp_path / "run"
    assert _cfr_kuhn_run(out) == 0
    capsys.readouterr()
    before = {path.name: path.read_bytes() for path in out.iterdir() if path.is_file()}
    assert _cfr_kuhn_run(out, "seed=3") == 2
    error = _one_line(capsys)
    assert "already holds a run" in error and f"--resume {str(out)!r}" in error
    assert {path.name: path.read_bytes() for path in out.iterdir() if path.is_file()} == before


@pytest.mark.parametrize(
    "override, changed",
    [
        ("trainer.name=nfsp", "trainer.name 'cfr' -> 'nfsp'"),
        ("env.name=leduc_holdem", "env.name 'kuhn_poker' -> 'leduc_holdem'"),
        ("env.params.deck_size=5", "env.params {} -> {'deck_size': 5}"),
    ],
)
def test_resume_refuses_another_env_or_trainer_in_one_line(tmp_path, capsys, override, changed):
    out = tmp_path / "run"
    assert _cfr_kuhn_run(out) == 0
    capsys.readouterr()
    assert train.main(["--resume", str(out), override, "budget.iterations=40"]) == 2
    error = _one_line(capsys)
    assert "that run is cfr on kuhn_poker" in error and changed in error


def test_resume_refuses_a_learner_state_that_does_not_fit_in_one_line(tmp_path, capsys):
    out = tmp_path / "run"
    arguments = [
        "--config",
        str(REPO / "configs" / "nfsp_matching_pennies.yaml"),
        f"output_dir={out}",
        "budget.episodes=64",
        "evaluation.every_episodes=64",
        "checkpoint_every_episodes=64",
        "progress_bar=false",
    ]
    assert train.main(arguments) == 0
    capsys.readouterr()
    resume = ["--resume", str(out), "budget.episodes=128", "trainer.params.hidden_sizes=[4]"]
    assert train.main(resume) == 2
    assert "does not fit this run's trainer.params" in _one_line(capsys)


def test_a_full_disk_ends_in_one_line_and_keeps_the_previous_checkpoint(
    tmp_path, capsys, monkeypatch
):
    import errno

    import torch

    out = tmp_path / "run"
    assert _cfr_kuhn_run(out) == 0
    capsys.readouterr()
    checkpoint = (out / "checkpoint.pt").read_bytes()
    save = torch.save

    def disk_full(data, handle):
        """What torch.save does when the disk fills: a RuntimeError whose context is ENOSPC."""
        save(data, handle)
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError:
            raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos")  # noqa: B904 - torch keeps the OSError as the context only

    monkeypatch.setattr(torch, "save", disk_full)
    assert train.main(["--resume", str(out), "budget.iterations=40"]) == 1
    error = _one_line(capsys)
    assert "No space left on device (ENOSPC); the previous file there is intact" in error
    assert (out / "checkpoint.pt").read_bytes() == checkpoint
    assert not [path for path in out.iterdir() if path.name.endswith(".tmp")]


@pytest.mark.parametrize(
    "arguments",
    [
        ["--config", "c" * 300 + ".yaml"],
        ["--config", "cfr_kuhn", "output_dir=" + "d" * 300],
        ["--config", "cfr_kuhn", "output_dir=runs/" + "e" * 100_000],
        ["--resume", "f" * 100_000],
    ],
    ids=["config", "output_dir", "output_dir_100k", "resume_100k"],
)
def test_paths_too_long_are_refused_in_one_short_line(arguments, capsys):
    assert train.main(arguments) == 2
    error = _one_line(capsys)
    assert len(error) < 600 and ("bytes" in error), error


def test_a_shipped_config_loads_by_its_name_from_any_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert load_config("cfr_kuhn").trainer.name == "cfr"
    with pytest.raises(ConfigError, match="no shipped config has that name.*cfr_kuhn"):
        load_config("cfr_kuhm")

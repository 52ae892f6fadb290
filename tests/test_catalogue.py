"""The trainer catalogue: a trainer known through one entry is trainable, listed and refused.

The trainer below exists only in this file: its Learner (vanilla CFR under another name,
with a config of its own) and its :class:`agents.catalogue.TrainerEntry` (needs, a switch,
a value range). Registering the entry is all it takes for ``train.py`` to train it, list
it in ``--list`` and refuse it, with the usual one line, where it does not fit.
"""

import dataclasses
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import train
from agents import catalogue
from agents.catalogue import UNIT_INTERVAL, Needs, TrainerEntry
from agents.config import ConfigError, load_config
from hiddenenvs.registries import Registry

REPO = Path(__file__).resolve().parent.parent
CFRLearner = importlib.import_module("agents.cfr").CFRLearner


@dataclasses.dataclass
class ScratchConfig:
    iterations_per_step: int = 1
    # Ranged by the entry below, not by the class: in [0, 1].
    damping: float = 0.5
    # "tree" needs explicit chance (the switch widens the fit to every game).
    chance: str = "tree"


class ScratchCFR(CFRLearner):
    """A test's trainer: vanilla CFR under another name, with its own config."""

    CONFIG_CLASS = ScratchConfig


def _scratch_needs(params):
    if params.get("chance", "tree") == "any":
        return Needs()
    return Needs(explicit_chance=True, hint="trainer.params.chance: any fits every game")


SCRATCH = TrainerEntry(
    "scratch-cfr",
    f"{__name__}:ScratchCFR",
    needs=_scratch_needs,
    switches={"chance": "any"},
    ranges={"damping": UNIT_INTERVAL},
)


@pytest.fixture
def scratch_catalogue(monkeypatch):
    """The catalogue with ``scratch-cfr`` registered, for this test only (copies of its two
    registries stand in for the real ones, which are left as they were)."""
    entries = Registry("trainer", {n: catalogue.TRAINER_ENTRIES[n] for n in catalogue.TRAINERS})
    trainers = Registry("trainer", {n: catalogue.TRAINERS.target(n) for n in catalogue.TRAINERS})
    monkeypatch.setattr(catalogue, "TRAINER_ENTRIES", entries)
    monkeypatch.setattr(catalogue, "TRAINERS", trainers)
    catalogue.register_trainer(SCRATCH)


def test_a_catalogue_entry_trains_through_train_py(scratch_catalogue, tmp_path):
    out = tmp_path / "run"
    arguments = ["--config", str(REPO / "configs" / "cfr_kuhn.yaml"), "trainer.name=scratch-cfr"]
    arguments += ["budget.iterations=20", "evaluation.every_iterations=10", f"output_dir={out}"]
    assert train.main(arguments + ["progress_bar=false"]) == 0
    rows = (out / "metrics.csv").read_text().splitlines()
    assert len(rows) == 4  # the header, iterations 0, 10 and 20
    assert rows[0].startswith("episodes,iterations") and "exploitability" in rows[0]


def test_a_catalogue_entry_is_listed_with_its_fit_and_its_switch(scratch_catalogue, capsys):
    assert train.main(["--list", "kuhn_poker", "combat"]) == 0
    out = capsys.readouterr().out
    kuhn, combat = out.split("combat", 1)
    assert "scratch-cfr" in kuhn.splitlines()[1]  # kuhn's "fits: ..." line
    assert (
        "  scratch-cfr: needs chance outcomes with probabilities (this game samples chance "
        "inside the state); fits with trainer.params.chance: any"
    ) in combat


def test_a_catalogue_entry_is_refused_where_it_does_not_fit(scratch_catalogue, tmp_path, capsys):
    arguments = ["--config", str(REPO / "configs" / "cfr_kuhn.yaml"), "trainer.name=scratch-cfr"]
    arguments += ["env.name=combat", f"output_dir={tmp_path / 'run'}"]
    assert train.main(arguments) == 2
    error = capsys.readouterr().err
    assert error.startswith(
        "train.py: trainer scratch-cfr cannot train on combat: it needs chance outcomes with "
        "probabilities (this game samples chance inside the state) "
        "(trainer.params.chance: any fits every game). Trainers that fit combat: "
    )
    assert "scratch-cfr (trainer.params.chance: any)" in error
    assert not (tmp_path / "run").exists()


def test_a_catalogue_entry_declares_its_ranges_and_its_cluster(scratch_catalogue, capsys):
    with pytest.raises(ConfigError, match=r"trainer.params.damping must be in \[0, 1\], got 2.0"):
        load_config("cfr_kuhn", ["trainer.name=scratch-cfr", "trainer.params.damping=2"])
    arguments = ["--config", "cfr_kuhn", "trainer.name=scratch-cfr", "--address", "auto"]
    assert train.main(arguments) == 2
    distributed = [
        entry.name for entry in catalogue.PROJECT_TRAINERS if entry.address_param is not None
    ]
    assert "anfsp" in distributed and "scratch-cfr" not in distributed
    assert (
        f"trainer 'scratch-cfr' does not run on Ray; only distributed trainers "
        f"({', '.join(distributed)})" in capsys.readouterr().err
    )


def test_registering_a_trainer_again_and_another_under_its_name(scratch_catalogue):
    catalogue.register_trainer(SCRATCH)  # the same entry again
    catalogue.register_trainer(dataclasses.replace(SCRATCH, learner=ScratchCFR))  # eagerly
    with pytest.raises(ValueError, match="trainer 'scratch-cfr' is already registered with other"):
        catalogue.register_trainer(dataclasses.replace(SCRATCH, switches={}))
    with pytest.raises(ValueError, match="trainer 'cfr' is already registered"):
        catalogue.register_trainer(dataclasses.replace(SCRATCH, name="cfr"))


def test_the_tables_are_read_from_the_catalogue():
    from agents.capabilities import capability_table, trainer_needs
    from agents.checkpoint import PROJECT_AGENT_MODULES
    from agents.leaderboard.specs import ACCEPTED_FORMS
    from agents.search import SPEC_BUILDERS
    from agents.specs import SPEC_HELP

    names = catalogue.trainer_names()
    assert names[:3] == ["nfsp", "anfsp", "mcnfsp"]  # the catalogue's order, not sorted
    assert list(capability_table([("kuhn_poker", {})])[0]["trainers"]) == names
    assert trainer_needs("mcnfsp", {"search_from": "true_state"}) == Needs()
    assert set(catalogue.agent_modules()) <= set(PROJECT_AGENT_MODULES)
    assert SPEC_BUILDERS.plugin_modules == catalogue.spec_modules()
    for entry in catalogue.PROJECT_SPECS:
        assert entry.forms in SPEC_HELP and entry.forms in ACCEPTED_FORMS
        if entry.module is not None:
            assert entry.prefix in SPEC_BUILDERS  # its module registers the prefix
    assert ACCEPTED_FORMS.endswith(catalogue.SCRIPTED_SPEC_FORMS)


def test_reading_the_catalogue_imports_no_trainer_and_no_torch():
    code = (
        "import sys; from agents import catalogue; from agents.capabilities import trainer_needs; "
        "assert [trainer_needs(n) for n in catalogue.trainer_names()]; "
        "assert 'torch' not in sys.modules and 'agents.nfsp' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, timeout=120)


def test_a_config_built_in_python_meets_the_ranges_its_fields_declare():
    from agents.cfr import CFRConfig
    from agents.config import ConfigError
    from agents.search.mccfr_trainer import MCCFRConfig

    with pytest.raises(ConfigError, match=r"trainer.params.iterations_per_step must be >= 1"):
        CFRConfig(iterations_per_step=0)
    with pytest.raises(ConfigError, match=r"trainer.params.exploration must be in \(0, 1\]"):
        MCCFRConfig(exploration=0.0)
    assert MCCFRConfig(exploration=1.0).exploration == 1.0


def test_readme_trainer_table_is_the_catalogues():
    """README.md's trainer table is generated (python -m agents.catalogue --readme): a new
    trainer's entry and configs reach it without editing the README by hand."""
    readme = (REPO / "README.md").read_text()
    table = catalogue.readme_trainer_table(REPO)
    assert catalogue.with_readme_table(readme, table) == readme, (
        "run: python -m agents.catalogue --readme"
    )
    for entry in catalogue.PROJECT_TRAINERS:
        assert entry.method, f"{entry.name} has no method line"
        assert f"| `{entry.name}` | {entry.method} |" in table
    assert "`nfsp_*.yaml`" in table and "`quickstart.yaml`" in table

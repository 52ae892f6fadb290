"""hiddenenvs.registries.Registry, the one registry mechanism, and the project's registries
built on it (games, vector kernels, trainers, agent specs, agent classes)."""

import importlib
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import agents.config
import hiddenenvs.registry
import hiddenenvs.vector
import train
from agents.checkpoint import AGENT_CLASSES
from agents.search import SPEC_BUILDERS
from hiddenenvs.registries import AmbiguousNameError, Registry, UnknownNameError

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def modules(tmp_path, monkeypatch):
    """``write(name, source)``: a module importable by ``name``, forgotten after the test."""
    monkeypatch.syspath_prepend(str(tmp_path))
    written = []

    def write(name: str, source: str) -> None:
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
        importlib.invalidate_caches()
        written.append(name)

    yield write
    for name in written:
        sys.modules.pop(name, None)


def test_a_lazy_entry_is_imported_on_its_first_lookup_only(modules):
    modules("lazy_shapes", "SQUARE = object()\n")
    shapes = Registry("shape", {"square": "lazy_shapes:SQUARE"})
    assert "square" in shapes and shapes.names() == ["square"]
    assert shapes.target("square") == "lazy_shapes:SQUARE"
    assert "lazy_shapes" not in sys.modules  # membership, listing and target import nothing
    square = shapes["square"]
    assert square is sys.modules["lazy_shapes"].SQUARE and shapes["square"] is square
    assert shapes.target("square") == "lazy_shapes:SQUARE"


def test_a_lazy_entry_naming_nothing_fails_on_lookup_and_a_malformed_one_at_once(modules):
    modules("lazy_empty", "")
    shapes = Registry("shape", {"circle": "lazy_empty:CIRCLE"})
    with pytest.raises(
        ImportError, match=r"'lazy_empty:CIRCLE': module 'lazy_empty' has no 'CIRCLE'"
    ):
        shapes["circle"]
    for malformed in ("lazy_empty", ":CIRCLE", "lazy_empty:", "a:b:c"):
        with pytest.raises(ValueError, match="a lazy entry is 'module:attribute'"):
            shapes.register("other", malformed)
    with pytest.raises(ValueError, match="a shape name must be a non-empty string"):
        shapes.register("", object())


def test_register_directly_and_as_a_decorator():
    builders = Registry("builder")

    @builders.register("double")
    def double(x):
        return 2 * x

    def triple(x):
        return 3 * x

    assert double(4) == 8  # the decorator returns the function unchanged
    assert builders.register("triple", triple) is triple
    assert builders["double"] is double and builders["triple"] is triple
    assert list(builders) == ["double", "triple"] and len(builders) == 2
    assert builders.target("double").endswith(
        ":test_register_directly_and_as_a_decorator.<locals>.double"
    )


def test_a_taken_name_refuses_another_thing_naming_both():
    builders = Registry("builder")

    def first():
        pass

    def second():
        pass

    builders.register("f", first)
    with pytest.raises(ValueError) as error:
        builders.register("f", second)
    message = str(error.value)
    assert message.startswith("builder 'f' is already registered as ")
    assert message.count("<locals>.first") == 1 and message.count("<locals>.second") == 1
    assert builders["f"] is first  # the refused registration changed nothing
    with pytest.raises(ValueError, match="already registered as a:b; cannot register a:c under"):
        Registry("builder", {"g": "a:b"}).register("g", "a:c")


def test_the_same_thing_again_is_accepted(modules):
    modules("reloaded_shapes", "class Square:\n    pass\n")
    import reloaded_shapes

    shapes = Registry("shape")
    shapes.register("square", reloaded_shapes.Square)
    shapes.register("square", reloaded_shapes.Square)  # the same object
    reloaded = importlib.reload(reloaded_shapes).Square
    assert reloaded is not shapes["square"]
    shapes.register("square", reloaded)  # the same origin, after a reload: the newest wins
    assert shapes["square"] is reloaded
    shapes.register("square", "reloaded_shapes:Square")  # a lazy entry naming it
    lazy = Registry("shape", {"square": "reloaded_shapes:Square"})
    lazy.register("square", reloaded)  # an object that the lazy entry names
    assert lazy["square"] is reloaded
    entries = Registry("env", {"kuhn": hiddenenvs.registry.REGISTRY["kuhn_poker"]})
    entries.register("kuhn", hiddenenvs.registry.EnvEntry(**vars(entries["kuhn"])))  # equal


def test_an_unknown_name_is_one_error_a_key_error_and_a_value_error():
    shapes = Registry("shape", {"square": 4, "circle": 0})
    with pytest.raises(UnknownNameError) as error:
        shapes["triangle"]
    assert str(error.value) == "unknown shape 'triangle'; registered shapes: circle, square"
    assert isinstance(error.value, KeyError) and isinstance(error.value, ValueError)
    assert shapes.get("triangle") is None and "triangle" not in shapes
    assert shapes.names() == ["circle", "square"] and list(shapes) == ["square", "circle"]
    with pytest.raises(UnknownNameError, match="registered agent classes: "):
        Registry("agent class")["x"]  # the plural of a kind that ends in s


def test_plugin_modules_are_imported_on_the_first_miss(modules):
    modules(
        "plugin_registry",
        """
        from hiddenenvs.registries import Registry

        SHAPES = Registry("shape", {"square": 4}, plugin_modules=("plugin_shapes",))
        """,
    )
    modules(
        "plugin_shapes",
        """
        from plugin_registry import SHAPES

        SHAPES.register("hexagon", 6)
        """,
    )
    from plugin_registry import SHAPES

    assert SHAPES["square"] == 4 and "plugin_shapes" not in sys.modules  # a hit imports nothing
    assert SHAPES["hexagon"] == 6 and "plugin_shapes" in sys.modules
    with pytest.raises(UnknownNameError, match="registered shapes: hexagon, square$"):
        SHAPES["triangle"]


def test_listing_a_registry_imports_its_plugin_modules(modules):
    modules("plugin_registry2", "from hiddenenvs.registries import Registry\n")
    import plugin_registry2

    plugin_registry2.SHAPES = Registry("shape", plugin_modules=("plugin_shapes2",))
    modules(
        "plugin_shapes2", "from plugin_registry2 import SHAPES\nSHAPES.register('pentagon', 5)\n"
    )
    assert plugin_registry2.SHAPES.names() == ["pentagon"]


def test_ambiguity_tracking_records_two_things_under_one_name(modules):
    modules("ambiguous_one", "class Bot:\n    pass\n")
    modules("ambiguous_two", "class Bot:\n    pass\n")
    import ambiguous_one
    import ambiguous_two

    bots = Registry("bot", track_ambiguity=True)
    bots.register("Bot", ambiguous_one.Bot)
    assert bots["Bot"] is ambiguous_one.Bot and bots.ambiguous_origins("Bot") == []
    bots.register("Bot", ambiguous_two.Bot)  # accepted: two classes of one name are legal
    assert bots.ambiguous_origins("Bot") == ["ambiguous_one:Bot", "ambiguous_two:Bot"]
    assert "Bot" in bots
    with pytest.raises(
        AmbiguousNameError, match=r"bot 'Bot' is ambiguous \(ambiguous_one:Bot, ambiguous_two:Bot\)"
    ):
        bots["Bot"]


def test_the_project_registries_are_registries():
    for registry, kind in (
        (hiddenenvs.registry.REGISTRY, "env"),
        (hiddenenvs.vector.VECTOR_GAMES, "vector game"),
        (agents.config.TRAINERS, "trainer"),
        (SPEC_BUILDERS, "agent spec"),
        (AGENT_CLASSES, "agent class"),
    ):
        assert isinstance(registry, Registry) and registry.kind == kind
    assert set(hiddenenvs.vector.VECTOR_GAMES) <= set(hiddenenvs.registry.REGISTRY)
    assert {"oos", "ismcts", "rebel", "mc"} <= set(SPEC_BUILDERS)  # their modules, on a miss
    assert {"RandomAgent", "MeierBot"} <= set(AGENT_CLASSES)
    with pytest.raises(ValueError, match="unknown env 'poker'; registered envs: biased_blind"):
        hiddenenvs.load_game("poker")
    with pytest.raises(ValueError, match="env 'kuhn_poker' is already registered"):
        hiddenenvs.register(hiddenenvs.EnvEntry("kuhn_poker", "a:b", "another Kuhn poker"))
    hiddenenvs.register(hiddenenvs.registry.REGISTRY["kuhn_poker"])  # the same entry again
    with pytest.raises(KeyError, match="unknown trainer 'ppo'; registered trainers: anfsp, cfr"):
        agents.config.trainer_class("ppo")


def test_reading_the_trainer_table_imports_no_trainer_and_no_torch():
    code = (
        "import sys; from agents.config import TRAINERS; "
        "assert TRAINERS.names() and TRAINERS.target('nfsp') == 'agents.nfsp:NFSP'; "
        "assert 'torch' not in sys.modules and 'agents.nfsp' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, timeout=120)


class RenamedCFR(importlib.import_module("agents.cfr").CFRLearner):
    """A user's trainer: vanilla CFR under another name."""


def test_a_registered_trainer_trains_through_train_py(tmp_path, monkeypatch):
    # Copies of the catalogue's tables, so that the trainer registered here is gone after.
    catalogue = importlib.import_module("agents.catalogue")
    entries = Registry("trainer", {n: catalogue.TRAINER_ENTRIES[n] for n in catalogue.TRAINERS})
    trainers = Registry("trainer", {n: catalogue.TRAINERS.target(n) for n in catalogue.TRAINERS})
    monkeypatch.setattr(catalogue, "TRAINER_ENTRIES", entries)
    monkeypatch.setattr(catalogue, "TRAINERS", trainers)
    agents.config.register_trainer("renamed-cfr", RenamedCFR)
    agents.config.register_trainer("renamed-cfr", f"{__name__}:RenamedCFR")  # the same, lazily
    with pytest.raises(ValueError, match="trainer 'cfr' is already registered"):
        agents.config.register_trainer("cfr", RenamedCFR)
    out = tmp_path / "run"
    arguments = ["--config", str(REPO / "configs" / "cfr_kuhn.yaml"), "trainer.name=renamed-cfr"]
    arguments += ["budget.iterations=20", "evaluation.every_iterations=10", f"output_dir={out}"]
    assert train.main(arguments + ["progress_bar=false"]) == 0
    rows = (out / "metrics.csv").read_text().splitlines()
    assert len(rows) == 4  # the header, iterations 0, 10 and 20

"""The documentation site's generator (docs/_ext/hiddenenvs_pages.py) and link checker
(docs/check_links.py), without Sphinx: the pages it writes say what the code says, the
docstring conversions keep tables whole, and a broken link is reported.

The build itself (sphinx-build -W -n, its doctest builder, then the link checker over the
HTML) is a step of .ci/run.
"""

import dataclasses
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import hiddenenvs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
sys.path.insert(0, str(ROOT / "docs"))

import check_links  # noqa: E402
import hiddenenvs_pages as pages  # noqa: E402


def test_docstring_roles_become_myst_roles_and_literal_blocks_stay_code():
    docstring = """Summary.

    Uses :class:`GameTree` and :py:meth:`State.clone`::

        x = 1
    """
    text = pages.docstring_as_markdown(docstring)
    assert "{py:class}`GameTree`" in text and "{py:meth}`State.clone`" in text
    assert "clone`:\n\n    x = 1" in text


def test_markdown_tables_in_docstrings_become_list_tables():
    lines = [
        "Intro.",
        "",
        "| name | default |",
        "|------|---------|",
        "| ``a`` | 1 |",
        "| ``b`` | |",
        "",
        "After.",
    ]
    pages.markdown_tables_as_rst(None, "module", "m", None, {}, lines)
    text = "\n".join(lines)
    assert ".. list-table::" in text and ":header-rows: 1" in text
    assert "   * - ``a``\n     - 1" in text and "   * - ``b``\n     -" in text
    assert "|" not in text


def test_simple_tables_forgive_a_first_cell_running_into_the_gap():
    # A first cell two characters wider than its column: docutils calls this malformed.
    table = [
        "=========  ===========",
        "``parent``  index of the parent",
        "``actor``  who acts,",
        "           or TERMINAL",
        "=========  ===========",
    ]
    text = "\n".join(pages.simple_tables_as_list_tables(["Text:", ""] + table + ["", "End."]))
    assert "   * - ``parent``\n     - index of the parent" in text
    assert "   * - ``actor``\n     - who acts, or TERMINAL" in text
    assert "=====" not in text and text.endswith("End.")


@dataclass
class _ExampleConfig:
    """An example trainer config."""

    hidden_sizes: list[int] = field(default_factory=lambda: [64])
    # the exploration at the start
    epsilon: float = 0.1
    optimizer: str = "sgd"  # "sgd" or "adam"


def test_the_config_reference_reads_fields_defaults_and_their_comments():
    lines = "\n".join(pages.config_reference(_ExampleConfig))
    assert "| `hidden_sizes` | `list[int]` | `[64]` |" in lines
    assert "| `epsilon` | `float` | `0.1` | the exploration at the start |" in lines
    assert '| `optimizer` | `str` | `\'sgd\'` | "sgd" or "adam" |' in lines


def test_every_trainer_config_class_is_a_dataclass_the_reference_can_read():
    from agents.config import TRAINERS

    for name, trainer in TRAINERS.items():
        config_class = trainer.CONFIG_CLASS
        assert dataclasses.is_dataclass(config_class), f"{name}: CONFIG_CLASS is not a dataclass"
        reference = "\n".join(pages.config_reference(config_class))
        for config_field in dataclasses.fields(config_class):
            assert f"| `{config_field.name}` |" in reference


def test_an_env_page_says_what_the_registry_and_the_game_say():
    import hiddenenvs

    entry = hiddenenvs.registry.REGISTRY["kuhn_poker"]
    row = next(r for r in hiddenenvs.list_envs() if r["name"] == "kuhn_poker")
    text = pages.env_page(entry, row, pages.shipped_configs(), None)
    assert "58 nodes, 12 information sets" in text  # Kuhn poker's tree, counted on the spot
    assert "`configs/nfsp_kuhn.yaml`" in text and "OpenSpiel `kuhn_poker`" in text
    assert "-1/18" in text  # the game value, from the module docstring


@pytest.mark.parametrize("name", ["othello", "kuhn_poker", "combat", "meier"])
def test_every_env_gets_a_picture_and_a_thumbnail(tmp_path, name):
    text_panels, caption = pages.draw_picture(
        name, tmp_path / "page.png", tmp_path / "thumbnail.png"
    )
    assert not text_panels  # every shipped env draws its own picture
    for path in ("page.png", "thumbnail.png"):
        assert (tmp_path / path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if name == "othello":  # perfect information: the board alone
        assert "every player sees all of it" in caption
    else:
        assert "beside it what each seat" in caption


def test_a_seat_is_shown_what_it_knows_and_not_the_opponents_card():
    game = hiddenenvs.load_game("kuhn_poker")
    state = game.new_initial_state()
    state.apply_action(0)  # player 0 gets the Jack
    state.apply_action(2)  # player 1 the King
    assert pages.seat_text(game, state, 0) == (
        "1. your card: J\n2. a card to your opponent, face down"
    )
    assert "K" not in pages.seat_text(game, state, 0) and "K" in pages.state_text(game, state)


def test_every_hand_written_page_is_reached_by_a_toctree():
    for folder in ("guides", "results"):
        index = (ROOT / "docs" / folder / "index.md").read_text()
        if re.search(r":glob:\s*\n.*\n\s*\*\s*\n", index, flags=re.DOTALL):
            continue
        listed = set(re.findall(r"^([\w-]+)\s*$", index, flags=re.MULTILINE))
        pages_here = {p.stem for p in (ROOT / "docs" / folder).glob("*.md")} - {"index"}
        assert pages_here <= listed, f"docs/{folder}/index.md misses {pages_here - listed}"


def _site(tmp_path, body):
    (tmp_path / "sub").mkdir()
    (tmp_path / "index.html").write_text(f'<html><body><h1 id="top">t</h1>{body}</body></html>')
    (tmp_path / "sub" / "page.html").write_text('<html><body><p id="here">p</p></body></html>')
    return tmp_path


@pytest.mark.parametrize(
    "link, broken",
    [
        ('<a href="sub/page.html#here">ok</a>', False),
        ('<a href="#top">ok</a>', False),
        ('<a href="https://example.org/missing">external</a>', False),
        ('<a href="sub/missing.html">missing page</a>', True),
        ('<a href="sub/page.html#nowhere">missing anchor</a>', True),
        ('<img src="img/missing.png">', True),
    ],
)
def test_the_link_checker_finds_broken_internal_links(tmp_path, link, broken):
    found = check_links.broken_links(_site(tmp_path, link))
    assert bool(found) == broken, found

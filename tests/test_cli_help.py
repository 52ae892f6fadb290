"""``hiddenenvs COMMAND --help`` prints the program's docstring as plain text."""

import pytest

from agents.cli import main, plain_text


def test_rest_markup_becomes_plain_text():
    assert plain_text("see ``train.py``, :func:`agents.load_agent` and :mod:`~x.y`") == (
        "see train.py, agents.load_agent and x.y"
    )
    assert plain_text("a `single` quote stays") == "a `single` quote stays"


@pytest.mark.parametrize("command", ["play", "ggp-player"])
def test_a_commands_help_has_no_rest_markup(command, capsys):
    assert main([command, "--help"]) == 0
    shown = capsys.readouterr().out
    assert "usage: hiddenenvs" in shown and "``" not in shown and ":func:" not in shown

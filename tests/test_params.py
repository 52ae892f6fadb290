"""One key=value parser: the same value has the same type in every command."""

import importlib.util
from pathlib import Path

import pytest

import hiddenenvs
from agents.config import apply_override
from hiddenenvs.params import parse_params, parse_value

ROOT = Path(__file__).resolve().parent.parent
VALUES = {
    "True": True,
    "true": True,
    "false": False,
    "5": 5,
    "0.5": 0.5,
    "1e-3": 0.001,
    "text": "text",
    "'3'": "3",
    "[1, 2]": [1, 2],
}


def test_values_are_typed_as_yaml_reads_them():
    for text, expected in VALUES.items():
        assert parse_value(text) == expected and type(parse_value(text)) is type(expected), text
    assert parse_params(["imp_info=True", "num_cards=4"]) == {"imp_info": True, "num_cards": 4}


def test_train_overrides_type_values_alike():
    for text, expected in VALUES.items():
        data = {}
        apply_override(data, f"env.params.key={text}")
        assert data["env"]["params"]["key"] == expected == parse_value(text), text


def test_evaluate_and_play_use_this_parser():
    spec = importlib.util.spec_from_file_location("evaluate_script", ROOT / "evaluate.py")
    evaluate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(evaluate)
    import agents.play

    assert evaluate.parse_params is parse_params and agents.play.parse_params is parse_params


def test_a_bool_parameter_reaches_the_game_as_a_bool():
    game = hiddenenvs.load_game("goofspiel", **parse_params(["imp_info=True", "num_cards=3"]))
    assert game.params["imp_info"] is True


@pytest.mark.parametrize(
    "pair, message",
    [("imp_info", "expected key=value"), ("=3", "expected key=value"), ("x={", "not a YAML value")],
)
def test_a_bad_pair_is_named(pair, message):
    with pytest.raises(ValueError, match=message) as error:
        parse_params([pair])
    assert repr(pair) in str(error.value)

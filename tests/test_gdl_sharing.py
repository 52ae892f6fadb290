"""GDL env instances share one compiled sheet; each keeps its own evaluation state."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import hiddenenvs
from hiddenenvs.envs.gdl import propnet as propnet_module
from hiddenenvs.envs.gdl.game import GAMES_DIR, GdlGame
from hiddenenvs.envs.gdl.propnet import Propnet


def test_instances_share_the_compiled_sheet_and_not_their_buffers():
    first, second = hiddenenvs.load_game("meier"), hiddenenvs.load_game("meier")
    assert first.propnet.sheet is second.propnet.sheet  # parsed and ground once
    assert first.propnet.base is second.propnet.base
    assert first.propnet.compiled is not second.propnet.compiled  # own node values
    assert first.propnet._evaluate is not second.propnet._evaluate  # own caches
    first.propnet.evaluate(first.propnet.initial_state)
    assert second.propnet.cache_info()["state"]["misses"] == 0


def test_interleaved_instances_play_as_separate_ones():
    """Two instances stepped alternately reach what one instance reaches alone."""
    games = [hiddenenvs.load_game("blind_tictactoe") for _ in range(2)]
    rng = np.random.default_rng(3)
    states = [game.new_initial_state() for game in games]
    while not states[0].is_terminal():
        if states[0].is_chance_node():
            action = int(rng.choice([a for a, _ in states[0].chance_outcomes()]))
            for state in states:
                state.apply_action(action)
        else:
            joint = [int(rng.choice(states[0].legal_actions(p))) for p in range(2)]
            for state in states:
                state.apply_actions(joint)
        assert states[0].fluents == states[1].fluents
    alone = games[0].state_from_history(states[0].history())
    assert alone.fluents == states[1].fluents
    assert alone.returns().tolist() == states[1].returns().tolist()


def test_threads_asking_at_once_compile_once(monkeypatch):
    propnet_module._SHEETS.clear()
    builds = []
    original = Propnet._from_bytes.__func__

    def counted(cls, path, data, max_sheet_bytes, options):
        builds.append(path)
        return original(cls, path, data, max_sheet_bytes, options)

    monkeypatch.setattr(Propnet, "_from_bytes", classmethod(counted))
    nets = []
    threads = [
        threading.Thread(target=lambda: nets.append(Propnet.shared(GAMES_DIR / "tictactoe.gdl")))
        for _ in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(builds) == 1 and len(nets) == 6
    assert len({id(net.compiled) for net in nets}) == 6


def test_the_key_is_the_content_and_the_grounding_limit(tmp_path):
    sheet = tmp_path / "game.kif"
    sheet.write_text((GAMES_DIR / "tictactoe.gdl").read_text())
    first = GdlGame(rules=str(sheet))
    assert GdlGame(rules=str(sheet)).propnet.sheet is first.propnet.sheet
    assert GdlGame(rules=str(sheet), max_instances=400_000).propnet.sheet is not first.propnet.sheet
    sheet.write_text((GAMES_DIR / "biased_rps.gdl").read_text())  # edited: compiled again
    edited = GdlGame(rules=str(sheet))
    assert edited.propnet.sheet is not first.propnet.sheet
    assert edited.info.num_distinct_actions == 3


def test_the_cache_is_bounded(tmp_path):
    propnet_module._SHEETS.clear()
    text = (GAMES_DIR / "biased_rps.gdl").read_text()
    for index in range(propnet_module.SHEET_CACHE_SIZE + 3):
        path = tmp_path / f"game{index}.kif"
        path.write_text(text)
        Propnet.shared(path)
    assert len(propnet_module._SHEETS.entries) == propnet_module.SHEET_CACHE_SIZE


def test_a_failed_build_is_not_kept(tmp_path):
    sheet = tmp_path / "broken.kif"
    sheet.write_text("(role x) (init (")
    for _ in range(2):
        with pytest.raises(hiddenenvs.envs.gdl.GdlSyntaxError, match="broken.kif"):
            GdlGame(rules=str(sheet))
    assert not any(key[0] == str(sheet) for key in propnet_module._SHEETS.entries)


@pytest.mark.parametrize(
    "params, wanted",
    [
        ({"nonsense": 1}, "monty_hall: unknown parameter"),
        ({"max_steps": 0}, "monty_hall: parameter 'max_steps' must be >= 1"),
    ],
)
def test_a_variant_s_bad_parameter_names_the_variant(params, wanted):
    with pytest.raises(ValueError, match=wanted) as error:
        hiddenenvs.make("monty_hall", **params)
    assert "sheet (default" not in str(error.value)  # fixed by the variant: not offered

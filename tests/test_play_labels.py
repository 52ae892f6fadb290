"""Human play prints words, not bare numbers, and says "no such file" for a missing one."""

import numpy as np
import pytest

import hiddenenvs
from agents.specs import load_agent


@pytest.mark.parametrize("imp_info", [False, True])
def test_every_goofspiel_step_is_described_in_words(imp_info):
    game = hiddenenvs.load_game("goofspiel", num_cards=4, imp_info=imp_info)
    env = hiddenenvs.make("goofspiel", num_cards=4, imp_info=imp_info)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in env.agent_iter():
        observation, _, termination, truncation, _ = env.last()
        env.step(
            None
            if termination or truncation
            else int(rng.choice(np.flatnonzero(observation["action_mask"])))
        )
    for player in (0, 1):
        key = env.unwrapped.game_state.information_state_key(player)
        described = [game.describe_step(player, public, private) for public, private in key]
        assert len(described) == 8
        assert all(text.startswith(("point card", "round: you bid")) for text in described), (
            described
        )
        if imp_info:
            assert all(
                text.endswith(("you won", "your opponent won", "a tie")) for text in described[1::2]
            )


def test_the_default_description_shows_the_step_as_it_is():
    game = hiddenenvs.load_game("kuhn_poker")
    assert game.describe_step(0, "bet", None) == "'bet'"
    assert game.describe_step(0, "deal", "K") == "'deal' | yours: 'K'"


def test_a_missing_agent_file_or_checkpoint_says_no_such_file(tmp_path):
    with pytest.raises(ValueError, match="no such file or directory: .*nope.pt"):
        load_agent(str(tmp_path / "nope.pt"), "kuhn_poker")
    with pytest.raises(ValueError, match="no such file: .*checkpoint.pt"):
        load_agent(str(tmp_path), "kuhn_poker")

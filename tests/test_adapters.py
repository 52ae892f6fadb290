"""Behaviour of the generic PettingZoo adapters beyond PettingZoo's own API tests."""

import pickle
import warnings

import numpy as np
import pytest
from pettingzoo.utils.conversions import aec_to_parallel

import hiddenenvs
from hiddenenvs import pettingzoo_env
from hiddenenvs.envs.combat.doctrine import doctrine_action
from hiddenenvs.registry import REGISTRY


def _play_to_end(env, choose):
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, _ = env.last()
        totals[agent] += reward
        env.step(None if termination or truncation else choose(agent, observation))
    return totals


def test_illegal_action_raises_with_the_legal_ones():
    env = hiddenenvs.make("leduc_holdem")
    env.reset(seed=0)
    with pytest.raises(
        ValueError,
        match=r"action 0 is illegal for player_0; legal actions: 1 \(call\), 2 \(raise\)",
    ):
        env.step(0)


def test_illegal_action_can_lose_the_game(caplog):
    env = hiddenenvs.make("leduc_holdem", illegal_action="lose")
    env.reset(seed=0)
    env.step(0)
    assert "Illegal move made" in caplog.text
    _, reward, termination, _, _ = env.last()
    assert termination
    assert env.rewards["player_0"] == hiddenenvs.load_game("leduc_holdem").info.min_utility


def test_bad_options_are_named():
    with pytest.raises(ValueError, match="illegal_action must be one of"):
        hiddenenvs.make("kuhn_poker", illegal_action="ignore")
    with pytest.raises(ValueError, match="observation_type must be one of"):
        hiddenenvs.make("kuhn_poker", observation_type="pixels")
    with pytest.raises(ValueError, match="render_mode must be one of"):
        hiddenenvs.make("kuhn_poker", render_mode="pixels")
    with pytest.raises(ValueError, match="turn-based; use hiddenenvs.make"):
        hiddenenvs.make_parallel("kuhn_poker")


def test_simultaneous_moves_are_hidden_in_the_aec_env():
    env = hiddenenvs.make("rps")
    env.reset(seed=0)
    assert env.agent_selection == "player_0"
    before = env.observe("player_1")["observation"].copy()
    env.step(2)  # scissors; player_1 must not see it
    assert env.agent_selection == "player_1"
    assert np.array_equal(env.observe("player_1")["observation"], before)
    env.step(0)  # rock beats scissors, which pays 2 only in biased RPS
    assert env.rewards == {"player_0": -1.0, "player_1": 1.0}
    assert all(env.terminations.values())


def test_parallel_env_rewards_and_validation():
    env = hiddenenvs.make_parallel("biased_rps")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="no action given for player_1"):
        env.step({"player_0": 0})
    with pytest.raises(ValueError, match="illegal for player_1"):
        env.step({"player_0": 0, "player_1": 5})
    _, rewards, terminations, _, _ = env.step({"player_0": 0, "player_1": 2})
    assert rewards == {"player_0": 2.0, "player_1": -2.0}
    assert all(terminations.values()) and env.agents == []


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_ansi_rendering(name, capsys, monkeypatch):
    env = hiddenenvs.make(name, render_mode="ansi")
    env.reset(seed=1)
    assert isinstance(env.render(), str) and env.render()
    # as in a terminal without a display: a game with a picture warns once, then prints
    monkeypatch.setattr(pettingzoo_env, "_window_backend", lambda backend: False)
    human = hiddenenvs.make(name, render_mode="human")
    human.reset(seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        human.render()
    assert capsys.readouterr().out.strip()


def test_returns_equal_the_sum_of_rewards_and_are_zero_sum():
    rng = np.random.default_rng(0)
    env = hiddenenvs.make("leduc_holdem")
    for seed in range(50):
        env.reset(seed=seed)
        totals = _play_to_end(
            env, lambda agent, obs: int(rng.choice(np.flatnonzero(obs["action_mask"])))
        )
        assert sum(totals.values()) == 0.0
        assert max(abs(v) for v in totals.values()) <= 13


def test_same_seed_same_deal_different_seed_different_deals():
    def deal(seed):
        env = hiddenenvs.make("leduc_holdem")
        env.reset(seed=seed)
        return env.unwrapped.game_state.private_cards

    assert deal(3) == deal(3)
    assert len({tuple(deal(seed)) for seed in range(30)}) > 3


PARALLEL_VARIANTS = {  # every parallel-capable env, combat on its small map
    name: ({"map": "small", "team_size": 3} if name == "combat" else {})
    for name in sorted(REGISTRY)
    if hiddenenvs.load_game(name).info.dynamics is hiddenenvs.Dynamics.SIMULTANEOUS
}
PARALLEL_VARIANTS["combat_fighter"] = {"mode": "fighter", "map": "small", "team_size": 3}


def _variant(key):
    return ("combat" if key.startswith("combat") else key), PARALLEL_VARIANTS[key]


@pytest.mark.parametrize("key", sorted(PARALLEL_VARIANTS))
def test_every_mover_at_a_simultaneous_node_sees_its_mask_until_it_has_acted(key):
    """AEC env: the masks equal the game's own legal sets for every live player still to
    act at the node, and are zero for those who have acted (the issue: later movers got
    all-zero masks)."""
    name, params = _variant(key)
    env = hiddenenvs.make(name, **params)
    rng = np.random.default_rng(0)
    for seed in range(3):
        env.reset(seed=seed)
        acted = set()
        for agent in env.agent_iter(max_iter=400):
            _, _, termination, truncation, _ = env.last()
            state = env.unwrapped.game_state
            if termination or truncation:
                env.step(None)
                continue
            if not acted:  # the first mover of a node: every live player must see its legal set
                for other in env.agents:
                    player = env.unwrapped.agent_to_player[other]
                    expected = np.zeros(env.action_space(other).n, np.int8)
                    expected[state.legal_actions(player)] = 1
                    assert np.array_equal(env.observe(other)["action_mask"], expected), (
                        other,
                        seed,
                    )
            for other in acted:
                assert not env.observe(other)["action_mask"].any(), (other, "has acted")
            mask = env.observe(agent)["action_mask"]
            acted.add(agent)
            before = state.history()
            env.step(int(rng.choice(np.flatnonzero(mask))))
            if env.agents and env.unwrapped.game_state.history() != before:  # the node resolved
                acted = set()


def _masked_random(mask, rng):
    return int(rng.choice(np.flatnonzero(mask)))


@pytest.mark.parametrize("key", sorted(PARALLEL_VARIANTS))
@pytest.mark.parametrize("layout", ["dict", "flat"])
def test_aec_to_parallel_plays_like_the_parallel_env(key, layout):
    """PettingZoo's converter on the AEC env and the native parallel env, same seeds and
    actions: the same observations, masks, rewards and terminations at every step."""
    name, params = _variant(key)
    native = hiddenenvs.make_parallel(name, observation_layout=layout, **params)
    converted = aec_to_parallel(hiddenenvs.make(name, observation_layout=layout, **params))

    def mask_of(observations, infos, agent):
        return (
            observations[agent]["action_mask"] if layout == "dict" else infos[agent]["action_mask"]
        )

    rng = np.random.default_rng(1)
    for seed in range(3):
        native_obs, native_infos = native.reset(seed=seed)
        converted_obs, converted_infos = converted.reset(seed=seed)
        while native.agents:
            assert converted.agents == native.agents
            for agent in native.agents:
                assert np.array_equal(
                    mask_of(native_obs, native_infos, agent),
                    mask_of(converted_obs, converted_infos, agent),
                )
                if layout == "flat":
                    assert native_obs[agent].ndim == 1
                    assert np.array_equal(native_obs[agent], converted_obs[agent])
                else:
                    assert np.array_equal(
                        native_obs[agent]["observation"], converted_obs[agent]["observation"]
                    )
            actions = {
                a: _masked_random(mask_of(native_obs, native_infos, a), rng) for a in native.agents
            }
            native_obs, native_rewards, native_terms, _, native_infos = native.step(actions)
            converted_obs, converted_rewards, converted_terms, _, converted_infos = converted.step(
                actions
            )
            assert dict(converted_rewards) == pytest.approx(native_rewards)
            assert converted_terms == native_terms
        assert not converted.agents


def test_flat_layout_is_the_dict_observation_flattened_with_the_mask_in_infos():
    dict_env = hiddenenvs.make("leduc_holdem")
    flat_env = hiddenenvs.make("leduc_holdem", observation_layout="flat")
    assert flat_env.observation_space("player_0").shape == (32,)
    rng = np.random.default_rng(0)
    dict_env.reset(seed=5)
    flat_env.reset(seed=5)
    for agent, flat_agent in zip(dict_env.agent_iter(), flat_env.agent_iter()):
        observation, reward, termination, _, _ = dict_env.last()
        flat_observation, flat_reward, flat_termination, _, info = flat_env.last()
        assert agent == flat_agent and reward == flat_reward and termination == flat_termination
        assert np.array_equal(flat_observation, observation["observation"].reshape(-1))
        assert np.array_equal(info["action_mask"], observation["action_mask"])
        action = None if termination else _masked_random(observation["action_mask"], rng)
        dict_env.step(action)
        flat_env.step(action)

    fighters = hiddenenvs.make_parallel(
        "combat", mode="fighter", map="small", observation_layout="flat"
    )
    observations, infos = fighters.reset(seed=0)
    assert observations["attacker_0"].shape == (11 * 11 * 5,)
    assert infos["attacker_0"]["action_mask"].shape == (10,)


def test_parallel_illegal_action_raises_by_default():
    env = hiddenenvs.make_parallel("goofspiel")
    env.reset(seed=0)
    env.step({"player_0": 0, "player_1": 0})
    with pytest.raises(
        ValueError,
        match=r"action 0 is illegal for player_1; legal actions: 1 \(bid 2\), 2 \(bid 3\)",
    ):
        env.step({"player_0": 1, "player_1": 0})
    combat = hiddenenvs.make_parallel("combat", mode="fighter", map="small")
    observations, _ = combat.reset(seed=0)
    agent, action = _an_illegal_choice(observations)
    actions = {a: 0 for a in combat.agents} | {agent: action}
    with pytest.raises(ValueError, match=f"action {action} is illegal for {agent}"):
        combat.step(actions)


def _an_illegal_choice(observations):
    for agent, observation in observations.items():
        illegal = np.flatnonzero(observation["action_mask"] == 0)
        if illegal.size:
            return agent, int(illegal[0])
    raise AssertionError("every action is legal for every fighter")


def test_players_without_a_real_choice_must_send_their_one_legal_action():
    env = hiddenenvs.make_parallel("gdl_tictactoe")
    observations, _ = env.reset(seed=0)
    waiting = next(a for a in env.agents if observations[a]["action_mask"].sum() == 1)
    mover = next(a for a in env.agents if a != waiting)
    noop = int(np.flatnonzero(observations[waiting]["action_mask"])[0])
    with pytest.raises(ValueError, match=f"illegal for {waiting}"):
        env.step({mover: 0, waiting: 0 if noop else 1})
    with pytest.raises(ValueError, match=f"no action given for {waiting}"):
        env.step({mover: 0})
    env.step({mover: 0, waiting: noop})


def test_parallel_illegal_action_can_lose_the_game():
    env = hiddenenvs.make_parallel("goofspiel", illegal_action="lose")
    env.reset(seed=0)
    env.step({"player_0": 0, "player_1": 0})
    _, rewards, terminations, truncations, infos = env.step({"player_0": 1, "player_1": 0})
    minimum = hiddenenvs.load_game("goofspiel").info.min_utility
    assert rewards == {"player_0": 0.0, "player_1": minimum}
    assert all(terminations.values()) and not any(truncations.values()) and env.agents == []
    assert infos == {"player_0": {}, "player_1": {"illegal_action": 0}}
    env.reset(seed=0)
    _, rewards, *_ = env.step({"player_0": 0, "player_1": 0})  # legal: the game goes on
    _, rewards, *_ = env.step({"player_0": 0, "player_1": 0})  # both illegal: both lose
    assert rewards == {"player_0": minimum, "player_1": minimum}


def test_parallel_no_op_rule_plays_hold_and_says_so_in_infos():
    parameters = {"mode": "fighter", "map": "small", "team_size": 3}
    env = hiddenenvs.make_parallel("combat", illegal_action="no_op", **parameters)
    twin = hiddenenvs.make_parallel("combat", **parameters)  # told to hold explicitly
    observations, _ = env.reset(seed=2)
    twin.reset(seed=2)
    rng = np.random.default_rng(0)
    reported = 0
    for _ in range(30):
        if not env.agents:
            break
        actions = {a: int(rng.integers(10)) for a in env.agents}  # unmasked, like PPO
        legal_actions = {
            a: (action if observations[a]["action_mask"][action] else 0)
            for a, action in actions.items()
        }
        observations, rewards, terminations, _, infos = env.step(actions)
        twin_observations, twin_rewards, twin_terminations, _, _ = twin.step(legal_actions)
        assert rewards == twin_rewards and terminations == twin_terminations
        for agent in observations:
            assert np.array_equal(
                observations[agent]["observation"], twin_observations[agent]["observation"]
            )
            if actions[agent] != legal_actions[agent]:
                assert infos[agent] == {"illegal_action": actions[agent], "played_action": 0}
                reported += 1
            else:
                assert infos[agent] == {}
    assert reported > 0


def test_no_op_rule_needs_a_game_with_a_no_op_and_bad_actions_raise_under_every_rule():
    with pytest.raises(ValueError, match="goofspiel has none: use 'raise' or 'lose'"):
        hiddenenvs.make_parallel("goofspiel", illegal_action="no_op")
    with pytest.raises(ValueError, match="goofspiel has none"):
        hiddenenvs.make("goofspiel", illegal_action="no_op")
    with pytest.raises(ValueError, match="observation_layout must be one of"):
        hiddenenvs.make_parallel("rps", observation_layout="image")
    for rule in ("raise", "lose"):
        env = hiddenenvs.make_parallel("rps", illegal_action=rule)
        env.reset(seed=0)
        with pytest.raises(ValueError, match="action 7 is illegal for player_1"):
            env.step({"player_0": 0, "player_1": 7})
        with pytest.raises(TypeError, match="must be an integer"):
            env.step({"player_0": 0, "player_1": 1.0})
    combat = hiddenenvs.make_parallel("combat", mode="fighter", map="small", illegal_action="no_op")
    combat.reset(seed=0)
    with pytest.raises(ValueError, match="action 10 is illegal for attacker_0"):
        combat.step(dict.fromkeys(combat.agents, 0) | {"attacker_0": 10})


def test_aec_no_op_rule_reports_until_the_agent_acts_legally_again():
    env = hiddenenvs.make(
        "combat", mode="fighter", map="small", illegal_action="no_op", observation_layout="flat"
    )
    env.reset(seed=0)
    reported = None
    for agent in env.agent_iter(max_iter=200):
        _, _, termination, _, info = env.last()
        if termination:
            env.step(None)
            continue
        mask = info["action_mask"]
        if reported is None and not mask.all():
            reported = agent
            illegal = int(np.flatnonzero(mask == 0)[0])
            env.step(illegal)
            assert (
                env.infos[agent]["illegal_action"] == illegal
                and env.infos[agent]["played_action"] == 0
            )
            continue
        if agent == reported:
            assert env.infos[agent]["illegal_action"] == illegal  # seen at its next turn
            env.step(int(np.flatnonzero(mask)[0]))
            assert "illegal_action" not in env.infos[agent]
            return
        env.step(int(np.flatnonzero(mask)[0]))
    raise AssertionError("no fighter ever had an illegal action")


def test_aec_flat_layout_can_lose_the_game():
    env = hiddenenvs.make("leduc_holdem", observation_layout="flat", illegal_action="lose")
    env.reset(seed=0)
    env.step(0)  # fold is illegal before a bet
    assert env.rewards["player_0"] == hiddenenvs.load_game("leduc_holdem").info.min_utility
    assert all(env.terminations.values())


def test_parallel_envs_pickle_for_vector_env_constructors():
    env = hiddenenvs.make_parallel("combat", mode="fighter", map="small", observation_layout="flat")
    env.reset(seed=3)
    copy = pickle.loads(pickle.dumps(env))
    actions = dict.fromkeys(env.agents, 0)
    first, second = env.step(actions), copy.step(actions)
    assert all(np.array_equal(first[0][a], second[0][a]) for a in first[0])


@pytest.mark.parametrize("rule", ["raise", "no_op"])
def test_parallel_actions_may_be_numpy_integers_and_odd_ones_are_refused_by_name(rule):
    parameters = {"mode": "fighter", "map": "small", "team_size": 3, "illegal_action": rule}
    env, twin = (
        hiddenenvs.make_parallel("combat", **parameters),
        hiddenenvs.make_parallel("combat", **parameters),
    )
    observations, _ = env.reset(seed=4)
    twin.reset(seed=4)
    rng = np.random.default_rng(1)
    kinds = (int, np.int64, np.int32, np.uint8)
    for tick in range(12):
        masks = np.stack([observations[agent]["action_mask"] for agent in env.agents])
        chosen = (rng.random(masks.shape) * masks).argmax(axis=1)
        actions = {
            agent: kinds[(tick + k) % 4](action)
            for k, (agent, action) in enumerate(zip(env.agents, chosen))
        }
        observations, rewards, *_ = env.step(actions)
        twin_observations, twin_rewards, *_ = twin.step(dict(zip(twin.agents, chosen.tolist())))
        assert rewards == twin_rewards
        assert all(
            np.array_equal(observations[a]["observation"], twin_observations[a]["observation"])
            for a in observations
        )
    legal = {
        agent: int(np.flatnonzero(observations[agent]["action_mask"])[0]) for agent in env.agents
    }
    agent = env.agents[0]
    with pytest.raises(TypeError, match=f"the action for {agent} must be an integer.*True"):
        env.step(legal | {agent: True})
    with pytest.raises(TypeError, match=f"the action for {agent} must be an integer.*'1'"):
        env.step(legal | {agent: "1"})
    with pytest.raises(ValueError, match=f"action {2**70} is illegal for {agent}"):
        env.step(legal | {agent: 2**70})
    with pytest.raises(ValueError, match=rf"action np.int64\(-1\) is illegal for {agent}"):
        env.step(legal | {agent: np.int64(-1)})
    env.step(legal)  # the refused steps changed nothing: the episode goes on


def test_the_compiled_adapter_loops_refuse_arrays_that_do_not_match_the_players():
    from hiddenenvs._adapters import accept_legal_actions, observation_dicts, values_by_agent

    agents = ["player_0", "player_1"]
    to_player = {agent: p for p, agent in enumerate(agents)}
    masks = np.array([[1, 0], [0, 1]], dtype=np.int8)
    joint = [-1, -1]
    unchecked = accept_legal_actions([0, 1], {"player_0": 0, "player_1": 0}, agents, masks, joint)
    assert joint == [0, -1] and unchecked == [1]
    with pytest.raises(ValueError, match="2 mask rows need as many agents"):
        accept_legal_actions([0], {}, agents[:1], masks, joint)
    with pytest.raises(IndexError, match="player 2 has no row"):
        accept_legal_actions([2], {}, agents, masks, joint)
    observations = observation_dicts(agents, to_player, np.zeros((2, 3), np.float32), masks)
    assert observations["player_1"]["action_mask"].tolist() == [0, 1]
    with pytest.raises(ValueError, match="2 players need as many tensors and masks, got 1 and 2"):
        observation_dicts(agents, to_player, np.zeros((1, 3), np.float32), masks)
    assert values_by_agent(agents[::-1], to_player, [1.5, -1.5]) == {
        "player_1": -1.5,
        "player_0": 1.5,
    }
    with pytest.raises(ValueError, match="2 players need as many values, got 1"):
        values_by_agent(agents, to_player, [1.0])


@pytest.mark.parametrize("layout", ["dict", "flat"])
@pytest.mark.parametrize("observation_type", ["information_state", "observation"])
def test_observations_sliced_from_all_players_tensors_equal_the_per_player_ones(
    layout, observation_type
):
    parameters = {"mode": "fighter", "map": "small", "team_size": 4}
    bulk = hiddenenvs.make_parallel(
        "combat", observation_type=observation_type, observation_layout=layout, **parameters
    )
    per_player = hiddenenvs.make_parallel(
        "combat", observation_type=observation_type, observation_layout=layout, **parameters
    )
    assert bulk._tensors_of_all is not None
    per_player._tensors_of_all = None  # the generic path: one tensor method call per agent
    observations, infos = bulk.reset(seed=5)
    twin_observations, twin_infos = per_player.reset(seed=5)
    rng = np.random.default_rng(2)
    for _ in range(25):
        assert observations.keys() == twin_observations.keys()
        for agent in observations:
            mine, theirs = observations[agent], twin_observations[agent]
            if layout == "dict":
                assert np.array_equal(mine["action_mask"], theirs["action_mask"])
                mine, theirs = mine["observation"], theirs["observation"]
            assert mine.dtype == theirs.dtype and np.array_equal(mine, theirs)
        if not bulk.agents:
            break
        masks = infos if layout == "flat" else {a: o for a, o in observations.items()}
        actions = {a: int(rng.choice(np.flatnonzero(masks[a]["action_mask"]))) for a in bulk.agents}
        observations, rewards, *_, infos = bulk.step(actions)
        twin_observations, twin_rewards, *_, twin_infos = per_player.step(actions)
        assert rewards == twin_rewards


FIGHTERS_WHO_DIE = {
    "mode": "fighter",
    "map": "small",
    "team_size": 5,
    "hit_probability": 1.0,
    "damage": 100,
}


@pytest.mark.parametrize(
    "name, parameters, layout",
    [
        ("combat", FIGHTERS_WHO_DIE, "dict"),
        ("combat", FIGHTERS_WHO_DIE, "flat"),
        ("goofspiel", {}, "dict"),
    ],
)
def test_action_masks_stack_the_agents_masks_and_stay_valid_after_later_steps(
    name, parameters, layout
):
    env = hiddenenvs.make_parallel(name, observation_layout=layout, **parameters)
    with pytest.raises(ValueError, match="reset"):
        env.action_masks()
    observations, infos = env.reset(seed=0)
    rng = np.random.default_rng(0)
    handed_out = []
    shrank = False
    while env.agents:
        masks = env.action_masks()
        rows = infos if layout == "flat" else observations
        assert masks.dtype == np.int8 and not masks.flags.writeable
        assert np.array_equal(masks, np.stack([rows[agent]["action_mask"] for agent in env.agents]))
        handed_out.append((masks, masks.copy()))
        shrank |= len(env.agents) < len(env.possible_agents)
        if name == "combat":  # doctrine fighters meet and die, so agents shrinks
            actions = [
                doctrine_action(env.game_state, env.agent_to_player[agent], rng)
                for agent in env.agents
            ]
        else:
            actions = (rng.random(masks.shape) * masks).argmax(axis=1).tolist()
        observations, _, _, _, infos = env.step(dict(zip(env.agents, actions)))
    assert all(np.array_equal(masks, copy) for masks, copy in handed_out)
    assert env.action_masks().shape == (0, env.action_space(env.possible_agents[0]).n)
    assert shrank or name != "combat"  # the stacked rows skipped dead fighters' rows

"""Combat trajectories pinned by digest: seeded random episodes through the parallel env,
the AEC env and the game model (fighter and commander mode) hash every step's
observations, masks, rewards, terminations, truncations, infos and agents, and at the
end the keys, history and a clone's and an unpickled copy's continuation.

The digests were recorded before the fighter-mode tick was fused into one compiled call
(issue 21): any change to what a user or a search sees, or to the order of the hit
rolls, changes them.
"""

import hashlib
import pickle

import numpy as np
import pytest

import hiddenenvs
from hiddenenvs.envs.combat.doctrine import doctrine_action

# Fighter-mode set-ups, (parameters, episodes, steps per episode or None for whole ones):
# episodes that end by elimination (doctrine attackers, sure hits: fighters die one by
# one), by the time limit, and the first ticks of the default map at the benchmark's two
# sizes. Random legal actions otherwise.
SETUPS = {
    "small-sure-hits": (
        {"map": "small", "team_size": 5, "hit_probability": 1.0, "damage": 50},
        3,
        None,
    ),
    "small-time-limit": ({"map": "small", "team_size": 10, "max_ticks": 40}, 3, None),
    "default-20": ({"map": "default", "team_size": 10}, 2, 80),
    "default-160": ({"map": "default", "team_size": 80}, 2, 30),
}
DOCTRINE_ATTACKERS = {"small-sure-hits"}
AEC_STEPS = {"default-160": 12}  # ticks per episode through the AEC env (160 turns each)


def _feed(digest, value) -> None:
    """Hash ``value`` with its structure and types (dict keys sorted, arrays by dtype,
    shape and bytes)."""
    if isinstance(value, dict):
        digest.update(b"{")
        for key in sorted(value):
            _feed(digest, key)
            _feed(digest, value[key])
        digest.update(b"}")
    elif isinstance(value, (list, tuple)):
        digest.update(b"[" if isinstance(value, list) else b"(")
        for item in value:
            _feed(digest, item)
        digest.update(b"]")
    elif isinstance(value, np.ndarray):
        digest.update(f"{value.dtype.str}{value.shape}".encode())
        digest.update(np.ascontiguousarray(value).tobytes())
    else:
        digest.update(f"{type(value).__name__}:{value!r};".encode())


def _random_legal(mask: np.ndarray, rng: np.random.Generator) -> int:
    legal = np.flatnonzero(mask)
    return int(legal[rng.integers(len(legal))]) if len(legal) else 0


def _sent_action(state, player, mask, rng, illegal_action, doctrine):
    """A random legal action (the doctrine's for attackers when ``doctrine``), or (rules
    other than "raise") about once in five ticks any action, as a Python or a numpy
    integer."""
    num_players = state.game.info.num_players
    if illegal_action != "raise" and rng.random() < 0.2 / num_players:
        action = int(rng.integers(len(mask)))
    elif doctrine and player < num_players // 2 and mask.any():
        action = doctrine_action(state, player, rng)
    else:
        action = _random_legal(mask, rng)
    return np.int64(action) if rng.random() < 0.5 else action


def parallel_digest(params, episodes, max_steps, layout, illegal_action, doctrine=False) -> str:
    env = hiddenenvs.make_parallel(
        "combat", mode="fighter", observation_layout=layout, illegal_action=illegal_action, **params
    )
    rng = np.random.default_rng(7)
    digest = hashlib.sha256()
    for episode in range(episodes):
        observations, infos = env.reset(seed=episode)
        _feed(digest, [observations, infos, env.agents])
        steps = 0
        while env.agents and (max_steps is None or steps < max_steps):
            actions = {}
            for agent in env.agents:
                mask = (
                    infos[agent]["action_mask"]
                    if layout == "flat"
                    else observations[agent]["action_mask"]
                )
                actions[agent] = _sent_action(
                    env.game_state, env.agent_to_player[agent], mask, rng, illegal_action, doctrine
                )
            observations, rewards, terminations, truncations, infos = env.step(actions)
            _feed(digest, [observations, rewards, terminations, truncations, infos, env.agents])
            steps += 1
    return digest.hexdigest()


def aec_digest(params, episodes, max_steps, layout, illegal_action, doctrine=False) -> str:
    env = hiddenenvs.make(
        "combat", mode="fighter", observation_layout=layout, illegal_action=illegal_action, **params
    )
    rng = np.random.default_rng(11)
    digest = hashlib.sha256()
    num_players = env.unwrapped.game.info.num_players
    for episode in range(episodes):
        env.reset(seed=episode)
        limit = None if max_steps is None else max_steps * num_players
        for agent in env.agent_iter(max_iter=limit or 2**63):
            observation, reward, termination, truncation, info = env.last()
            _feed(digest, [agent, observation, reward, termination, truncation, info, env.agents])
            if termination or truncation:
                env.step(None)
                continue
            mask = info["action_mask"] if layout == "flat" else observation["action_mask"]
            unwrapped = env.unwrapped
            env.step(
                _sent_action(
                    unwrapped.game_state,
                    unwrapped.agent_to_player[agent],
                    mask,
                    rng,
                    illegal_action,
                    doctrine,
                )
            )
    return digest.hexdigest()


def _joint(state, rng, doctrine=False) -> list[int]:
    return [
        (
            doctrine_action(state, player, rng)
            if doctrine and player < len(masks) // 2
            else _random_legal(mask, rng)
        )
        if mask.any()
        else -1
        for masks in [state.legal_actions_masks()]
        for player, mask in enumerate(masks)
    ]


def _feed_state(digest, state) -> None:
    _feed(
        digest,
        [
            state.current_player(),
            state.is_terminal(),
            state.rewards(),
            state.returns(),
            state.public_observation_tensor(),
        ],
    )
    if not state.is_terminal():
        _feed(
            digest,
            [
                state.observation_tensors(),
                state.information_state_tensor(0),
                state.legal_actions_masks(),
                state.legal_actions_mask(0),
                state.legal_actions(0),
                state.movers(),
                state.finished_players(),
            ],
        )


def _feed_keys(digest, state) -> None:
    _feed(digest, [state.history(), state.public_state_key(), str(state)])
    for player in range(state.game.info.num_players):
        _feed(digest, state.information_state_key(player))


def model_digest(params, episodes, max_steps, doctrine=False) -> str:
    game = hiddenenvs.load_game("combat", mode="fighter", **params)
    rng = np.random.default_rng(13)
    digest = hashlib.sha256()
    for episode in range(episodes):
        state = game.new_initial_state(seed=episode)
        _feed_state(digest, state)
        steps, fork = 0, None
        while not state.is_terminal() and (max_steps is None or steps < max_steps):
            if steps == 3:
                _feed_keys(digest, state)  # keys read midway grow from there
                fork = (state.clone(), pickle.loads(pickle.dumps(state)), rng.bit_generator.state)
            if steps == 5:
                state.reseed(episode + 100)
            state.apply_actions(_joint(state, rng, doctrine))
            _feed_state(digest, state)
            steps += 1
        _feed_keys(digest, state)
        if fork is not None:  # a clone and an unpickled copy play on alike
            continuations = []
            for copy in fork[:2]:
                rng.bit_generator.state = fork[2]
                for _ in range(4):
                    if copy.is_terminal():
                        break
                    copy.apply_actions(_joint(copy, rng, doctrine))
                copy_digest = hashlib.sha256()
                _feed_state(copy_digest, copy)
                _feed_keys(copy_digest, copy)
                continuations.append(copy_digest.hexdigest())
            assert continuations[0] == continuations[1]
            _feed(digest, continuations[0])
    return digest.hexdigest()


def commander_digest() -> str:
    game = hiddenenvs.load_game("combat", map="small", team_size=6, decision_interval=3)
    rng = np.random.default_rng(17)
    digest = hashlib.sha256()
    for episode in range(2):
        state = game.new_initial_state(seed=episode)
        while not state.is_terminal():
            joint = [int(rng.choice(state.legal_actions(player))) for player in range(2)]
            state.apply_actions(joint)
            _feed(
                digest,
                [
                    state.rewards(),
                    state.returns(),
                    state.observation_tensor(0),
                    state.observation_tensor(1),
                    state.public_observation_tensor(),
                    state.battle.positions,
                    state.battle.health,
                    state.battle.belief_cells,
                ],
            )
        _feed_keys(digest, state)
    return digest.hexdigest()


# Recorded on main before the fused tick (issue 21).
PARALLEL_DIGESTS = {
    (
        "small-sure-hits",
        "dict",
        "raise",
    ): "b147b2ea1c1847259434aa1772aa22339e3033910cba6d86c4f71467e80ca9ef",
    (
        "small-sure-hits",
        "dict",
        "lose",
    ): "e743c05989326edae695a708554864c0d9cd11d84d2f667946035a8e3e2843b9",
    (
        "small-sure-hits",
        "dict",
        "no_op",
    ): "6f4a2bc6951961e9cab8068ff2d2d2779797d838c59b6c3beafdb50f0a846048",
    (
        "small-sure-hits",
        "flat",
        "raise",
    ): "7df83ee819972e1a07aa4bac5b71e143be374b5ee7b5307c7f38f54e4b5a48c9",
    (
        "small-sure-hits",
        "flat",
        "lose",
    ): "b71c0cd0d68369da4d04ff88e432373a8135c89487a630c005ecc084589d44d4",
    (
        "small-sure-hits",
        "flat",
        "no_op",
    ): "ac13c60a4c699a7c0e0d3e884710692ccd7b94876835a5b9104e94cdf13dc20a",
    (
        "small-time-limit",
        "dict",
        "raise",
    ): "46e38208fa77fdc86e1acf46ccc79735d4e70f9237aaa139c9012eb8d80c60ef",
    (
        "small-time-limit",
        "dict",
        "lose",
    ): "8a7e026483ff4f417405eb82222c6f5f691aa0fc14bad673b011ff0ca6a448f4",
    (
        "small-time-limit",
        "dict",
        "no_op",
    ): "b52b7c3156931857ecf9adeba455fb448118e3896c27ad1dc113a260e9ddf27a",
    (
        "small-time-limit",
        "flat",
        "raise",
    ): "136a0ea8db10643a0a6de6adc35857ec5e7cb1f87ba1fe85f90a63ea66131c1d",
    (
        "small-time-limit",
        "flat",
        "lose",
    ): "977db5a2b2a3b18330028700b0e19edbe11e87d6c686757e4f674f29b510870a",
    (
        "small-time-limit",
        "flat",
        "no_op",
    ): "d2a58f64564dfdb22c5753df02bbda28ade8fb21494add41baae44ecadda76f6",
    (
        "default-20",
        "dict",
        "raise",
    ): "420f613f28997a2ea69477ba40bd84a77a392772bcda97d99e9ad60c2323e28e",
    (
        "default-20",
        "dict",
        "lose",
    ): "4185081a4c7d992cb23e84e7af9c80474461e3f653106460c3dca8f51382eaa7",
    (
        "default-20",
        "dict",
        "no_op",
    ): "0ed0b21706c4077c752801ed9a71a3ff33618dad54a50d973494d8019d8ab4ca",
    (
        "default-20",
        "flat",
        "raise",
    ): "e3e73ce1bcb4771d275c01eb9617438a13219f4bb468758871078e31027329e0",
    (
        "default-20",
        "flat",
        "lose",
    ): "57375abc20ddfb423fe52f5ffc1a8cd6b04c673de50d719f1c50e483bb4cc5e2",
    (
        "default-20",
        "flat",
        "no_op",
    ): "e53ddfeb12af2841dbe2cfcc335cc3868570ee7364cdefa462f875aa601f7e0b",
    (
        "default-160",
        "dict",
        "raise",
    ): "8edc64836c8f5b5eeb6a263a819ccdd5f172d6f906d4c22afe79dbdb18588b01",
    (
        "default-160",
        "dict",
        "lose",
    ): "35bb084716ae8e7decdbadeaee8e1a940c17b806bc2dd87a8abdba6057ed9255",
    (
        "default-160",
        "dict",
        "no_op",
    ): "a3051a22feda7cc815b4a21d086e1a784de0a83e8583b4cee82ff401d696128c",
    (
        "default-160",
        "flat",
        "raise",
    ): "4725e766e99c5b430112b455a250bdb491b1251e9c421058b51f2338355bcdd2",
    (
        "default-160",
        "flat",
        "lose",
    ): "15c3145701bda4c734393c71e1751ae2fa3456af378c64ae1fed5d70541b4f60",
    (
        "default-160",
        "flat",
        "no_op",
    ): "49e508477ce929026989f33b35c4acda3284d7118fac278d0838701c1816e7b1",
}
AEC_DIGESTS = {
    (
        "small-sure-hits",
        "dict",
        "raise",
    ): "87cfc75f748821838bb242f011df3a6ebc82e66fb6d744e35f986a0f36f33d8c",
    (
        "small-sure-hits",
        "dict",
        "lose",
    ): "16ac63d7c6ab89a0f4387b1f19874de8d0ded49e20e7a6391885939d768ddb62",
    (
        "small-sure-hits",
        "dict",
        "no_op",
    ): "9b04cad2bd98604d7a92135c474cfc8ec0453347062ae145f7550caa6f553ade",
    (
        "small-sure-hits",
        "flat",
        "raise",
    ): "7ad5873bad8a0a0a16c786e87d0b43e9e453d75da968ec390b11826b9a3fd27b",
    (
        "small-sure-hits",
        "flat",
        "lose",
    ): "803648df9bc61fa38444425a58ba6999b2b31bb3a24253e5962d364b8b933535",
    (
        "small-sure-hits",
        "flat",
        "no_op",
    ): "7663d1ec0abd9a9a95832afa62f37b947f462940b2a656fc4782d1ead43930dd",
    (
        "small-time-limit",
        "dict",
        "raise",
    ): "32c928806d94c83c446ca50b5e8b3776e01e6497d5ec182bb1b9ef28123be318",
    (
        "small-time-limit",
        "dict",
        "lose",
    ): "9bdf59a518172e11ef9bf4dcb848fcb70bee9ccac6be4253a6f37cebf0d72092",
    (
        "small-time-limit",
        "dict",
        "no_op",
    ): "a70963ce49080352077941b04d617649b38fa4583c3df38cbb3e696deb8f3877",
    (
        "small-time-limit",
        "flat",
        "raise",
    ): "fbfed26f69fad56eadde6b416fd024e04c671bee82d2c65b4a27788ad01fa15d",
    (
        "small-time-limit",
        "flat",
        "lose",
    ): "2a6e80b404c524e97e4d9167744f6cd25578eeac3c26619d27155f116d9454dd",
    (
        "small-time-limit",
        "flat",
        "no_op",
    ): "2f28184225d1f0757b03cbf8729dc629ff9ebc62717a18802ec2f22e5c099df7",
    (
        "default-20",
        "dict",
        "raise",
    ): "b62a85959a34f0412d62b060901a6f636cb72cb7c958e99715f2881eb26055f7",
    (
        "default-20",
        "dict",
        "lose",
    ): "eca25df6ebffada334fa3df05139c6470d323317515a453c95f4ab8a12663855",
    (
        "default-20",
        "dict",
        "no_op",
    ): "1c7722a23fbf00a0e1152207593a3675efd0d086f73b317394e1d00a70287090",
    (
        "default-20",
        "flat",
        "raise",
    ): "72910e4c45f84e5df62a854737e3f07c0524d5fa2e6f5820fff310f63d8aca8d",
    (
        "default-20",
        "flat",
        "lose",
    ): "d7dad50e638d8f334c5e9b458611b897f807d727e9b8687cce22229e561d9a7c",
    (
        "default-20",
        "flat",
        "no_op",
    ): "c72f8a215cb41f55ed9acb7ebe677eabdd4b01d325a9113e9df0a3f74f6e80c0",
    (
        "default-160",
        "dict",
        "raise",
    ): "797e359eeec9ab37fbb7aea8160ad8e822fb32f08a13d0f10b5d572f32bede40",
    (
        "default-160",
        "dict",
        "lose",
    ): "892ef44dcaba574c52c20d311a7d510162d557c1ecf15523b926d7cb91baed38",
    (
        "default-160",
        "dict",
        "no_op",
    ): "892ef44dcaba574c52c20d311a7d510162d557c1ecf15523b926d7cb91baed38",
    (
        "default-160",
        "flat",
        "raise",
    ): "c628a73fc1c26c0f17d3be7c20a39376e6bff27a077610f94dcab057626ea416",
    (
        "default-160",
        "flat",
        "lose",
    ): "327b839fd0813d3a293c249e53a5cb6813311bcef69eaf72470c84a4a5af518f",
    (
        "default-160",
        "flat",
        "no_op",
    ): "327b839fd0813d3a293c249e53a5cb6813311bcef69eaf72470c84a4a5af518f",
}
MODEL_DIGESTS = {
    "small-sure-hits": "e7ff286ea0bf98258c55e1b01dff773da02cb93db8c85cd8bb5b8feb17cefe60",
    "small-time-limit": "5c78ede489e0a64ceff1dd2f768f6e4800882011168d4a32f80d8050e2010eb2",
    "default-20": "f8c2c3ce3b0155bcec7b7816be6b4c1c6b45e382a2afea6b8759b21192344f24",
    "default-160": "0b39cf26176c201744424289363b63e319ef10205a3dd0c37e63f8ee918f329a",
}
# Re-recorded when the commander's observation gained its standing orders (issue 15): with
# that column dropped again the code of then reproduced the digest before,
# '900367c261493b29284509b2b0e7b1418040b656bc1e06012d17f787af411cbc'.
COMMANDER_DIGEST = "6076e968da2534fa17160afb06b640ccdaf0cd524485439b15579239e00a9f72"

RULES = ("raise", "lose", "no_op")
LAYOUTS = ("dict", "flat")


@pytest.mark.parametrize("setup", SETUPS)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("illegal_action", RULES)
def test_parallel_env_trajectories_are_unchanged(setup, layout, illegal_action):
    params, episodes, max_steps = SETUPS[setup]
    digest = parallel_digest(
        params, episodes, max_steps, layout, illegal_action, setup in DOCTRINE_ATTACKERS
    )
    assert digest == PARALLEL_DIGESTS[setup, layout, illegal_action]


@pytest.mark.parametrize("setup", SETUPS)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("illegal_action", RULES)
def test_aec_env_trajectories_are_unchanged(setup, layout, illegal_action):
    params, episodes, max_steps = SETUPS[setup]
    digest = aec_digest(
        params,
        episodes,
        AEC_STEPS.get(setup, max_steps),
        layout,
        illegal_action,
        setup in DOCTRINE_ATTACKERS,
    )
    assert digest == AEC_DIGESTS[setup, layout, illegal_action]


@pytest.mark.parametrize("setup", SETUPS)
def test_game_model_trajectories_keys_and_copies_are_unchanged(setup):
    params, episodes, max_steps = SETUPS[setup]
    assert (
        model_digest(params, episodes, max_steps, setup in DOCTRINE_ATTACKERS)
        == MODEL_DIGESTS[setup]
    )


def test_commander_mode_trajectories_are_unchanged():
    assert commander_digest() == COMMANDER_DIGEST


def _separate_kernels_tick(state, joint):
    """Fighter mode's tick as it was before ``FighterTick`` fused it: intents, then
    ``Battle.step`` (numpy's ``Generator.random`` rolls, ``advance``, ``update_sight``),
    then the views, masks and digests from the separate kernels. Returns what the state
    exposes after the tick."""
    from hiddenenvs.envs.combat import env as combat_env
    from hiddenenvs.envs.combat._tick import fighter_intents

    game, battle = state.game, state.battle
    count = len(joint)
    wanted, fires = np.empty(count, dtype=np.int32), np.empty(count, dtype=bool)
    fighter_intents(
        np.asarray(joint, dtype=np.int64),
        battle.positions,
        game.map.move_target,
        wanted,
        fires.view(np.uint8),
    )
    balance = state._run_ticks(fires, wanted, engage=False, ticks=1)
    rewards = np.repeat(state._team_rewards(balance), game.team_size)
    state._returns += rewards
    state._refresh_views(game, battle)
    digests = combat_env._chain_hashes(
        np.zeros(count, dtype=np.uint64), state._views, np.asarray(joint, dtype=np.int64)
    )
    return _exposed(state, rewards, digests)


def _exposed(state, rewards, digests):
    battle = state.battle
    return [
        state._winner,
        rewards,
        digests,
        state._views,
        state._masks,
        state._movers,
        battle.tick,
        battle.positions,
        battle.health,
        battle.alive,
        battle.belief_cells,
        battle.sees_pair,
        battle.distance_pair,
        np.stack(battle.seen),
        battle.target_of,
        battle.damage_dealt,
        battle.rng.bit_generator.state,
    ]


@pytest.mark.parametrize(
    "params",
    [
        {"map": "small", "team_size": 4, "view_radius": 2, "shaped_rewards": False},
        {"map": "small", "team_size": 12, "view_radius": 8, "hit_probability": 1.0, "damage": 60},
        {
            "map": "default",
            "team_size": 30,
            "view_radius": 5,
            "sight_range": 9,
            "fire_range": 9,
            "door_capacity": 1,
        },
    ],
)
def test_the_fused_tick_equals_the_separate_kernels(params):
    game = hiddenenvs.load_game("combat", mode="fighter", **params)
    rng = np.random.default_rng(3)
    for seed in range(2):
        state = game.new_initial_state(seed=seed)
        while not state.is_terminal() and state.battle.tick < 120:
            joint = _joint(state, rng)
            reference = state.clone()
            expected = _separate_kernels_tick(reference, joint)
            state._apply_actions(joint)
            actual = _exposed(state, state._rewards, state._last.private)
            for name, want, got in zip(
                (
                    "winner",
                    "rewards",
                    "digests",
                    "views",
                    "masks",
                    "movers",
                    "tick",
                    "positions",
                    "health",
                    "alive",
                    "beliefs",
                    "sees",
                    "distances",
                    "seen",
                    "targets",
                    "damage",
                    "generator",
                ),
                expected,
                actual,
            ):
                if isinstance(want, np.ndarray):
                    assert want.dtype == got.dtype, name
                    np.testing.assert_array_equal(
                        got, want, err_msg=f"{name}, tick {state.battle.tick}"
                    )
                else:
                    assert got == want, f"{name}, tick {state.battle.tick}"
            np.testing.assert_array_equal(state.returns(), reference.returns())

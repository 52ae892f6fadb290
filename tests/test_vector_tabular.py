"""Tabular policies in the vector envs: ``VectorEnv.play`` with a ``TabularPolicy`` (fused
in the kernel) or any batched callable, against the step loop, a Python reference of the
draws and the exact values of ``hiddenenvs.analysis``."""

from __future__ import annotations

import numpy as np
import pytest

import hiddenenvs.vector as vector
from hiddenenvs.analysis import GameTree, expected_returns
from hiddenenvs.analysis import TabularPolicy as AnalysisTabularPolicy

GAMES = [
    ("kuhn_poker", {}),
    ("leduc_holdem", {}),
    ("liars_dice", {"num_dice": 1, "faces": 4}),
    ("goofspiel", {"imp_info": True, "num_cards": 4, "points_order": "random"}),
    ("rps", {}),
]


def random_tabular_policy(game, seed: int) -> AnalysisTabularPolicy:
    """Random probabilities at every information set (some actions at zero), so that a
    draw depends on the row it reads."""
    tree = GameTree.build(game)
    rng = np.random.default_rng(seed)
    weights = rng.random(tree.num_slots) * (rng.random(tree.num_slots) < 0.8)
    totals = np.add.reduceat(weights, tree.infoset_slot_start[:-1])[tree.slot_infoset]
    counts = np.diff(tree.infoset_slot_start)[tree.slot_infoset]
    return AnalysisTabularPolicy(
        tree, np.where(totals > 0, weights / np.maximum(totals, 1e-300), 1 / counts)
    )


@pytest.mark.parametrize("name, params", GAMES)
def test_tabular_play_is_the_same_games_as_stepping_with_the_policy(name, params):
    fused, stepped, called = (vector.make(name, num_envs=5, seed=7, **params) for _ in range(3))
    policy = random_tabular_policy(fused.game, seed=1)
    fused_policy, stepped_policy, called_policy = (
        vector.TabularPolicy.from_policy(fused, policy, seed=3) for _ in range(3)
    )
    fused.reset()
    called.reset()
    step = stepped.reset()
    num_steps = 40
    reward_sums = np.zeros((5, stepped.num_players))
    episodes = np.zeros(5, dtype=np.int64)
    for _ in range(num_steps):
        step = stepped.step(stepped_policy(step))
        reward_sums += step.rewards
        episodes += step.terminated
    played = fused.play(num_steps, fused_policy)
    # A plain callable takes the batched path: one Python call per step, the same games.
    played_by_calls = called.play(num_steps, lambda vector_step: called_policy(vector_step))
    assert episodes.sum() > 0
    for result, env in ((played, fused), (played_by_calls, called)):
        np.testing.assert_array_equal(result.reward_sums, reward_sums)
        np.testing.assert_array_equal(result.episodes, episodes)
        for field in step._fields:
            np.testing.assert_array_equal(getattr(result.step, field), getattr(step, field))
        np.testing.assert_array_equal(env.deals, stepped.deals)
    # The policies' generators advanced alike: the next draws agree.
    np.testing.assert_array_equal(fused_policy(step), stepped_policy(step))


def splitmix64(state: int) -> tuple[int, int]:
    """The kernels' generator step (``_next``): the new state and its output."""
    state = (state + 0x9E3779B97F4A7C15) % 2**64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2**64
    return state, z ^ (z >> 31)


@pytest.mark.parametrize("name, params", GAMES[:4])
def test_tabular_draws_follow_the_documented_rule(name, params):
    """The compiled draws against the rule in ``TabularPolicy``'s docstring, in Python:
    the row found by its tensor, ``u`` from the generator, the first action whose
    cumulative probability exceeds it (one legal action: no draw)."""
    env = vector.make(name, num_envs=6, seed=2, **params)
    policy = vector.TabularPolicy.from_policy(env, random_tabular_policy(env.game, seed=4), seed=5)
    rows = {
        (int(player), tensor.tobytes()): row
        for row, (player, tensor) in enumerate(zip(policy.players, policy.tensors))
    }
    step = env.reset()
    draws = 0
    for _ in range(12):
        masks = step.legal_action_masks.reshape(-1, env.num_actions)
        tensors = step.observations.reshape(masks.shape[0], -1)
        players = (
            np.tile(np.arange(env.num_players), env.num_envs)
            if env.simultaneous
            else step.current_players
        )
        states = [int(s) for s in policy.generators(masks.shape[0])]
        expected = []
        for r in range(masks.shape[0]):
            legal = np.flatnonzero(masks[r])
            if len(legal) == 1:
                expected.append(int(legal[0]))
                continue
            row = rows[(int(players[r]), tensors[r].tobytes())]
            states[r], output = splitmix64(states[r])
            u = (output >> 11) / 2**53
            cumulative = np.cumsum(policy.probabilities[row])
            positive = np.flatnonzero(policy.probabilities[row] > 0)
            above = np.flatnonzero(u < cumulative[: positive[-1] + 1])
            expected.append(int(above[0]) if len(above) else int(positive[-1]))
            draws += 1
        actions = policy(step)
        np.testing.assert_array_equal(actions.reshape(-1), expected)
        np.testing.assert_array_equal(
            policy.generators(masks.shape[0]), np.array(states, np.uint64)
        )
        step = env.step(actions)
    assert draws > 20


def test_fused_kuhn_play_of_cfr_plus_matches_its_exact_value():
    from agents.cfr import CFRSolver

    env = vector.make("kuhn_poker", num_envs=1024, seed=11)
    solver = CFRSolver(env.game, variant="cfr+")
    solver.iterate(200)
    average = solver.average_policy()
    exact = expected_returns(solver.tree, average)
    env.reset()
    played = env.play(150, vector.TabularPolicy.from_policy(env, average, seed=12))
    games = played.episodes.sum()
    assert games > 50_000
    # Each env's games are independent: the standard error from the per-env means.
    per_env = played.reward_sums[:, 0] / played.episodes
    mean = played.reward_sums[:, 0].sum() / games
    standard_error = per_env.std() / np.sqrt(env.num_envs)
    assert abs(mean - exact[0]) < 4 * standard_error, (mean, exact[0], standard_error)
    assert exact[0] == pytest.approx(-1 / 18, abs=2e-3)  # Kuhn's game value for player 0


@pytest.mark.parametrize("name, params", [GAMES[1], GAMES[3]])
def test_tabular_play_on_several_threads_plays_the_same_games(name, params):
    results = []
    for threads in (1, 2, 3):
        env = vector.make(name, num_envs=7, seed=5, **params)
        env.reset()
        policy = vector.TabularPolicy.from_policy(env, random_tabular_policy(env.game, 6), seed=9)
        played = env.play(30, policy, threads=threads)
        results.append(
            (played, env.deals, policy.generators(played.step.legal_action_masks[..., 0].size))
        )
    for played, deals, generators in results[1:]:
        np.testing.assert_array_equal(played.reward_sums, results[0][0].reward_sums)
        np.testing.assert_array_equal(played.episodes, results[0][0].episodes)
        for field in played.step._fields:
            np.testing.assert_array_equal(
                getattr(played.step, field), getattr(results[0][0].step, field)
            )
        np.testing.assert_array_equal(deals, results[0][1])
        np.testing.assert_array_equal(generators, results[0][2])


def test_every_information_set_has_its_own_tensor_in_each_table_game():
    """Perfect recall makes the information-state tensor name the information set:
    from_policy checks every pair (and raises on a shared tensor), so building the
    table is the check; the hash index finds each set's own row."""
    for name, params in [
        ("kuhn_poker", {}),
        ("leduc_holdem", {}),
        ("liars_dice", {"num_dice": 1}),
        ("goofspiel", {"num_cards": 4}),
        ("goofspiel", {"imp_info": True, "num_cards": 4, "points_order": "random"}),
    ]:
        env = vector.make(name, num_envs=1, **params)
        tree = GameTree.build(env.game)
        policy = vector.TabularPolicy.from_policy(env, AnalysisTabularPolicy.uniform(tree))
        assert len(policy.players) == tree.num_infosets
        tensors = policy.tensors.reshape(tree.num_infosets, -1)
        for row in range(0, tree.num_infosets, max(1, tree.num_infosets // 200)):
            assert policy.index.lookup(int(policy.players[row]), tensors[row]) == row


def test_two_information_sets_with_one_tensor_are_refused():
    env = vector.make("kuhn_poker", num_envs=1)
    policy = vector.TabularPolicy.from_policy(
        env, AnalysisTabularPolicy.uniform(GameTree.build(env.game))
    )
    players = np.concatenate([policy.players, policy.players[:1]])
    tensors = np.concatenate([policy.tensors, policy.tensors[:1]])
    probabilities = np.concatenate([policy.probabilities, policy.probabilities[:1]])
    with pytest.raises(
        ValueError,
        match=f"information sets 0 and {len(players) - 1} of player 0 have the same tensor",
    ):
        vector.TabularPolicy(env.game, players, tensors, probabilities)


def test_an_unknown_information_set_names_the_env_and_the_player():
    env = vector.make("leduc_holdem", num_envs=4, seed=0)
    full = vector.TabularPolicy.from_policy(
        env, AnalysisTabularPolicy.uniform(GameTree.build(env.game))
    )
    keep = full.players == 0  # player 1's information sets are missing
    partial = vector.TabularPolicy(
        env.game, full.players[keep], full.tensors[keep], full.probabilities[keep]
    )
    step = env.reset()
    with pytest.raises(
        ValueError, match="env 0: player 1's information state is not in the policy's table"
    ):
        env.play(3, partial)
    env.reset()
    step = env.step(partial(step))  # player 0's decisions are in the table
    with pytest.raises(
        ValueError, match="TabularPolicy: env 0: player 1's information state is not"
    ):
        partial(step)


def test_bad_tables_and_policies_are_clear_errors():
    env = vector.make("kuhn_poker", num_envs=3, seed=0)
    tree = GameTree.build(env.game)
    policy = vector.TabularPolicy.from_policy(env, AnalysisTabularPolicy.uniform(tree))
    with pytest.raises(ValueError, match="row 0's probabilities must be >= 0 and sum to 1"):
        vector.TabularPolicy(env.game, policy.players, policy.tensors, policy.probabilities * 2)
    with pytest.raises(ValueError, match=r"players \[N\], tensors \[N, 11\]"):
        vector.TabularPolicy(env.game, policy.players, policy.tensors[:, :5], policy.probabilities)
    with pytest.raises(ValueError, match="the policy is for leduc_holdem"):
        leduc = GameTree.build(vector.make("leduc_holdem").game)
        vector.TabularPolicy.from_policy(env, AnalysisTabularPolicy.uniform(leduc))
    with pytest.raises(ValueError, match="observation_type='information_state'"):
        vector.TabularPolicy.from_policy(
            vector.make("kuhn_poker", observation_type="observation"),
            AnalysisTabularPolicy.uniform(tree),
        )
    with pytest.raises(ValueError, match="more than 2,000,000 nodes; a table needs every"):
        vector.TabularPolicy.from_policy(vector.make("othello"), {})
    leduc_env = vector.make("leduc_holdem", num_envs=3, seed=0)
    leduc_env.reset()
    with pytest.raises(ValueError, match="the TabularPolicy is for kuhn_poker"):
        leduc_env.play(1, policy)
    with pytest.raises(ValueError, match="call reset\\(\\) first"):
        env.play(1, policy)
    env.reset()
    with pytest.raises(ValueError, match="num_steps must be an int >= 0"):
        env.play(-1, policy)
    with pytest.raises(ValueError, match="threads must be an int >= 1"):
        env.play(1, policy, threads=0)
    with pytest.raises(
        TypeError, match="policy must be a RandomLegalPolicy, a TabularPolicy or a callable"
    ):
        env.play(1, "fold")
    with pytest.raises(ValueError, match=r"actions must be integers of shape \(3,\)"):
        env.play(1, lambda step: np.zeros(2, dtype=np.int64))
    env.play(2, policy)  # seeds the policy's generators for 3 rows
    with pytest.raises(ValueError, match="generators serve 3"):
        policy(vector.make("kuhn_poker", num_envs=2, seed=0).reset())


def test_play_with_a_random_legal_policy_is_play_random():
    env, other = (vector.make("leduc_holdem", num_envs=4, seed=3) for _ in range(2))
    env.reset()
    other.reset()
    played = env.play(25, vector.RandomLegalPolicy(2), threads=2)
    expected = other.play_random(25, vector.RandomLegalPolicy(2))
    np.testing.assert_array_equal(played.reward_sums, expected.reward_sums)
    np.testing.assert_array_equal(played.step.observations, expected.step.observations)


def test_a_torch_network_plays_the_whole_batch_in_one_call_per_step():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    env, stepped = (vector.make("leduc_holdem", num_envs=8, seed=4) for _ in range(2))
    network = torch.nn.Linear(env.observation_shape[0], env.num_actions)
    calls = []

    @torch.no_grad()
    def greedy(step: vector.VectorStep) -> np.ndarray:
        calls.append(step.observations.shape[0])
        logits = network(torch.from_numpy(np.array(step.observations)))
        legal = torch.from_numpy(step.legal_action_masks.astype(bool))
        return logits.masked_fill(~legal, -torch.inf).argmax(dim=1).numpy()

    env.reset()
    played = env.play(30, greedy)
    assert calls == [8] * 30  # one call per step, for the whole batch
    step = stepped.reset()
    reward_sums = np.zeros((8, 2))
    for _ in range(30):
        step = stepped.step(greedy(step))
        reward_sums += step.rewards
    np.testing.assert_array_equal(played.reward_sums, reward_sums)
    np.testing.assert_array_equal(played.step.observations, step.observations)
    assert played.episodes.sum() > 0


def test_a_table_that_plays_an_illegal_action_is_refused():
    env = vector.make("leduc_holdem", num_envs=2, seed=0)
    full = vector.TabularPolicy.from_policy(
        env, AnalysisTabularPolicy.uniform(GameTree.build(env.game))
    )
    always_fold = np.zeros_like(full.probabilities)
    always_fold[:, 0] = 1  # folding is illegal before any bet
    folding = vector.TabularPolicy(env.game, full.players, full.tensors, always_fold)
    step = env.reset()
    assert not step.legal_action_masks[:, 0].any()
    with pytest.raises(
        ValueError, match="TabularPolicy: env 0: the policy's table puts player 0 on an illegal"
    ):
        folding(step)
    with pytest.raises(
        ValueError, match="play: env 0: the policy's table puts player 0 on an illegal"
    ):
        env.play(1, folding)

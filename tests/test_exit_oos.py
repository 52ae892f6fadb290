"""ExIt-OOS: the rollout table equals per-step network calls, the EMA reweighting is the
same on both OOS backends, the game reservoir keeps the paper's decay, the KL step
imitates its targets, worker processes change nothing, SIGKILL + resume changes nothing,
and the apprentice learns Leduc."""

import time

import numpy as np
import pytest
import torch

import hiddenenvs
from agents.checkpoint import load_checkpoint
from agents.config import ConfigError, config_from_dict
from agents.exit_oos import ApprenticeRollout, ExItOOS, ExItOOSConfig, SelfPlayer
from agents.loop import train
from agents.memories import GameReservoir
from agents.networks import AveragePolicyAgent, mlp
from agents.search.oos import OOS, rollout_table, search_concurrently
from hiddenenvs.analysis import GameTree
from test_loop_resume import (
    _assert_same_state,
    kill_between_checkpoints_and_resume,
    resumed_checkpoint_equals_straight,
)

RUN = {
    "env": {"name": "kuhn_poker"},
    "trainer": {
        "name": "exit_oos",
        "params": {
            "hidden_sizes": [16],
            "games_per_iteration": 8,
            "simulations_per_move": 100,
            "train_steps": 4,
            "batch_size": 16,
            "workers": 0,
        },
    },
    "seed": 4,
    "budget": {"iterations": 12},
    "evaluation": {"every_iterations": 4},
    "checkpoint_every_episodes": None,
    "checkpoint_every_iterations": 2,
    "progress_bar": False,
}


def _apprentice(game, hidden=(16,), seed=0) -> ApprenticeRollout:
    torch.manual_seed(seed)
    info = game.info
    architecture = {
        "input_size": int(np.prod(info.information_state_tensor_shape)),
        "hidden_sizes": list(hidden),
        "num_actions": info.num_distinct_actions,
    }
    network = mlp(
        architecture["input_size"], architecture["hidden_sizes"], architecture["num_actions"]
    )
    return ApprenticeRollout(AveragePolicyAgent(network, architecture))


@pytest.mark.parametrize(
    "game_name, params", [("leduc_holdem", {}), ("goofspiel", {"num_cards": 4, "imp_info": True})]
)
def test_rollout_table_is_the_network_at_every_rollout_step(game_name, params):
    """One batched forward over the tree's information sets gives, at any node, what the
    model path's per-step call gives there (the same network; float32 noise only)."""
    game = hiddenenvs.load_game(game_name, **params)
    tree = GameTree.build(game)
    rho = _apprentice(game)
    table = rollout_table(tree, rho)
    decision_nodes = np.flatnonzero(tree.infoset >= 0)
    for node in np.random.default_rng(0).choice(decision_nodes, size=60, replace=False):
        state, infoset = tree.replay(int(node)), int(tree.infoset[node])
        player = int(tree.infoset_player[infoset])
        simultaneous = state.current_player() == hiddenenvs.game.SIMULTANEOUS
        mask = state.legal_actions_mask(player if simultaneous else None)
        step = rho([state], np.array([player]), np.asarray(mask)[None])[0]
        slots = slice(tree.infoset_slot_start[infoset], tree.infoset_slot_start[infoset + 1])
        np.testing.assert_allclose(
            table[slots], step[tree.slot_action[slots]], rtol=1e-6, atol=1e-9
        )
        assert step[np.asarray(mask) == 0].sum() == 0.0


def _integer_rollout(states, players, masks):
    """A deterministic non-uniform rho with exact (integer) weights: the same bits in any batch."""
    weights = np.zeros(masks.shape)
    for row, (state, player) in enumerate(zip(states, players)):
        offset = int(np.asarray(state.information_state_tensor(int(player))).sum())
        weights[row] = (1 + (np.arange(masks.shape[1]) + offset + 2 * int(player)) % 3) * masks[row]
    return weights / weights.sum(axis=1, keepdims=True)


@pytest.mark.parametrize(
    "reweighting, rollout", [("ema", None), ("none", _integer_rollout), ("ema", _integer_rollout)]
)
def test_tree_backend_with_a_rollout_table_and_ema_draws_the_samples_of_the_model_path(
    reweighting, rollout
):
    game = hiddenenvs.load_game("leduc_holdem")
    tree = GameTree.build(game)
    options = dict(seed=5, targeting="ist", reweighting=reweighting)
    compiled = OOS(game, 0, backend="tree", **options)
    model = OOS(
        game,
        0,
        backend="model",
        **options,
        **({} if rollout is None else {"rollout_policy": rollout}),
    )
    if rollout is not None:
        compiled.set_rollout_policy(rollout)
    for history, iterations in (((), 200), ([1, 2], 200), ([1, 2, 1, 1, 2], 300)):
        key = game.state_from_history(history).information_state_key(0) if history else ()
        for search in (compiled, model):
            search.search(key, iterations=iterations)
    for strategy in ("average", "current"):
        np.testing.assert_allclose(
            compiled.tables.tabular_policy(tree, strategy).slot_probabilities,
            model.tables.tabular_policy(tree, strategy).slot_probabilities,
            atol=1e-12,
        )
    assert compiled.missed_targets == model.missed_targets
    assert compiled.ema_ratio == pytest.approx(model.ema_ratio, rel=1e-12)
    assert (compiled.ema_ratio != 1.0) == (reweighting == "ema")  # targeted samples moved r
    compiled.reset()
    assert compiled.ema_ratio == 1.0


class RowWiseRollout:
    """A non-uniform rollout policy whose rows do not depend on the batch around them
    (a network's batched forward may differ in the last bits), counting its calls."""

    def __init__(self):
        self.calls = self.rows = 0

    def __call__(self, states, players, masks):
        self.calls, self.rows = self.calls + 1, self.rows + len(states)
        sums = np.array(
            [[float(np.sum(s.information_state_tensor(int(p))))] for s, p in zip(states, players)]
        )
        weights = np.asarray(masks, dtype=np.float64) * (
            1.0 + np.arange(masks.shape[1]) + sums % 3.0
        )
        return weights / weights.sum(axis=1, keepdims=True)


def test_concurrent_searches_equal_searches_run_alone_with_one_call_per_round():
    """The paper's state machine: four model-path OOS searches suspended at their rollout
    steps and answered together fill the same tables as each run alone, in far fewer
    calls of the rollout policy."""
    game = hiddenenvs.load_game("leduc_holdem")
    keys = [
        game.state_from_history(h).information_state_key(0)
        for h in ([0, 1], [1, 2], [2, 0], [0, 0])
    ]
    tables = {}
    for mode in ("alone", "together"):
        rollout = RowWiseRollout()
        searches = [
            OOS(game, 0, seed=n, backend="model", rollout_policy=rollout) for n in range(len(keys))
        ]
        if mode == "alone":
            for search, key in zip(searches, keys):
                search.search(key, iterations=150)
        else:
            search_concurrently(
                [s.search_steps(k, iterations=150) for s, k in zip(searches, keys)], rollout
            )
        tables[mode] = ([s.tables.state_dict() for s in searches], rollout.calls, rollout.rows)
    (alone, alone_calls, alone_rows), (together, together_calls, together_rows) = (
        tables["alone"],
        tables["together"],
    )
    _assert_same_state(alone, together)
    assert together_rows == alone_rows and alone_calls == alone_rows  # the same rollout steps
    assert together_calls < alone_calls / 3  # ... answered in rounds over the four searches


def test_self_play_of_concurrent_games_equals_games_played_alone():
    config = ExItOOSConfig(
        hidden_sizes=[16], simulations_per_move=40, backend="model", concurrent_games=3, workers=0
    )
    game = hiddenenvs.load_game("goofspiel", num_cards=4, imp_info=True)
    info = game.info
    architecture = {
        "input_size": int(np.prod(info.information_state_tensor_shape)),
        "hidden_sizes": [16],
        "num_actions": info.num_distinct_actions,
    }
    player = SelfPlayer(game, config, architecture)
    seeds = [11, 12, 13, 14]
    player.rollout = together_rollout = RowWiseRollout()
    together = player.play_many(seeds)  # a round of 3 games, then 1
    player.rollout = alone_rollout = RowWiseRollout()
    alone = [player.play(seed) for seed in seeds]
    _assert_same_state(alone, together)
    assert together_rollout.rows == alone_rollout.rows
    assert (
        together_rollout.calls < 0.7 * alone_rollout.calls
    )  # 3 games' steps per call, then 1 game's
    # A real apprentice through the same path: one batched forward per round of steps.
    forwards = []
    player.rollout = _apprentice(game)
    original = player.rollout.agent.policy_probabilities_batch
    player.rollout.agent.policy_probabilities_batch = lambda *a: (
        forwards.append(len(a[0])) or original(*a)
    )
    games = player.play_many(seeds[:3])
    assert len(games) == 3 and max(forwards) == 6  # 3 games x 2 simultaneous movers in one forward


def test_game_reservoir_keeps_each_game_with_the_decayed_probability():
    """Game n of N is kept with probability a(n) prod_{m > n} (1 - a(m) / K), a(m) =
    min(1, beta K / m) (a(n) = 1 for the first K): newer games are favoured for beta > 1."""
    capacity, decay, total, runs = 50, 2.0, 600, 300
    rng = np.random.default_rng(0)
    hits = np.zeros(total)
    for _ in range(runs):
        reservoir = GameReservoir(capacity, decay)
        for n in range(total):
            reservoir.add(rng, {"id": np.array([n, n])})
        assert (
            len(reservoir) == capacity
            and reservoir.seen == total
            and reservoir.num_moves == 2 * capacity
        )
        hits[[int(g["id"][0]) for g in reservoir.games]] += 1
    accept = np.minimum(1.0, decay * capacity / np.arange(1, total + 1))
    accept[:capacity] = 1.0
    survive = np.ones(total)
    for n in range(total):
        later = np.arange(max(n + 1, capacity), total)
        survive[n] = accept[n] * np.prod(1.0 - accept[later] / capacity)
    for block in (slice(0, 100), slice(250, 350), slice(500, 600)):
        expected = survive[block].mean() * runs
        assert abs(hits[block].mean() - expected) < 0.1 * expected + 0.5, (
            block,
            hits[block].mean(),
            expected,
        )
    assert hits[500:].mean() > 2 * hits[100:200].mean()  # recent games favoured, unlike Algorithm R
    copy = GameReservoir(capacity, decay)
    copy.load_state_dict(reservoir.state_dict())
    assert copy.seen == reservoir.seen
    np.testing.assert_array_equal(
        copy.sample(8, np.random.default_rng(1))["id"],
        reservoir.sample(8, np.random.default_rng(1))["id"],
    )


def test_kl_steps_imitate_the_expert_targets_and_never_the_illegal_actions():
    torch.set_num_threads(1)  # as the loop: tiny networks, no thread contention
    game = hiddenenvs.load_game("leduc_holdem")
    learner = ExItOOS(
        game, ExItOOSConfig(hidden_sizes=[32], batch_size=4, learning_rate=0.01), seed=0
    )
    observations = np.eye(4, 32, dtype=np.float32)
    masks = np.array([[1, 1, 0], [1, 1, 1], [0, 1, 1], [1, 1, 1]], dtype=np.int8)
    targets = np.array(
        [[0.2, 0.8, 0], [0.5, 0.25, 0.25], [0, 1.0, 0], [0.1, 0.1, 0.8]], dtype=np.float32
    )
    learner.reservoir.add(
        learner.rng, {"observation": observations, "action_mask": masks, "target": targets}
    )
    losses = [learner.train_step() for _ in range(400)]
    assert losses[-1] < 0.02 < losses[0]
    probabilities = learner.evaluation_agent(0).policy_probabilities_batch(observations, masks)
    np.testing.assert_allclose(probabilities, targets, atol=0.06)
    assert probabilities[masks == 0].max() == 0.0


def test_average_tremble_gives_an_average_where_the_current_strategy_does_not_lead():
    # Player 1 on Leduc after check, raise, call, a public jack and a check: the targeted
    # samples reach it, and its regrets favour the first action in every seed, but the
    # searcher's own reach under its current strategy is 0 on every sample in seed 1 (and
    # the average, weighted by that reach, stays 0: a uniform target); with a tremble the
    # average follows the regrets.
    game = hiddenenvs.load_game("leduc_holdem")
    key = (
        ("deal", None),
        ("deal", "Q"),
        ("call", None),
        ("raise", None),
        ("call", None),
        ("J", None),
        ("call", None),
    )
    legal = (1, 2)  # call (check) and raise
    averages = {}
    for tremble in (0.0, 0.1):
        search = OOS(
            game,
            1,
            targeting="pst",
            reweighting="ema",
            backend="tree",
            seed=1,
            average_tremble=tremble,
        )
        search.search(key, iterations=20_000)
        infoset = search.tree.infoset_index[(1, key)]
        start, stop = search.tree.infoset_slot_start[infoset : infoset + 2]
        assert search.tables.regret[start] > 0 > search.tables.regret[start + 1]
        averages[tremble] = search.tables.average[start:stop].copy()
        policy = search.policy(key, legal)
    assert averages[0.0].sum() == 0.0  # OOS as published: no average, a uniform answer
    assert policy[1] > 0.99  # trembling: the action the regrets choose
    with pytest.raises(ValueError, match="average_tremble and prior_regret need the tree backend"):
        OOS(game, 0, backend="model", average_tremble=0.1)


def test_public_state_targets_add_the_searches_answers_at_the_other_hands():
    game = hiddenenvs.load_game("leduc_holdem")
    config = ExItOOSConfig(
        hidden_sizes=[16],
        simulations_per_move=2_000,
        targeting="pst",
        workers=0,
        average_tremble=0.1,
        public_state_targets=True,
    )
    player = SelfPlayer(game, config, _apprentice(game).agent.architecture)
    played = player.play(3)
    rows = played["game"]
    assert len(rows["target"]) > played["decisions"]  # other hands' answers were stored
    for tensor, mask, target in zip(rows["observation"], rows["action_mask"], rows["target"]):
        assert target[mask == 0].sum() == 0.0 and target.sum() == pytest.approx(1.0, abs=1e-6)
    # Distinct information states, not copies of the decisions' rows.
    assert len({row.tobytes() for row in rows["observation"]}) > played["decisions"]
    with pytest.raises(ConfigError, match="public_state_targets"):
        ExItOOSConfig(targeting="ist", public_state_targets=True)


def test_prior_regret_starts_the_search_at_the_apprentice():
    game = hiddenenvs.load_game("leduc_holdem")
    rollout = _apprentice(game)
    search = OOS(game, 0, targeting="pst", backend="tree", seed=0, prior_regret=50.0)
    search.set_rollout_policy(rollout)
    search.reset()
    table = rollout_table(search.tree, rollout)
    # Regret matching on the reset regrets is the apprentice at every information set.
    np.testing.assert_allclose(search.tables.regret, 50.0 * table)
    assert OOS(game, 0, backend="tree", prior_regret=50.0).tables.regret.sum() == 0.0  # no prior
    with pytest.raises(ConfigError, match="prior_regret"):
        ExItOOSConfig(prior_regret=-1.0)


def test_config_errors_name_the_key():
    for params, key in (
        ({"reweighting": "mean"}, "reweighting"),
        ({"targeting": "x"}, "targeting"),
        ({"workers": -1}, "workers"),
        ({"simulations_per_move": 0}, "simulations_per_move"),
        ({"average_tremble": 1.5}, "average_tremble"),
    ):
        with pytest.raises(ConfigError, match=key):
            config_from_dict(
                {**RUN, "trainer": {"name": "exit_oos", "params": params}, "output_dir": "x"}
            )


def test_worker_processes_store_the_games_of_the_single_process_run(tmp_path):
    states = []
    for workers in (0, 2):
        run = {
            **RUN,
            "trainer": {
                "name": "exit_oos",
                "params": {**RUN["trainer"]["params"], "workers": workers},
            },
            "budget": {"iterations": 2},
            "output_dir": str(tmp_path / f"w{workers}"),
        }
        train(config_from_dict(run))
        states.append(load_checkpoint(tmp_path / f"w{workers}" / "checkpoint.pt")["learner"])
    assert len(states[0]["reservoir"]["games"]) == 16
    _assert_same_state(*states)


def test_sigkill_then_resume_equals_an_uninterrupted_run(tmp_path):
    # Long enough (about 0.1 s an iteration) for the kill to land between checkpoints.
    run = {
        **RUN,
        "budget": {"iterations": 40},
        "evaluation": {"every_iterations": 10},
        "trainer": {
            "name": "exit_oos",
            "params": {**RUN["trainer"]["params"], "simulations_per_move": 400},
        },
    }
    straight = tmp_path / "straight"
    train(config_from_dict({**run, "output_dir": str(straight)}))
    killed = tmp_path / "killed"
    kill_between_checkpoints_and_resume(run, killed, "iterations", pause=0.5)
    final_straight, final_resumed = resumed_checkpoint_equals_straight(
        straight, killed, "iterations", 40
    )
    _assert_same_state(final_straight["loop"]["rng"], final_resumed["loop"]["rng"])


def test_the_apprentice_learns_leduc(tmp_path):
    """Eight tiny iterations cut the untrained network's exact exploitability by a quarter (2.47 -> 1.59)."""
    run = {
        **RUN,
        "env": {"name": "leduc_holdem"},
        "output_dir": str(tmp_path),
        "trainer": {
            "name": "exit_oos",
            "params": {
                "hidden_sizes": [64],
                "games_per_iteration": 16,
                "simulations_per_move": 500,
                "train_steps": 64,
                "workers": 0,
            },
        },
        "budget": {"iterations": 8},
        "evaluation": {"every_iterations": 8},
    }
    train(config_from_dict(run))
    with (tmp_path / "metrics.csv").open() as handle:
        import csv

        exploitability = [float(row["exploitability"]) for row in csv.DictReader(handle)]
    assert exploitability[-1] < 0.75 * exploitability[0], exploitability


class StepContext:
    """What a learner's step uses of the loop: its generator and deadline (``step_cut`` is set back)."""

    def __init__(self, seed: int, deadline: float | None):
        self.rng = np.random.default_rng(seed)
        self.deadline = deadline
        self.step_cut = False

    def time_left(self) -> float:
        return float("inf") if self.deadline is None else self.deadline - time.perf_counter()


@pytest.mark.parametrize("workers", [0, 1])
def test_a_step_past_the_deadline_is_cut_and_keeps_no_game(workers):
    """Past the deadline no further piece of a step's games starts (one game a piece here),
    the step is cut and nothing of it reaches the reservoir; without one it plays all."""
    params = {**RUN["trainer"]["params"], "workers": workers, "concurrent_games": 1}
    learner = ExItOOS(hiddenenvs.load_game("kuhn_poker"), ExItOOSConfig(**params), seed=0)
    try:
        context = StepContext(0, deadline=time.perf_counter())
        report = learner.step(context)
        assert context.step_cut and report.episodes == 0 and len(learner.reservoir) == 0
        context = StepContext(0, deadline=None)
        report = learner.step(context)
        assert (
            not context.step_cut
            and report.episodes == len(learner.reservoir) == params["games_per_iteration"]
        )
    finally:
        learner.close()


@pytest.mark.slow  # spawn workers importing torch: a minute on 2 loaded cores
def test_ctrl_c_ends_a_run_with_worker_processes_and_leaves_none(tmp_path):
    import yaml
    from conftest import interrupt_training_with_workers

    params = {**RUN["trainer"]["params"], "workers": 2, "simulations_per_move": 20_000}
    run = {
        **RUN,
        "trainer": {"name": "exit_oos", "params": params},
        "budget": {"iterations": None, "seconds": 600},
        "output_dir": str(tmp_path / "run"),
    }
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump(run))
    interrupt_training_with_workers(["--config", str(config)], tmp_path / "run" / "checkpoint.pt")


def test_a_checkpoint_and_agent_file_written_before_exit_oos_became_a_package_still_load_and_play():
    """tests/data/exit_oos_kuhn_before_package*.pt: a 3-iteration Kuhn run's checkpoint.pt and
    policy_player0.pt, written by agents/exit_oos.py (commit 55d0788) before it became the
    package agents/exit_oos/. The figures are those the old module computed from these files."""
    from pathlib import Path

    from agents.base import load_agent_file
    from agents.runs import learner_from_checkpoint

    data = Path(__file__).parent / "data"
    learner = learner_from_checkpoint(load_checkpoint(data / "exit_oos_kuhn_before_package.pt"))
    assert isinstance(learner, ExItOOS)
    assert (len(learner.reservoir), learner.reservoir.num_moves) == (24, 51)
    state = learner.game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    tensor, mask = state.information_state_tensor(0)[None], state.legal_actions_mask(0)[None]
    before = [0.5250846147537231, 0.47491544485092163]
    np.testing.assert_allclose(
        learner.evaluation_agent(0).policy_probabilities_batch(tensor, mask)[0], before, rtol=1e-6
    )
    agent = load_agent_file(data / "exit_oos_kuhn_before_package_policy_player0.pt")
    assert isinstance(agent, AveragePolicyAgent)
    np.testing.assert_allclose(agent.policy_probabilities_batch(tensor, mask)[0], before, rtol=1e-6)
    # It plays on: one expert iteration from the loaded state, as the old module played it.
    report = learner.step(StepContext(11, deadline=None))
    assert (report.episodes, report.metrics["reservoir_moves"]) == (8, 68.0)
    assert report.metrics["kl_loss"] == pytest.approx(0.26790202781558037, rel=1e-5)
    np.testing.assert_allclose(
        learner.evaluation_agent(0).policy_probabilities_batch(tensor, mask)[0],
        [0.519848108291626, 0.4801519215106964],
        rtol=1e-5,
    )

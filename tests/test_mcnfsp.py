"""MCNFSP: the search is a best response to a fixed opponent policy; tiny training; errors."""

import numpy as np
import pytest
import torch
from torch import nn

import hiddenenvs
from agents.config import ConfigError, load_config
from agents.loop import train
from agents.mcnfsp import MCNFSP, BestResponseSearch, MCNFSPConfig, architecture_for, utility_scale
from agents.networks import PolicyValueNetwork
from hiddenenvs.analysis import GameTree, TabularPolicy, best_response
from hiddenenvs.beliefs import consistent_histories
from hiddenenvs.game import CHANCE


def _search(
    game, player, opponent_policy, simulations, seed=0, opponent_backup="expectation", **settings
):
    config = MCNFSPConfig(
        network="mlp",
        hidden_sizes=[16],
        num_simulations=simulations,
        opponent_backup=opponent_backup,
        **settings,
    )
    architecture = architecture_for(game, config)
    torch.manual_seed(seed)
    return BestResponseSearch(
        game,
        player,
        PolicyValueNetwork(architecture),
        architecture,
        opponent_policy,
        config,
        np.random.default_rng(seed),
    )


@pytest.mark.parametrize("opponent_backup", ["expectation", "sample"])
def test_search_best_responds_to_a_fixed_policy_in_rps(opponent_backup):
    # Opponent plays rock 60%: paper earns 0.4, rock 0, scissors -0.4 (the untrained
    # network's prior and value know nothing of this).
    game = hiddenenvs.load_game("rps")
    fixed = np.array([0.6, 0.2, 0.2])
    for player in (0, 1):
        search = _search(
            game,
            player,
            lambda state, q: fixed,
            simulations=400,
            seed=player,
            opponent_backup=opponent_backup,
        )
        counts = search.visit_counts(game.new_initial_state().seat_view(player))
        assert counts.argmax() == 1 and counts[1] > 0.6 * counts.sum(), counts


def test_gumbel_root_search_best_responds_with_few_simulations():
    # Against rock 60%, 6 simulations among 3 actions (exact values: the expectation
    # backup; a sampled one is noisy at 6 simulations): every action is tried, paper
    # (0.4) survives the halving and is played, and the improved policy f_BR learns
    # puts nearly all its weight on paper.
    game = hiddenenvs.load_game("rps")
    for seed in range(3):
        search = _search(
            game, seed % 2, lambda state, q: np.array([0.6, 0.2, 0.2]), simulations=6, seed=seed
        )
        search.config.root_selection = "gumbel"
        acting, target, _ = search.search_result(game.new_initial_state().seat_view(seed % 2))
        np.testing.assert_array_equal(acting, [0.0, 1.0, 0.0])
        assert target[1] > 0.99 and target.sum() == pytest.approx(1.0), target


def test_gumbel_candidates_of_a_round_share_their_roots_hit_rolls():
    # Common random numbers: 8 simulations among 4 sampled orders are halved in 2 rounds
    # (4 candidates once, then 2 twice); each pass over a round's candidates starts them all
    # from one reseeded root, so their hit rolls are the same stream, and the next pass
    # draws a new one.
    from hiddenenvs.envs.combat.doctrine import doctrine_action

    game = hiddenenvs.load_game("combat", map="small")
    root = game.new_initial_state(seed=3)

    def doctrine(state, q):
        probabilities = np.zeros(game.info.num_distinct_actions)
        probabilities[doctrine_action(state, q, None)] = 1.0
        return probabilities

    search = _search(game, 0, doctrine, simulations=8)
    search.config.root_selection, search.config.gumbel_actions = "gumbel", 4
    search.config.rollout_decisions = 2
    roots = []
    simulate = search._simulate

    def recording(state, nodes, key, root_index=None):
        roots.append((root_index, state.battle.rng.bit_generator.state["state"]["state"]))
        simulate(state, nodes, key, root_index=root_index)

    search._simulate = recording
    search.search_result(root.seat_view(0), root)
    passes = [roots[0:4], roots[4:6], roots[6:8]]
    assert len(roots) == 8
    for one_pass in passes:
        assert len({stream for _, stream in one_pass}) == 1  # one root's hit rolls
        assert len({index for index, _ in one_pass}) == len(one_pass)  # each candidate once
    assert len({one_pass[0][1] for one_pass in passes}) == 3  # a new stream per pass
    assert {index for index, _ in passes[1]} == {index for index, _ in passes[2]}


@pytest.mark.parametrize(
    "name, fixed", [("rps", [0.36, 0.33, 0.31]), ("matching_pennies", [0.52, 0.48])]
)
def test_expectation_backup_gives_the_exact_action_values_of_one_shot_games(name, fixed):
    # Near the equilibrium, where the sampled search's noise (~0.1 per action at 100
    # simulations) swamps the gaps (here 0.02-0.05): the expectation backup's root values
    # are the exact best-response action values, and the most visited action the best one.
    game = hiddenenvs.load_game(name)
    fixed = np.array(fixed)
    for player in (0, 1):
        initial = game.new_initial_state()
        exact = {}
        for action in initial.legal_actions(player):
            exact[action] = 0.0
            for other in initial.legal_actions(1 - player):
                state = initial.clone()
                state.apply_actions([action, other] if player == 0 else [other, action])
                exact[action] += fixed[other] * state.returns()[player]
        search = _search(game, player, lambda state, q: fixed, simulations=200, seed=player)
        values = search.action_values(initial.seat_view(player))
        assert values.keys() == exact.keys()
        for action in exact:
            assert values[action] == pytest.approx(exact[action], abs=1e-6)
        counts = search.visit_counts(initial.seat_view(player))
        assert counts.argmax() == max(exact, key=exact.get), (exact, counts)


def _exact_action_values(game, tree, player, key, opponent, response):
    """Value of each legal action at ``player``'s information set ``key``: the belief
    posterior over its histories (opponent reach under ``opponent``), then ``response``
    for ``player`` and ``opponent`` for the other, by exact recursion."""

    def value(state):
        if state.is_terminal():
            return state.returns()[player]
        mover = state.current_player()
        if mover == CHANCE:
            outcomes = state.chance_outcomes()
        else:
            policy = response if mover == player else opponent
            outcomes = list(policy(state, mover).items())
        return sum(p * value(state.child(a)) for a, p in outcomes if p > 0)

    histories = consistent_histories(game, player, key, opponent)
    legal = game.state_from_history(histories[0][0]).legal_actions()
    return {
        a: sum(w * value(game.state_from_history(h).child(a)) for h, w in histories) for a in legal
    }


def _kuhn_with_a_mixed_policy():
    """Kuhn, its tree, and a fixed random mixed policy (Dirichlet(1) at every set, seed 7)."""
    game = hiddenenvs.load_game("kuhn_poker")
    tree = GameTree.build(game)
    rng = np.random.default_rng(7)
    slots = np.zeros(tree.num_slots)
    for infoset in range(tree.num_infosets):
        start, end = tree.infoset_slot_start[infoset], tree.infoset_slot_start[infoset + 1]
        slots[start:end] = rng.dirichlet(np.ones(end - start))
    return game, tree, TabularPolicy(tree, slots)


@pytest.mark.parametrize("player", [0, 1])
def test_search_picks_the_exact_best_response_in_kuhn(player):
    # A fixed, mixed opponent; at every information set of the searcher whose best action
    # is better by a clear margin, the most visited action is the exact best response's
    # (computed on the enumerated tree: analysis.best_response, and the action values).
    game, tree, opponent = _kuhn_with_a_mixed_policy()
    _, response = best_response(tree, opponent, player)
    search = _search(
        game, player, lambda state, q: _dense(opponent(state, q), game), simulations=1500
    )
    checked = 0
    for infoset in np.flatnonzero(tree.infoset_player == player):
        state = tree.representative_states()[infoset]
        key = state.information_state_key(player)
        values = _exact_action_values(game, tree, player, key, opponent, response)
        best = max(values, key=values.get)
        assert response(state, player)[best] == 1.0  # the tree's best response agrees
        if max(values.values()) - sorted(values.values())[-2] < 0.05:
            continue
        counts = search.visit_counts(state.seat_view(player))
        assert counts.argmax() == best, (key, values, counts)
        checked += 1
    assert checked >= 4


def test_expectation_backup_values_are_close_to_the_exact_ones_in_kuhn():
    # Against a fixed, mixed opponent. At the searcher's last decisions (after a bet) the
    # value of each action is exact but for the two hidden opponent cards, drawn from the
    # belief posterior per simulation; at the first decision Q also averages the searcher's
    # exploratory later choices, so it is close to, not at, the best response's value.
    game, tree, opponent = _kuhn_with_a_mixed_policy()
    errors = []
    for player in (0, 1):
        _, response = best_response(tree, opponent, player)
        search = _search(
            game, player, lambda state, q: _dense(opponent(state, q), game), simulations=400
        )
        for infoset in np.flatnonzero(tree.infoset_player == player):
            state = tree.representative_states()[infoset]
            exact = _exact_action_values(
                game, tree, player, state.information_state_key(player), opponent, response
            )
            values = search.action_values(state.seat_view(player))
            errors += [abs(values[a] - exact[a]) for a in exact]
    assert max(errors) < 0.3 and np.mean(errors) < 0.08, errors


def _dense(probabilities, game):
    dense = np.zeros(game.info.num_distinct_actions)
    for action, p in probabilities.items():
        dense[action] = p
    return dense


def test_mcnfsp_learns_kuhn(tmp_path):
    # Uniform play is 0.458 exploitable, the untrained average network about 0.42.
    config = load_config(
        None,
        [
            "env.name=kuhn_poker",
            "trainer.name=mcnfsp",
            "trainer.params.network=mlp",
            "trainer.params.hidden_sizes=[32]",
            "trainer.params.num_simulations=25",
            "trainer.params.learn_every_episodes=128",
            "trainer.params.rl_steps=8",
            "trainer.params.sl_steps=8",
            "trainer.params.batch_size=128",
            "trainer.params.min_buffer_size=128",
            "budget.episodes=6000",
            "evaluation.every_episodes=3000",
            "num_envs=64",
            f"output_dir={tmp_path}",
            "progress_bar=false",
        ],
    )
    result = train(config)
    assert result["last_evaluation"]["exploitability"] < 0.25
    assert result["last_evaluation"]["searches"] > 0


def test_board_games_get_the_papers_convolutional_trunk():
    learner = MCNFSP(
        hiddenenvs.load_game("othello", board_size=4),
        MCNFSPConfig(
            num_simulations=4,
            learn_every_episodes=2,
            min_buffer_size=1,
            batch_size=4,
            rl_steps=1,
            sl_steps=1,
            anticipatory=0.5,
        ),
        seed=0,
    )
    assert learner.architecture["kind"] == "conv"
    from agents.loop import play_episodes

    envs = [hiddenenvs.make("othello", board_size=4).unwrapped for _ in range(2)]
    returns = play_episodes(envs, dict(zip(envs[0].possible_agents, learner.agents)), np.arange(2))
    learner.episodes = 2
    metrics = learner.update()
    assert returns.shape == (2, 2) and metrics["searches"] > 0
    assert {"rl_loss", "value_loss", "sl_loss"} <= metrics.keys()
    assert 0.0 <= metrics["prior_spread"] <= 1.0


def test_replay_ratios_keep_gradient_samples_in_step_with_the_pairs_stored():
    from agents.loop import play_episodes

    config = MCNFSPConfig(
        num_simulations=2,
        learn_every_episodes=3,
        min_buffer_size=1,
        batch_size=4,
        rl_steps=50,
        sl_steps=50,
        anticipatory=0.5,
        rl_replay_ratio=2.0,
        sl_replay_ratio=1.5,
    )
    learner = MCNFSP(hiddenenvs.load_game("othello", board_size=4), config, seed=0)
    envs = [hiddenenvs.make("othello", board_size=4).unwrapped for _ in range(3)]
    agents = dict(zip(envs[0].possible_agents, learner.agents))
    for round_ in range(3):
        play_episodes(envs, agents, np.arange(3) + 3 * round_)
        learner.episodes += 3
        learner.update()
        for agent in learner.agents:
            # the fixed 50 steps per update are replaced: samples drawn = ratio * pairs stored, to a batch
            assert agent.rl_steps == int(2.0 * agent.replay.added / 4)
            assert agent.sl_steps == int(1.5 * agent.reservoir.seen / 4)
    assert all(agent.reservoir.seen > 0 for agent in learner.agents)


def test_combat_needs_a_root_state_and_searches_from_one():
    from hiddenenvs.envs.combat.doctrine import doctrine_action

    game = hiddenenvs.load_game("combat", map="small")
    state = game.new_initial_state(seed=3)
    doctrine = np.random.default_rng(0)

    def doctrine_policy(s, q):
        probabilities = np.zeros(game.info.num_distinct_actions)
        probabilities[doctrine_action(s, q, doctrine)] = 1.0
        return probabilities

    search = _search(game, 0, doctrine_policy, simulations=8)
    with pytest.raises(ValueError, match="no belief sampler"):
        search.policy(state.seat_view(0))
    pi = search.policy(state.seat_view(0), root=state)
    assert pi.sum() == pytest.approx(1.0) and set(np.flatnonzero(pi)) <= set(state.legal_actions(0))


def test_bad_parameters_are_named():
    with pytest.raises(ConfigError, match="trainer.params.num_simulations"):
        load_config(None, ["trainer.name=mcnfsp", "trainer.params.num_simulations=0"])
    with pytest.raises(ConfigError, match="trainer.params.network"):
        load_config(None, ["trainer.name=mcnfsp", "trainer.params.network=resnet"])
    with pytest.raises(ConfigError, match="trainer.params.opponent_backup"):
        load_config(None, ["trainer.name=mcnfsp", "trainer.params.opponent_backup=max"])
    with pytest.raises(ConfigError, match="trainer.params.root_selection"):
        load_config(None, ["trainer.name=mcnfsp", "trainer.params.root_selection=ucb"])
    with pytest.raises(ConfigError, match="trainer.params.sl_replay_ratio"):
        load_config(None, ["trainer.name=mcnfsp", "trainer.params.sl_replay_ratio=-1"])


def test_legal_logits_equal_the_full_heads_rows():
    game = hiddenenvs.load_game("combat", map="small")
    architecture = architecture_for(game, MCNFSPConfig(network="mlp", hidden_sizes=[8]))
    network = PolicyValueNetwork(architecture)
    inputs, actions = torch.randn(1, *architecture["input_shape"]), torch.tensor([0, 7, 100, 1000])
    logits, value = network(inputs)
    legal_logits, legal_value = network.legal_logits_and_value(inputs, actions)
    torch.testing.assert_close(legal_logits[0], logits[0, actions])
    torch.testing.assert_close(legal_value, value)


def _commander_states(game, count, seed=0):
    """Commander-mode states a few random orders in, so several areas hold fighters."""
    rng, states = np.random.default_rng(seed), []
    state = game.new_initial_state(seed=seed)
    while len(states) < count and not state.is_terminal():
        state.apply_actions([int(rng.choice(state.legal_actions(p))) for p in (0, 1)])
        states.append(state.clone())
    return states


def test_factored_order_head_is_a_softmax_over_the_legal_orders_and_learns():
    from agents.networks import masked_logits

    game = hiddenenvs.load_game("combat", map="small")
    architecture = architecture_for(
        game, MCNFSPConfig(network="mlp", hidden_sizes=[16], order_head="factored")
    )
    torch.manual_seed(0)
    network = PolicyValueNetwork(architecture)
    states = _commander_states(game, 6)
    inputs = torch.from_numpy(np.stack([s.information_state_tensor(0) for s in states]))
    masks = np.stack([s.legal_actions_mask(0) for s in states])
    assert len({int(m.sum()) for m in masks}) > 1  # different legal sets
    logits, _ = network(inputs)
    assert logits.shape == (len(states), game.info.num_distinct_actions)
    probabilities = torch.softmax(masked_logits(logits, masks), dim=-1)
    torch.testing.assert_close(probabilities.sum(dim=-1), torch.ones(len(states)))
    assert probabilities[torch.from_numpy(masks == 0)].max() == 0
    for state, row in zip(states, logits):  # the search's legal-only logits are the same numbers
        legal = torch.tensor(state.legal_actions(0))
        torch.testing.assert_close(
            network.legal_logits_and_value(
                torch.from_numpy(state.information_state_tensor(0)[None]), legal
            )[0][0],
            row[legal],
        )
    # every parameter of the head gets a gradient, and a few steps fit a target order
    target = torch.tensor([int(np.flatnonzero(m)[-1]) for m in masks])
    optimizer = torch.optim.Adam(network.parameters(), lr=0.01)
    losses = []
    for _ in range(30):
        loss = nn.functional.cross_entropy(masked_logits(network(inputs)[0], masks), target)
        optimizer.zero_grad()
        loss.backward()
        losses.append(loss.item())
        optimizer.step()
    assert all(
        p.grad is not None and p.grad.abs().sum() > 0 for p in network.policy_head.parameters()
    )
    assert losses[-1] < 0.5 * losses[0], losses


def test_factored_order_head_checkpoint_reloads_and_mismatched_files_are_refused(tmp_path):
    from agents.base import load_agent_file
    from agents.mcnfsp import MCNFSPAgent

    game = hiddenenvs.load_game("combat", map="small")
    config = MCNFSPConfig(
        network="mlp", hidden_sizes=[16], order_head="factored", order_embedding_size=8
    )
    agent = MCNFSPAgent(
        game, 0, architecture_for(game, config), config, lambda state, q: None, seed=0
    )
    states = _commander_states(game, 3)
    observations = np.stack([s.information_state_tensor(0) for s in states])
    masks = np.stack([s.legal_actions_mask(0) for s in states])
    path = tmp_path / "policy.pt"
    exported = agent.evaluation_agent()
    exported.save(path)
    np.testing.assert_array_equal(
        load_agent_file(path).policy_probabilities_batch(observations, masks),
        exported.policy_probabilities_batch(observations, masks),
    )
    restored = MCNFSPAgent(
        game, 0, architecture_for(game, config), config, lambda state, q: None, seed=1
    )
    restored.load_state_dict(agent.state_dict())
    np.testing.assert_array_equal(
        restored.policy_probabilities_batch(observations, masks),
        agent.policy_probabilities_batch(observations, masks),
    )
    payload = torch.load(path, weights_only=True)
    payload["state"]["architecture"]["order_head"]["embedding_size"] = 32
    torch.save(payload, path)
    with pytest.raises(
        ValueError,
        match=r"do not fit the declared architecture: parameter 'policy_head.area_embedding' is \(36, 8\) in the file",
    ):
        load_agent_file(path)
    del payload["state"]["architecture"]["order_head"]  # a flat head's file with factored weights
    torch.save(payload, path)
    with pytest.raises(
        ValueError, match="do not fit the declared architecture: parameter 'policy_head"
    ):
        load_agent_file(path)


def test_factored_order_head_needs_a_game_with_orders():
    with pytest.raises(ConfigError, match="order_head"):
        architecture_for(hiddenenvs.load_game("kuhn_poker"), MCNFSPConfig(order_head="factored"))
    with pytest.raises(ConfigError, match="trainer.params.order_head"):
        load_config(None, ["trainer.name=mcnfsp", "trainer.params.order_head=pointer"])
    architecture = architecture_for(
        hiddenenvs.load_game("combat", map="small"),
        MCNFSPConfig(network="mlp", order_head="factored"),
    )
    wrong = {**architecture, "order_head": {**architecture["order_head"], "team_size": 9}}
    with pytest.raises(ValueError, match="order_head describes 2917 actions"):
        PolicyValueNetwork(wrong)
    with pytest.raises(ValueError, match="only commander mode has orders"):
        architecture_for(
            hiddenenvs.load_game("combat", mode="fighter", map="small"),
            MCNFSPConfig(network="mlp", order_head="factored"),
        )


def test_rollout_leaf_values_play_the_no_op_then_add_the_network_value():
    # No hits (hit_probability 0): no health rewards, the defenders win at the time limit,
    # so every value below is exact and comes from the rollout or the network alone.
    from hiddenenvs.envs.combat.doctrine import doctrine_action

    game = hiddenenvs.load_game("combat", map="small", hit_probability=0.0)

    def doctrine(state, player):
        probabilities = np.zeros(game.info.num_distinct_actions)
        probabilities[doctrine_action(state, player, None)] = 1.0
        return probabilities

    root = game.new_initial_state(seed=0)
    for rollout_decisions, simulations in ((1, 3), (game.info.max_game_length, 3)):
        search = _search(game, 0, doctrine, simulations)
        search.config.rollout_decisions = rollout_decisions
        for action, value in search.action_values(root.seat_view(0), root).items():
            state = root.clone()
            state.apply_actions([action, doctrine_action(state, 1, None)])
            for _ in range(rollout_decisions):  # the searcher holds, the doctrine defends
                if not state.is_terminal():
                    state.apply_actions([game.NO_OP_ACTION, doctrine_action(state, 1, None)])
            if state.is_terminal():
                expected = state.returns()[0]
            else:
                with torch.no_grad():
                    tensor = torch.from_numpy(state.information_state_tensor(0)[None])
                    expected = search.network.value(tensor).item() * utility_scale(game)
            assert value == pytest.approx(expected, abs=1e-6), (rollout_decisions, action)
    assert expected == -1.0  # the long rollouts reached the time limit
    with pytest.raises(ValueError, match="no-op"):
        kuhn = hiddenenvs.load_game("kuhn_poker")
        config = MCNFSPConfig(network="mlp", rollout_decisions=2)
        BestResponseSearch(
            kuhn,
            0,
            PolicyValueNetwork(architecture_for(kuhn, config)),
            architecture_for(kuhn, config),
            lambda state, q: np.ones(2) / 2,
            config,
            np.random.default_rng(0),
        )


def test_mcnfsp_attackers_train_against_the_doctrine_and_replay_by_seed():
    from agents.mcnfsp import MCNFSPAgent, play_against_policy
    from hiddenenvs.envs.combat.doctrine import doctrine_action

    game = hiddenenvs.load_game("combat", map="small")

    def doctrine(state, player):
        probabilities = np.zeros(game.info.num_distinct_actions)
        probabilities[doctrine_action(state, player, None)] = 1.0
        return probabilities

    def run():
        torch.manual_seed(0)
        config = MCNFSPConfig(
            network="mlp",
            hidden_sizes=[16],
            anticipatory=0.5,
            num_simulations=4,
            rl_steps=1,
            sl_steps=1,
            batch_size=8,
            min_buffer_size=1,
        )
        agent = MCNFSPAgent(game, 0, architecture_for(game, config), config, doctrine, seed=0)
        rng = np.random.default_rng(0)
        returns = [
            play_against_policy(agent, 0, doctrine, game.new_initial_state(seed=s), rng).returns()
            for s in range(2)
        ]
        losses = agent.learn()
        return agent, np.array(returns), losses

    agent, returns, losses = run()
    assert len(agent.replay) == len(agent.reservoir) == agent.searches > 0
    assert losses["rl_loss"] and losses["sl_loss"]
    assert np.all(returns.sum(axis=1) == 0)
    np.testing.assert_array_equal(run()[1], returns)


def _blind_tictactoe_x_holds_the_top_row_but_one():
    """Blind tic-tac-toe after x marked (1,1) then (1,2), both ``ok``; o tried (2,2) then (3,3)."""
    game = hiddenenvs.load_game("blind_tictactoe")
    state = game.new_initial_state()
    for joint in ([0, 4], [1, 8]):
        state.apply_action(state.chance_outcomes()[0][0])
        state.apply_actions(joint)
    state.apply_action(state.chance_outcomes()[0][0])
    return game, state


def test_search_draws_a_searchs_histories_from_one_posterior_on_gdl(monkeypatch):
    # The others' policies are fixed during a search, so all its simulations' histories
    # come from one posterior: one exact forward filter per search, not one per simulation
    # (which was 90% of a search's time and left 304 episodes in 15 minutes).
    import hiddenenvs.envs.gdl.game as gdl_game

    passes = []

    class CountingFilter(gdl_game._ForwardFilter):
        def __init__(self, *args, **kwargs):
            passes.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(gdl_game, "_ForwardFilter", CountingFilter)
    game, state = _blind_tictactoe_x_holds_the_top_row_but_one()
    uniform = lambda state, q: state.legal_actions_mask(q) / state.legal_actions_mask(q).sum()  # noqa: E731
    search = _search(game, 0, uniform, simulations=16, opponent_backup="sample")
    search.visit_counts(state.seat_view(0))
    assert len(passes) == 1, len(passes)


def test_search_falls_back_to_uniform_beliefs_where_the_sampler_refuses_the_policy(
    monkeypatch,
):
    # Late in a long Meier game the sampler under the others' policies outgrew its node cap
    # (a 40-step key) and the run crashed; the uniform opponent model merges what the
    # policy tells apart, so the search draws from it there and goes on.
    game, state = _blind_tictactoe_x_holds_the_top_row_but_one()
    sample = game.sample_consistent_histories
    asked = []

    def capped(player, key, rng, count, policy=None):
        asked.append(policy is None)
        if policy is not None:
            raise ValueError("the belief sampler needs more than 200000 distinct states")
        return sample(player, key, rng, count, policy)

    monkeypatch.setattr(game, "sample_consistent_histories", capped)
    uniform = lambda state, q: state.legal_actions_mask(q) / state.legal_actions_mask(q).sum()  # noqa: E731
    search = _search(game, 0, uniform, simulations=16, opponent_backup="sample")
    counts = search.visit_counts(state.seat_view(0))
    assert counts.sum() == 16 and asked == [False, True]
    assert search.uniform_belief_fallbacks == 1


def test_search_completes_a_line_in_blind_tictactoe():
    # x's marks at (1,1) and (1,2) landed: (1,3) wins outright unless o holds it, which a
    # uniform o does with small probability; every other cell scores less. (The shipped
    # config's sampled backup: the expectation backup takes 40 s here.)
    game, state = _blind_tictactoe_x_holds_the_top_row_but_one()
    uniform = lambda state, q: state.legal_actions_mask(q) / state.legal_actions_mask(q).sum()  # noqa: E731
    search = _search(game, 0, uniform, simulations=64, opponent_backup="sample")
    counts = search.visit_counts(state.seat_view(0))
    assert counts.argmax() == 2 and counts[2] > 0.5 * counts.sum(), counts


@pytest.mark.parametrize(
    "name, returns, searches, value_targets, end_draw",
    [
        # Pinned before play_against_policy went through agents.episodes.model_episode: the
        # same games, the same searches and the same stream of draws after them.
        ("kuhn_poker", [1.0, -2.0, -2.0, 1.0], 1, -1.0, 0.8574042765875693),
        ("goofspiel", [-1.0, -1.0, 1.0, 1.0], 3, 1.0, 0.8574042765875693),
    ],
)
def test_play_against_policy_keeps_its_seeded_trajectory(
    name, returns, searches, value_targets, end_draw
):
    from agents.mcnfsp import MCNFSPAgent, play_against_policy

    game = hiddenenvs.load_game(name)

    def uniform(state, player):
        mask = state.legal_actions_mask(player).astype(float)
        return mask / mask.sum()

    torch.manual_seed(0)
    config = MCNFSPConfig(network="mlp", hidden_sizes=[16], anticipatory=0.5, num_simulations=4)
    agent = MCNFSPAgent(game, 0, architecture_for(game, config), config, uniform, seed=0)
    rng = np.random.default_rng(0)
    played = [
        play_against_policy(agent, 0, uniform, game.new_initial_state(), rng).returns()[0]
        for _ in range(4)
    ]
    assert played == returns
    assert agent.searches == len(agent.replay) == searches
    # Each search's z, the return it went on to earn: the transitions' rewards reached it.
    assert agent.replay.state_dict()["data"]["value_target"].sum() == value_targets
    assert rng.random() == end_draw


def test_a_checkpoint_written_before_mcnfsp_became_a_package_still_loads():
    """tests/data/mcnfsp_kuhn_before_package.pt: a tiny Kuhn run's checkpoint.pt, written by
    agents/mcnfsp.py (commit 0b27891) before it became the package agents/mcnfsp/."""
    from pathlib import Path

    from agents.checkpoint import load_checkpoint
    from agents.runs import learner_from_checkpoint

    payload = load_checkpoint(Path(__file__).parent / "data" / "mcnfsp_kuhn_before_package.pt")
    learner = learner_from_checkpoint(payload)
    assert type(learner).__module__ == "agents.mcnfsp.learner"
    assert (learner.episodes, learner.learned_at) == (256, 256)
    assert [(a.searches, len(a.replay), len(a.reservoir)) for a in learner._agents] == [
        (151, 64, 64),
        (137, 64, 64),
    ]
    state = learner.game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    pi = learner.evaluation_agent(0).policy_probabilities_batch(
        state.information_state_tensor(0)[None], state.legal_actions_mask(0)[None]
    )[0]
    # Pi's probabilities at the first deal, as the old module computed them from this file.
    np.testing.assert_array_equal(pi, [0.18756064772605896, 0.8124393820762634])


def _leduc_nuts_facing_a_raise():
    """Leduc: player 0 holds K, the public card is K (no hand beats it), both checked round
    1 and player 1 raised after player 0's check in round 2. Against a player 1 who folds or
    calls evenly: fold -1, call +5, re-raise 0.5 * 5 + 0.5 * 9 = +7 chips (best response)."""
    game = hiddenenvs.load_game("leduc_holdem")
    state = game.new_initial_state()
    for action in (2, 0, 1, 1, 2, 1, 2):  # deal K, J; call, call; public K; call, raise
        state.apply_action(action)
    return game, state


def _leduc_shipped_search(prior: list[float], seed: int, **changes):
    """The shipped Leduc config's search (``changes`` on top), f_BR's prior at every state
    fixed to ``prior`` over fold, call, raise and its value to 0, against a uniform player 1."""
    game, state = _leduc_nuts_facing_a_raise()
    params = load_config("mcnfsp_leduc").trainer.params
    config = MCNFSPConfig(**{**params, **changes})
    architecture = architecture_for(game, config)
    network = PolicyValueNetwork(architecture)
    with torch.no_grad():
        for parameter in network.parameters():
            parameter.zero_()
        network.policy_head.bias.copy_(torch.log(torch.tensor(prior)))
    uniform = lambda state, q: state.legal_actions_mask(q) / state.legal_actions_mask(q).sum()  # noqa: E731
    search = BestResponseSearch(
        game, 0, network, architecture, uniform, config, np.random.default_rng(seed)
    )
    return search, state


def test_leduc_search_overrules_a_prior_that_folds_the_nuts():
    # The defect that held MCNFSP at exploitability ~1.0 on Leduc: with 20 PUCT
    # simulations and values in units of the utility bound (13 chips), the visits echoed
    # f_BR's prior (all 20 on fold here, worth -1 against +7), and f_BR learned pi ∝ N,
    # the prior again. The shipped search plays and teaches the best response, re-raise.
    for seed in range(3):
        search, state = _leduc_shipped_search([0.95, 0.025, 0.025], seed)
        acting, target, value = search.search_result(state.seat_view(0))
        np.testing.assert_array_equal(acting, [0.0, 0.0, 1.0])
        assert target[2] > 0.95, target
        # f_BR's value target (value_target: search): the best response's value, 7 of 13.
        assert value == pytest.approx(7 / 13, abs=0.01)


def _one_searched_episode(agent, state, reward: float) -> None:
    """Player 0 acts once at ``state`` (a search, at anticipatory 1), then the episode ends
    with ``reward``: one row in M_RL."""
    agent.start_episode(0)
    agent.act_batch(
        state.information_state_tensor(0)[None],
        state.legal_actions_mask(0)[None],
        [0],
        views=[state.seat_view(0)],
    )
    agent._episode_rewards[0].append(reward)
    agent.end_episode(0)


def test_value_target_search_stores_the_searched_value_not_the_episode_return():
    # z, the paper's target, is what the player went on to earn, its later moves mostly
    # Pi's (eta 0.1): the mixed policy's value, not the best response's (on Leduc f_BR's
    # value sat 0.5-0.7 chips from Pi's values and 1.0 from the best response's).
    from agents.mcnfsp import MCNFSPAgent

    game, state = _leduc_nuts_facing_a_raise()
    uniform = lambda state, q: state.legal_actions_mask(q) / state.legal_actions_mask(q).sum()  # noqa: E731
    stored = {}
    for value_target in ("return", "search"):
        params = load_config("mcnfsp_leduc").trainer.params
        config = MCNFSPConfig(**{**params, "anticipatory": 1.0, "value_target": value_target})
        torch.manual_seed(0)
        agent = MCNFSPAgent(game, 0, architecture_for(game, config), config, uniform, seed=0)
        _one_searched_episode(agent, state, reward=-1.0)  # the return from the search on
        stored[value_target] = float(agent.replay.state_dict()["data"]["value_target"][0])
    assert stored["return"] == pytest.approx(-1 / 13)
    assert stored["search"] == pytest.approx(7 / 13, abs=0.02)


def test_value_target_is_checked():
    with pytest.raises(ConfigError, match="value_target must be 'return' or 'search'"):
        MCNFSPConfig(value_target="z")


def test_policy_target_visits_teaches_normalised_visits_while_the_sharpened_pi_plays():
    # temperature 0.25 sharpens what is played (pi ∝ N^4). Taught to f_BR too, it feeds
    # back: the prior steers 16 simulations' visits, N^4 trains the prior, and the prior
    # locks onto one action (blind tic-tac-toe's priors ended near one-hot on every seed).
    game = hiddenenvs.load_game("rps")
    view = game.new_initial_state().seat_view(0)
    results = {}
    for policy_target in ("played", "visits"):
        search = _search(
            game,
            0,
            lambda state, q: np.array([0.6, 0.2, 0.2]),
            simulations=16,
            temperature=0.25,
            policy_target=policy_target,
        )
        counts = search.visit_counts(view)
        search.rng = np.random.default_rng(0)  # the same search again
        acting, target, _ = search.search_result(view)
        results[policy_target] = counts, acting, target
    for counts, acting, target in results.values():
        np.testing.assert_allclose(acting, counts**4 / (counts**4).sum())
    counts, acting, target = results["played"]
    np.testing.assert_array_equal(target, acting)
    counts, acting, target = results["visits"]
    np.testing.assert_allclose(target, counts / counts.sum())
    assert target.max() < acting.max()


def test_policy_target_is_checked():
    with pytest.raises(ConfigError, match="policy_target must be 'played' or 'visits'"):
        MCNFSPConfig(policy_target="sharp")
    with pytest.raises(ConfigError, match="policy_target 'visits' is for root_selection 'puct'"):
        MCNFSPConfig(policy_target="visits", root_selection="gumbel")


def test_prior_spread_is_the_priors_entropy_as_a_fraction_of_the_uniforms():
    from agents.mcnfsp import MCNFSPAgent

    game = hiddenenvs.load_game("rps")
    state = game.new_initial_state()
    config = MCNFSPConfig(
        network="mlp", hidden_sizes=[8], num_simulations=4, anticipatory=1.0, batch_size=2
    )
    uniform = lambda state, q: np.full(3, 1 / 3)  # noqa: E731
    agent = MCNFSPAgent(game, 0, architecture_for(game, config), config, uniform, seed=0)
    _one_searched_episode(agent, state, reward=0.0)

    class FixedPrior(nn.Module):
        def __init__(self, logits):
            super().__init__()
            self.logits = nn.Parameter(torch.tensor(logits))

        def forward(self, inputs):
            return self.logits.expand(len(inputs), 3), torch.zeros(len(inputs))

    for logits, spread in (([0.0, 0.0, 0.0], 1.0), ([0.0, 0.0, -1e9], np.log(2) / np.log(3))):
        agent.best_response_network = FixedPrior(logits)
        agent.rl_optimizer = torch.optim.SGD(agent.best_response_network.parameters(), lr=0.0)
        assert agent.rl_step()[2] == pytest.approx(spread)

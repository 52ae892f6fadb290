"""The rule sheets we ship (hiddenenvs/envs/gdl/games/): their rules, checked with the
reference reasoner, and the engine (propnet) against the reference reasoner on random
playouts; the registered envs' game-theoretic facts (Monty Hall switches, biased RPS
equilibrium, blind tic-tac-toe hides the opponent's marks)."""

import itertools
import pickle
import random
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import hiddenenvs
from agents.cfr import CFRSolver
from hiddenenvs.analysis import GameTree, TabularPolicy, best_response, expected_returns
from hiddenenvs.envs.gdl.propnet import Propnet
from hiddenenvs.envs.gdl.reference import ReferenceReasoner
from hiddenenvs.envs.matrix_games import MATRICES

GAMES_DIR = Path(__file__).resolve().parent.parent / "hiddenenvs/envs/gdl/games"
SHEETS = [
    "monty_hall",
    "meier",
    "blind_tictactoe",
    "biased_blind_tictactoe",
    "biased_rps",
    "tictactoe",
]

# The longest game of each sheet, in GDL steps; the registered meier and blind
# tic-tac-toes fix max_steps to it (the propnet playouts below check the bound).
MAX_STEPS = {
    "monty_hall": 3,
    "meier": 63,
    "blind_tictactoe": 9,
    "biased_blind_tictactoe": 9,
    "biased_rps": 1,
    "tictactoe": 9,
}


def reasoner_for(sheet: str) -> ReferenceReasoner:
    return ReferenceReasoner.from_file(GAMES_DIR / f"{sheet}.gdl")


class Script:
    """Plays a sheet with the reference reasoner: ``play({"role": "(move)"})`` gives the
    named roles their moves and every other role its only legal move."""

    def __init__(self, sheet: str):
        self.reasoner = reasoner_for(sheet)
        self.state = self.reasoner.initial_state()
        self.steps = 0

    def legal(self, role: str) -> list[str]:
        moves = self.reasoner.legal_moves(self.state)[self.reasoner.roles.index(role)]
        return [self.reasoner.render(move) for move in moves]

    def play(self, moves: dict[str, str]) -> dict[str, set[str]]:
        joint = []
        for role, legal in zip(self.reasoner.roles, self.reasoner.legal_moves(self.state)):
            if role in moves:
                move = self.reasoner.parse_terms(moves[role])[0]
                assert move in legal, f"{moves[role]} is not legal for {role}"
            else:
                assert len(legal) == 1, f"{role} has a choice: {legal}"
                move = legal[0]
            joint.append(move)
        seen = self.reasoner.percepts(self.state, joint)
        self.state = self.reasoner.next_state(self.state, joint)
        self.steps += 1
        return {
            role: {self.reasoner.render(p) for p in percepts}
            for role, percepts in zip(self.reasoner.roles, seen)
        }

    def terminal(self) -> bool:
        return self.reasoner.is_terminal(self.state)

    def goals(self) -> dict[str, int]:
        return {
            role: values[0]
            for role, values in zip(self.reasoner.roles, self.reasoner.goal_values(self.state))
            if values
        }


# ---------------------------------------------------------------- the rules, by reasoning


def test_monty_hall_switching_wins_two_thirds_by_enumeration():
    """Exact win probabilities of always switching and always staying, over the whole tree
    (random uniform over its legal moves, the candidate's first choice uniform)."""
    reasoner = reasoner_for("monty_hall")
    candidate, host = reasoner.roles.index("candidate"), reasoner.roles.index("random")

    def win_probability(final_move: str) -> Fraction:
        def value(state, probability):
            if reasoner.is_terminal(state):
                return probability * reasoner.goals(state)[candidate] / 100
            legal = reasoner.legal_moves(state)
            mine = [
                m
                for m in legal[candidate]
                if reasoner.render(m) in (final_move, "noop")
                or reasoner.render(m).startswith("(choose")
            ]
            total = Fraction(0)
            for move, chance in itertools.product(mine, legal[host]):
                joint = [None, None]
                joint[candidate], joint[host] = move, chance
                total += value(
                    reasoner.next_state(state, joint), probability / (len(mine) * len(legal[host]))
                )
            return total

        return value(reasoner.initial_state(), Fraction(1))

    assert win_probability("switch") == Fraction(2, 3)
    assert win_probability("stay") == Fraction(1, 3)


def test_monty_hall_host_opens_a_goat_door_the_candidate_did_not_choose():
    game = Script("monty_hall")
    assert game.play({"candidate": "(choose 1)", "random": "(hide_car 2)"}) == {
        "candidate": set(),
        "random": set(),
    }
    assert game.legal("random") == ["(open_door 3)"]
    assert game.play({})["candidate"] == {"(opened 3)"}
    assert game.legal("candidate") == ["stay", "switch"]
    assert game.play({"candidate": "switch"})["candidate"] == {"(car 2)"}
    assert game.terminal() and game.goals()["candidate"] == 100


def test_biased_rps_goals_are_the_matrix_payoffs_mapped_to_0_100():
    hands, payoff = MATRICES["biased_rps"]
    for (i, mine), (j, theirs) in itertools.product(enumerate(hands), repeat=2):
        game = Script("biased_rps")
        seen = game.play({"row": f"(throw {mine})", "column": f"(throw {theirs})"})
        assert seen == {"row": {f"(threw column {theirs})"}, "column": {f"(threw row {mine})"}}
        assert game.terminal()
        assert game.goals() == {"row": 50 + 25 * payoff[i][j], "column": 50 - 25 * payoff[i][j]}


@pytest.mark.parametrize("tiebreak", ["xplayer", "oplayer"])
def test_blind_tictactoe_collision_goes_to_randoms_pick(tiebreak):
    game = Script("blind_tictactoe")
    seen = game.play(
        {"xplayer": "(mark 2 2)", "oplayer": "(mark 2 2)", "random": f"(tiebreak {tiebreak})"}
    )
    loser = "oplayer" if tiebreak == "xplayer" else "xplayer"
    assert seen == {tiebreak: {"ok"}, loser: {"fail"}, "random": set()}
    mark = "x" if tiebreak == "xplayer" else "o"
    assert game.reasoner.parse_terms(f"(cell 2 2 {mark})")[0] in game.state
    # The loser now knows the cell is taken, and may not try it again; the winner neither.
    assert "(mark 2 2)" not in game.legal("xplayer") + game.legal("oplayer")


def test_biased_blind_tictactoe_collision_goes_to_x():
    game = Script("biased_blind_tictactoe")
    assert game.play({"xplayer": "(mark 1 1)", "oplayer": "(mark 1 1)"}) == {
        "xplayer": {"ok"},
        "oplayer": {"fail"},
    }
    assert game.reasoner.parse_terms("(cell 1 1 x)")[0] in game.state


def test_blind_tictactoe_try_on_a_taken_cell_fails_and_lines_win():
    game = Script("biased_blind_tictactoe")
    game.play({"xplayer": "(mark 1 1)", "oplayer": "(mark 2 1)"})
    # o tries x's cell: fails, its move is lost; x is never told where o played.
    assert game.play({"xplayer": "(mark 1 2)", "oplayer": "(mark 1 1)"}) == {
        "xplayer": {"ok"},
        "oplayer": {"fail"},
    }
    assert not game.terminal()
    game.play({"xplayer": "(mark 1 3)", "oplayer": "(mark 3 3)"})
    assert game.terminal() and game.goals() == {"xplayer": 100, "oplayer": 0}


def test_blind_tictactoe_both_lines_in_one_step_is_a_draw():
    game = Script("biased_blind_tictactoe")
    for x_cell, o_cell in [("1 1", "3 1"), ("1 2", "3 2")]:
        game.play({"xplayer": f"(mark {x_cell})", "oplayer": f"(mark {o_cell})"})
    game.play({"xplayer": "(mark 1 3)", "oplayer": "(mark 3 3)"})
    assert game.terminal() and game.goals() == {"xplayer": 50, "oplayer": 50}


def test_meier_meier_cannot_be_beaten():
    game = Script("meier")
    seen = game.play({"random": "(roll 1 2)"})
    assert seen == {"alice": {"(rolled 21)"}, "bob": set(), "random": set()}
    assert len(game.legal("alice")) == 21  # any first claim
    assert game.play({"alice": "(claim 21)"})["bob"] == {"(claimed 21)"}
    assert game.legal("bob") == ["call"]
    seen = game.play({})
    assert seen["alice"] == seen["bob"] == {"(shown 21)"}
    assert game.terminal() and game.goals() == {"alice": 100, "bob": 0}


def test_meier_a_called_lie_loses_for_the_claimer():
    game = Script("meier")
    game.play({"random": "(roll 3 1)"})
    game.play({"alice": "(claim 65)"})
    game.play({"bob": "call"})
    assert game.terminal() and game.goals() == {"alice": 0, "bob": 100}


def test_meier_accept_roll_and_claim_higher():
    game = Script("meier")
    game.play({"random": "(roll 5 6)"})  # 65, claimed as 64: not a lie
    game.play({"alice": "(claim 64)"})
    assert game.legal("bob") == ["accept", "call"]
    assert game.play({"bob": "accept"})["alice"] == {"accepted"}
    assert game.play({"random": "(roll 1 1)"}) == {
        "alice": set(),
        "bob": {"(rolled 11)"},
        "random": set(),
    }
    # above 64: 65, the doubles, and 21
    assert sorted(game.legal("bob")) == sorted(
        f"(claim {v})" for v in (65, 11, 22, 33, 44, 55, 66, 21)
    )
    game.play({"bob": "(claim 11)"})
    game.play({"alice": "call"})
    assert game.terminal() and game.goals() == {"alice": 0, "bob": 100}


def test_meier_claims_rise_strictly_so_games_are_short():
    """The longest game claims every value in order: 21 turns of roll, claim, respond, 63
    steps (the registered env's max_steps)."""
    game = Script("meier")
    order = [31, 32, 41, 42, 43, 51, 52, 53, 54, 61, 62, 63, 64, 65, 11, 22, 33, 44, 55, 66, 21]
    claimer, responder = "alice", "bob"
    for index, value in enumerate(order):
        game.play({"random": "(roll 1 1)"})
        assert set(game.legal(claimer)) == {f"(claim {v})" for v in order[index:]}
        game.play({claimer: f"(claim {value})"})
        if value == 21:
            assert game.legal(responder) == ["call"]
            break
        game.play({responder: "accept"})
        claimer, responder = responder, claimer
    game.play({})
    assert game.terminal() and game.steps == 63
    assert game.goals() == {claimer: 0, responder: 100}  # 11 does not cover a claim of 21


# ---------------------------------------------------------------- propnet vs reference


@pytest.mark.parametrize("sheet", SHEETS)
def test_propnet_agrees_with_the_reference_reasoner_on_random_playouts(sheet):
    """States, legal move sets, terminal flags, goal values and every role's percepts, step
    by step, on random playouts chosen from the propnet's legal moves."""
    propnet = Propnet.from_file(GAMES_DIR / f"{sheet}.gdl")
    reasoner = reasoner_for(sheet)
    assert [r.lower() for r in propnet.roles] == [r.lower() for r in reasoner.roles]

    def terms(texts):
        return frozenset(reasoner.parse_terms(" ".join(texts)))

    rng = random.Random(sheet)
    steps = 0
    for playout in range(40):
        state, expected = propnet.initial_state, reasoner.initial_state()
        first_step = steps
        while True:
            assert steps - first_step <= MAX_STEPS[sheet], f"{sheet} playout {playout} too long"
            where = f"{sheet} playout {playout} step {steps}"
            assert terms(propnet.state_fluents(state)) == expected, where
            info = propnet.evaluate(state)
            assert info.terminal == reasoner.is_terminal(expected), where
            for role, values in enumerate(reasoner.goal_values(expected)):
                assert sorted(info.goals[role]) == values, f"{where}: goals of role {role}"
            if info.terminal:
                break
            reference_legal = reasoner.legal_moves(expected)
            for role, legal in enumerate(info.legal):
                names = [propnet.move_names[role][i] for i in legal]
                assert terms(names) == frozenset(reference_legal[role]), f"{where}: legal"
            joint = tuple(rng.choice(legal) for legal in info.legal)
            reference_joint = [
                reasoner.parse_terms(propnet.move_names[role][move])[0]
                for role, move in enumerate(joint)
            ]
            state, percepts = propnet.transition(state, joint)
            for role, (seen, reference_seen) in enumerate(
                zip(percepts, reasoner.percepts(expected, reference_joint))
            ):
                names = [propnet.percept_names[role][i] for i in seen]
                assert terms(names) == reference_seen, f"{where}: percepts of role {role}"
            expected = reasoner.next_state(expected, reference_joint)
            steps += 1
    assert steps >= 25


# ---------------------------------------------------------------- registered envs

REGISTERED_SHEETS = {
    "monty_hall": "monty_hall",
    "meier": "meier",
    "blind_tictactoe": "blind_tictactoe",
    "biased_blind_tictactoe": "biased_blind_tictactoe",
    "gdl_biased_rps": "biased_rps",
    "gdl_tictactoe": "tictactoe",
}


@pytest.mark.parametrize("name", sorted(REGISTERED_SHEETS))
def test_registered_names_play_the_shipped_sheets(name):
    sheet = REGISTERED_SHEETS[name]
    game = hiddenenvs.load_game(name)
    roles = [role for role in reasoner_for(sheet).roles if role != "random"]
    assert list(game.info.player_names) == roles
    if "max_steps" in hiddenenvs.registry.REGISTRY[name].fixed_params:
        assert game.params["max_steps"] == MAX_STEPS[sheet]


def action_named(game, player: int, state, text: str) -> int:
    actions = state.legal_actions(player)
    names = [game.action_to_string(player, a) for a in actions]
    assert text in names, f"{text} not among {names}"
    return actions[names.index(text)]


def test_monty_hall_best_response_switches_and_wins_two_thirds():
    game = hiddenenvs.load_game("monty_hall")
    tree = GameTree.build(game)
    value, response = best_response(tree, TabularPolicy.uniform(tree), 0)
    assert value == pytest.approx(100 * 2 / 3)
    final_choices = 0
    for (player, key), probabilities in response.to_dict().items():
        names = {game.action_to_string(player, a): p for a, p in probabilities.items()}
        if set(names) == {"stay", "switch"}:
            assert names["switch"] == pytest.approx(1.0), key
            final_choices += 1
    assert final_choices == 6  # 3 doors chosen x 2 doors opened

    def always(final_move):
        def policy(state, player):
            legal = state.legal_actions(player)
            names = [game.action_to_string(player, a) for a in legal]
            if final_move in names:
                return {legal[names.index(final_move)]: 1.0}
            return {a: 1.0 / len(legal) for a in legal}

        return policy

    assert expected_returns(tree, always("switch"))[0] == pytest.approx(100 * 2 / 3)
    assert expected_returns(tree, always("stay"))[0] == pytest.approx(100 / 3)


def test_gdl_biased_rps_cfr_plus_reaches_the_equilibrium():
    game = hiddenenvs.load_game("gdl_biased_rps")
    solver = CFRSolver(game, variant="cfr+")
    solver.iterate(1000)
    policy = solver.average_policy()
    state = game.new_initial_state()
    for player in (0, 1):
        probabilities = policy.action_probabilities(state, player)
        by_name = {game.action_to_string(player, a): p for a, p in probabilities.items()}
        assert by_name == pytest.approx(
            {"(throw rock)": 0.4, "(throw paper)": 0.4, "(throw scissors)": 0.2}, abs=0.01
        )
    assert solver.exploitability() < 0.5  # goal units: 0..100


@pytest.mark.parametrize("name", ["blind_tictactoe", "biased_blind_tictactoe"])
def test_blind_tictactoe_percepts_never_reveal_the_opponents_marks(name):
    """x plays the same cells in two games where o plays differently: x's information
    state and tensors are identical, although the true states differ. Statically, the
    only percepts either player can ever get are ok and fail."""
    game = hiddenenvs.load_game(name)
    for role in game.player_roles:
        assert sorted(game.propnet.percept_names[role]) == ["fail", "ok"]

    def play(o_cells):
        state = game.new_initial_state()
        for x_cell, o_cell in zip(["(mark 1 1)", "(mark 2 2)"], o_cells):
            if state.is_chance_node():
                state.apply_action(state.chance_outcomes()[0][0])
            state.apply_actions(
                [action_named(game, 0, state, x_cell), action_named(game, 1, state, o_cell)]
            )
        return state

    first, second = play(["(mark 3 1)", "(mark 3 2)"]), play(["(mark 1 3)", "(mark 2 1)"])
    assert not np.array_equal(first.state_tensor(), second.state_tensor())
    assert first.information_state_key(0) == second.information_state_key(0)
    np.testing.assert_array_equal(
        first.information_state_tensor(0), second.information_state_tensor(0)
    )
    np.testing.assert_array_equal(first.observation_tensor(0), second.observation_tensor(0))
    assert first.information_state_key(1) != second.information_state_key(1)


# ---- public observations, identity and pickling ---------------------------------------------
def chance_named(game, state, text: str) -> int:
    names = game.propnet.move_names[game.random_role]
    outcomes = [move for move, _ in state.chance_outcomes()]
    assert text in [names[m] for m in outcomes], f"{text} is not a chance outcome here"
    return names.index(text)


def test_meier_shown_dice_are_public_rolls_and_claims_are_not():
    game = hiddenenvs.load_game("meier")
    # (sees ?p (shown ?v)) gives the dice to both players under one condition; the roll
    # goes to the player in control only, the claim to the other player only.
    assert len(game.public_percept_names) == 21
    assert all(name.startswith("(shown ") for name in game.public_percept_names)

    def play(roll, call):
        state = game.new_initial_state()
        state.apply_action(chance_named(game, state, roll))
        state.apply_actions([action_named(game, 0, state, "(claim 63)"), -1])
        if call:
            state.apply_actions([-1, action_named(game, 1, state, "call")])
        return state

    truth, lie = play("(roll 6 3)", call=False), play("(roll 3 1)", call=False)
    assert truth.public_state_key() == lie.public_state_key()
    np.testing.assert_array_equal(
        truth.public_observation_tensor(), lie.public_observation_tensor()
    )
    assert truth.information_state_key(1) == lie.information_state_key(1)
    assert truth.information_state_key(0) != lie.information_state_key(0)
    truth, lie = play("(roll 6 3)", call=True), play("(roll 3 1)", call=True)
    assert truth.is_terminal() and truth.public_state_key() != lie.public_state_key()
    shown = [game.public_percept_names[k] for k in truth.public_state_key()[-1]]
    assert shown == ["(shown 63)"]
    # Each step adds one entry for random's move and one for the joint move.
    assert len(truth.public_state_key()) == 6 and truth.public_state_key()[::2] == (None,) * 3
    assert [type(entry) for entry in truth.history()] == [int, tuple, tuple]


def test_one_player_percepts_are_public_and_other_players_percepts_are_not():
    monty = hiddenenvs.load_game("monty_hall")
    assert len(monty.public_percept_names) == 6  # (opened ?d) and (car ?d): one player
    state = monty.new_initial_state()
    state.apply_action(chance_named(monty, state, "(hide_car 1)"))
    state.apply_actions([action_named(monty, 0, state, "(choose 2)")])
    # The host's only goat door is 3: its forced move is played at once, with its entry.
    assert state.public_state_key()[-2] is None
    opened = [monty.public_percept_names[k] for k in state.public_state_key()[-1]]
    assert opened == ["(opened 3)"]
    public, (own_move, private_percepts) = state.information_state_key(0)[-1]
    assert public == state.public_state_key()[-1] and private_percepts == ()
    assert monty.action_to_string(0, own_move) == "noop"  # the own move stays private
    # Biased RPS: each role sees the *other* role's throw, a different percept per role,
    # so the sound rule keeps both private.
    assert hiddenenvs.load_game("gdl_biased_rps").public_percept_names == ()


def test_gdl_games_keep_the_class_name_and_pickle_as_their_spec():
    game = hiddenenvs.load_game("gdl_biased_rps")
    assert game.NAME == "gdl" and game.info.short_name == "biased_rps"
    assert pickle.loads(pickle.dumps(game)).spec == game.spec
    rules = str(GAMES_DIR / "monty_hall.gdl")
    by_path = hiddenenvs.load_game("gdl", rules=rules)
    state = by_path.new_initial_state()
    state.apply_action(state.chance_outcomes()[0][0])
    state.apply_actions([state.legal_actions(0)[1]])
    payload = pickle.dumps(state)
    assert len(payload) < 1_000
    # A fresh process rebuilds the propnet from the sheet named in the spec.
    script = (
        "import pickle, sys; state = pickle.loads(sys.stdin.buffer.read()); "
        "print(state.game.spec.to_dict()['params']['rules'], state.history(), "
        "state.information_state_key(0))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        input=payload,
        capture_output=True,
        cwd=Path(__file__).resolve().parent.parent,
        check=True,
    )
    assert result.stdout.decode().split() == (
        f"{rules} {state.history()} {state.information_state_key(0)}".split()
    )

"""Seat views drawn for a person: blind tic-tac-toe's board (what a role has seen) and
combat's text of what a side's units see; both used by human play and the replays."""

import io
import re

import numpy as np
import pytest

import hiddenenvs
from hiddenenvs.game import sample_chance_outcome


def random_states(game, seed, max_steps=None):
    """Every state of one seeded random game, the start first."""
    rng = np.random.default_rng(seed)
    state = game.new_initial_state(seed=seed)
    states = [state.clone()]
    steps = 0
    while not state.is_terminal() and (max_steps is None or steps < max_steps):
        if state.is_chance_node():
            state.apply_action(sample_chance_outcome(state, rng))
        else:
            legal = [state.legal_actions(p) for p in range(game.info.num_players)]
            state.apply_actions([int(rng.choice(a)) if a else -1 for a in legal])
            steps += 1
        states.append(state.clone())
    return states


def board_cells(text):
    """``{(row, column): mark}`` of a drawn 3 x 3 board (its last three lines)."""
    rows = text.splitlines()[-3:]
    return {
        (int(line.split()[0]), column + 1): mark
        for line in rows
        for column, mark in enumerate(line.split()[1:])
    }


def true_cells(state):
    cells = re.findall(r"\(cell (\d) (\d) (\w)\)", str(state))
    return {(int(r), int(c)): "." if mark == "b" else mark for r, c, mark in cells}


def tried(state, role):
    return {(int(r), int(c)) for r, c in re.findall(rf"\(tried {role} (\d) (\d)\)", str(state))}


@pytest.mark.parametrize("sheet", ["blind_tictactoe", "biased_blind_tictactoe"])
def test_blind_tictactoe_board_shows_own_marks_and_cells_found_taken_and_nothing_else(sheet):
    game = hiddenenvs.load_game(sheet)
    for seed in range(12):
        for state in random_states(game, seed):
            for player, (role, mine) in enumerate([("xplayer", "x"), ("oplayer", "o")]):
                view = game.describe_view(state, player)
                assert view.startswith(f"{role}'s board\n({mine} yours, ")
                board, truth, tries = board_cells(view), true_cells(state), tried(state, role)
                for cell, mark in board.items():
                    if cell in tries:  # a tried cell: it is mine, or it was taken by the other
                        assert mark == truth[cell] != ".", (seed, cell, view, state)
                    else:  # never tried: the seat knows nothing of it, whatever it holds
                        assert mark == ".", (seed, cell, view, state)


def test_blind_tictactoe_board_is_a_function_of_the_seat_key_alone():
    """Two histories that give xplayer the same key give it the same board, whatever
    oplayer did (here: oplayer's tries differ, xplayer's do not)."""
    game = hiddenenvs.load_game("biased_blind_tictactoe")  # no random role: x wins collisions
    first, second = game.new_initial_state(), game.new_initial_state()
    mark = {name: a for a, name in enumerate(game.propnet.move_names[0])}
    first.apply_actions([mark["(mark 1 1)"], mark["(mark 3 3)"]])
    second.apply_actions([mark["(mark 1 1)"], mark["(mark 3 2)"]])
    assert first.information_state_key(0) == second.information_state_key(0)
    assert game.describe_view(first, 0) == game.describe_view(second, 0)
    assert board_cells(game.describe_view(first, 0))[1, 1] == "x"
    assert game.describe_view(first, 1) != game.describe_view(second, 1)


def test_gdl_chance_outcomes_are_named_as_the_random_roles_moves():
    """The replays and docs name a chance outcome by the random role's move (it was named
    by the last player's move of the same number)."""
    game = hiddenenvs.load_game("blind_tictactoe")
    state = game.new_initial_state()
    assert state.is_chance_node()
    names = [state.action_to_string(-1, a) for a, _ in state.chance_outcomes()]
    assert sorted(names) == ["(tiebreak oplayer)", "(tiebreak xplayer)"]
    meier = hiddenenvs.load_game("meier").new_initial_state()
    assert meier.action_to_string(-1, meier.chance_outcomes()[0][0]).startswith("(roll ")


def test_gdl_sheets_without_a_board_view_give_none():
    for name in ("meier", "monty_hall"):
        game = hiddenenvs.load_game(name)
        state = random_states(game, 0)[-1]
        assert all(game.describe_view(state, p) is None for p in range(game.info.num_players))


def _area_counts(text, letter):
    """Per area, in row-major order, the count after ``letter`` (``a3`` -> 3), 0 if none;
    believed-only counts (``d1?``) are left out."""
    grid = [line.split() for line in text.splitlines() if re.fullmatch(r"[\sad0-9?.*:]+", line)]
    counts = []
    for row in grid:
        assert row[0] == f"{len(counts)}:"  # the row's first area
        for cell in row[1:]:
            found = re.search(rf"{letter}(\d+)(?!\d*\?)", cell)
            counts.append(int(found.group(1)) if found else 0)
    return counts


def test_combat_commander_view_counts_own_fighters_and_only_the_enemies_seen():
    game = hiddenenvs.load_game("combat", map="small", team_size=3)
    for state in random_states(game, 2, max_steps=12)[1:]:
        battle, area_of = state.battle, game.map.area_of_cell
        for player, (mine, theirs) in enumerate([("a", "d"), ("d", "a")]):
            TEAMS = ("attackers", "defenders")
            view = game.describe_view(state, player)
            own, enemy = battle.team_slice(player), battle.team_slice(1 - player)
            alive = battle.alive
            expected_own = np.bincount(
                area_of[battle.positions[own][alive[own]]], minlength=game.map.num_areas
            )
            seen = battle.seen_enemies(player)
            expected_seen = np.bincount(
                area_of[battle.positions[enemy][seen]], minlength=game.map.num_areas
            )
            assert _area_counts(view, mine) == expected_own.tolist(), view
            assert _area_counts(view, theirs) == expected_seen.tolist(), view
            assert f"{int(seen.sum())} seen, " in view
            assert view.startswith(f"{TEAMS[player]} see, tick {battle.tick}/")


def test_combat_fighter_view_is_its_window():
    game = hiddenenvs.load_game("combat", map="small", team_size=2, mode="fighter")
    state = random_states(game, 1, max_steps=30)[-1]
    for player in range(game.info.num_players):
        view = game.describe_view(state, player)
        window = state.observation_tensor(player)
        if window[..., 4].max() == 0:
            assert view.endswith(": dead")
            continue
        rows = [line.split() for line in view.splitlines()[2:]]
        radius = window.shape[0] // 2
        assert rows[radius][radius] == "@" and sum(r.count("@") for r in rows) == 1
        enemies = int((window[..., 3] > 0).sum())
        assert sum(r.count("E") for r in rows) == enemies


class FirstLegal:
    def act_in_env(self, env, agent, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


def test_blind_tictactoe_play_shows_your_board(monkeypatch, capsys):
    """Human play (``hiddenenvs play``) draws the seat's board at each turn, for a person
    who has not read the rule sheet: after a mark, the board shows its outcome."""
    from hiddenenvs.play import Quit, play_game

    monkeypatch.setattr("sys.stdin", io.StringIO("mark 2 2\n"))  # then end of input: Quit
    env = hiddenenvs.make("blind_tictactoe")
    with pytest.raises(Quit):
        play_game(env, "xplayer", {"oplayer": FirstLegal()}, seed=2)
    shown = capsys.readouterr().out
    boards = [b for b in shown.split("xplayer's board") if b.strip()]
    assert len(boards) == 2 and all("1 2 3" in b for b in boards)  # one per turn
    outcome = re.search(r"you mark 2 2; you see (ok|fail)", shown).group(1)
    assert re.search(r"\n2   \. \. \.", boards[0])  # nothing tried yet
    assert re.search(rf"\n2   \. {'x' if outcome == 'ok' else 'o'} \.", boards[1])

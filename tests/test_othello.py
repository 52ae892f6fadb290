"""Othello: known 8x8 perft counts, an independent square-by-square implementation for
4x4 and 6x6, OpenSpiel trajectories, passes and game end, rendering, exact analysis on 4x4."""

from functools import cache

import numpy as np
import pytest

import hiddenenvs
from hiddenenvs.analysis import GameTree, TabularPolicy, best_response, exploitability
from hiddenenvs.game import TERMINAL

EMPTY, BLACK, WHITE = -1, 0, 1
DIRECTIONS = [(dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if (dr, dc) != (0, 0)]


def othello(board_size=8):
    return hiddenenvs.load_game("othello", board_size=board_size)


# ---- an independent reference: squares and walks, no bitboards -----------------------------
def reference_start(size):
    board = [[EMPTY] * size for _ in range(size)]
    half = size // 2
    board[half - 1][half - 1] = board[half][half] = WHITE
    board[half - 1][half] = board[half][half - 1] = BLACK
    return tuple(map(tuple, board))


def reference_flips(board, row, column, player):
    size = len(board)
    if board[row][column] != EMPTY:
        return []
    flipped = []
    for dr, dc in DIRECTIONS:
        r, c, line = row + dr, column + dc, []
        while 0 <= r < size and 0 <= c < size and board[r][c] == 1 - player:
            line.append((r, c))
            r, c = r + dr, c + dc
        if line and 0 <= r < size and 0 <= c < size and board[r][c] == player:
            flipped += line
    return flipped


def reference_moves(board, player):
    size = len(board)
    return [
        r * size + c
        for r in range(size)
        for c in range(size)
        if reference_flips(board, r, c, player)
    ]


def reference_play(board, action, player):
    size = len(board)
    rows = [list(line) for line in board]
    if action != size * size:
        row, column = divmod(action, size)
        for r, c in reference_flips(board, row, column, player) + [(row, column)]:
            rows[r][c] = player
    return tuple(map(tuple, rows))


def reference_legal(board, player):
    """Moves, or [pass] when only the opponent can move, or [] when the game is over."""
    moves = reference_moves(board, player)
    if moves:
        return moves
    return [len(board) ** 2] if reference_moves(board, 1 - player) else []


# ---- move generation ----------------------------------------------------------------------
def perft(state, depth):
    if depth == 0 or state.is_terminal():
        return 1
    return sum(perft(state.child(action), depth - 1) for action in state.legal_actions())


def test_perft_8x8_matches_the_known_counts():
    known = [1, 4, 12, 56, 244, 1396, 8200, 55092]
    assert [perft(othello().new_initial_state(), depth) for depth in range(len(known))] == known


@pytest.mark.parametrize("board_size", [4, 6, 8])
def test_random_games_equal_the_reference_implementation(board_size):
    game = othello(board_size)
    rng = np.random.default_rng(board_size)
    for _ in range(20):
        state, board, player = game.new_initial_state(), reference_start(board_size), BLACK
        while True:
            legal = reference_legal(board, player)
            assert state.legal_actions() == legal
            squares = np.array(board)
            assert np.array_equal(state.board(), squares)
            planes = [squares == player, squares == 1 - player, squares == EMPTY]
            assert np.array_equal(state.information_state_tensor(player), np.stack(planes))
            black_to_move = np.full_like(planes[0], player == BLACK and bool(legal))
            public = [squares == BLACK, squares == WHITE, squares == EMPTY, black_to_move]
            assert np.array_equal(state.public_observation_tensor(), np.stack(public))
            if not legal:
                break
            action = int(rng.choice(legal))
            state.apply_action(action)
            board, player = reference_play(board, action, player), 1 - player
        black, white = (
            sum(v == colour for line in board for v in line) for colour in (BLACK, WHITE)
        )
        assert state.is_terminal() and state.returns().tolist() == [
            np.sign(black - white),
            np.sign(white - black),
        ]


def test_perft_6x6_matches_the_reference():
    def reference_perft(board, player, depth):
        legal = reference_legal(board, player)
        if depth == 0 or not legal:
            return 1
        return sum(
            reference_perft(reference_play(board, a, player), 1 - player, depth - 1) for a in legal
        )

    assert perft(othello(6).new_initial_state(), 5) == reference_perft(reference_start(6), BLACK, 5)


def test_random_games_equal_openspiel():
    """Thousands of random games move by move against OpenSpiel's ``othello``: the player
    to move, the legal actions, the board after every move and the returns."""
    pyspiel = pytest.importorskip("pyspiel")
    spiel_game = pyspiel.load_game("othello")
    game = othello()
    assert game.info.num_distinct_actions == spiel_game.num_distinct_actions()
    rng = np.random.default_rng(0)
    passes = 0
    for _ in range(2000):
        state, spiel_state = game.new_initial_state(), spiel_game.new_initial_state()
        while not spiel_state.is_terminal():
            assert state.current_player() == spiel_state.current_player()
            legal = state.legal_actions()
            assert legal == spiel_state.legal_actions()
            action = legal[rng.integers(len(legal))]
            passes += action == game.pass_action
            state.apply_action(action)
            spiel_state.apply_action(action)
            # OpenSpiel's planes from black's side are empty, black, white: the one-hot index
            # minus 1 is our board's code (-1 empty, 0 black, 1 white).
            spiel_board = (
                np.reshape(spiel_state.observation_tensor(BLACK), (3, 8, 8)).argmax(axis=0) - 1
            )
            assert np.array_equal(state.board(), spiel_board)
        assert state.is_terminal() and state.returns().tolist() == spiel_state.returns()
    assert passes > 0  # the games exercised passing


# ---- passes and the end of the game ---------------------------------------------------------
def position(game, black_squares, white_squares, to_move):
    state = game.new_initial_state()
    state.discs = [sum(1 << s for s in black_squares), sum(1 << s for s in white_squares)]
    state.to_move = to_move
    state._update_moves()
    return state


def test_a_player_without_a_move_must_pass():
    game = othello(4)
    # White a1, black b1: black cannot bracket anything, white can play c1.
    state = position(game, black_squares=[1], white_squares=[0], to_move=BLACK)
    assert state.legal_actions() == [game.pass_action] and game.action_to_string(0, 16) == "pass"
    state.apply_action(game.pass_action)
    assert state.current_player() == WHITE and state.legal_actions() == [2]
    state.apply_action(2)
    assert state.current_player() == TERMINAL and state.returns().tolist() == [
        -1.0,
        1.0,
    ]  # white 3, black 0


def test_the_game_ends_when_neither_player_can_move():
    game = othello(4)
    state = position(game, black_squares=[0, 5], white_squares=[15], to_move=WHITE)
    assert (
        state.is_terminal()
        and state.legal_actions() == []
        and state.returns().tolist() == [1.0, -1.0]
    )
    state = position(game, black_squares=[0], white_squares=[15], to_move=BLACK)
    assert state.is_terminal() and state.returns().tolist() == [0.0, 0.0]


def test_passing_is_illegal_when_a_move_exists():
    state = othello().new_initial_state()
    with pytest.raises(ValueError, match="illegal"):
        state.apply_action(64)


# ---- exact analysis on 4x4 -----------------------------------------------------------------
def test_exact_tools_solve_4x4_othello():
    """The whole 4x4 tree, counted independently; white (second player) wins with perfect play."""

    @cache
    def reference_nodes(board, player):
        legal = reference_legal(board, player)
        return 1 + sum(reference_nodes(reference_play(board, a, player), 1 - player) for a in legal)

    tree = GameTree.build(othello(4))
    assert tree.num_nodes == reference_nodes(reference_start(4), BLACK)
    assert tree.num_infosets == tree.num_nodes - tree.num_terminals  # perfect information
    uniform = TabularPolicy.uniform(tree)
    # White has a winning strategy, so its best response to anything wins surely,
    # and black's best response to uniform white cannot always win.
    assert best_response(tree, uniform, 1)[0] == pytest.approx(1.0)
    assert best_response(tree, uniform, 0)[0] < 1.0
    assert 0 < exploitability(tree, uniform) < 1


# ---- tensors and rendering -----------------------------------------------------------------
def test_tensors_are_from_the_observers_side():
    state = othello(6).new_initial_state()
    for player in (0, 1):
        tensor = state.information_state_tensor(player)
        assert tensor.shape == (3, 6, 6) and tensor.sum() == 36
        assert tensor[0, 2, 3] == (player == BLACK) and tensor[1, 2, 3] == (player == WHITE)
        assert tensor[2].sum() == 32


def test_rgb_and_ansi_rendering():
    env = hiddenenvs.make("othello", board_size=8, render_mode="rgb_array")
    env.reset(seed=0)
    image = env.render()
    assert image.shape == (256, 256, 3) and image.dtype == np.uint8

    def centre(row, column):
        return tuple(image[row * 32 + 16, column * 32 + 16])

    assert centre(3, 3) == (235, 235, 235) and centre(3, 4) == (20, 20, 20)  # d4 white, e4 black
    assert centre(0, 0) == (0, 110, 50)  # empty squares are green
    text = str(othello(4).new_initial_state())
    assert text.splitlines()[2] == "2 . o x ." and "black (x) to move" in text


def test_keys_are_public_and_the_sampler_returns_the_moves():
    """Perfect information: the public key is the move list, nothing is private, and the
    one history consistent with a key (the exact posterior) is what the sampler returns."""
    from hiddenenvs.beliefs import consistent_histories, sample_history

    game = othello(4)
    rng = np.random.default_rng(0)
    state = game.new_initial_state()
    while not state.is_terminal():
        key = state.information_state_key(state.current_player())
        assert state.public_state_key() == state.history() == tuple(move for move, _ in key)
        assert all(private is None for _, private in key)
        assert consistent_histories(game, 1, key) == [(state.history(), 1.0)]
        assert sample_history(game, 1, key, rng) == state.history()
        state.apply_action(int(rng.choice(state.legal_actions())))
    first_move = state.history()[:1]
    never = lambda state, player: {a: float(a != first_move[0]) for a in state.legal_actions()}  # noqa: E731
    with pytest.raises(ValueError, match="positive reach"):
        sample_history(game, 1, state.information_state_key(1)[:1], rng, never)

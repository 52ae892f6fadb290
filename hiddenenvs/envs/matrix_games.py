"""Two-player matrix games: rock-paper-scissors, biased RPS, matching pennies.

| Import             | ``hiddenenvs.make("rps")``, ``"biased_rps"``, ``"matching_pennies"`` |
|--------------------|----------------------------------------------------------------------|
| Agents             | ``player_0``, ``player_1``                                          |
| Actions            | ``Discrete(3)`` rock/paper/scissors, or ``Discrete(2)`` heads/tails |
| Observation        | ``Box(0, 1, (2 + 2 * num_actions,), float32)``                      |
| Parallel API       | yes (``hiddenenvs.make_parallel``)                                   |

Rules: both players choose at once; the payoff to player 0 is read from the matrix and
player 1 gets its negative. One round per episode.

- ``rps``: the winner gets 1 (rock beats scissors, scissors beat paper, paper beats
  rock); equilibrium uniform, value 0.
- ``biased_rps``: as rps, but every decided round in which scissors was played pays 2;
  equilibrium rock 0.4, paper 0.4, scissors 0.2, value 0.
- ``matching_pennies``: player 0 wins 1 if the coins match, else loses 1; equilibrium
  uniform, value 0.

Parameters: ``matrix`` (fixed by the registered name).

Information-state tensor: which player I am (2), my action one-hot, then the opponent's
action one-hot once the round is over.

Public and private observations: the game has one step, the simultaneous choice, and
the joint action is revealed when it ends. It is the last step, so a player's own choice
is never observable apart from the other's: the step is public as a whole and nothing
is private. ``public_state_key()`` is ``()`` before the choice and ``(("rock",
"paper"),)`` after it; ``information_state_key(p)`` is ``()``, then ``((("rock",
"paper"), None),)`` for both players. ``history()`` is ``((0, 1),)``. Public observation
tensor (``2 * num_actions`` values): player 0's action one-hot, then player 1's, once
played.

Beliefs: the only decision is at the root, where no history is hidden; the default
exact sampler applies.
"""

from __future__ import annotations

import numpy as np

from hiddenenvs.game import (
    SIMULTANEOUS,
    TERMINAL,
    ChanceMode,
    Dynamics,
    Game,
    GameInfo,
    Information,
    Parameter,
    State,
    Utility,
)

ROCK, PAPER, SCISSORS = 0, 1, 2

MATRICES = {
    "rps": (("rock", "paper", "scissors"), [[0, -1, 1], [1, 0, -1], [-1, 1, 0]]),
    "biased_rps": (("rock", "paper", "scissors"), [[0, -1, 2], [1, 0, -2], [-2, 2, 0]]),
    "matching_pennies": (("heads", "tails"), [[1, -1], [-1, 1]]),
}


class MatrixGame(Game):
    NAME = "matrix_game"
    RENDER_MODES = ("ansi", "human", "rgb_array")
    PARAMETERS = (Parameter("matrix", str, "rps", "which payoff matrix", choices=tuple(MATRICES)),)

    def __init__(self, **params):
        super().__init__(**params)
        self.NAME = self.params["matrix"]
        self.action_names, rows = MATRICES[self.params["matrix"]]
        self.payoff = np.asarray(rows, dtype=float)
        num_actions = len(self.action_names)
        self.info = GameInfo(
            short_name=self.NAME,
            long_name=self.NAME.replace("_", " "),
            num_players=2,
            num_distinct_actions=num_actions,
            max_chance_outcomes=0,
            dynamics=Dynamics.SIMULTANEOUS,
            chance_mode=ChanceMode.DETERMINISTIC,
            information=Information.IMPERFECT,
            utility=Utility.ZERO_SUM,
            min_utility=float(self.payoff.min()),
            max_utility=float(self.payoff.max()),
            max_game_length=1,
            information_state_tensor_shape=(2 + 2 * num_actions,),
            observation_tensor_shape=(2 + 2 * num_actions,),
            public_observation_tensor_shape=(2 * num_actions,),
        )

    def new_initial_state(self, seed=None):
        return MatrixGameState(self)

    def action_to_string(self, player, action):
        return self.action_names[action]


class MatrixGameState(State):
    __slots__ = ("joint",)
    game: MatrixGame

    def __init__(self, game):
        self.game = game
        self.joint: list[int] | None = None

    def clone(self):
        other = MatrixGameState(self.game)
        other.joint = self.joint
        return other

    def current_player(self):
        return TERMINAL if self.joint is not None else SIMULTANEOUS

    def legal_actions(self, player=None):
        if self.joint is not None:
            return []
        if player is None:
            raise ValueError(f"{self.game.NAME}: simultaneous node; name the player")
        return list(range(self.game.info.num_distinct_actions))

    def _apply_actions(self, joint):
        self.joint = list(joint)

    def returns(self):
        if self.joint is None:
            return np.zeros(2)
        value = self.game.payoff[self.joint[0], self.joint[1]]
        return np.array([value, -value])

    def history(self):
        return () if self.joint is None else (tuple(self.joint),)

    def public_state_key(self):
        if self.joint is None:
            return ()
        return (tuple(self.game.action_names[a] for a in self.joint),)

    def information_state_key(self, player):
        return tuple((entry, None) for entry in self.public_state_key())

    def public_observation_tensor(self):
        num_actions = self.game.info.num_distinct_actions
        tensor = np.zeros(2 * num_actions, dtype=np.float32)
        if self.joint is not None:
            tensor[self.joint[0]] = 1
            tensor[num_actions + self.joint[1]] = 1
        return tensor

    def information_state_tensor(self, player):
        num_actions = self.game.info.num_distinct_actions
        tensor = np.zeros(2 + 2 * num_actions, dtype=np.float32)
        tensor[player] = 1
        if self.joint is not None:
            tensor[2 + self.joint[player]] = 1
            tensor[2 + num_actions + self.joint[1 - player]] = 1
        return tensor

    def render_rgb(self, player: int | None = None) -> np.ndarray:
        """The payoff matrix as an ``(360, 440, 3)`` uint8 image, the chosen cell on gold
        once both have played. Nothing is hidden for long: the choices are revealed
        together at the end, so ``player``'s view (None: the true state) is the same
        picture under its own title."""
        from hiddenenvs.envs import _render

        game = self.game
        _render.check_viewer(game, player)
        seats = game.info.player_names
        if self.joint is None:
            status = "both choose at once"
        else:
            status = "returns " + " / ".join(f"{r:+g}" for r in self.returns())
        return _render.payoff_matrix(
            _render.seat_title(game.info.long_name, seats, player),
            seats,
            game.action_names,
            game.payoff,
            None if self.joint is None else (self.joint[0], self.joint[1]),
            status,
        )

    def __str__(self):
        if self.joint is None:
            return "waiting for both players"
        names = [self.game.action_names[a] for a in self.joint]
        return f"player_0: {names[0]}, player_1: {names[1]} | returns: {self.returns().tolist()}"

"""Any GDL or GDL-II rule sheet as a game of the shared model.

| Import          | ``hiddenenvs.make("gdl", rules="path/to/game.kif")`` or ``sheet="name"``  |
|-----------------|---------------------------------------------------------------------------|
| Agents          | the sheet's roles except ``random``, in declaration order                 |
| Actions         | ``Discrete(max moves of a role)``: the ground moves a role can ever make, |
|                 | masked by legality; ``action_to_string`` gives the move in KIF            |
| Observation     | ``Box(0, 1, (1 + A + P,), float32)`` (see below)                          |
| Parallel API    | yes (``hiddenenvs.make_parallel``): every step is simultaneous            |

Rules: those of the sheet. Each GDL step is, in the model, a CHANCE node for the role
``random`` (uniform over its legal moves; skipped when it has one) followed by a
SIMULTANEOUS node over the other roles. A role whose only legal move is one move plays it
automatically and is not a mover. Returns are the goal values of the terminal state
(0..100), or scaled to [-1, 1] with ``scale_returns=True``. Percepts: a sheet with
``sees`` rules is GDL-II and each role gets its ``sees`` percepts for the joint move; a
sheet without is GDL-I and every role sees the whole joint move.

Parameters:

- ``rules`` (str, default ``""``): path of a rule sheet (KIF).
- ``sheet`` (str, default ``""``): name of a sheet shipped in ``hiddenenvs/envs/gdl/games/``
  (file stem, ``.gdl`` or ``.kif``; a plain name, never a path: ``../`` is refused); give at most one of ``rules``/``sheet`` (neither:
  the shipped ``tictactoe``).
- ``scale_returns`` (bool, default False): goal ``g`` becomes ``g / 50 - 1``.
- ``max_steps`` (int, default 200): GDL steps before the episode is cut (the cut state
  is terminal; each role's return is its goal there if it has exactly one, else 0).
  Also the horizon of the information-state tensor.
- ``max_instances`` (int, default 3000000): grounding size limit (ground rule
  instances per grounding attempt); beyond it, an error names the exploding rule. The
  refusal takes time in proportion (7-20 microseconds an instance): lower it to refuse
  faster.

Information: ``information_state_key(p)`` is exactly ``p``'s own moves and percepts,
step by step: a tuple of ``(own move, percepts)`` with percepts a tuple of percept
indices (GDL-II) or the joint move as move indices per role (GDL-I).

Tensors (``A`` = most moves of a role, ``P`` = percept features: most percepts of a role
for GDL-II, the sum of all roles' move counts for GDL-I):

| Tensor                        | Layout                                                  |
|-------------------------------|---------------------------------------------------------|
| ``observation_tensor(p)``     | step / max_steps, own last move one-hot (A), last       |
|                               | percepts multi-hot (P)                                  |
| ``information_state_tensor``  | step / max_steps, then for each of ``max_steps`` steps: |
|                               | own move one-hot (A), percepts multi-hot (P); the steps |
|                               | are the exact maximum game length when the search below |
|                               | finishes, else ``max_steps``                            |
| ``state.state_tensor()``      | the base propositions (true state; not for players)     |

Utility: CONSTANT_SUM (ZERO_SUM once scaled, for sums of 50 per player) when an exhaustive
search of the reachable states (bounded) proves the goals of the players always add up to
the same value; otherwise GENERAL_SUM.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hiddenenvs.envs.gdl.ground import DEFAULT_MAX_INSTANCES
from hiddenenvs.envs.gdl.parser import GdlPlayError, Location
from hiddenenvs.envs.gdl.propnet import Propnet
from hiddenenvs.game import (
    CHANCE,
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

GAMES_DIR = Path(__file__).resolve().parent / "games"
EXPLORATION_BUDGET = 20_000
DEFAULT_SHEET = "tictactoe"  # when neither rules= nor sheet= is given  # transitions spent proving constant-sum and game length


def resolve_sheet(name: str) -> Path:
    """The shipped sheet ``name``; only a plain file name inside the shipped folder."""
    known = sorted(p.stem for p in GAMES_DIR.glob("*.*") if p.suffix in (".gdl", ".kif"))
    if Path(name).name != name or name in ("", ".", ".."):
        raise ValueError(f"gdl: sheet= takes the name of a shipped rule sheet, not a path "
                         f"(got {name!r}); shipped: {known}; give a path with rules=")
    for suffix in ("", ".gdl", ".kif"):
        path = GAMES_DIR / f"{name}{suffix}"
        if path.is_file() and path.resolve().parent == GAMES_DIR.resolve():
            return path
    raise ValueError(f"gdl: no shipped rule sheet named {name!r}; shipped: {known}")


class GdlGame(Game):
    NAME = "gdl"
    PARAMETERS = (
        Parameter("rules", str, "", "path of a GDL/GDL-II rule sheet"),
        Parameter("sheet", str, "", "name of a rule sheet shipped in hiddenenvs/envs/gdl/games"),
        Parameter("scale_returns", bool, False, "scale goal values 0..100 to [-1, 1]"),
        Parameter("max_steps", int, 200, "GDL steps before the episode is cut", minimum=1),
        Parameter("max_instances", int, DEFAULT_MAX_INSTANCES, "grounding size limit", minimum=1),
    )

    def __init__(self, **params):
        super().__init__(**params)
        rules, sheet = self.params["rules"], self.params["sheet"]
        if rules and sheet:
            raise ValueError("gdl: give one of rules= (a path) or sheet= (a shipped name), "
                             "not both")
        if not rules and not sheet:
            sheet = DEFAULT_SHEET
        path = Path(rules) if rules else resolve_sheet(sheet)
        self.propnet = Propnet.from_file(path, max_instances=self.params["max_instances"])
        net = self.propnet
        lowered = [name.lower() for name in net.roles]
        self.random_role = lowered.index("random") if "random" in lowered else None
        self.player_roles = [r for r in range(len(net.roles)) if r != self.random_role]
        if not self.player_roles:
            raise GdlPlayError(Location(str(path), 1, 1), "the sheet has no role besides random")
        self.NAME = Path(path).stem
        self.max_steps = self.params["max_steps"]
        num_moves = [len(net.moves[r]) for r in self.player_roles]
        self.num_actions = max(1, max(num_moves))
        if net.has_sees:
            self.percept_features = max([len(net.percepts[r]) for r in self.player_roles] + [1])
            self.role_offsets = None
        else:
            self.role_offsets = np.cumsum([0] + [len(m) for m in net.moves])
            self.percept_features = int(self.role_offsets[-1])
        utility, utility_sum, depth = self._explore()
        scale = self.params["scale_returns"]
        if scale and utility is Utility.CONSTANT_SUM:
            utility_sum = utility_sum / 50 - len(self.player_roles)
            if abs(utility_sum) < 1e-12:
                utility, utility_sum = Utility.ZERO_SUM, 0.0
        steps = depth if depth is not None else self.max_steps
        self.horizon = min(steps, self.max_steps)  # information-state tensor steps
        per_step = 2 if self.random_role is not None else 1
        self.info = GameInfo(
            short_name=self.NAME,
            long_name=f"GDL: {self.NAME}",
            num_players=len(self.player_roles),
            num_distinct_actions=self.num_actions,
            max_chance_outcomes=len(net.moves[self.random_role]) if self.random_role is not None
            else 0,
            dynamics=Dynamics.SIMULTANEOUS,
            chance_mode=ChanceMode.EXPLICIT_STOCHASTIC if self.random_role is not None
            else ChanceMode.DETERMINISTIC,
            information=Information.IMPERFECT,
            utility=utility,
            min_utility=-1.0 if scale else 0.0,
            max_utility=1.0 if scale else 100.0,
            max_game_length=steps * per_step,
            information_state_tensor_shape=(1 + self.horizon * (self.num_actions
                                                                + self.percept_features),),
            observation_tensor_shape=(1 + self.num_actions + self.percept_features,),
            player_names=tuple(net.roles[r] for r in self.player_roles),
            utility_sum=utility_sum,
        )

    def _explore(self):
        """(utility, sum, max depth) by exhaustive search of the reachable states, if small."""
        net = self.propnet
        frontier = {net.initial_state}
        seen = set(frontier)
        sums = set()
        budget = EXPLORATION_BUDGET
        depth = 0
        while frontier:
            next_frontier = set()
            for state in frontier:
                info = net.evaluate(state)
                if info.terminal:
                    goals = [info.goals[r] for r in self.player_roles]
                    if any(len(g) != 1 for g in goals):
                        return Utility.GENERAL_SUM, None, None
                    sums.add(sum(g[0] for g in goals))
                    continue
                if any(not legal for legal in info.legal):
                    return Utility.GENERAL_SUM, None, None
                joints = [()]
                for legal in info.legal:
                    joints = [j + (m,) for j in joints for m in legal]
                for joint in joints:
                    budget -= 1
                    if budget < 0 or depth >= self.max_steps:
                        return Utility.GENERAL_SUM, None, None
                    child = net.transition(state, joint)[0]
                    if child not in seen:
                        seen.add(child)
                        next_frontier.add(child)
            frontier = next_frontier
            depth += 1 if frontier else 0
        net.clear_cache()
        if len(sums) == 1:
            return Utility.CONSTANT_SUM, float(next(iter(sums))), depth
        return Utility.GENERAL_SUM, None, depth

    def new_initial_state(self, seed=None):
        return GdlState(self)

    def action_to_string(self, player, action):
        moves = self.propnet.move_names[self.player_roles[player]]
        return moves[action] if action < len(moves) else f"<no move {action}>"


class GdlState(State):
    __slots__ = ("_info", "_returns", "cut", "fluents", "history", "pending_random", "steps")

    def __init__(self, game: GdlGame):
        self.game = game
        self.fluents = game.propnet.initial_state
        self.steps = 0
        self.history: list[tuple] = [[] for _ in game.player_roles]  # per player
        self.pending_random: int | None = None
        self.cut = False
        self._info = None
        self._returns = None
        self._advance()

    def clone(self):
        other = GdlState.__new__(GdlState)
        other.game = self.game
        other.fluents = self.fluents
        other.steps = self.steps
        other.history = [list(h) for h in self.history]
        other.pending_random = self.pending_random
        other.cut = self.cut
        other._info = self._info
        other._returns = self._returns
        return other

    # ---- evaluation
    def info(self):
        if self._info is None:
            net = self.game.propnet
            self._info = net.evaluate(self.fluents)
            net.check_playable(self.fluents, self._info)
        return self._info

    def state_tensor(self) -> np.ndarray:
        """The base propositions of the true state (for ReBeL-style reasoning)."""
        return self.game.propnet.state_bits(self.fluents).astype(np.float32)

    def current_player(self):
        if self.cut or self.info().terminal:
            return TERMINAL
        game = self.game
        if (game.random_role is not None and self.pending_random is None
                and len(self.info().legal[game.random_role]) > 1):
            return CHANCE
        return SIMULTANEOUS

    def legal_actions(self, player=None):
        current = self.current_player()
        if current == TERMINAL:
            return []
        if current == CHANCE:
            if player in (None, CHANCE):
                return list(self.info().legal[self.game.random_role])
            return []
        if player is None:
            raise ValueError(f"{self.game.NAME}: simultaneous node; name the player")
        return list(self.info().legal[self.game.player_roles[player]])

    def chance_outcomes(self):
        if self.current_player() != CHANCE:
            raise ValueError(f"{self.game.NAME}: chance_outcomes() called at a non-chance node")
        legal = self.info().legal[self.game.random_role]
        return [(move, 1.0 / len(legal)) for move in legal]

    def _apply_action(self, action):
        self.pending_random = action
        self._advance()

    def _advance(self):
        """Play steps where nobody has a real choice (chance included) automatically."""
        players = range(len(self.game.player_roles))
        while (self.current_player() == SIMULTANEOUS
               and not any(len(self.legal_actions(p)) > 1 for p in players)):
            self._transition([self.legal_actions(p)[0] for p in players])

    def _apply_actions(self, joint):
        self._transition(joint)
        self._advance()

    def _transition(self, joint):
        game = self.game
        net = game.propnet
        info = self.info()
        moves = [0] * len(net.roles)
        for player, role in enumerate(game.player_roles):
            moves[role] = joint[player]
        if game.random_role is not None:
            legal = info.legal[game.random_role]
            moves[game.random_role] = (self.pending_random if self.pending_random is not None
                                       else legal[0])
        self.fluents, percepts = net.transition(self.fluents, tuple(moves))
        for player, role in enumerate(game.player_roles):
            seen = percepts[role] if net.has_sees else tuple(moves)
            self.history[player].append((moves[role], seen))
        self.steps += 1
        self.pending_random = None
        self._info = None
        if self.steps >= game.max_steps and not self.info().terminal:
            self.cut = True

    # ---- outcome
    def returns(self):
        if self.current_player() != TERMINAL:
            return np.zeros(len(self.game.player_roles))
        if self._returns is None:
            goals = self.info().goals
            values = []
            for role in self.game.player_roles:
                if len(goals[role]) == 1:
                    values.append(float(goals[role][0]))
                elif self.cut:
                    values.append(0.0)
                else:
                    raise GdlPlayError(
                        self.game.propnet.rule_location("goal", role),
                        f"role {self.game.propnet.roles[role]} has {len(goals[role])} goal "
                        f"values {list(goals[role])} in a terminal state (needs exactly one)")
            values = np.asarray(values)
            if self.game.params["scale_returns"]:
                values = values / 50.0 - 1.0
            self._returns = values
        return self._returns.copy()

    # ---- information
    def information_state_key(self, player):
        return tuple(self.history[player])

    def public_state_key(self):
        if not self.game.propnet.has_sees:
            return tuple(seen for _, seen in self.history[0])
        return (self.steps,)

    def _step_features(self, player, move, seen, out, offset):
        game = self.game
        out[offset + move] = 1.0
        offset += game.num_actions
        if game.role_offsets is None:
            out[[offset + k for k in seen]] = 1.0
        else:
            for role, role_move in enumerate(seen):
                out[offset + game.role_offsets[role] + role_move] = 1.0

    def observation_tensor(self, player):
        game = self.game
        tensor = np.zeros(game.info.observation_tensor_shape, dtype=np.float32)
        tensor[0] = min(1.0, self.steps / game.max_steps)
        if self.history[player]:
            move, seen = self.history[player][-1]
            self._step_features(player, move, seen, tensor, 1)
        return tensor

    def information_state_tensor(self, player):
        game = self.game
        tensor = np.zeros(game.info.information_state_tensor_shape, dtype=np.float32)
        tensor[0] = min(1.0, self.steps / game.max_steps)
        width = game.num_actions + game.percept_features
        for step, (move, seen) in enumerate(self.history[player][: game.horizon]):
            self._step_features(player, move, seen, tensor, 1 + step * width)
        return tensor

    def __str__(self):
        net = self.game.propnet
        lines = [f"step {self.steps}: " + " ".join(net.state_fluents(self.fluents))]
        if self.is_terminal():
            lines.append(f"terminal, returns {self.returns().tolist()}")
        return "\n".join(lines)

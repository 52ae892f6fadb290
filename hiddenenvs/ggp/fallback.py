"""Playing a GDL-I match without a propnet: the reference reasoner and flat Monte Carlo.

A sheet the grounder refuses (its ``max_instances``) or cannot ground within its share of
the start clock is still a game the player has to play: a player that answers nothing, or
answers illegally, has random moves played for it by the game manager. Such a match keeps
the true state with the reference reasoner (:mod:`hiddenenvs.envs.gdl.reference`: bottom-up
evaluation one state at a time, no grounding; slower per state, but its cost does not
explode with the sheet's ground size) and chooses each move by flat Monte Carlo (Finnsson
& Björnsson, *Simulation-Based Approach to General Game Playing*, AAAI 2008, as the
baseline of CadiaPlayer): random playouts after each of its legal moves in turn (the
other roles' moves uniform), the move with the best mean goal value, within the play
clock less the margin. With no playout finished in time it plays its first legal move,
so every answer is a legal move.

Only GDL-I sheets: a GDL-II player does not know the true state, and tracking its
beliefs needs the propnet's sampler; a GDL-II sheet that the grounder refuses is refused.
"""

from __future__ import annotations

import random
import threading
import time

from hiddenenvs.envs.gdl.reference import ReferenceReasoner
from hiddenenvs.ggp.kif import to_kif

MAX_PLAYOUT_STEPS = 1_000  # a playout longer than this counts as a 0 for us
# Rule firings of one evaluation (a state, or a state and joint move): a sheet from a
# stranger that would derive millions of facts per state is refused, not played into
# memory exhaustion (ggp-base's largest sheets fire a few thousand).
MAX_DERIVATIONS = 500_000


class FallbackError(ValueError):
    """A match the reference reasoner cannot play (answered with HTTP 400)."""


class ReasonerMatch:
    """A GDL-I match kept by the reference reasoner (the interface of ``Match`` that the
    player uses: ``observe_joint_move``, ``choose``, ``close``)."""

    gdl_ii = False

    def __init__(
        self,
        match_id: str,
        role_name: str,
        rules_text: str,
        play_clock: float,
        margin: float,
        seed: int | None,
    ):
        self.match_id = match_id
        self.last_heard = time.monotonic()
        self.reasoner = ReferenceReasoner.from_text(
            rules_text, filename=f"{match_id[:40]}.kif", max_derivations=MAX_DERIVATIONS
        )
        if any(rule.head.relation == "sees" for rule in self.reasoner.sheet.rules):
            raise FallbackError("the reference reasoner plays GDL-I sheets only (this has sees)")
        lowered = [role.lower() for role in self.reasoner.roles]
        if role_name.lower() not in lowered:
            raise FallbackError(f"no role {role_name[:80]!r} in the sheet (roles: {lowered})")
        self.role = lowered.index(role_name.lower())
        self.play_clock = play_clock
        self.margin = margin
        self.state = self.reasoner.initial_state()
        self.reasoner.legal_moves(self.state)  # a state that explodes is refused at START
        self.steps = 0
        self.final_moves: list | None = None  # as Match's: the moves a PLAY ended the game with
        self.rng = random.Random(seed)
        self.lock = threading.Lock()

    def observe_joint_move(self, moves: list) -> None:
        """Every role's move of the last step, in role order (checked legal)."""
        reasoner = self.reasoner
        if reasoner.is_terminal(self.state) and moves == self.final_moves:
            return  # the STOP repeats the moves of the PLAY that ended the game
        if len(moves) != len(reasoner.roles):
            raise FallbackError(
                f"expected {len(reasoner.roles)} moves (one per role), got {len(moves)}"
            )
        joint = [reasoner.parse_terms(to_kif(move))[0] for move in moves]
        legal = reasoner.legal_moves(self.state)
        for role, move in enumerate(joint):
            if move not in legal[role]:
                raise FallbackError(
                    f"{to_kif(moves[role])[:80]!r} is not a legal move of role "
                    f"{reasoner.roles[role]} at step {self.steps}"
                )
        self.state = reasoner.next_state(self.state, joint)
        self.steps += 1
        if reasoner.is_terminal(self.state):
            self.final_moves = moves

    def choose(self, received: float) -> str:
        """Our move in KIF, by flat Monte Carlo until ``received + play clock - margin``."""
        reasoner = self.reasoner
        if reasoner.is_terminal(self.state):
            raise FallbackError("play: the game is over; expected stop")
        deadline = received + self.play_clock - self.margin
        legal = reasoner.legal_moves(self.state)
        mine = legal[self.role]
        if not mine:
            raise FallbackError(f"role {reasoner.roles[self.role]} has no legal move here")
        totals, counts = [0.0] * len(mine), [0] * len(mine)
        playout = 0
        while len(mine) > 1 and time.monotonic() < deadline:
            index = playout % len(mine)
            playout += 1
            joint = [self.rng.choice(moves) if moves else None for moves in legal]
            joint[self.role] = mine[index]
            value = self._playout(reasoner.next_state(self.state, joint), deadline)
            if value is None:
                break
            totals[index] += value
            counts[index] += 1
        best = max(
            range(len(mine)),
            key=lambda i: (totals[i] / counts[i] if counts[i] else -1.0, -i),
        )
        return reasoner.render(mine[best])

    def _playout(self, state: frozenset, deadline: float) -> float | None:
        """Our goal value at the end of a uniformly random playout from ``state`` (the
        lowest of our values if the sheet gives several, 0 for none or a dead end); None
        when the deadline comes first."""
        reasoner = self.reasoner
        for _ in range(MAX_PLAYOUT_STEPS):
            if reasoner.is_terminal(state):
                values = reasoner.goal_values(state)[self.role]
                return float(min(values)) if values else 0.0
            if time.monotonic() >= deadline:
                return None
            legal = reasoner.legal_moves(state)
            if any(not moves for moves in legal):
                return 0.0
            state = reasoner.next_state(state, [self.rng.choice(moves) for moves in legal])
        return 0.0

    def close(self) -> None:
        """Nothing on disk or shared: the reasoner and its bounded caches go with the match."""

"""Playing a match without a propnet: the reference reasoner and flat Monte Carlo.

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

GDL-II sheets (``sees``, ``random``): the player does not know the true state, so a
:class:`BeliefReasonerMatch` keeps a bounded sample of the states consistent with its own
moves and percepts (a particle filter, as HyperPlay does: Schofield, Cerexhe &
Thielscher, *HyperPlay: A Solution to General Game Playing with Imperfect Information*,
AAAI 2012). After each step every kept state is advanced under our move and the
other roles' moves drawn uniformly (``random``'s too); a successor is kept when it gives us
exactly the percepts we received; when no drawn successor fits, every joint move of the
others is tried (up to :data:`MAX_ENUMERATED_MOVES`, and the time to move). Flat Monte Carlo then plays from
those states: each playout starts from one of them, in turn. A sample that lost every
consistent state (possible when more states fit than it keeps) answers the PLAYs with an
error from then on, and the game manager plays random moves for us.
"""

from __future__ import annotations

import itertools
import random
import threading
import time

from hiddenenvs.envs.gdl.reference import ReferenceReasoner
from hiddenenvs.ggp.kif import is_nil, to_kif

MAX_PLAYOUT_STEPS = 1_000  # a playout longer than this counts as a 0 for us
# Rule firings of one evaluation (a state, or a state and joint move): a sheet from a
# stranger that would derive millions of facts per state is refused, not played into
# memory exhaustion (ggp-base's largest sheets fire a few thousand).
MAX_DERIVATIONS = 500_000


class FallbackError(ValueError):
    """A match the reference reasoner cannot play (answered with HTTP 400)."""


MAX_PARTICLES = 64  # GDL-II: states kept that are consistent with what we saw
SUCCESSOR_DRAWS = 8  # GDL-II: the others' moves drawn per kept state and step
MAX_ENUMERATED_MOVES = 20_000  # GDL-II: joint moves tried in all when no draw fits


def reasoner_match(
    match_id: str,
    role_name: str,
    rules_text: str,
    play_clock: float,
    margin: float,
    seed: int | None,
) -> ReasonerMatch:
    """The match kept by the reference reasoner: a :class:`BeliefReasonerMatch` for a
    GDL-II sheet (one with ``sees`` rules), else a :class:`ReasonerMatch`."""
    reasoner = ReferenceReasoner.from_text(
        rules_text, filename=f"{match_id[:40]}.kif", max_derivations=MAX_DERIVATIONS
    )
    has_sees = any(rule.head.relation == "sees" for rule in reasoner.sheet.rules)
    kind = BeliefReasonerMatch if has_sees else ReasonerMatch
    return kind(match_id, role_name, reasoner, play_clock, margin, seed)


class ReasonerMatch:
    """A GDL-I match kept by the reference reasoner (the interface of ``Match`` that the
    player uses: ``observe_joint_move``, ``choose``, ``close``)."""

    gdl_ii = False

    def __init__(
        self,
        match_id: str,
        role_name: str,
        reasoner: ReferenceReasoner,
        play_clock: float,
        margin: float,
        seed: int | None,
    ):
        self.match_id = match_id
        self.last_heard = time.monotonic()
        self.reasoner = reasoner
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
        return self._best_by_playouts(mine, [self.state], deadline)

    def _best_by_playouts(self, mine: list, states: list, deadline: float) -> str:
        """Flat Monte Carlo: our moves ``mine`` tried in turn, each from the next of
        ``states`` in turn, the others' moves drawn uniformly, until ``deadline``; the move
        with the best mean playout value (the first on ties and when none was tried)."""
        reasoner = self.reasoner
        totals, counts = [0.0] * len(mine), [0] * len(mine)
        playout = 0
        while len(mine) > 1 and time.monotonic() < deadline:
            index = playout % len(mine)
            state = states[(playout // len(mine)) % len(states)]
            playout += 1
            legal = reasoner.legal_moves(state)
            if mine[index] not in legal[self.role]:
                continue  # a sheet whose legal moves our percepts do not settle
            joint = [self.rng.choice(moves) if moves else None for moves in legal]
            joint[self.role] = mine[index]
            value = self._playout(reasoner.next_state(state, joint), deadline)
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


class BeliefReasonerMatch(ReasonerMatch):
    """A GDL-II match kept by the reference reasoner through a sample of the states
    consistent with our moves and percepts (module docstring); the interface of a GDL-II
    ``Match``: ``observe_percepts``, ``choose``, ``close``."""

    gdl_ii = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        lowered = [role.lower() for role in self.reasoner.roles]
        if lowered[self.role] == "random":
            raise FallbackError("the role 'random' is played by the game manager, not by a player")
        self.particles = [self.state]  # the initial state is known

    def observe_percepts(self, last_move, percepts) -> None:
        """Our move of the last step and our percepts: the sample advanced and filtered."""
        reasoner = self.reasoner
        if is_nil(last_move):
            raise FallbackError("a PLAY after the first must name this player's last move")
        ours = reasoner.parse_terms(to_kif(last_move))[0]
        seen = () if is_nil(percepts) else percepts
        if isinstance(seen, str):
            raise FallbackError(f"percepts must be a list or nil, got {seen!r}")
        observed = frozenset(reasoner.parse_terms(" ".join(to_kif(p) for p in seen)))
        sources = []
        for state in self.particles:
            if not reasoner.is_terminal(state):
                legal = reasoner.legal_moves(state)
                if ours in legal[self.role] and all(legal):
                    sources.append((state, legal))
        kept: list = []

        def keep(state, joint) -> bool:
            """Keep the successor if it gives us what we saw; True when the sample is full."""
            if reasoner.percepts(state, joint)[self.role] == observed:
                successor = reasoner.next_state(state, joint)
                if successor not in kept:
                    kept.append(successor)
            return len(kept) >= MAX_PARTICLES

        # Half the time to move at most (the PLAY was received at last_heard); the rest is
        # the search's.
        deadline = self.last_heard + (self.play_clock - self.margin) / 2
        for index in range(len(sources) * SUCCESSOR_DRAWS):
            if time.monotonic() > deadline and kept:
                break
            state, legal = sources[index % len(sources)]
            joint = [self.rng.choice(moves) for moves in legal]
            joint[self.role] = ours
            if keep(state, joint):
                break
        if not kept:  # the draws missed: every joint move of the others, within bounds
            tried = 0
            deadline = self.last_heard + self.play_clock - self.margin
            for state, legal in sources:
                if time.monotonic() > deadline:
                    break
                choices = [
                    [ours] if role == self.role else moves for role, moves in enumerate(legal)
                ]
                for combination in itertools.product(*choices):
                    tried += 1
                    if keep(state, list(combination)) or tried >= MAX_ENUMERATED_MOVES:
                        break
                if len(kept) >= MAX_PARTICLES or tried >= MAX_ENUMERATED_MOVES:
                    break
        self.particles = kept
        self.steps += 1

    def choose(self, received: float) -> str:
        """Our move in KIF, by flat Monte Carlo from the kept states until ``received +
        play clock - margin``."""
        reasoner = self.reasoner
        live = [state for state in self.particles if not reasoner.is_terminal(state)]
        if not live:
            raise FallbackError(
                "play: no state consistent with our moves and percepts was sampled (or every "
                "one is terminal); the manager plays this move"
            )
        deadline = received + self.play_clock - self.margin
        mine = reasoner.legal_moves(live[0])[self.role]
        if not mine:
            raise FallbackError(f"role {reasoner.roles[self.role]} has no legal move here")
        return self._best_by_playouts(mine, live, deadline)

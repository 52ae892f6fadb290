"""The one episode runner: agents (any policies) play the game model, chance drawn one way,
and each agent's experience comes back as :class:`agents.base.Transition` objects.

Two ways to drive the same game model:

- :func:`play_episodes`, in lockstep through the PettingZoo AEC env (the env is a thin
  adapter over the model): at every tick the decisions waiting in all episodes are grouped
  by seat and answered with one batched ``act_batch`` call per agent (one network forward
  for all of them). Chance is drawn by the env with :func:`draw_chance`'s rule from its
  seeded generator; a simultaneous node asks its movers one after another, none seeing the
  others' choices, so any number of players works. What an agent acts from is declared on
  its class: the observation tensor (the default), its seat's view (``USES_SEAT_VIEW``:
  searches) or the true state (``USES_TRUE_STATE``: scripted bots with full information, a
  search told to start from the true state). With ``learn`` each agent gets
  ``start_episode``, its transitions (from one of its decisions to its next one, or the
  end, with everything it earned in between) and ``end_episode``. The loop's self-play,
  its evaluation episodes (:func:`returns_against_opponents`) and ANFSP's actors play here;
  :func:`agents.vector_self_play.play_vector_episodes` is its batched twin on a compiled
  vector env (same hooks, same transitions).
- :func:`model_episode`, a walk of one game-model state to its end for policies that are
  state machines (a search that suspends for a batched network call, ExIt-OOS's
  :meth:`agents.exit_oos.SelfPlayer.play_steps`): chance by :func:`draw_chance`, the
  movers' choices from a ``decide`` generator, joint actions at simultaneous nodes. A
  learning seat there gets the transitions :func:`play_episodes` would give it from
  :class:`SeatTransitions` (MCNFSP's :func:`agents.mcnfsp.self_play.play_against_policy`); both build
  them with :func:`transition_from`.

A deadline (a ``time.perf_counter()`` time) cuts episodes between ticks; the episodes cut
are dropped, never counted half-played.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Generator
from typing import Any

import numpy as np

from agents.base import Agent, Transition
from agents.baselines import RandomAgent
from agents.search.tables import apply_choices, movers_and_joint
from hiddenenvs.game import CHANCE, TERMINAL, State, sample_chance_outcome


# ---- the game model, one state ------------------------------------------------------------------
def draw_chance(state: State, rng: np.random.Generator) -> None:
    """Play one chance outcome at ``state``, drawn by its probability with one uniform draw
    of ``rng`` (the rule the envs use: :func:`hiddenenvs.game.sample_chance_outcome`)."""
    state.apply_action(sample_chance_outcome(state, rng))


# decide(state, movers, joint) -> the movers' actions, as a generator (it may suspend).
Decide = Callable[[State, list[int], "list[int] | None"], Generator[Any, Any, list[int]]]


def model_episode(
    state: State,
    decide: Decide,
    rng: np.random.Generator,
    after_move: Callable[[State], None] | None = None,
) -> Generator[Any, Any, State]:
    """Play ``state`` to its end, in place: chance by :func:`draw_chance` with ``rng``; at a
    decision or simultaneous node ``actions = yield from decide(state, movers, joint)``
    (``joint``: the joint action with the forced entries, None at a decision node,
    :func:`agents.search.tables.movers_and_joint`). A generator, so a ``decide`` that
    suspends (for a batched network call) suspends the episode; returns the final state.
    ``after_move(state)`` runs after every move, chance's included (to collect rewards)."""
    while state.current_player() != TERMINAL:
        if state.current_player() == CHANCE:
            draw_chance(state, rng)
        else:
            movers, joint = movers_and_joint(state)
            actions = yield from decide(state, movers, joint)
            apply_choices(state, joint, movers, actions)
        if after_move is not None:
            after_move(state)
    return state


def never_suspends(
    choose: Callable[[State, list[int], list[int] | None], list[int]],
) -> Decide:
    """A :func:`model_episode` ``decide`` from a function that answers at once."""

    def decide(state: State, movers: list[int], joint: list[int] | None):
        return choose(state, movers, joint)
        yield  # unreachable: it makes decide a generator, as model_episode drives it

    return decide


def play_out(episode: Generator[Any, Any, State]) -> State:
    """Run a :func:`model_episode` whose ``decide`` never suspends; its final state."""
    try:
        suspended = next(episode)
    except StopIteration as finished:
        return finished.value
    episode.close()
    raise RuntimeError(f"play_out: the episode suspended (yielded {suspended!r}); drive it instead")


# ---- one seat's transitions ---------------------------------------------------------------------
Decision = tuple[np.ndarray, np.ndarray, int]  # a seat's (observation, action mask, action)


def transition_from(
    previous: Decision,
    reward: float,
    next_observation: np.ndarray,
    next_action_mask: np.ndarray,
    done: bool,
    episode_id: int,
) -> Transition:
    """The transition from a seat's decision ``previous`` to its next one, or (``done``) to
    the end, where the next mask is all zeros; ``reward``: all it earned in between."""
    return Transition(
        observation=previous[0],
        action_mask=previous[1],
        action=previous[2],
        reward=float(reward),
        next_observation=next_observation,
        next_action_mask=np.zeros_like(previous[1]) if done else next_action_mask,
        done=bool(done),
        episode_id=episode_id,
    )


class SeatTransitions:
    """One learning seat on a walk of the game model (:func:`model_episode`): the agent's
    episode boundaries and its transitions, as :func:`play_episodes` gives them. Per move
    :meth:`earn` (its reward); per decision :meth:`reached` (before the agent acts: the
    transition ending there) then :meth:`chose`; :meth:`end` at the end."""

    def __init__(self, agent: Agent, seat: int, episode_id: int, learn: bool):
        self.agent, self.seat, self.episode_id, self.learn = agent, seat, episode_id, learn
        self.previous: Decision | None = None
        self.earned = 0.0
        if learn:
            agent.start_episode(episode_id)

    def earn(self, state: State) -> None:
        self.earned += float(state.rewards()[self.seat])

    def reached(self, observation: np.ndarray, action_mask: np.ndarray) -> None:
        if self.learn and self.previous is not None:
            self.agent.observe(
                transition_from(
                    self.previous, self.earned, observation, action_mask, False, self.episode_id
                )
            )

    def chose(self, observation: np.ndarray, action_mask: np.ndarray, action: int) -> None:
        self.previous, self.earned = (observation, action_mask, action), 0.0

    def end(self) -> None:
        if not self.learn:
            return
        if self.previous is not None:
            ending = np.zeros_like(self.previous[0])
            self.agent.observe(
                transition_from(self.previous, self.earned, ending, ending, True, self.episode_id)
            )
        self.agent.end_episode(self.episode_id)


# ---- the AEC env, many episodes in lockstep -----------------------------------------------------
def play_episodes(
    envs: list,
    seat_agents: dict[str, Agent],
    seeds: np.ndarray,
    learn: bool = True,
    deadline: float | None = None,
    first_episode_deadline: float | None = None,
) -> np.ndarray:
    """Play one episode in each env in lockstep; returns ``(len(envs), num_agents)`` returns.

    ``seat_agents`` maps each PettingZoo agent name to the Agent in that seat. With
    ``learn`` the agents get their transitions and episode boundaries. Agents that search
    from their seat's information get its view with each decision; agents that act from
    the true state (``USES_TRUE_STATE``: scripted bots with full information, a search told
    to start from the true state) get the game state. Past ``deadline`` (a
    ``time.perf_counter()`` time) the episodes still running are abandoned (their
    agents get ``end_episode``) and only the finished episodes' rows are returned. With
    ``first_episode_deadline`` (later than ``deadline``), ``deadline`` cuts only once an
    episode has finished: past it, one episode plays on (the others are abandoned) until
    it ends, or until ``first_episode_deadline``.
    """
    possible = envs[0].possible_agents
    returns = np.zeros((len(envs), len(possible)))
    for episode_id, (env, seed) in enumerate(zip(envs, seeds)):
        env.reset(seed=int(seed))
        if learn:
            for name in possible:
                seat_agents[name].start_episode(episode_id)
    lockstep = _Lockstep(envs, seat_agents, returns, learn)
    active = list(range(len(envs)))
    abandoned: list[int] = []
    while active:
        if _past(deadline, first_episode_deadline, bool(lockstep.finished)):
            abandoned += active
            active = []
            break
        if len(active) > 1 and deadline is not None and time.perf_counter() > deadline:
            # Past the deadline with none finished: one episode is enough, and costs less.
            abandoned += active[1:]
            active = active[:1]
        requests, active = lockstep.collect(active)
        lockstep.answer(requests)
    if not abandoned:
        return returns
    if learn:
        for episode_id in abandoned:
            for name in possible:
                seat_agents[name].end_episode(episode_id)
    return returns[sorted(lockstep.finished)]


def _past(deadline: float | None, first_episode_deadline: float | None, finished: bool) -> bool:
    """Whether episodes still running are cut now (see :func:`play_episodes`)."""
    now = time.perf_counter()
    if deadline is None or now <= deadline:
        return False
    return finished or first_episode_deadline is None or now > first_episode_deadline


class _Lockstep:
    """:func:`play_episodes`' state between ticks: each seat's last decision per episode
    (``pending``, the start of its next transition) and the episodes finished."""

    def __init__(self, envs: list, seat_agents: dict[str, Agent], returns: np.ndarray, learn: bool):
        self.envs, self.seat_agents, self.returns, self.learn = envs, seat_agents, returns, learn
        self.possible = envs[0].possible_agents
        self.seat_index = {name: k for k, name in enumerate(self.possible)}
        self.pending: dict[tuple[int, str], Decision] = {}
        self.finished: list[int] = []

    def collect(self, active: list[int]) -> tuple[dict[str, list[tuple[int, dict]]], list[int]]:
        """One tick: each active episode's reward to its mover (and the transition that ends
        there); the decisions waiting, grouped by seat; the episodes still running."""
        requests: dict[str, list[tuple[int, dict]]] = defaultdict(list)
        still_active = []
        for episode_id in active:
            env = self.envs[episode_id]
            if not env.agents:
                if self.learn:
                    for name in self.possible:
                        self.seat_agents[name].end_episode(episode_id)
                self.finished.append(episode_id)
                continue
            still_active.append(episode_id)
            name = env.agent_selection
            observation, reward, termination, truncation, _ = env.last()
            self.returns[episode_id, self.seat_index[name]] += reward
            done = termination or truncation
            previous = self.pending.pop((episode_id, name), None)
            if self.learn and previous is not None:
                self.seat_agents[name].observe(
                    transition_from(
                        previous,
                        reward,
                        observation["observation"],
                        observation["action_mask"],
                        done,
                        episode_id,
                    )
                )
            if done:
                env.step(None)
            else:
                requests[name].append((episode_id, observation))
        return requests, still_active

    def answer(self, requests: dict[str, list[tuple[int, dict]]]) -> None:
        """One batched ``act_batch`` per seat for its waiting decisions; each env steps."""
        for name, items in requests.items():
            observations = np.stack([obs["observation"] for _, obs in items])
            masks = np.stack([obs["action_mask"] for _, obs in items])
            agent = self.seat_agents[name]
            ids = [i for i, _ in items]
            if agent.USES_TRUE_STATE:
                # A true-state agent's act_batch takes roots= (not yet declared on Agent).
                actions, _ = agent.act_batch(  # type: ignore[call-arg]
                    observations, masks, ids, roots=[self.envs[i].game_state for i in ids]
                )
            else:
                views = (
                    [self.envs[i].seat_view(name) for i in ids] if agent.USES_SEAT_VIEW else None
                )
                actions, _ = agent.act_batch(observations, masks, ids, views)
            for (episode_id, _), observation, mask, action in zip(
                items, observations, masks, actions
            ):
                self.pending[(episode_id, name)] = (observation, mask, int(action))
                self.envs[episode_id].step(int(action))


def returns_against_random(
    env_factory: Callable[[], Any],
    agent_for_seat: Callable[[int], Agent],
    episodes: int,
    seed: int,
    num_envs: int = 32,
) -> np.ndarray:
    """Mean return of ``agent_for_seat(p)`` in seat ``p`` against uniform random, per seat."""
    return returns_against_opponents(env_factory, agent_for_seat, episodes, seed, num_envs).means


class OpponentReturns:
    """Per evaluated seat: the mean return and the episodes played (``NaN`` / 0 elsewhere)."""

    def __init__(self, num_seats: int):
        self.means = np.full(num_seats, np.nan)
        self.episodes = np.zeros(num_seats, dtype=np.int64)
        self.wins = np.zeros(num_seats, dtype=np.int64)

    @property
    def total_episodes(self) -> int:
        return int(self.episodes.sum())


def returns_against_opponents(
    env_factory: Callable[[], Any] | list[Any],
    agent_for_seat: Callable[[int], Agent],
    episodes: int,
    seed: int,
    num_envs: int = 32,
    opponent: Callable[[str, int, int], Agent] | None = None,
    seats: list[int] | None = None,
    deadline: float | None = None,
    first_episode_deadline: float | None = None,
) -> OpponentReturns:
    """``agent_for_seat(p)`` in each seat ``p`` of ``seats`` (default: all) for ``episodes``
    episodes, every other seat played by ``opponent(name, seat, seed)`` (default: uniform
    random). Past ``deadline`` it stops, dropping the episodes in flight (fewer episodes,
    counted; a seat that finished none has a NaN mean), except that each seat plays on
    until its first episode has finished, up to ``first_episode_deadline`` when given. ``env_factory`` may instead be a
    list of unwrapped envs to reuse (the loop's own)."""
    if isinstance(env_factory, list):
        envs = env_factory[: min(len(env_factory), episodes)]
    else:
        envs = [env_factory().unwrapped for _ in range(min(num_envs, episodes))]
    names = envs[0].possible_agents
    num_actions = envs[0].action_space(names[0]).n
    rng = np.random.default_rng(seed)
    result = OpponentReturns(len(names))
    evaluated = [seat for seat in range(len(names)) if seats is None or seat in seats]
    for seat, seat_name in enumerate(names):
        if seat not in evaluated:
            continue
        # Each seat gets an equal share of what is left before the deadline.
        seat_deadline = (
            None
            if deadline is None
            else (
                time.perf_counter()
                + (deadline - time.perf_counter()) / (len(evaluated) - evaluated.index(seat))
            )
        )
        agent = agent_for_seat(seat)
        agent.rng = np.random.default_rng(
            np.random.SeedSequence(seed, spawn_key=(seat,))
        )  # not the env stream
        opponents: dict[str, Agent]
        if opponent is None:
            opponents = {name: RandomAgent(num_actions, int(rng.integers(2**31))) for name in names}
        else:
            opponents = {
                name: opponent(name, k, int(rng.integers(2**31))) for k, name in enumerate(names)
            }
        opponents[seat_name] = agent
        total, played, wins = _play_seat(
            envs, opponents, seat, episodes, rng, seat_deadline, first_episode_deadline
        )
        result.means[seat] = total / played if played else np.nan
        result.episodes[seat] = played
        result.wins[seat] = wins
    return result


def _play_seat(
    envs: list,
    seat_agents: dict[str, Agent],
    seat: int,
    episodes: int,
    rng: np.random.Generator,
    deadline: float | None,
    first_episode_deadline: float | None = None,
) -> tuple[float, int, int]:
    """``episodes`` evaluation episodes (fewer past ``deadline``, but at least one unless
    ``first_episode_deadline`` passes first) in batches of ``len(envs)``; seat ``seat``'s
    total return, the episodes played and its wins (a return above every other seat's)."""
    others = np.arange(len(envs[0].possible_agents)) != seat
    total, played, wins = 0.0, 0, 0
    while played < episodes and not _past(deadline, first_episode_deadline, played > 0):
        batch = envs[: min(len(envs), episodes - played)]
        returns = play_episodes(
            batch,
            seat_agents,
            rng.integers(2**31, size=len(batch)),
            learn=False,
            deadline=deadline,
            first_episode_deadline=None if played else first_episode_deadline,
        )
        total += returns[:, seat].sum()
        wins += int((returns[:, seat] > returns.max(axis=1, where=others, initial=-np.inf)).sum())
        played += len(returns)
    return total, played, wins

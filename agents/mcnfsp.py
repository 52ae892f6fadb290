r"""Monte Carlo Neural Fictitious Self-Play (MCNFSP): NFSP with a tree-search best response.

Zhang et al. 2019, "Monte Carlo Neural Fictitious Self-Play: Approach to Approximate Nash
Equilibrium of Imperfect-Information Games" (arXiv:1903.09569), section 3 and Algorithm 1.
Fictitious play lets every player best-respond to the average of its opponents' past
strategies; NFSP (:mod:`agents.nfsp`) learns that best response with DQN. MCNFSP
replaces DQN by a Monte Carlo tree search guided by a policy-value network. Per player i:

- a best-response network ``f_BR(s) = (p, v)`` (policy logits, value in [-1, 1]) trained
  on a circular memory M_RL of search results ``(s, pi, z)`` with the AlphaZero loss

  .. math::

     \mathcal{L}(\theta_{BR}) = (z - v)^2 - \pi^\top \log p,

  ``pi`` the search's visit distribution at ``s``, ``z`` the return the player went on to
  earn from ``s`` divided by the game's utility bound;
- an average-policy network ``Pi(s)`` trained by classifying the search's own actions,
  kept in a reservoir memory M_SL (a uniform sample of all best-response play):

  .. math::

     \mathcal{L}(\theta_\Pi) = \mathbb{E}_{(s, a) \sim \mathcal{M}_{SL}}\left[-\log \Pi(a \mid s)\right];

- anticipatory dynamics, per *action* (NFSP draws per episode): the player acts with the
  search with probability eta (``anticipatory``), otherwise samples Pi; ``(s, a)`` enters
  M_SL only when the search acted.

The search is PUCT (AlphaGo Zero). Each simulation descends from the root by

.. math::

   a^* = \operatorname{argmax}_a \; Q(s, a) + c_{\text{puct}} \, P(s, a) \, \frac{\sqrt{N(s)}}{1 + N(s, a)},

``P`` f_BR's policy at the node, ``N`` visit counts, ``Q`` the mean return scaled to
[-1, 1] (an unvisited action takes the node's network value). A new node is expanded
with f_BR's ``(p, v)`` and ``v`` is backed up; a terminal backs up the returns earned on
the way. After ``num_simulations`` simulations ``pi(a) ∝ N(root, a)^(1 / temperature)``
and the action is sampled from ``pi`` (the paper's choice).

Two changes from the paper make the search a best response, as fictitious play needs:

- **Opponents play their average policy, in expectation.** The paper lets the
  opponent choose by PUCT on f_BR too, which searches for a minimax value, not a best
  response to the opponents' average strategy. Here only the searcher's own decisions
  are tree nodes, chosen by PUCT. With ``opponent_backup: expectation`` (the default) a
  simulation expands every move of the others and of chance and backs up their average
  weighted by the others' current Pi and the chance probabilities (at simultaneous
  nodes, over the others' joint actions): no sampling noise, at the cost of the others'
  and chance's subtree down to the searcher's next decisions per simulation, which suits
  small branching (poker, one-shot games). With ``sample`` it draws one move per node
  and simulation, as a plain MCTS would: cheaper per simulation, for board games.
- **Hidden information.** A node is the searcher's information set (its key), not a
  state (single-observer information-set MCTS), and every simulation starts from a
  history drawn from the game's belief sampler (:mod:`hiddenenvs.beliefs`), weighted by
  the opponents' reach under their Pi. Values at a node then average over the histories
  it may hide, as the opponents' policies make them likely: with opponents and chance
  averaged or sampled, the search solves the searcher's one-player decision problem against Pi.
  A perfect-information game (Othello) has one consistent history. A game without a
  belief sampler (combat: chance sampled inside the state) can only be searched from a
  state the caller holds (:meth:`BestResponseSearch.policy` with ``root=``), each
  simulation on a reseeded copy; :func:`play_against_policy` does that, playing
  episodes on the game model against a fixed opponent (the paper's combat setting:
  MCNFSP attackers trained against scripted defenders).

Options for large action spaces, all off by default (the paper's search):

- ``order_head: factored`` (:class:`agents.networks.FactoredOrderHead`): f_BR's and Pi's
  logit of "send n from area s to destination d" is ``a(s) + b(d | s) + c(n | s)`` from the
  area's own features, a source-destination dot product and the count's share of the
  group, with a softmax over the legal orders only, where a linear head learns every flat
  order on its own (combat's commander orders).
- ``rollout_decisions: n``: a new leaf is valued by n of the searcher's decisions played
  with the game's no-op (combat's hold, so the standing orders play out) against the
  others' policies, plus f_BR's value where that stops (AlphaGo's rollout leaf
  evaluation, Silver et al. 2016, with a fixed rollout policy and lambda 1 up to the
  rollout's end), for games where a shallow search with an untrained value sees nothing.
- ``root_selection: gumbel`` (Danihelka et al. 2022, "Policy improvement by planning with
  Gumbel", Algorithm 2 and eq. 11): m root actions (``gumbel_actions``) are drawn without
  replacement by Gumbel-top-m on f_BR's logits, the simulations shared among them by
  sequential halving on ``g + logits + sigma(q)``, ``sigma(q) = (50 + max N) * q`` with
  ``q`` min-max normalised and unvisited actions completed by the mixed value; the search
  plays the best survivor and f_BR learns ``softmax(logits + sigma(completed q))``. Each
  pass over a round's candidates tries them on one drawn root, cloned (its history and its
  reseeded chance stream: common random numbers), so the halving compares the actions, not
  the luck of their draws. With few simulations among many legal actions, PUCT visits
  each action about once and ``pi ∝ N`` echoes the prior; the Gumbel root improves on it
  with any budget. Below the root the simulations descend by PUCT.
- ``rl_replay_ratio`` / ``sl_replay_ratio`` > 0: an update takes as many gradient steps as
  bring the minibatch samples drawn from M_RL / M_SL up to that many per pair the memory
  has ever stored, instead of the fixed ``rl_steps`` / ``sl_steps``. Only the searched
  decisions (a fraction eta) enter the memories, so fixed steps per
  ``learn_every_episodes`` show each pair as often as the steps outnumber the searches,
  and Pi overfits the sampled search actions as one-hot targets; a ratio keeps the
  samples per stored pair fixed.

Settings (paper, Othello, section 3.3.1): M_RL 4M, M_SL 400K, Adam with learning rates
0.01 (RL) and 0.005 (SL), an update every 100 episodes, two convolutional layers
flattened to a 120-d vector then fully connected layers for boards (``network: auto``
picks it for ``(C, H, W)`` tensors; :mod:`agents.networks`), an MLP otherwise; the
paper's dropout is left out. The paper does not give eta, c_puct, the simulation count
or the gradient steps per update: eta 0.1 is OpenSpiel's NFSP default, the others are
set in ``configs/mcnfsp_*.yaml``. The evaluated and exported policy is Pi. How the
options and settings were chosen: ``docs/results/mcnfsp_history.md``.

Workers (engineering, not the paper's): with ``workers`` > 1, or a ``ray_address``
(``"local"``, ``"auto"`` or ``host:port``; ``train.py --address``), a step's episodes are
shared among that many :class:`SelfPlayWorker` s of the project's one parallel map
(:class:`agents.parallel.WorkerPool`: ``spawn`` processes or Ray actors, on one machine or
a cluster), one piece each. A worker holds a copy of the players on the CPU, loads the
snapshot of f_BR and Pi it is sent with the piece, plays the piece's seeded episodes
through the loop's lockstep (:func:`agents.episodes.play_episodes`) with the players'
generators seeded from the piece, and sends back each search's M_RL and M_SL rows, which
the learner stores in piece order: the same seed and ``workers`` give the same run (not
the one-worker run's: the episodes share the players' generators differently). A piece
cut by the deadline cuts the step and nothing of it is kept; Ctrl-C or an error stops the
workers (:meth:`MCNFSP.close`). ``workers: 1`` (the default) plays in the training process.

    python train.py --config configs/mcnfsp_kuhn.yaml
    python train.py --config configs/mcnfsp_kuhn.yaml trainer.params.workers=2
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

import hiddenenvs

from agents.base import Agent, Learner, StepReport, Transition, sample_batch
from agents.catalogue import POSITIVE, RANGE
from agents.episodes import (
    SeatTransitions,
    draw_chance,
    model_episode,
    never_suspends,
    play_episodes,
    play_out,
)
from agents.parallel import WorkerPool, local_deadline, unix_deadline
from agents.device import (
    check_device_setting,
    choose_device,
    cpu_state_dict,
    module_device,
    tensors_on,
    to_device,
    to_numpy,
    weight_count,
)
from agents.memories import CircularBuffer, ReservoirBuffer
from agents.search import DeadlinePassed, check_deadline
from agents.networks import (
    AveragePolicyAgent,
    PolicyNetwork,
    PolicyValueNetwork,
    masked_logits,
    network_input,
)
from hiddenenvs.game import (
    CHANCE,
    SIMULTANEOUS,
    ChanceMode,
    Game,
    Information,
    SeatView,
    State,
    draw_index,
)

# fn(state, player) -> probabilities over num_distinct_actions (a hiddenenvs.beliefs policy)
OpponentPolicy = Callable[[State, int], np.ndarray]
# Gumbel root search, sigma(q) = (C_VISIT + max_b N(b)) * C_SCALE * q (Danihelka et al. 2022, eq. 8)
GUMBEL_C_VISIT = 50.0
GUMBEL_C_SCALE = 1.0
GUMBEL_TARGET_WIDTH = (
    128  # entries of the improved policy stored per search (combat: at most 91 legal)
)
# Root histories drawn per call of the belief sampler: one posterior set-up serves a whole
# search of ordinary size, and a search of millions of simulations is never drawn up front.
MAX_HISTORY_BATCH = 1024
# A self-play worker's memories hold a piece's searches whole (they grow as they fill).
MAX_PIECE_ROWS = 2**62


@dataclass
class MCNFSPConfig:
    """MCNFSP hyperparameters (defaults: the paper's Othello settings where it gives them)."""

    network: str = "auto"  # "mlp", "conv", or "auto": conv for (C, H, W) tensors (boards)
    conv_channels: list[int] = field(default_factory=lambda: [32, 32])
    flatten_size: int = 120  # the paper's 120-d vector after the convolutions
    hidden_sizes: list[int] = field(default_factory=lambda: [128])
    # "flat": one linear logit per action; "factored": FactoredOrderHead (agents.networks) for
    # games whose actions are orders "send n from area s to destination d" (combat, commander mode)
    order_head: str = "flat"
    order_embedding_size: int = 16  # the factored head's area keys and destination queries
    anticipatory: float = 0.1  # eta: probability of acting with the search, per action
    num_simulations: int = 50  # PUCT simulations per search
    c_puct: float = 1.5
    # "expectation": the others' moves and chance are summed over, weighted by Pi and the
    # chance probabilities (small branching); "sample": one is drawn per simulation (the paper's way)
    opponent_backup: str = "expectation"
    temperature: float = 1.0  # pi ∝ N^(1/temperature)
    # Leaf evaluation: 0 is the paper's (f_BR's value); n > 0 first plays n of the searcher's
    # decisions with the game's no-op (combat: hold, so standing orders play out), the others
    # by their policies, then adds f_BR's value where the rollout stopped (our deviation)
    rollout_decisions: int = 0
    # "puct": the paper's (every simulation picks the root action by PUCT, pi ∝ N); "gumbel":
    # Gumbel root search (Danihelka et al. 2022) for few simulations among many actions
    root_selection: str = "puct"
    gumbel_actions: int = 16  # gumbel: m, root actions sampled without replacement
    replay_capacity: int = 4_000_000  # M_RL, circular: (s, pi, z)
    reservoir_capacity: int = 400_000  # M_SL, reservoir: (s, a) of the search's actions
    learn_every_episodes: int = 100  # episodes between gradient updates
    rl_steps: int = 20  # f_BR gradient steps per update
    sl_steps: int = 20  # Pi gradient steps per update
    # Replay ratios (our deviation, off at 0): gradient samples per pair ever stored in M_RL
    # (resp. M_SL). When > 0 an update takes the steps that bring the memory's total samples
    # to ratio * pairs stored, replacing rl_steps (sl_steps): learning keeps pace with the
    # data however many searches an update's episodes held (see the module docstring)
    rl_replay_ratio: float = 0.0
    sl_replay_ratio: float = 0.0
    batch_size: int = 256
    min_buffer_size: int = 256  # no learning from a memory holding fewer
    rl_learning_rate: float = 0.01
    sl_learning_rate: float = 0.005
    # Where the best-response search starts: "beliefs" samples histories consistent with the
    # seat's information (self-play on imperfect information, as the paper's poker and
    # Othello); "true_state" starts from the true state, for games whose chance is drawn inside
    # the state and so have no belief sampler (combat). That search sees what its seat does
    # not, as in the paper's FPS test bed; the average policy Pi still acts on observations.
    search_from: str = "beliefs"
    # Seats held by a fixed opponent instead of a trained player, e.g. {1: "scripted:doctrine"}:
    # combat attackers learning against the doctrine's defenders (the paper's set-up).
    opponents: dict = field(default_factory=dict)
    device: str = "auto"  # auto | cpu | cuda | cuda:N (agents/device.py)
    # Self-play processes (engineering, not the paper): 1 plays in the training process; more,
    # or a ray_address, play each step's episodes in that many workers (module docstring)
    workers: int = field(default=1, metadata={RANGE: POSITIVE})
    # "local" or a cluster ("auto", host:port; train.py --address): the workers are Ray actors
    ray_address: str | None = None

    def __post_init__(self):
        from agents.config import ConfigError

        check_device_setting(self.device)
        if self.search_from not in ("beliefs", "true_state"):
            raise ConfigError(
                f"trainer.params.search_from must be 'beliefs' or 'true_state', got {self.search_from!r}"
            )
        for seat, spec in self.opponents.items():
            if (
                not isinstance(seat, int)
                or isinstance(seat, bool)
                or seat < 0
                or not isinstance(spec, str)
            ):
                raise ConfigError(
                    f"trainer.params.opponents maps seats (integers) to agent specs, "
                    f"e.g. {{1: scripted:doctrine}}; got {seat!r}: {spec!r}"
                )

        if self.network not in ("auto", "mlp", "conv"):
            raise ConfigError(
                f"trainer.params.network must be 'auto', 'mlp' or 'conv', got {self.network!r}"
            )
        if self.order_head not in ("flat", "factored"):
            raise ConfigError(
                f"trainer.params.order_head must be 'flat' or 'factored', got {self.order_head!r}"
            )
        if self.root_selection not in ("puct", "gumbel"):
            raise ConfigError(
                f"trainer.params.root_selection must be 'puct' or 'gumbel', got {self.root_selection!r}"
            )
        if self.opponent_backup not in ("expectation", "sample"):
            raise ConfigError(
                f"trainer.params.opponent_backup must be 'expectation' or 'sample', "
                f"got {self.opponent_backup!r}"
            )
        if not 0.0 <= self.anticipatory <= 1.0:
            raise ConfigError(
                f"trainer.params.anticipatory must be in [0, 1], got {self.anticipatory}"
            )
        for name in ("rl_replay_ratio", "sl_replay_ratio"):
            if not getattr(self, name) >= 0:
                raise ConfigError(
                    f"trainer.params.{name} must be >= 0 (0: fixed steps per update), "
                    f"got {getattr(self, name)}"
                )
        for name in ("c_puct", "temperature", "rl_learning_rate", "sl_learning_rate"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"trainer.params.{name} must be > 0, got {getattr(self, name)}")
        for name in (
            "num_simulations",
            "replay_capacity",
            "reservoir_capacity",
            "learn_every_episodes",
            "batch_size",
            "flatten_size",
            "order_embedding_size",
            "gumbel_actions",
        ):
            if getattr(self, name) < 1:
                raise ConfigError(f"trainer.params.{name} must be >= 1, got {getattr(self, name)}")
        for name in ("rl_steps", "sl_steps", "min_buffer_size", "rollout_decisions"):
            if getattr(self, name) < 0:
                raise ConfigError(f"trainer.params.{name} must be >= 0, got {getattr(self, name)}")


def architecture_for(game: Game, config: MCNFSPConfig) -> dict[str, Any]:
    """The networks' architecture for ``game`` (conv when ``auto`` sees a board tensor; the
    factored order head when ``order_head`` asks for it and the game has orders)."""
    shape = list(game.info.information_state_tensor_shape)
    kind = config.network
    if kind == "auto":
        kind = "conv" if len(shape) == 3 else "mlp"
    architecture = {
        "kind": kind,
        "input_shape": shape,
        "num_actions": game.info.num_distinct_actions,
        "conv_channels": list(config.conv_channels),
        "flatten_size": config.flatten_size,
        "hidden_sizes": list(config.hidden_sizes),
    }
    if config.order_head == "factored":
        if not callable(getattr(game, "order_structure", None)):
            from agents.config import ConfigError

            raise ConfigError(
                f"trainer.params.order_head 'factored' needs a game whose actions are orders "
                f"(combat in commander mode); {game.spec} has none: use order_head: flat"
            )
        architecture["order_head"] = {
            **game.order_structure(),
            "embedding_size": config.order_embedding_size,
        }
    return architecture


def utility_scale(game: Game) -> float:
    """The largest absolute return: values and targets are divided by it (into [-1, 1])."""
    return max(abs(game.info.min_utility), abs(game.info.max_utility), 1e-9)


def average_probabilities(
    network: nn.Module, tensors: torch.Tensor, masks: np.ndarray
) -> np.ndarray:
    """Pi's probabilities ``(B, A)``, zero on illegal actions."""
    logits = masked_logits(network(tensors), masks)
    return to_numpy(torch.softmax(logits, dim=-1).double())


# ---- the search -----------------------------------------------------------------------------
class _Node:
    """One of the searcher's information sets: priors, visit counts, summed returns."""

    __slots__ = ("actions", "prior", "visits", "return_sum", "value")

    def __init__(self, actions: np.ndarray, prior: np.ndarray, value: float):
        self.actions = actions
        self.prior = prior
        self.visits = np.zeros(len(actions))
        self.return_sum = np.zeros(len(actions))
        self.value = value  # f_BR's value here, in [-1, 1]: Q of unvisited actions

    def select(self, c_puct: float, scale: float) -> int:
        """The PUCT choice (an index into ``actions``; ties to the first)."""
        q = np.where(
            self.visits > 0, self.return_sum / np.maximum(self.visits, 1) / scale, self.value
        )
        exploration = c_puct * self.prior * math.sqrt(self.visits.sum()) / (1.0 + self.visits)
        return int(np.argmax(q + exploration))


def searcher_decides(state: State, player: int) -> bool:
    """Whether ``player`` has a real choice (two or more legal actions) at ``state``."""
    current = state.current_player()
    if current == player or current == SIMULTANEOUS:
        return len(state.legal_actions(player)) > 1
    return False


class BestResponseSearch:
    """PUCT search for ``player``'s best response to the others' policies (module docstring).

    ``network`` is f_BR; ``opponent_policy(state, q)`` gives player q's probabilities (Pi_q
    in MCNFSP, or any fixed policy); ``rng`` draws histories, the others' actions, chance
    outcomes and reseeds. ``deadline`` (a ``time.perf_counter()`` time, None for none) is
    checked before every simulation and at every node of a descent: past it a search raises
    :class:`agents.search.DeadlinePassed` (one expectation backup can take long).
    """

    def __init__(
        self,
        game: Game,
        player: int,
        network: PolicyValueNetwork,
        architecture: dict[str, Any],
        opponent_policy: OpponentPolicy,
        config: MCNFSPConfig,
        rng: np.random.Generator,
    ):
        self.game = game
        self.player = player
        self.network = network
        self.architecture = architecture
        self.opponent_policy = opponent_policy
        self.config = config
        self.rng = rng
        self.device = module_device(network)
        self.scale = utility_scale(game)
        self.sampled_chance = game.info.chance_mode is ChanceMode.SAMPLED_STOCHASTIC
        self.no_op = getattr(game, "NO_OP_ACTION", None)
        self.deadline: float | None = None
        if config.rollout_decisions and self.no_op is None:
            raise ValueError(
                f"MCNFSP search on {game.spec}: rollout_decisions needs the game's no-op action "
                f"(Game.NO_OP_ACTION, e.g. combat's hold) and {game.NAME} has none; use rollout_decisions: 0"
            )

    def _root_sampler(self, view: SeatView, root: State | None) -> Callable[[], State]:
        """A function returning a fresh copy of a root state for each simulation."""
        game, player, rng = self.game, self.player, self.rng
        if root is not None:
            fixed = root
        elif game.info.information is Information.PERFECT:
            # One consistent history: the true one (no opponent weights needed).
            fixed = game.state_from_history(
                game.sample_consistent_history(player, view.information_state_key, rng)
            )
        elif self.sampled_chance:
            raise ValueError(
                f"MCNFSP search on {game.spec}: chance is sampled inside the state, so the game has no "
                f"belief sampler; pass the state to search from (BestResponseSearch.policy(view, root=state))"
            )
        else:
            fixed = None
            states: dict[tuple, State] = {}
            # The others' policies are fixed for the whole search, so every simulation's
            # history comes from one posterior: drawn in one batch, the set-up a sampler does
            # per key and policy (GDL-II's exact forward filter, 90% of a search's time on
            # blind tic-tac-toe when redone per simulation) is done once per search.
            histories: list[tuple] = []
            batch = min(
                self.config.num_simulations + (self.config.root_selection == "gumbel"),
                MAX_HISTORY_BATCH,
            )

        def fresh_root() -> State:
            if fixed is not None:
                state = fixed.clone()
            else:
                if not histories:
                    histories.extend(
                        reversed(
                            game.sample_consistent_histories(
                                player, view.information_state_key, rng, batch, self.opponent_policy
                            )
                        )
                    )
                history = histories.pop()
                if history not in states:
                    states[history] = game.state_from_history(history)
                state = states[history].clone()
            if self.sampled_chance:
                state.reseed(int(rng.integers(2**63)))
            return state

        return fresh_root

    def _expand(self, state: State) -> _Node:
        actions = np.asarray(state.legal_actions(self.player), dtype=np.int64)
        tensor = network_input(
            state.information_state_tensor(self.player)[None], self.architecture, self.device
        )
        with torch.no_grad():
            logits, value = self.network.legal_logits_and_value(
                tensor, to_device(actions, self.device)
            )
        prior = to_numpy(torch.softmax(logits[0], dim=0).double())
        return _Node(actions, prior, float(value[0]))

    def _policy_over(self, state: State, player: int, legal: list[int]) -> np.ndarray:
        """Player's probabilities over ``legal`` (normalised), by ``opponent_policy``."""
        probabilities = np.asarray(self.opponent_policy(state, player), dtype=np.float64)[legal]
        if not probabilities.sum() > 0:
            raise ValueError(
                f"MCNFSP search: player {player}'s policy gives no probability to its legal actions "
                f"{legal} at {state.information_state_key(player)!r}"
            )
        return probabilities / probabilities.sum()

    def _sample_policy(self, state: State, player: int, legal: list[int]) -> int:
        return int(legal[draw_index(self._policy_over(state, player, legal), self.rng)])

    def _joint_outcomes(
        self, state: State, own_action: int | None
    ) -> list[tuple[list[int], float]]:
        """Every joint action with its probability: ``own_action`` for the searcher, the
        others' actions by their policies (zero-probability ones left out)."""
        per_player: list[list[tuple[int, float]]] = []
        for q in range(self.game.info.num_players):
            legal = state.legal_actions(q)
            if len(legal) <= 1:
                per_player.append([(legal[0] if legal else -1, 1.0)])
            elif q == self.player:
                per_player.append([(own_action, 1.0)])
            else:
                per_player.append(
                    [(a, p) for a, p in zip(legal, self._policy_over(state, q, legal)) if p > 0]
                )
        return [
            ([a for a, _ in combination], math.prod(p for _, p in combination))
            for combination in itertools.product(*per_player)
        ]

    def _outcomes(self, state: State) -> list[tuple[int | list[int], float]]:
        """The moves at a node where the searcher does not decide, with their probabilities."""
        current = state.current_player()
        if current == CHANCE:
            return [(a, p) for a, p in state.chance_outcomes() if p > 0]
        if current == SIMULTANEOUS:
            return self._joint_outcomes(state, None)
        legal = state.legal_actions()
        if len(legal) == 1:
            return [(legal[0], 1.0)]
        return [(a, p) for a, p in zip(legal, self._policy_over(state, current, legal)) if p > 0]

    def _joint(self, state: State, own_action: int | None) -> list[int]:
        """A joint action: ``own_action`` for the searcher, the others sampled."""
        joint = []
        for q in range(self.game.info.num_players):
            legal = state.legal_actions(q)
            if len(legal) <= 1:
                joint.append(legal[0] if legal else -1)
            else:
                joint.append(
                    own_action if q == self.player else self._sample_policy(state, q, legal)
                )
        return joint

    def _advance(self, state: State) -> float:
        """Play chance and the others (and the searcher's forced moves) until the searcher
        decides or the game ends; the searcher's rewards on the way."""
        earned = 0.0
        while not state.is_terminal() and not searcher_decides(state, self.player):
            check_deadline(self.deadline, "MCNFSP search")
            current = state.current_player()
            if current == CHANCE:
                draw_chance(state, self.rng)
            elif current == SIMULTANEOUS:
                state.apply_actions(self._joint(state, None))
            else:
                legal = state.legal_actions()
                state.apply_action(
                    legal[0] if len(legal) == 1 else self._sample_policy(state, current, legal)
                )
            earned += float(state.rewards()[self.player])
        return earned

    def _leaf_value(self, state: State, node: _Node) -> float:
        """A new node's value (unscaled): f_BR's ``v``, or with ``rollout_decisions`` the
        searcher's rewards over that many of its decisions played with the game's no-op
        (the others and chance as in ``_advance``) plus f_BR's ``v`` where the rollout stops."""
        if self.config.rollout_decisions == 0:
            return node.value * self.scale
        state = state.clone()
        earned = 0.0
        for _ in range(self.config.rollout_decisions):
            check_deadline(self.deadline, "MCNFSP search")
            if state.current_player() == SIMULTANEOUS:
                state.apply_actions(self._joint(state, self.no_op))
            else:
                state.apply_action(self.no_op)
            earned += float(state.rewards()[self.player]) + self._advance(state)
            if state.is_terminal():
                return earned
        tensor = network_input(
            state.information_state_tensor(self.player)[None], self.architecture, self.device
        )
        with torch.no_grad():
            value = float(self.network.value(tensor)[0])
        return earned + value * self.scale

    def _search(self, view: SeatView, root: State | None) -> tuple[_Node, int | None]:
        """The root node after ``num_simulations`` simulations, and (Gumbel) the chosen index."""
        legal = list(view.legal_actions)
        if len(legal) < 2:
            raise ValueError(
                f"MCNFSP search: player {self.player} has {len(legal)} legal actions; nothing to search"
            )
        fresh_root = self._root_sampler(view, root)
        nodes: dict[tuple, _Node] = {}
        key = tuple(view.information_state_key)
        if self.config.root_selection == "gumbel":
            return self._gumbel_search(fresh_root, nodes, key)
        for _ in range(self.config.num_simulations):
            check_deadline(self.deadline, "MCNFSP search")
            self._simulate(fresh_root(), nodes, key)
        return nodes[key], None

    def _gumbel_search(
        self, fresh_root: Callable[[], State], nodes: dict[tuple, _Node], key: tuple
    ) -> tuple[_Node, int]:
        """Gumbel root search (Danihelka et al. 2022, Algorithm 2): sample m root actions
        without replacement by Gumbel-top-m on f_BR's logits, then share the simulations
        among them by sequential halving, keeping the half with the highest
        ``g + logits + sigma(q)`` after each round; the chosen action is the best survivor.
        Below the root, simulations descend by PUCT as usual."""
        node = nodes[key] = self._expand(fresh_root())
        simulations = self.config.num_simulations
        scores = self.rng.gumbel(size=len(node.actions)) + np.log(node.prior + 1e-30)
        count = min(self.config.gumbel_actions, len(node.actions), simulations)
        remaining = np.argsort(-scores, kind="stable")[:count]
        rounds = max(1, math.ceil(math.log2(count)))
        used = 0
        for round_index in range(rounds):
            per_action = max(1, simulations // (rounds * len(remaining)))
            if round_index == rounds - 1:  # the last round spends what is left
                per_action = max(per_action, (simulations - used) // len(remaining))
            for _ in range(per_action):
                # Common random numbers: the round's candidates are each tried once on the
                # same root (one history, one reseeded chance stream, cloned), so their q
                # differ by what the action does, not by which hits or hidden state each
                # simulation happened to draw (one rollout per candidate on combat: the
                # hit rolls' noise decided the comparison).
                world = fresh_root()
                for index in remaining:
                    if used < simulations:
                        check_deadline(self.deadline, "MCNFSP search")
                        self._simulate(world.clone(), nodes, key, root_index=int(index))
                        used += 1
            sigma = self._sigma(node)
            remaining = remaining[np.argsort(-(scores + sigma)[remaining], kind="stable")]
            remaining = remaining[: max(1, math.ceil(len(remaining) / 2))]
        return node, int(remaining[0])

    def _sigma(self, node: _Node) -> np.ndarray:
        """``sigma(completed q)``: q the root's mean returns in [0, 1] (min-max over the
        actions), unvisited actions completed by the mixed value ``v_mix`` (Danihelka et
        al. 2022, eq. 33: f_BR's value averaged with the prior-weighted visited q)."""
        visited = node.visits > 0
        q = np.where(visited, node.return_sum / np.maximum(node.visits, 1) / self.scale, 0.0)
        total = node.visits.sum()
        if total > 0:
            weighted = (node.prior[visited] * q[visited]).sum() / max(
                node.prior[visited].sum(), 1e-30
            )
            mixed = (node.value + total * weighted) / (1.0 + total)
        else:
            mixed = node.value
        q = np.where(visited, q, mixed)
        spread = q.max() - q.min()
        q = (q - q.min()) / spread if spread > 0 else np.zeros_like(q)
        return (GUMBEL_C_VISIT + node.visits.max()) * GUMBEL_C_SCALE * q

    def visit_counts(self, view: SeatView, root: State | None = None) -> np.ndarray:
        """``N(root, a)`` over ``num_distinct_actions`` after ``num_simulations`` simulations."""
        root_node, _ = self._search(view, root)
        counts = np.zeros(self.game.info.num_distinct_actions)
        counts[root_node.actions] = root_node.visits
        return counts

    def action_values(self, view: SeatView, root: State | None = None) -> dict[int, float]:
        """``Q(root, a)`` in the game's units (mean backed-up return) for each visited action."""
        root_node, _ = self._search(view, root)
        return {
            int(a): float(total / n)
            for a, n, total in zip(root_node.actions, root_node.visits, root_node.return_sum)
            if n > 0
        }

    def policy(self, view: SeatView, root: State | None = None) -> np.ndarray:
        """The search's acting policy at the view (:meth:`policy_and_target`)."""
        return self.policy_and_target(view, root)[0]

    def policy_and_target(
        self, view: SeatView, root: State | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """What the search plays and what f_BR's policy head learns, over ``num_distinct_actions``.

        PUCT: both are ``pi ∝ N^(1/temperature)`` (the paper). Gumbel: it plays its chosen
        action (one-hot) and f_BR learns the improved policy ``softmax(logits + sigma(completed
        q))`` (Danihelka et al. 2022, eq. 11), which puts weight on every legal action.
        ``root``: a state to search from instead of belief samples (games without a sampler).
        """
        pi = np.zeros(self.game.info.num_distinct_actions)
        if len(view.legal_actions) == 1:
            pi[view.legal_actions[0]] = 1.0
            return pi, pi
        node, chosen = self._search(view, root)
        if chosen is None:
            pi[node.actions] = node.visits ** (1.0 / self.config.temperature)
            pi /= pi.sum()
            return pi, pi
        pi[node.actions[chosen]] = 1.0
        logits = np.log(node.prior + 1e-30) + self._sigma(node)
        target = np.zeros_like(pi)
        target[node.actions] = np.exp(logits - logits.max())
        return pi, target / target.sum()

    def _simulate(
        self,
        state: State,
        nodes: dict[tuple, _Node],
        root_key: tuple,
        root_index: int | None = None,
    ) -> None:
        """One descent from ``state`` (the searcher decides there; ``root_index``: the root
        action to take, else PUCT's), then the backup."""
        node = nodes.get(root_key)
        if node is None:
            node = nodes[root_key] = self._expand(state)
        if self.config.opponent_backup == "expectation":
            self._descend_expected(state, node, nodes, root_index)
            return
        path: list[tuple[_Node, int, float]] = []  # (node, action index, returns earned before it)
        earned, leaf_value = 0.0, 0.0
        while True:
            check_deadline(self.deadline, "MCNFSP search")
            index = (
                node.select(self.config.c_puct, self.scale) if root_index is None else root_index
            )
            root_index = None
            path.append((node, index, earned))
            action = int(node.actions[index])
            if state.current_player() == SIMULTANEOUS:
                state.apply_actions(self._joint(state, action))
            else:
                state.apply_action(action)
            earned += float(state.rewards()[self.player]) + self._advance(state)
            if state.is_terminal():
                break
            key = state.information_state_key(self.player)
            child = nodes.get(key)
            if child is None:
                child = nodes[key] = self._expand(state)
                leaf_value = self._leaf_value(state, child)
                break
            node = child
        total = earned + leaf_value
        for visited, index, before in path:
            visited.visits[index] += 1
            visited.return_sum[index] += total - before

    def _descend_expected(
        self, state: State, node: _Node, nodes: dict[tuple, _Node], index: int | None = None
    ) -> float:
        """Expectation backup: the PUCT choice (or ``index``) at the searcher's ``node``, then
        the searcher's expected return from it, summed over the others' moves and chance;
        backed up into ``node`` and returned (unscaled)."""
        if index is None:
            index = node.select(self.config.c_puct, self.scale)
        action = int(node.actions[index])
        if state.current_player() == SIMULTANEOUS:
            value = 0.0
            for joint, probability in self._joint_outcomes(state, action):
                child = state.clone()
                child.apply_actions(joint)
                value += probability * (
                    float(child.rewards()[self.player]) + self._expected_value(child, nodes)
                )
        else:
            state.apply_action(action)
            value = float(state.rewards()[self.player]) + self._expected_value(state, nodes)
        node.visits[index] += 1
        node.return_sum[index] += value
        return value

    def _expected_value(self, state: State, nodes: dict[tuple, _Node]) -> float:
        """The searcher's expected return from ``state`` on (unscaled): at its own
        information sets one PUCT descent (a new one is expanded and gives f_BR's value),
        elsewhere the probability-weighted sum over the moves (``_outcomes``)."""
        if state.is_terminal():
            return 0.0
        check_deadline(self.deadline, "MCNFSP search")
        if searcher_decides(state, self.player):
            key = state.information_state_key(self.player)
            node = nodes.get(key)
            if node is None:
                node = nodes[key] = self._expand(state)
                return self._leaf_value(state, node)
            return self._descend_expected(state, node, nodes)
        outcomes = self._outcomes(state)
        value = 0.0
        for move, probability in outcomes:
            child = state if len(outcomes) == 1 else state.clone()
            if isinstance(move, list):
                child.apply_actions(move)
            else:
                child.apply_action(move)
            value += probability * (
                float(child.rewards()[self.player]) + self._expected_value(child, nodes)
            )
        return value


# ---- the player -------------------------------------------------------------------------------
class MCNFSPAgent(Agent):
    """One MCNFSP player: f_BR and its search, Pi, M_RL and M_SL (a search agent in self-play)."""

    USES_SEAT_VIEW = True

    def __init__(
        self,
        game: Game,
        player: int,
        architecture: dict[str, Any],
        config: MCNFSPConfig,
        opponent_policy: OpponentPolicy,
        seed: int,
    ):
        super().__init__(game.info.num_distinct_actions, seed)
        self.game = game
        self.player = player
        self.config = config
        self.USES_TRUE_STATE = config.search_from == "true_state"  # the loop then passes roots=
        self.architecture = architecture
        self.best_response_network = PolicyValueNetwork(architecture)
        self.policy_network = PolicyNetwork(architecture)
        # Built on the CPU (the same initial weights everywhere), then moved. The search
        # evaluates one node per call, so ``auto`` weighs a one-row call (agents/device.py).
        self.device_choice = choose_device(
            config.device, weight_count(self.best_response_network), rows=1
        )
        self.device = self.device_choice.device
        self.best_response_network.to(self.device)
        self.policy_network.to(self.device)
        self.rl_optimizer = torch.optim.Adam(
            self.best_response_network.parameters(), lr=config.rl_learning_rate
        )
        self.sl_optimizer = torch.optim.Adam(
            self.policy_network.parameters(), lr=config.sl_learning_rate
        )
        self.search = BestResponseSearch(
            game,
            player,
            self.best_response_network,
            architecture,
            opponent_policy,
            config,
            self.rng,
        )
        self.scale = utility_scale(game)
        # A PUCT search visits at most num_simulations actions at its root: pi is stored sparse.
        # Gumbel's target covers every legal action: its largest GUMBEL_TARGET_WIDTH are kept.
        self.policy_width = min(
            self.num_actions,
            config.num_simulations
            if config.root_selection == "puct"
            else max(config.num_simulations, GUMBEL_TARGET_WIDTH),
        )
        self.replay, self.reservoir = self.new_memories(
            config.replay_capacity, config.reservoir_capacity
        )
        # Per episode in flight: the rewards so far, and the searches waiting for their z.
        self._episode_rewards: dict[int, list[float]] = {}
        self._episode_searches: dict[int, list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]] = {}
        self.searches = 0
        self.rl_steps = 0
        self.sl_steps = 0

    def new_memories(
        self, replay_capacity: int, reservoir_capacity: int
    ) -> tuple[CircularBuffer, ReservoirBuffer]:
        """Empty M_RL ``(s, pi, z)`` and M_SL ``(s, a)`` (they grow as they fill)."""
        observation_column = ((int(np.prod(self.architecture["input_shape"])),), np.float32)
        # Packed bits: combat has 12,961 actions.
        mask_column = ((math.ceil(self.num_actions / 8),), np.uint8)
        replay = CircularBuffer(
            replay_capacity,
            {
                "observation": observation_column,
                "action_mask": mask_column,
                "policy_actions": ((self.policy_width,), np.int64),
                "policy_probabilities": ((self.policy_width,), np.float32),
                "value_target": ((), np.float32),
            },
        )
        reservoir = ReservoirBuffer(
            reservoir_capacity,
            {
                "observation": observation_column,
                "action_mask": mask_column,
                "action": ((), np.int64),
            },
        )
        return replay, reservoir

    def network_arrays(self) -> dict[str, dict[str, np.ndarray]]:
        """f_BR's and Pi's weights as numpy arrays (what a self-play worker is sent)."""
        return {
            name: {k: v.numpy().copy() for k, v in cpu_state_dict(getattr(self, name)).items()}
            for name in ("best_response_network", "policy_network")
        }

    def load_network_arrays(self, arrays: dict[str, dict[str, np.ndarray]]) -> None:
        for name, state in arrays.items():
            # A copy: arrays from Ray's object store are read-only.
            getattr(self, name).load_state_dict({k: torch.tensor(v) for k, v in state.items()})

    # ---- acting ------------------------------------------------------------------------------
    def start_episode(self, episode_id=0):
        self._episode_rewards[episode_id] = []
        self._episode_searches[episode_id] = []

    def act_batch(self, observations, action_masks, episode_ids=None, views=None, roots=None):
        """Search with probability eta per decision (from ``views``, or ``roots`` states), else Pi."""
        if views is None and roots is None:
            raise ValueError(
                "MCNFSPAgent searches from the seat's view: call act_batch with views="
            )
        tensors = network_input(observations, self.architecture)
        flat = tensors.reshape(len(tensors), -1).numpy()
        tensors = tensors.to(self.device)
        action_masks = np.asarray(action_masks, dtype=np.int8)
        episode_ids = range(len(flat)) if episode_ids is None else episode_ids
        searching = self.rng.random(len(flat)) < self.config.anticipatory
        probabilities = np.zeros((len(flat), self.num_actions))
        targets = {}  # f_BR's policy targets, per searched row
        if (~searching).any():
            with torch.no_grad():
                probabilities[~searching] = average_probabilities(
                    self.policy_network,
                    tensors[to_device(~searching, self.device)],
                    action_masks[~searching],
                )
        for row in np.flatnonzero(searching):
            root = None if roots is None else roots[row]
            view = root.seat_view(self.player) if views is None else views[row]
            try:
                probabilities[row], targets[row] = self.search.policy_and_target(view, root)
            except DeadlinePassed:  # the loop abandons this episode: Pi answers, nothing is stored
                searching[row] = False
                with torch.no_grad():
                    probabilities[row] = average_probabilities(
                        self.policy_network, tensors[row : row + 1], action_masks[row : row + 1]
                    )[0]
                continue
            self.searches += 1
        actions = sample_batch(probabilities, self.rng)
        for row, episode_id in zip(
            np.flatnonzero(searching), np.asarray(list(episode_ids))[searching]
        ):
            packed = np.packbits(action_masks[row])
            self.reservoir.add(
                self.rng, observation=flat[row], action_mask=packed, action=actions[row]
            )
            if episode_id in self._episode_searches:  # learning: z comes at the episode's end
                self._episode_searches[episode_id].append(
                    (len(self._episode_rewards[episode_id]), flat[row], packed, targets[row])
                )
        return actions, probabilities

    def policy_probabilities_batch(self, observations, action_masks, views=None):
        """The average policy Pi (what is evaluated), as NFSP's agents."""
        with torch.no_grad():
            return average_probabilities(
                self.policy_network,
                network_input(observations, self.architecture, self.device),
                np.asarray(action_masks, dtype=np.int8),
            )

    def observe(self, transition: Transition):
        if transition.episode_id in self._episode_rewards:
            self._episode_rewards[transition.episode_id].append(transition.reward)

    def end_episode(self, episode_id=0):
        """Store each search of the episode in M_RL with z, the return earned from it on."""
        rewards = np.asarray(self._episode_rewards.pop(episode_id, []), dtype=np.float64)
        returns_to_go = np.append(np.cumsum(rewards[::-1])[::-1], 0.0)
        for decision, observation, packed, pi in self._episode_searches.pop(episode_id, []):
            support = np.flatnonzero(pi)
            if (
                len(support) > self.policy_width
            ):  # Gumbel targets: the largest entries, renormalised
                support = np.sort(
                    support[np.argsort(-pi[support], kind="stable")[: self.policy_width]]
                )
                pi = pi / pi[support].sum()
            actions = np.zeros(self.policy_width, dtype=np.int64)
            weights = np.zeros(self.policy_width, dtype=np.float32)
            actions[: len(support)] = support
            weights[: len(support)] = pi[support]
            self.replay.add(
                observation=observation,
                action_mask=packed,
                policy_actions=actions,
                policy_probabilities=weights,
                value_target=float(np.clip(returns_to_go[decision] / self.scale, -1.0, 1.0)),
            )

    def store(self, memories: dict[str, Any]) -> None:
        """A self-play worker's searches (:meth:`SelfPlayWorker.play_games`) into M_RL and
        M_SL, as if searched here in that order."""
        if len(memories["replay"]["value_target"]):
            self.replay.add_batch(**memories["replay"])
        if len(memories["reservoir"]["action"]):
            self.reservoir.add_batch(self.rng, **memories["reservoir"])
        self.searches += memories["searches"]

    # ---- learning ------------------------------------------------------------------------------
    def _batch(self, memory, size: int) -> dict[str, torch.Tensor]:
        batch = memory.sample(size, self.rng)
        batch["action_mask"] = np.unpackbits(batch["action_mask"], axis=1, count=self.num_actions)
        batch["observation"] = network_input(batch["observation"], self.architecture).numpy()
        return tensors_on(batch, self.device)

    def rl_step(self) -> tuple[float, float]:
        """One f_BR step, (z - v)^2 - pi^T log p on a minibatch of M_RL; (policy, value) losses."""
        batch = self._batch(self.replay, self.config.batch_size)
        logits, values = self.best_response_network(batch["observation"])
        log_p = torch.log_softmax(masked_logits(logits, batch["action_mask"]), dim=-1)
        targets = torch.zeros_like(log_p).scatter_add_(
            1, batch["policy_actions"], batch["policy_probabilities"]
        )
        policy_loss = -(targets * log_p).sum(dim=-1).mean()
        value_loss = nn.functional.mse_loss(values, batch["value_target"])
        self.rl_optimizer.zero_grad()
        (policy_loss + value_loss).backward()
        self.rl_optimizer.step()
        self.rl_steps += 1
        return policy_loss.item(), value_loss.item()

    def sl_step(self) -> float:
        """One Pi step: cross-entropy of the search's actions on a minibatch of M_SL."""
        batch = self._batch(self.reservoir, self.config.batch_size)
        logits = masked_logits(self.policy_network(batch["observation"]), batch["action_mask"])
        loss = nn.functional.cross_entropy(logits, batch["action"])
        self.sl_optimizer.zero_grad()
        loss.backward()
        self.sl_optimizer.step()
        self.sl_steps += 1
        return loss.item()

    def _steps_due(
        self, fixed_steps: int, replay_ratio: float, stored: int, steps_taken: int
    ) -> int:
        """``fixed_steps``, or with a replay ratio the steps that bring the samples drawn so far
        (``steps_taken * batch_size``) up to ``replay_ratio * stored``."""
        if replay_ratio == 0:
            return fixed_steps
        return max(0, int(replay_ratio * stored / self.config.batch_size) - steps_taken)

    def learn(self) -> dict[str, list[float]]:
        """Gradient steps on f_BR and on Pi (``rl_steps`` / ``sl_steps``, or as many as their
        replay ratios call for), each once its memory is big enough."""
        losses: dict[str, list[float]] = {"rl_loss": [], "value_loss": [], "sl_loss": []}
        minimum = max(self.config.min_buffer_size, 1)
        config = self.config
        if len(self.replay) >= minimum:
            for _ in range(
                self._steps_due(
                    config.rl_steps, config.rl_replay_ratio, self.replay.added, self.rl_steps
                )
            ):
                policy_loss, value_loss = self.rl_step()
                losses["rl_loss"].append(policy_loss)
                losses["value_loss"].append(value_loss)
        if len(self.reservoir) >= minimum:
            for _ in range(
                self._steps_due(
                    config.sl_steps, config.sl_replay_ratio, self.reservoir.seen, self.sl_steps
                )
            ):
                losses["sl_loss"].append(self.sl_step())
        return losses

    def evaluation_agent(self) -> AveragePolicyAgent:
        return AveragePolicyAgent(self.policy_network, self.architecture)

    # ---- checkpoints -----------------------------------------------------------------------------
    def state_dict(self):
        return {
            "best_response_network": self.best_response_network.state_dict(),
            "policy_network": self.policy_network.state_dict(),
            "rl_optimizer": self.rl_optimizer.state_dict(),
            "sl_optimizer": self.sl_optimizer.state_dict(),
            "replay": self.replay.state_dict(),
            "reservoir": self.reservoir.state_dict(),
            "rng": self.rng.bit_generator.state,
            "counters": {
                "searches": self.searches,
                "rl_steps": self.rl_steps,
                "sl_steps": self.sl_steps,
            },
        }

    def load_state_dict(self, state):
        for name in ("best_response_network", "policy_network", "rl_optimizer", "sl_optimizer"):
            getattr(self, name).load_state_dict(state[name])
        self.replay.load_state_dict(state["replay"])
        self.reservoir.load_state_dict(state["reservoir"])
        self.rng.bit_generator.state = state["rng"]
        counters = state["counters"]
        self.searches, self.rl_steps, self.sl_steps = (
            counters["searches"],
            counters["rl_steps"],
            counters["sl_steps"],
        )


class MCNFSP(Learner):
    """MCNFSP self-play: one :class:`MCNFSPAgent` per player; evaluation = average policies.

    A step plays a batch of self-play episodes through the loop; every
    ``learn_every_episodes`` episodes each player takes ``rl_steps`` and ``sl_steps``
    gradient steps. Each player's search samples the others' moves (and weighs its
    beliefs) by their current average policies, memoised per information set until the
    next update.
    """

    CONFIG_CLASS = MCNFSPConfig
    METRICS = ("rl_loss", "value_loss", "sl_loss", "replay_size", "reservoir_size", "searches")

    def __init__(self, game: Game, config: MCNFSPConfig, seed: int):
        super().__init__(game, config, seed)
        self.architecture = architecture_for(game, config)
        self._average_cache: dict[tuple[int, Any], np.ndarray] = {}
        num_players = game.info.num_players
        unknown = sorted(seat for seat in config.opponents if seat >= num_players)
        if unknown or len(config.opponents) >= num_players:
            from agents.config import ConfigError

            raise ConfigError(
                f"trainer.params.opponents: {game.spec} has seats 0..{num_players - 1} and at "
                f"least one must be trained; got seats {sorted(config.opponents)}"
            )
        self._opponents = {
            seat: self._fixed_opponent(spec, seat) for seat, spec in config.opponents.items()
        }
        self._agents = [
            MCNFSPAgent(
                game,
                player,
                self.architecture,
                config,
                self.average_policy,
                seed=seed * 1000 + player,
            )
            for player in self.trained_players()
        ]
        self._by_seat = dict(zip(self.trained_players(), self._agents))
        self.device_choice = self._agents[0].device_choice
        self.episodes = 0
        self.learned_at = 0  # episodes at the last update
        self._pool: WorkerPool | None = None
        self._network_version = 0  # bumped when the networks change; sent with them to workers

    def _fixed_opponent(self, spec: str, seat: int) -> Agent:
        from agents.leaderboard.specs import resolve_agent

        agent = resolve_agent(spec, self.game.spec.name, seat, dict(self.game.spec.params))
        agent.rng = np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(seat,)))
        return agent

    def trained_players(self) -> list[int]:
        return [p for p in range(self.game.info.num_players) if p not in self.config.opponents]

    @property
    def agents(self) -> list[Agent]:
        return [
            self._opponents.get(p) or self._by_seat[p] for p in range(self.game.info.num_players)
        ]

    def average_policy(self, state: State, player: int) -> np.ndarray:
        """Pi_player's probabilities at ``state`` (memoised until the next update); a fixed
        opponent's own policy at ``state``."""
        opponent = self._opponents.get(player)
        if opponent is not None:
            if hasattr(opponent, "policy_at_state"):  # reads the true state (the combat doctrine)
                return opponent.policy_at_state(state, player)
            return opponent.policy_probabilities(
                state.information_state_tensor(player),
                state.legal_actions_mask(player),
                state.seat_view(player),
            )
        key = (player, state.information_state_key(player))
        probabilities = self._average_cache.get(key)
        if probabilities is None:
            agent = self._by_seat[player]
            tensor = network_input(
                state.information_state_tensor(player)[None], self.architecture, agent.device
            )
            with torch.no_grad():
                probabilities = average_probabilities(
                    agent.policy_network,
                    tensor,
                    state.legal_actions_mask(player)[None],
                )[0]
            self._average_cache[key] = probabilities
        return probabilities

    def step(self, loop) -> StepReport:
        if self.in_workers:
            played = self._self_play_in_workers(loop)
        else:
            played = self._self_play_here(loop)
        if loop.step_cut:
            return StepReport(episodes=0, iterations=0)
        self.episodes += played
        return StepReport(episodes=played, iterations=1, metrics=self.update())

    @property
    def in_workers(self) -> bool:
        """Whether self-play runs in workers (processes or Ray actors), not in this process."""
        return self.config.workers > 1 or self.config.ray_address is not None

    def _self_play_here(self, loop) -> int:
        """The loop's lockstep self-play; the episodes played."""
        # A search past the loop's deadline stops inside its move (the loop then cuts the step).
        for agent in self._agents:
            agent.search.deadline = loop.deadline
        try:
            return len(loop.self_play(loop.max_episodes))
        finally:
            for agent in self._agents:
                agent.search.deadline = None

    def _self_play_in_workers(self, loop) -> int:
        """The step's episodes shared among the workers (one piece each, seeded from the
        loop's generator), their searches stored in piece order; the episodes played, or
        none with ``loop.step_cut`` set when the deadline cut a piece (nothing is kept)."""
        seeds = [int(s) for s in loop.rng.integers(2**31, size=loop.max_episodes)]
        shares = [share for share in np.array_split(seeds, self.config.workers) if len(share)]
        networks = [agent.network_arrays() for agent in self._agents]
        send = unix_deadline(loop.deadline)
        pieces = [
            (self._network_version, networks, [int(s) for s in share], int(piece_seed), send)
            for share, piece_seed in zip(shares, loop.rng.integers(2**63, size=len(shares)))
        ]
        played = dict(self._workers().map("play_games", pieces, loop.deadline))
        if len(played) < len(pieces) or any(played[i] is None for i in played):
            loop.step_cut = True
            return 0
        for index in range(len(pieces)):
            for agent, memories in zip(self._agents, played[index]):
                agent.store(memories)
        return len(seeds)

    def _workers(self) -> WorkerPool:
        """The self-play workers, started by the first step that needs them."""
        if self._pool is None:
            self._pool = WorkerPool(
                SelfPlayWorker,
                (self.game, self.config, self.seed),
                self.config.workers,
                ray_address=self.config.ray_address,
                name="mcnfsp-self-play",
                where="trainer.params.ray_address",
            )
        return self._pool

    def update(self) -> dict[str, float]:
        if self.episodes - self.learned_at < self.config.learn_every_episodes:
            return {}
        self.learned_at = self.episodes
        losses: dict[str, list[float]] = {"rl_loss": [], "value_loss": [], "sl_loss": []}
        for agent in self._agents:
            for name, values in agent.learn().items():
                losses[name] += values
        self._average_cache.clear()  # Pi changed
        self._network_version += 1
        metrics = {name: float(np.mean(values)) for name, values in losses.items() if values}
        metrics.update(
            {
                "replay_size": float(sum(len(a.replay) for a in self._agents)),
                "reservoir_size": float(sum(len(a.reservoir) for a in self._agents)),
                "searches": float(sum(a.searches for a in self._agents)),
            }
        )
        return metrics

    def evaluation_agent(self, player: int) -> Agent:
        if player in self._opponents:
            return self._opponents[player]
        return self._by_seat[player].evaluation_agent()

    def state_dict(self) -> dict[str, Any]:
        return {
            "agents": [agent.state_dict() for agent in self._agents],
            "episodes": self.episodes,
            "learned_at": self.learned_at,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if len(state["agents"]) != len(self._agents):
            raise ValueError(
                f"checkpoint has {len(state['agents'])} MCNFSP players, this game has {len(self._agents)}"
            )
        for agent, agent_state in zip(self._agents, state["agents"]):
            agent.load_state_dict(agent_state)
        self.episodes, self.learned_at = state["episodes"], state["learned_at"]
        self._average_cache.clear()
        self._network_version += 1

    def close(self) -> None:
        """Stop the self-play workers now (running episodes are abandoned); safe to call
        again, and after an exception or Ctrl-C."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()


# ---- self-play in worker processes or Ray actors ------------------------------------------------
class SelfPlayWorker:
    """A self-play worker of :class:`agents.parallel.WorkerPool` (a process or a Ray actor):
    a copy of the learner's players (each with its search) on the CPU, and envs, playing
    pieces of a step's episodes with a snapshot of the networks through the loop's lockstep
    (:func:`agents.episodes.play_episodes`). A piece's episodes depend on the piece alone
    (its seeds, and ``piece_seed`` for the players' generators), not on the worker."""

    def __init__(self, game: Game, config: MCNFSPConfig, seed: int):
        torch.set_num_threads(1)
        local = dataclasses.replace(config, workers=1, ray_address=None, device="cpu")
        self.learner = MCNFSP(game, local, seed)
        self.network_version: int | None = None
        self.envs: list = []
        self.seat_agents: dict[str, Agent] = {}

    def play_games(
        self,
        network_version: int,
        networks: list[dict[str, dict[str, np.ndarray]]],
        seeds: list[int],
        piece_seed: int,
        unix_deadline: float | None = None,
    ) -> list[dict[str, Any]] | None:
        """The episodes of ``seeds``; per trained player its searches (M_RL and M_SL rows,
        in the order played) and their count; None when the deadline cut an episode."""
        learner = self.learner
        if network_version != self.network_version:
            for agent, arrays in zip(learner._agents, networks):
                agent.load_network_arrays(arrays)
            learner._average_cache.clear()
            self.network_version = network_version
        deadline = local_deadline(unix_deadline)
        for player, agent in learner._by_seat.items():
            agent.replay, agent.reservoir = agent.new_memories(MAX_PIECE_ROWS, MAX_PIECE_ROWS)
            # In place: the search draws from the same generator.
            agent.rng.bit_generator.state = np.random.default_rng(
                [piece_seed, player]
            ).bit_generator.state
            agent.search.deadline = deadline
        for seat, opponent in learner._opponents.items():
            opponent.rng = np.random.default_rng([piece_seed, seat])
        searches = [agent.searches for agent in learner._agents]
        returns = play_episodes(
            self._envs(len(seeds)), self.seat_agents, np.asarray(seeds), deadline=deadline
        )
        if len(returns) < len(seeds):
            return None
        return [
            {
                "replay": agent.replay.state_dict()["data"],
                "reservoir": agent.reservoir.state_dict()["data"],
                "searches": agent.searches - before,
            }
            for agent, before in zip(learner._agents, searches)
        ]

    def _envs(self, count: int) -> list:
        spec = self.learner.game.spec
        while len(self.envs) < count:
            self.envs.append(hiddenenvs.make(spec.name, **dict(spec.params)).unwrapped)
        if not self.seat_agents:
            self.seat_agents = dict(zip(self.envs[0].possible_agents, self.learner.agents))
        return self.envs[:count]


# ---- against a fixed opponent, on the game model ------------------------------------------------
def _draw_from(policy: OpponentPolicy, state: State, player: int, rng: np.random.Generator) -> int:
    """One of ``player``'s legal actions, drawn by ``policy(state, player)`` with ``rng``."""
    legal = state.legal_actions(player)
    return int(legal[draw_index(np.asarray(policy(state, player))[legal], rng)])


def play_against_policy(
    agent: Agent,
    player: int,
    opponent_policy: OpponentPolicy,
    state: State,
    rng: np.random.Generator,
    learn: bool = True,
    episode_id: int = 0,
) -> State:
    """Play ``state`` to the end: ``agent`` in seat ``player``, every other seat drawn from
    ``opponent_policy(state, q)`` with ``rng``, chance by its probabilities (with ``rng``,
    :func:`agents.episodes.draw_chance`).

    With ``learn`` the agent gets its episode boundaries and transitions, as in the loop.
    An :class:`MCNFSPAgent` searches from the true state (``roots=``): the way to search a
    game without a belief sampler (combat), at the price of seeing what its seat does not.
    """
    seat = SeatTransitions(agent, player, episode_id, learn)
    search_from_state = isinstance(agent, MCNFSPAgent)

    def choose(state: State, movers: list[int], joint: list[int] | None) -> list[int]:
        # The others first (in seat order), then the agent: one stream of rng draws.
        chosen = {q: _draw_from(opponent_policy, state, q, rng) for q in movers if q != player}
        if player in movers:
            observation = state.information_state_tensor(player)
            mask = state.legal_actions_mask(player)
            seat.reached(observation, mask)
            actions, _ = agent.act_batch(
                observation[None],
                mask[None],
                [episode_id],
                **({"roots": [state]} if search_from_state else {}),
            )
            chosen[player] = int(actions[0])
            seat.chose(observation, mask, chosen[player])
        return [chosen[q] for q in movers]

    state = play_out(model_episode(state, never_suspends(choose), rng, after_move=seat.earn))
    seat.end()
    return state

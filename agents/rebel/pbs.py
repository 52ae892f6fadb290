"""ReBeL's values of public belief states: a value per private state per role, learned by self-play.

ReBeL (Brown, Bakhtin, Lerer & Gong 2020, "Combining Deep Reinforcement Learning and
Search for Imperfect-Information Games", Sect. 4-5 and Alg. 1) values a depth-limited
subgame's frontier not per history but per *public belief state* (PBS): the public state
plus every role's belief over its private states, mapped to one value per private state
per role (its information-set values). The frontier beliefs depend on the policy CFR is
iterating, so the frontier values are recomputed from the network at every iteration.

- **Private states** (:class:`PrivateStates`): the private parts of a role's
  information-state keys (the entries only it perceived), indexed over the whole game
  (small games: the tree is enumerated once; Liar's Dice 1x4f: 4 dice per role).
- **Beliefs** at a public state: for each role, the marginal over its private states of
  the joint belief ``π(h) = π_c(h) Π_q π_q(h)`` over the public state's histories (for
  independent private states, as in Liar's Dice, the marginals determine the joint).
- **Network** (:class:`PBSValueNetwork`): public observation tensor and the marginals in,
  ``V_q(s)`` out for every role ``q`` and private state ``s``: the expected return of ``q``
  given ``s`` under the joint belief and the subgame's policy (values in [-1, 1] inside).
- **Frontier** (:func:`solve_with_pbs_values`): before each CFR+ iteration, every frontier
  public state's beliefs under the current σ^t go through the network (one batched call)
  and each frontier history ``h`` returns ``V_q(s_q(h))`` to role ``q``: per information
  set, the value the network gives its private state.
- **Training** (:func:`train_pbs_values`, ReBeL's Alg. 1 without the policy network): self-
  play over PBSs from the start of the game; each subgame is solved with the network at
  its frontier, the root's targets are the information-set values averaged over the
  iterations (``v(β_r)``, Alg. 1), and the next root is the frontier public state reached
  by playing σ at a random stopping iteration ``t ~ U{1..T}`` (with ``exploration``
  uniform play for the sampling only), its beliefs under that σ^t.

Use in search: ``ReBeLSearch(game, max_depth=2, pbs_value=PBSValue(game, network))``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.cfr import CFRSolver
from agents.device import module_device, to_device, to_numpy
from agents.networks import mlp, network_with_weights
from agents.search import DeadlinePassed, check_deadline
from hiddenenvs.analysis import GameTree
from hiddenenvs.analysis.exploitability import edge_probabilities, node_values, reach_probabilities
from hiddenenvs.analysis.tree import build_subgame_tree
from hiddenenvs.game import CHANCE, Game, State, draw_index


def zero_values(game: Game):
    """A frontier value of zeros: the placeholder the network's values overwrite."""
    return lambda states: np.zeros((len(states), game.info.num_players))


def private_part(key: tuple) -> tuple:
    """The entries of an information-state key that only its role perceived."""
    return tuple(private for _, private in key if private is not None)


class PrivateStates:
    """Every role's private states in ``game``, indexed (the whole tree is enumerated once)."""

    def __init__(self, game: Game):
        if game.info.public_observation_tensor_shape == ():
            raise ValueError(
                f"{game.spec}: PBS values need public_observation_tensor(), which it lacks"
            )
        tree = GameTree.build(game)
        num_players = game.info.num_players
        found: list[set[tuple]] = [{()} for _ in range(num_players)]
        for state in tree.representative_states():
            for player in range(num_players):
                found[player].add(private_part(state.information_state_key(player)))
        self.game = game
        self.states = [sorted(states, key=repr) for states in found]
        self.index = [{s: i for i, s in enumerate(states)} for states in self.states]
        self.sizes = [len(states) for states in self.states]

    def of(self, state: State) -> np.ndarray:
        """The index of each role's private state at ``state``."""
        indices = []
        for player, index in enumerate(self.index):
            private = private_part(state.information_state_key(player))
            if private not in index:
                raise ValueError(
                    f"{self.game.spec}: player {player}'s private state {private!r} was not "
                    f"seen when the game tree was enumerated"
                )
            indices.append(index[private])
        return np.array(indices, dtype=np.int64)


class PBSValueNetwork(nn.Module):
    """Public observation and per-role beliefs -> a value per private state per role."""

    def __init__(self, public_size: int, private_sizes: list[int], hidden_size: int = 64):
        super().__init__()
        self.architecture: dict[str, Any] = {
            "public_size": public_size,
            "private_sizes": list(private_sizes),
            "hidden_size": hidden_size,
        }
        self.body = mlp(
            public_size + sum(private_sizes), [hidden_size, hidden_size], sum(private_sizes)
        )

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.body(features))

    @classmethod
    def from_state_dict(cls, architecture: dict, weights: dict) -> PBSValueNetwork:
        return network_with_weights(
            lambda: cls(
                int(architecture["public_size"]),
                [int(n) for n in architecture["private_sizes"]],
                int(architecture["hidden_size"]),
            ),
            weights,
            "PBS value network",
        )


class PBSValue:
    """A :class:`PBSValueNetwork` with its game: encodes PBSs and scales values to utilities."""

    def __init__(
        self,
        game: Game,
        network: PBSValueNetwork | None = None,
        hidden_size: int = 64,
        seed: int = 0,
    ):
        self.game = game
        self.private = PrivateStates(game)
        public_size = int(np.prod(game.info.public_observation_tensor_shape))
        if network is None:
            torch.manual_seed(seed)  # the initial weights
            network = PBSValueNetwork(public_size, self.private.sizes, hidden_size)
        self.network = network
        info = game.info
        self.value_offset = (info.max_utility + info.min_utility) / 2
        self.value_scale = max((info.max_utility - info.min_utility) / 2, 1e-9)
        self.offsets = np.concatenate([[0], np.cumsum(self.private.sizes)]).astype(np.int64)

    def features(self, public_tensor: np.ndarray, marginals: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(
            [np.asarray(public_tensor, dtype=np.float32).ravel(), *marginals]
        ).astype(np.float32)

    @torch.no_grad()
    def values(self, features: np.ndarray) -> list[np.ndarray]:
        """Per role, ``(batch, private states)`` values in utility units."""
        inputs = to_device(np.asarray(features, dtype=np.float32), module_device(self.network))
        out = to_numpy(self.network(inputs)).astype(np.float64)
        out = out * self.value_scale + self.value_offset
        return [
            out[:, self.offsets[p] : self.offsets[p + 1]] for p in range(len(self.private.sizes))
        ]


def marginals(private: np.ndarray, weights: np.ndarray, sizes: list[int]) -> list[np.ndarray]:
    """Each role's belief over its private states: the joint weights summed per private
    state and normalised (uniform when the weights vanish)."""
    out = []
    for player, size in enumerate(sizes):
        belief = np.bincount(private[:, player], weights=weights, minlength=size)
        total = belief.sum()
        out.append((belief / total if total > 0 else np.full(size, 1.0 / size)).astype(np.float32))
    return out


class FrontierGroups:
    """A subgame's frontier nodes grouped by public state, with their private indices."""

    def __init__(self, tree: GameTree, pbs: PBSValue):
        groups: dict[Hashable, list[int]] = {}
        states = tree.node_states  # decision and frontier nodes: the frontier has no infoset
        for node in sorted(states):
            if tree.infoset[node] < 0:
                groups.setdefault(tuple(states[node].public_state_key()), []).append(node)
        self.nodes = [np.array(nodes) for nodes in groups.values()]
        self.private = [
            np.stack([pbs.private.of(states[n]) for n in nodes]) for nodes in self.nodes
        ]
        self.public = [
            np.asarray(states[nodes[0]].public_observation_tensor(), dtype=np.float32)
            for nodes in self.nodes
        ]
        self.keys = list(groups)


# σ mixed with this much uniform play wherever a PBS's beliefs are computed (self-play's
# next roots, the frontier's network queries), as ReBeLSearch's beliefs are by its tremble:
# a private state σ never plays into keeps a belief in proportion to chance's and the other
# roles' reach, the limit its information-set value is conditioned on.
BELIEF_TREMBLE = 1e-6


def trembled(tree: GameTree, slots: np.ndarray, tremble: float = BELIEF_TREMBLE) -> np.ndarray:
    """σ per slot mixed with ``tremble`` uniform over each information set's actions."""
    counts = np.diff(tree.infoset_slot_start)[tree.slot_infoset]
    return (1 - tremble) * slots + tremble / counts


def set_frontier_values(
    tree: GameTree, groups: FrontierGroups, pbs: PBSValue, slots: np.ndarray
) -> None:
    """Value every frontier history by the network at its public state's beliefs under ``slots``."""
    if not groups.nodes:
        return
    reach = reach_probabilities(tree, edge_probabilities(tree, trembled(tree, slots))).prod(axis=1)
    features = np.stack(
        [
            pbs.features(public, marginals(private, reach[nodes], pbs.private.sizes))
            for nodes, private, public in zip(groups.nodes, groups.private, groups.public)
        ]
    )
    values = pbs.values(features)
    for group, (nodes, private) in enumerate(zip(groups.nodes, groups.private)):
        for player, player_values in enumerate(values):
            tree.terminal_returns[nodes, player] = player_values[group, private[:, player]]


def solve_with_pbs_values(
    tree: GameTree,
    pbs: PBSValue,
    iterations: int,
    solver: CFRSolver | None = None,
    sample_iteration: int | None = None,
    deadline: float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """CFR+ on a subgame whose frontier is valued by ``pbs`` at every iteration.

    Returns the average policy's slot probabilities, the node values averaged over the
    iterations' σ^t (ReBeL's ``v(β_r)``), and σ^t at ``sample_iteration`` (or None).
    The frontier is left valued under the average policy. Past ``deadline`` (a
    ``time.perf_counter()`` time, checked every iteration) it raises
    :class:`agents.search.DeadlinePassed`.
    """
    groups = FrontierGroups(tree, pbs)
    solver = solver or CFRSolver(tree, variant="cfr+")
    value_sum = np.zeros_like(tree.terminal_returns)
    sampled = None
    for iteration in range(1, iterations + 1):
        check_deadline(deadline, "ReBeL solve")
        current = solver.current_policy().slot_probabilities
        set_frontier_values(tree, groups, pbs, current)
        value_sum += node_values(tree, edge_probabilities(tree, current))
        if iteration == sample_iteration:
            sampled = current
        solver.iterate(1)
    average = solver.average_policy().slot_probabilities
    set_frontier_values(tree, groups, pbs, average)
    return average, value_sum / iterations, sampled


def root_nodes(tree: GameTree, roots: list) -> np.ndarray:
    """The nodes of a subgame's root histories (below its chance root when it has several)."""
    return (
        np.array([0])
        if tree.actor[0] != CHANCE or len(roots) == 1
        else np.flatnonzero(tree.parent == 0)
    )


def train_pbs_values(
    pbs: PBSValue,
    episodes: int,
    max_depth: int = 2,
    iterations: int = 50,
    exploration: float = 0.25,
    batches_per_episode: int = 20,
    batch_size: int = 64,
    learning_rate: float = 1e-3,
    seed: int = 0,
) -> list[float]:
    """ReBeL's self-play (Alg. 1, value side) for ``episodes`` games; returns the losses.

    Each step solves the subgame of ``max_depth`` public steps below the root PBS with the
    network at the frontier, adds (root PBS, information-set values averaged over the
    iterations) to the training set, and moves to the frontier public state sampled under
    σ at a random iteration; each game ends with ``batches_per_episode`` Adam minibatches
    of squared error over the private states that have belief mass.
    """
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    optimizer = torch.optim.Adam(pbs.network.parameters(), lr=learning_rate)
    examples: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    losses = []
    for _ in range(episodes):
        game_examples = self_play_examples(pbs, rng, max_depth, iterations, exploration)
        assert game_examples is not None  # None only past a deadline, and there is none
        examples += game_examples
        for _ in range(batches_per_episode):
            batch = [examples[i] for i in rng.integers(len(examples), size=batch_size)]
            inputs, targets, masks = (np.stack(column) for column in zip(*batch))
            losses.append(train_step(pbs, optimizer, inputs, targets, masks))
    return losses


def self_play_examples(
    pbs: PBSValue,
    rng: np.random.Generator,
    max_depth: int,
    iterations: int,
    exploration: float,
    deadline: float | None = None,
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None:
    """One game of ReBeL's self-play over PBSs: ``(input, target, mask)`` per root PBS solved;
    None when ``deadline`` (a ``time.perf_counter()`` time) passes before the game ends."""
    game = pbs.game
    examples = []
    roots: list[tuple[State, float]] = [(game.new_initial_state(), 1.0)]
    while roots:
        if deadline is not None and time.perf_counter() >= deadline:
            return None
        cut = len(roots[0][0].public_state_key()) + max_depth
        tree = build_subgame_tree(
            game,
            [(s.clone(), w) for s, w in roots],
            _at_or_below(cut),
            zero_values(game),
            keep_states=True,
        )
        sample_iteration = int(rng.integers(1, iterations + 1))
        try:
            _, values, sampled = solve_with_pbs_values(
                tree, pbs, iterations, sample_iteration=sample_iteration, deadline=deadline
            )
        except DeadlinePassed:
            return None
        assert sampled is not None  # solve_with_pbs_values samples when asked
        examples.append(_root_example(pbs, tree, roots, values))
        roots = _sample_next_roots(tree, sampled, exploration, rng)
    return examples


def _at_or_below(cut: int) -> Callable[[State], bool]:
    """Whether a state's public key has reached length ``cut`` (a subgame's frontier)."""
    return lambda state: len(state.public_state_key()) >= cut


def train_step(
    pbs: PBSValue,
    optimizer: torch.optim.Optimizer,
    inputs: np.ndarray,
    targets: np.ndarray,
    masks: np.ndarray,
) -> float:
    """One optimiser step on the squared error over the private states with belief mass."""
    device = module_device(pbs.network)
    predicted = pbs.network(to_device(inputs, device))
    target, mask = to_device(targets, device), to_device(masks, device)
    loss = (((predicted - target) ** 2) * mask).sum() / mask.sum().clamp(min=1.0)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def _root_example(
    pbs: PBSValue, tree: GameTree, roots: list, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The root PBS and its information-set values (conditional on each private state)."""
    nodes = root_nodes(tree, roots)
    weights = np.array([w for _, w in roots])
    private = np.stack([pbs.private.of(state) for state, _ in roots])
    target = np.zeros(sum(pbs.private.sizes), dtype=np.float32)
    mask = np.zeros_like(target)
    for player, size in enumerate(pbs.private.sizes):
        mass = np.bincount(private[:, player], weights=weights, minlength=size)
        total = np.bincount(
            private[:, player], weights=weights * values[nodes, player], minlength=size
        )
        seen = mass > 0
        start = pbs.offsets[player]
        target[start : start + size][seen] = (
            total[seen] / mass[seen] - pbs.value_offset
        ) / pbs.value_scale
        mask[start : start + size][seen] = 1.0
    return (
        pbs.features(
            roots[0][0].public_observation_tensor(), marginals(private, weights, pbs.private.sizes)
        ),
        target,
        mask,
    )


def _sample_next_roots(
    tree: GameTree, sampled: np.ndarray, exploration: float, rng: np.random.Generator
) -> list[tuple[State, float]]:
    """ReBeL's SAMPLELEAF: a frontier public state drawn by playing σ^t (mixed with
    ``exploration`` uniform), its histories weighted by :func:`frontier_beliefs`; [] when
    the draw ends the game inside the subgame."""
    explored = trembled(tree, sampled, exploration)
    draw_reach = reach_probabilities(tree, edge_probabilities(tree, explored)).prod(axis=1)
    leaves = np.flatnonzero(tree.infoset < 0)
    leaves = leaves[tree.actor[leaves] != CHANCE]
    leaf = int(leaves[draw_index(draw_reach[leaves], rng)])
    if leaf not in tree.node_states:  # a terminal history
        return []
    return frontier_beliefs(tree, sampled, tuple(tree.node_states[leaf].public_state_key()))


def frontier_beliefs(tree: GameTree, sampled: np.ndarray, key: tuple) -> list[tuple[State, float]]:
    """The histories of frontier public state ``key`` weighted by their reach under σ^t,
    trembled (:func:`trembled`): where σ^t never plays a private state into ``key``, its
    histories keep the other roles' and chance's relative reach, so that the information-
    set value the next root's target gives that private state is the one CFR needs at the
    frontier (the value of deviating into ``key``), not an average over histories σ^t
    rules out."""
    reach = reach_probabilities(tree, edge_probabilities(tree, trembled(tree, sampled))).prod(
        axis=1
    )
    histories = [
        (node, state)
        for node, state in sorted(tree.node_states.items())
        if tree.infoset[node] < 0 and tuple(state.public_state_key()) == key
    ]
    weights = np.array([reach[node] for node, _ in histories])
    weights /= weights.sum()
    return [(state, float(w)) for (_, state), w in zip(histories, weights)]

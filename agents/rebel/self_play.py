"""ReBeL's self-play games (Alg. 1's inner loop) and the worker that plays them in parallel.

A game yields training examples, one buffer row each (a dict of arrays named as the
learner's buffer columns):

- per-history values (``values: history``): :func:`play_and_solve` walks the game model
  through the one episode runner (:func:`agents.episodes.model_episode`, chance drawn by
  :func:`agents.episodes.draw_chance`); each mover's decision solves its subgame, adds a row
  per root history (:func:`history_examples`) and plays σ (uniform with probability
  ``exploration``);
- public-belief-state values (``values: pbs``): a game over public belief states
  (:func:`agents.rebel.pbs.self_play_examples`).

:class:`SelfPlayWorker` plays a list of seeded games with a snapshot of the network's
weights in a worker of :class:`agents.parallel.WorkerPool` (a process or a Ray actor); a
game's examples depend on its seed and the weights alone, not on the worker that played it.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import numpy as np
import torch

from agents.episodes import model_episode
from agents.parallel import local_deadline
from agents.rebel.options import Solved
from agents.rebel.pbs import PBSValue, PBSValueNetwork, self_play_examples
from agents.rebel.search import ReBeLSearch, SubgameStructures
from agents.rebel.values import NetworkGuide, ReBeLNetwork, state_features
from agents.search import DeadlinePassed, check_deadline
from hiddenenvs.analysis.exploitability import edge_probabilities, node_values
from hiddenenvs.game import CHANCE, Game, State, draw_index

Example = dict[str, np.ndarray]  # one buffer row


def history_examples(
    solved: Solved,
    value_target: Callable[[np.ndarray], np.ndarray],
    num_players: int,
    num_actions: int,
) -> list[Example]:
    """One row per root history of a solved subgame: its features, every role's value under
    σ (scaled by ``value_target``) and σ at each mover's information set."""
    tree, slots, _, _, roots = solved
    values = node_values(tree, edge_probabilities(tree, slots))
    root_nodes: list[int] | np.ndarray = (
        [0] if tree.actor[0] != CHANCE or len(roots) == 1 else np.flatnonzero(tree.parent == 0)
    )
    rows = []
    for node, (state, _) in zip(root_nodes, roots):
        policy = np.zeros((num_players, num_actions), dtype=np.float32)
        has_policy = np.zeros(num_players, dtype=np.float32)
        for player in state.movers():
            infoset = tree.infoset_index.get((player, state.information_state_key(player)))
            if infoset is not None:
                start, stop = tree.infoset_slot_start[infoset], tree.infoset_slot_start[infoset + 1]
                policy[player, tree.slot_action[start:stop]] = slots[start:stop]
                has_policy[player] = 1.0
        rows.append(
            {
                "features": state_features(state),
                "value": value_target(values[node]),
                "policy": policy,
                "has_policy": has_policy,
            }
        )
    return rows


def play_and_solve(
    game: Game,
    search: ReBeLSearch,
    rng: np.random.Generator,
    exploration: float,
    value_target: Callable[[np.ndarray], np.ndarray],
) -> list[Example]:
    """One self-play game, each decision from a solved subgame; its examples. Raises
    :class:`agents.search.DeadlinePassed` past ``search.deadline``."""
    examples: list[Example] = []
    num_players, num_actions = game.info.num_players, game.info.num_distinct_actions

    def decide(
        state: State, movers: list[int], joint: list[int] | None
    ) -> Generator[Any, Any, list[int]]:
        yield from ()  # the solves answer at once: the episode never suspends
        check_deadline(search.deadline, "ReBeL self-play")
        actions = []
        for player in movers:
            view = state.seat_view(player)
            examples.extend(
                history_examples(search.subgame(view), value_target, num_players, num_actions)
            )
            probabilities = search.policy(view)[list(view.legal_actions)]
            if rng.random() < exploration:
                probabilities = np.full(len(probabilities), 1.0 / len(probabilities))
            actions.append(view.legal_actions[draw_index(probabilities, rng)])
        return actions

    for _ in model_episode(game.new_initial_state(), decide, rng):
        raise AssertionError("ReBeL's decide never suspends")
    return examples


class HistorySelfPlay:
    """Self-play with per-history values: the searches guided by ``network`` (its values at
    the frontier, its policy as CFR's start), the subgame trees kept across games."""

    def __init__(self, game: Game, config: Any, network: ReBeLNetwork):
        self.game, self.config, self.network = game, config, network
        self.guide = NetworkGuide(network, game)
        self.structures = SubgameStructures()

    def search(self, seed: int, resolve: str = "frontier") -> ReBeLSearch:
        return ReBeLSearch.for_config(
            self.game,
            self.config,
            resolve,
            seed=seed,
            structures=self.structures,
            **self.guide.search_options(),
        )

    def play_game(self, rng: np.random.Generator, deadline: float | None) -> list[Example] | None:
        """One game drawn from ``rng`` (the search's seed first, then the game's draws);
        None when ``deadline`` (a ``time.perf_counter()`` time) cuts it."""
        search = self.search(int(rng.integers(2**31)))
        search.deadline = deadline  # a solve stops inside its iterations there
        try:
            return play_and_solve(
                self.game, search, rng, self.config.exploration, self.guide.value_target
            )
        except DeadlinePassed:
            return None

    def weights_changed(self) -> None:
        self.guide.forget()


class PBSSelfPlay:
    """Self-play over public belief states with ``pbs``'s network at the subgames' frontier."""

    def __init__(self, config: Any, pbs: PBSValue):
        self.config, self.pbs, self.network = config, pbs, pbs.network

    def play_game(self, rng: np.random.Generator, deadline: float | None) -> list[Example] | None:
        """One game's (root PBS, values) rows from ``rng``; None when ``deadline`` cuts it."""
        config = self.config
        examples = self_play_examples(
            self.pbs, rng, config.max_depth, config.iterations, config.exploration, deadline
        )
        if examples is None:
            return None
        return [{"features": f, "target": t, "mask": m} for f, t, m in examples]

    def weights_changed(self) -> None:
        """Nothing is kept from the weights."""


SelfPlay = HistorySelfPlay | PBSSelfPlay


def worker_self_play(game: Game, config: Any, architecture: dict[str, Any]) -> SelfPlay:
    """A self-play of ``config.values``' kind over a fresh CPU network of ``architecture``."""
    if config.values == "pbs":
        network = PBSValueNetwork(
            int(architecture["public_size"]),
            [int(n) for n in architecture["private_sizes"]],
            int(architecture["hidden_size"]),
        )
        return PBSSelfPlay(config, PBSValue(game, network))
    return HistorySelfPlay(
        game, config, ReBeLNetwork(**{k: int(v) for k, v in architecture.items()})
    )


class SelfPlayWorker:
    """A self-play worker of :class:`agents.parallel.WorkerPool` (a process or a Ray actor):
    its self-play over a CPU copy of the learner's network (``architecture``), whose weights
    come with each piece (loaded when their version changes)."""

    def __init__(self, game: Game, config: Any, architecture: dict[str, Any]):
        torch.set_num_threads(1)  # one core a worker
        self.self_play = worker_self_play(game, config, architecture)
        self.network_version: int | None = None

    def play_games(
        self,
        network_version: int,
        network_state: dict[str, np.ndarray],
        seeds: list[int],
        unix_deadline: float | None = None,
    ) -> list[list[Example]]:
        """The examples of each game of ``seeds`` in order (each game's generator seeded by
        its seed), up to the first one the deadline cut (a ``time.time()`` deadline,
        :func:`agents.parallel.unix_deadline`)."""
        if network_version != self.network_version:
            # A copy: arrays from Ray's object store are read-only.
            self.self_play.network.load_state_dict(
                {k: torch.tensor(v) for k, v in network_state.items()}
            )
            self.self_play.weights_changed()
            self.network_version = network_version
        deadline = local_deadline(unix_deadline)
        games = []
        for seed in seeds:
            examples = self.self_play.play_game(np.random.default_rng(seed), deadline)
            if examples is None:
                break
            games.append(examples)
        return games

"""How much of the exact best-response gain ANFSP's Q reaches when Pi stands still.

    python -m agents.diagnostics.anfsp_frozen_pi runs/anfsp_leduc --seconds 240
    python -m agents.diagnostics.anfsp_frozen_pi runs/anfsp_leduc --rl-learning-rate 0.001 --seed 8

NFSP-style fictitious play averages the best response's play into Pi, so it moves towards
the equilibrium only as fast as Q's greedy policy takes the best-response gain against
Pi. In a run both move; this probe takes them apart. It loads an ANFSP run's checkpoint,
freezes every player's Pi (the server's SL steps are switched off) and goes on training Q
exactly as the run's server does (:meth:`agents.anfsp.ANFSP._apply` on windows played by
one in-process :class:`agents.anfsp.ActorLearner` with the run's envs per actor; the
target network, the exploration schedule of actor slot 0 and Adam's state carry on from
the checkpoint). Every ``--every`` seconds it measures exactly, per player:

- against the others' Pi: the best response's gain over Pi's own value, and the gain
  Q's greedy policy takes;
- against what the player actually meets in training: per episode the other plays Pi
  with probability 1 - eta and its own epsilon-greedy Q with eta (as a behaviour policy:
  the two mixed by their reach, so it is the mixture's conditional policy).

Since the play's value is linear in its reach, the mean of Q's greedy gain over the
snapshots is the gain of its play over that time, which is what M_SL's average would get.
Options change Q's learning only (``--rl-learning-rate``, ``--gradient-every``,
``--target-every``, ``--anticipatory``, ``--epsilon``) to see which of them moves that
figure. Wall time, not episodes, bounds a probe: a setting that costs more per episode
is charged for it, as in a run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

from agents.anfsp import ANFSP, ActorLearner
from agents.checkpoint import load_checkpoint
from agents.diagnostics.nfsp import greedy_against
from agents.networks import masked_logits
from agents.runs import CHECKPOINT_NAME, learner_from_checkpoint
from hiddenenvs.analysis import GameTree, TabularPolicy
from hiddenenvs.analysis.exploitability import (
    best_response,
    edge_probabilities,
    expected_returns,
    reach_probabilities,
)


def network_policy(tree: GameTree, networks: list, epsilon: float | None) -> TabularPolicy:
    """Each player's network as a policy: softmax (``epsilon`` None) or epsilon-greedy."""

    def probabilities(player: int, tensors: np.ndarray, masks: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            batch = torch.from_numpy(
                np.asarray(tensors, dtype=np.float32).reshape(len(tensors), -1)
            )
            logits = masked_logits(networks[player](batch), torch.from_numpy(masks))
        if epsilon is None:
            return torch.softmax(logits, -1).double().numpy()
        legal = masks.astype(np.float64)
        chosen = epsilon * legal / legal.sum(axis=1, keepdims=True)
        chosen[np.arange(len(masks)), logits.argmax(-1).numpy()] += 1.0 - epsilon
        return chosen

    return TabularPolicy.from_tensor_function(tree, probabilities)


def met_policy(
    tree: GameTree, pi: TabularPolicy, q_play: TabularPolicy, eta: float, player: int
) -> TabularPolicy:
    """What ``player``'s opponents show in training: per episode Pi with probability
    ``1 - eta`` and epsilon-greedy Q with ``eta``, as one behaviour policy (each action's
    probability is the mixture's reach of the child over its reach of the parent)."""
    reach_pi = reach_probabilities(tree, edge_probabilities(tree, pi.slot_probabilities))
    reach_q = reach_probabilities(tree, edge_probabilities(tree, q_play.slot_probabilities))
    slots = pi.slot_probabilities.copy()
    child = np.flatnonzero(tree.edge_slot >= 0)
    parent = tree.parent[child]
    mover = tree.infoset_player[tree.slot_infoset[tree.edge_slot[child]]]
    for opponent in range(tree.num_players):
        if opponent == player:
            continue
        own = mover == opponent
        c, p = child[own], parent[own]
        child_reach = (1 - eta) * reach_pi[c, opponent] + eta * reach_q[c, opponent]
        parent_reach = (1 - eta) * reach_pi[p, opponent] + eta * reach_q[p, opponent]
        reached = parent_reach > 1e-12  # elsewhere Pi's own probabilities stay
        slots[tree.edge_slot[c[reached]]] = child_reach[reached] / parent_reach[reached]
    return TabularPolicy(tree, slots)


def gains(tree: GameTree, against: TabularPolicy, q_network, player: int) -> tuple[float, float]:
    """(exact best response's gain, Q greedy's gain) of ``player`` over ``against``'s value."""
    value = expected_returns(tree, against)[player]
    exact, _ = best_response(tree, against, player)
    greedy = expected_returns(tree, greedy_against(tree, against, q_network, player))[player]
    return exact - value, greedy - value


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("run", help="a run directory of the anfsp trainer (its checkpoint.pt)")
    parser.add_argument("--seconds", type=float, default=240.0, help="wall time of Q's training")
    parser.add_argument("--every", type=float, default=6.0, help="seconds between measurements")
    parser.add_argument("--seed", type=int, default=7, help="the in-process actor's seed")
    parser.add_argument(
        "--rl-learning-rate", type=float, help="Q's learning rate (default: the run's)"
    )
    parser.add_argument(
        "--gradient-every", type=int, help="steps per accumulated gradient (default: the run's)"
    )
    parser.add_argument(
        "--target-every", type=int, help="actions between target refreshes (default: the run's)"
    )
    parser.add_argument("--anticipatory", type=float, help="eta (default: the run's)")
    parser.add_argument(
        "--epsilon", type=float, help="a fixed exploration rate (default: slot 0's schedule)"
    )
    arguments = parser.parse_args(argv)
    payload = load_checkpoint(Path(arguments.run) / CHECKPOINT_NAME)
    if payload["config"]["trainer"]["name"] != "anfsp":
        raise SystemExit(
            f"{arguments.run}: a {payload['config']['trainer']['name']} run; this probe reads anfsp runs"
        )
    torch.set_num_threads(1)
    learner = learner_from_checkpoint(payload)
    if not isinstance(learner, ANFSP):
        raise SystemExit(f"{arguments.run}: its learner is no ANFSP ({type(learner).__name__})")
    config = learner.config
    config.min_reservoir_size = sys.maxsize  # no SL step: Pi stands still
    config.gradient_every = arguments.gradient_every or config.gradient_every
    config.target_update_every_actions = (
        arguments.target_every or config.target_update_every_actions
    )
    eta = config.anticipatory if arguments.anticipatory is None else arguments.anticipatory
    if arguments.rl_learning_rate:
        for optimizer in learner.q_optimizers:
            for group in optimizer.param_groups:
                group["lr"] = arguments.rl_learning_rate
    actor = ActorLearner(
        learner.game.spec.to_dict(),
        learner.architecture,
        eta,
        config.discount,
        config.envs_per_actor,
        (arguments.seed, 0, 10**6),
    )
    tree = GameTree.build(learner.game)
    pi = network_policy(tree, learner.policy_networks, None)

    def epsilon() -> float:
        return learner.slot_epsilon(0) if arguments.epsilon is None else arguments.epsilon

    print(
        f"{arguments.run}: {payload['loop']['episodes']:,} episodes; Pi frozen, Q trained "
        f"{arguments.seconds:g} s (lr {learner.q_optimizers[0].param_groups[0]['lr']:g}, "
        f"{config.gradient_every}-step gradients, target every {config.target_update_every_actions:,} "
        f"actions, eta {eta:g})"
    )
    columns = [f"player {p} vs {name}" for p in range(tree.num_players) for name in ("Pi", "met")]
    print(
        "  seconds  episodes  epsilon  "
        + "  ".join(f"{c:>20s}" for c in columns)
        + "   (Q greedy / exact gain)"
    )
    snapshots, episodes, start, next_measure = [], 0, time.monotonic(), 0.0
    while True:
        elapsed = time.monotonic() - start
        if elapsed >= next_measure:
            q_play = network_policy(tree, learner.q_networks, epsilon())
            row = []
            for player, q_network in enumerate(learner.q_networks):
                row.append(gains(tree, pi, q_network, player))
                row.append(
                    gains(tree, met_policy(tree, pi, q_play, eta, player), q_network, player)
                )
            snapshots.append(row)
            print(
                f"  {elapsed:7.0f}  {episodes:8,d}  {epsilon():.4f}  "
                + "  ".join(f"{greedy:9.3f} / {exact:8.3f}" for exact, greedy in row),
                flush=True,
            )
            next_measure += arguments.every
            if elapsed >= arguments.seconds:
                break
        window = actor.play_window(learner._weights(), epsilon(), config.gradient_every)
        learner._apply(0, window)
        episodes += window["episodes"]
    trained = np.array(
        snapshots[1:]
    )  # (snapshots, columns, (exact, greedy)); the first is the checkpoint's
    print("mean over the snapshots after the checkpoint's (Q greedy gain / exact gain, share):")
    for column, (exact, greedy) in zip(columns, trained.mean(axis=0)):
        print(f"  {column:>20s}: {greedy:.3f} / {exact:.3f}  ({greedy / exact:.0%})")


if __name__ == "__main__":
    main()

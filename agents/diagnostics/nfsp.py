"""Where an NFSP or ANFSP run's exploitability comes from, from its checkpoint.

    python -m agents.diagnostics.nfsp runs/anfsp_leduc            # a run directory
    python -m agents.diagnostics.nfsp runs/nfsp_leduc --epsilons 0.01 0.05

NFSP's average policy Pi is a supervised fit of the reservoir M_SL, and M_SL is the
history of the best response's epsilon-greedy play, so Pi's exploitability has three
sources, each measured exactly on the enumerated tree (games small enough for exact
exploitability):

1. **The fit**: the exploitability of M_SL's empirical policy (action counts per
   information set, Pi where an information set never occurs) beside Pi's. Equal figures
   mean Pi fits its data and the data is the limit. For ANFSP, also M_SL's mean
   exploration rate, and whether the output takes it out (``output_without_exploration``).
2. **The best response**: per player, the exact best-response gain against the others'
   Pi, and the gain Q's greedy policy takes. A greedy gain well below the exact one means
   the learnt best response lags behind Pi, so fictitious play averages poor responses.
3. **Exploration in M_SL**: the exploitability of a near-equilibrium (CFR+, 300
   iterations) mixed with uniform play at rate epsilon, the floor that epsilon-greedy
   actions in M_SL put under Pi.
4. **Where Q's greedy policy loses**: per player, the information sets where its
   greedy action costs the most counterfactual value against the others' Pi (the exact
   best response's value minus that of Q's action, each followed by the best response),
   with the exact action values given the set is reached beside Q's.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch

from agents.anfsp import ANFSP
from agents.cfr import CFRSolver
from agents.checkpoint import load_checkpoint
from agents.networks import masked_logits
from agents.runs import CHECKPOINT_NAME, learner_from_checkpoint
from hiddenenvs.analysis import GameTree, TabularPolicy
from hiddenenvs.analysis.exploitability import (
    best_response,
    best_response_action_values,
    expected_returns,
    exploitability,
)
from hiddenenvs.analysis.policy import information_state_batch


def players_networks(learner) -> tuple[list, list]:
    """Each player's Q network and reservoir, for NFSP (one agent per player) and ANFSP."""
    if isinstance(learner, ANFSP):
        return learner.q_networks, learner.reservoirs
    agents = learner._agents
    return [agent.q_network for agent in agents], [agent.reservoir for agent in agents]


def tensor_key(tensor: np.ndarray) -> bytes:
    return np.asarray(tensor, dtype=np.float32).ravel().tobytes()


def empirical_policy(tree: GameTree, reservoirs: list, fallback: TabularPolicy) -> TabularPolicy:
    """M_SL's action frequencies per information set (``fallback`` where it has none)."""
    states = tree.representative_states()
    slots = fallback.slot_probabilities.copy()
    for player, reservoir in enumerate(reservoirs):
        infosets = np.flatnonzero(tree.infoset_player == player)
        index = {tensor_key(states[i].information_state_tensor(player)): i for i in infosets}
        size = len(reservoir)
        observations, actions = (
            reservoir.data["observation"][:size],
            reservoir.data["action"][:size],
        )
        rows = np.array([index.get(tensor_key(o), -1) for o in observations])
        if (rows < 0).any():
            raise ValueError(
                f"{int((rows < 0).sum())} reservoir rows of player {player} match no "
                f"information set of {tree.game.NAME}"
            )
        counts = np.zeros((tree.num_infosets, tree.game.info.num_distinct_actions))
        np.add.at(counts, (rows, actions), 1.0)
        for infoset in infosets:
            start, stop = tree.infoset_slot_start[infoset], tree.infoset_slot_start[infoset + 1]
            row = counts[infoset, tree.slot_action[start:stop]]
            if row.sum() > 0:
                slots[start:stop] = row / row.sum()
    return TabularPolicy(tree, slots)


def greedy_against(tree: GameTree, average: TabularPolicy, q_network, player: int) -> TabularPolicy:
    """``player`` plays Q's greedy action, the others ``average``."""

    def greedy(seat: int, tensors: np.ndarray, masks: np.ndarray) -> np.ndarray:
        chosen = masks.astype(np.float64)  # other seats: replaced by ``average`` below
        if seat == player:
            with torch.no_grad():
                batch = torch.from_numpy(
                    np.asarray(tensors, dtype=np.float32).reshape(len(tensors), -1)
                )
                q = masked_logits(q_network(batch), torch.from_numpy(masks))
            chosen[:] = 0.0
            chosen[np.arange(len(masks)), q.argmax(dim=-1).numpy()] = 1.0
        return chosen

    response = TabularPolicy.from_tensor_function(tree, greedy)
    own = tree.infoset_player[tree.slot_infoset] == player
    return TabularPolicy(
        tree, np.where(own, response.slot_probabilities, average.slot_probabilities)
    )


def greedy_losses(tree: GameTree, average: TabularPolicy, q_network, player: int) -> list[dict]:
    """Per information set of ``player``, Q's greedy action against the exact values of
    :func:`best_response_action_values` (the others play ``average``), largest
    counterfactual loss first."""
    slot_values, infoset_reach = best_response_action_values(tree, average, player)
    infosets, tensors, masks = information_state_batch(tree, player)
    with torch.no_grad():
        batch = torch.from_numpy(tensors.reshape(len(tensors), -1).astype(np.float32))
        q_values = masked_logits(q_network(batch), torch.from_numpy(masks)).numpy()
    rows = []
    for row, infoset in enumerate(infosets):
        slots = np.arange(tree.infoset_slot_start[infoset], tree.infoset_slot_start[infoset + 1])
        actions = tree.slot_action[slots]
        greedy = int(q_values[row].argmax())
        values = slot_values[slots]
        rows.append(
            {
                "infoset": tree.infoset_keys[infoset],
                "reach": float(infoset_reach[infoset]),
                "actions": [int(a) for a in actions],
                "greedy": greedy,
                "loss": float(values.max() - values[list(actions).index(greedy)]),
                "values": values / max(infoset_reach[infoset], 1e-12),
                "q": q_values[row, actions],
            }
        )
    return sorted(rows, key=lambda r: -r["loss"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "run", help="a run directory of an nfsp or anfsp trainer (its checkpoint.pt)"
    )
    parser.add_argument(
        "--epsilons",
        type=float,
        nargs="*",
        default=[0.005, 0.01, 0.02, 0.05, 0.07],
        help="exploration rates for the floor of part 3",
    )
    parser.add_argument(
        "--worst", type=int, default=5, help="information sets per player in part 4"
    )
    arguments = parser.parse_args(argv)
    payload = load_checkpoint(Path(arguments.run) / CHECKPOINT_NAME)
    trainer = payload["config"]["trainer"]["name"]
    if trainer not in ("nfsp", "anfsp"):
        raise SystemExit(
            f"{arguments.run}: a {trainer} run; this diagnosis reads nfsp and anfsp runs"
        )
    learner = learner_from_checkpoint(payload)
    tree = GameTree.build(learner.game)
    average = learner.evaluation_policy(tree)
    q_networks, reservoirs = players_networks(learner)
    print(
        f"{arguments.run}: {trainer} on {tree.game.NAME}, {payload['loop']['episodes']:,} episodes"
    )
    print("1. the fit")
    print(f"   exploitability of Pi (the output)          {exploitability(tree, average):.4f}")
    if isinstance(learner, ANFSP):  # its reservoir's exploration rate is known from the schedule
        shown = learner.evaluation_agent(0).exploration_share
        print(
            f"   M_SL's mean exploration rate               {learner.reservoir_exploration_rate():.4f}"
            f"   ({'taken out of' if shown else 'left in'} the output)"
        )
    print(
        f"   exploitability of M_SL's empirical policy  "
        f"{exploitability(tree, empirical_policy(tree, reservoirs, average)):.4f}"
        f"   (M_SL sizes {', '.join(f'{len(r):,}' for r in reservoirs)})"
    )
    print("2. the best response against the others' Pi (gain over Pi's own value)")
    values = expected_returns(tree, average)
    for player, q_network in enumerate(q_networks):
        exact, _ = best_response(tree, average, player)
        greedy = expected_returns(tree, greedy_against(tree, average, q_network, player))[player]
        print(
            f"   player {player}: exact {exact - values[player]:.4f}, Q greedy {greedy - values[player]:.4f}"
        )
    print("3. exploration in M_SL: a near-equilibrium mixed with uniform play")
    solver = CFRSolver(tree)
    solver.iterate(300)
    equilibrium, uniform = solver.average_policy(), TabularPolicy.uniform(tree)
    print(f"   epsilon 0: {exploitability(tree, equilibrium):.4f}")
    for epsilon in arguments.epsilons:
        mixed = (
            1 - epsilon
        ) * equilibrium.slot_probabilities + epsilon * uniform.slot_probabilities
        print(f"   epsilon {epsilon:g}: {exploitability(tree, TabularPolicy(tree, mixed)):.4f}")
    print(
        "4. where Q's greedy policy loses against the others' Pi (counterfactual loss; values given reached)"
    )
    for player, q_network in enumerate(q_networks):
        print(f"   player {player}:")
        for row in greedy_losses(tree, average, q_network, player)[: arguments.worst]:
            print(f"     loss {row['loss']:.4f}  reach {row['reach']:.3f}  {row['infoset']}")
            print(
                f"       actions {row['actions']}: exact {np.round(row['values'], 3).tolist()}, "
                f"Q {np.round(row['q'].astype(float), 3).tolist()}, greedy {row['greedy']}"
            )


if __name__ == "__main__":
    main()

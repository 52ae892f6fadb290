"""MCNFSP's policy heads on combat's commander orders: factored against flat (issue 15).

    python benchmarks/bench_order_head.py            # about 30 s
    python benchmarks/bench_order_head.py --batch 128 --repeats 50

One thread. For each head (``order_head: flat``, one linear row per each of the 12,961
flat orders, the peer; ``factored``, :class:`agents.networks.FactoredOrderHead`) it times
an f_BR gradient step (the AlphaZero loss on a batch of commander states, the masked
softmax over 12,961 actions included) and a search's node expansion (the logits of the
legal orders and the value of one state), and prints the parameter counts, the times and
the ratios flat / factored.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import hiddenenvs  # noqa: E402
from agents.mcnfsp import MCNFSPConfig, architecture_for  # noqa: E402
from agents.networks import PolicyValueNetwork, masked_logits  # noqa: E402


def commander_states(game, count: int, seed: int = 0) -> list:
    """States from random play of both teams, several areas occupied."""
    rng = np.random.default_rng(seed)
    states = []
    while len(states) < count:
        state = game.new_initial_state(seed=len(states))
        while not state.is_terminal() and len(states) < count:
            state.apply_actions([int(rng.choice(state.legal_actions(p))) for p in (0, 1)])
            if not state.is_terminal():
                states.append(state.clone())
    return states


def milliseconds(function, repeats: int) -> float:
    function()  # warm-up
    started = time.perf_counter()
    for _ in range(repeats):
        function()
    return (time.perf_counter() - started) / repeats * 1000


def measure(game, order_head: str, states: list, batch: int, repeats: int) -> dict:
    torch.manual_seed(0)
    network = PolicyValueNetwork(
        architecture_for(game, MCNFSPConfig(network="mlp", order_head=order_head))
    )
    optimizer = torch.optim.Adam(network.parameters(), lr=0.01)
    chosen = states[:batch]
    inputs = torch.from_numpy(np.stack([s.information_state_tensor(0) for s in chosen]))
    masks = torch.from_numpy(np.stack([s.legal_actions_mask(0) for s in chosen]))
    targets = torch.softmax(torch.randn(batch, game.info.num_distinct_actions), dim=-1) * masks
    targets = targets / targets.sum(dim=-1, keepdim=True)
    values = torch.rand(batch) * 2 - 1

    def gradient_step():
        logits, predicted = network(inputs)
        loss = -(targets * torch.log_softmax(masked_logits(logits, masks), dim=-1)).sum(-1).mean()
        loss = loss + torch.nn.functional.mse_loss(predicted, values)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    expansions = [
        (torch.from_numpy(s.information_state_tensor(0)[None]), torch.tensor(s.legal_actions(0)))
        for s in states[:repeats]
    ]

    def expansions_run():
        with torch.no_grad():
            for tensor, legal in expansions:
                network.legal_logits_and_value(tensor, legal)

    return {
        "parameters": sum(p.numel() for p in network.parameters()),
        "gradient_step_ms": milliseconds(gradient_step, repeats),
        "expansion_ms": milliseconds(expansions_run, 1) / len(expansions),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=30)
    arguments = parser.parse_args()
    torch.set_num_threads(1)
    game = hiddenenvs.load_game("combat", mode="commander")
    states = commander_states(game, max(arguments.batch, arguments.repeats))
    rows = {
        head: measure(game, head, states, arguments.batch, arguments.repeats)
        for head in ("flat", "factored")
    }
    print(
        f"combat commander, {game.info.num_distinct_actions} actions, batch {arguments.batch}, one thread"
    )
    print(f"{'head':10s} {'parameters':>11s} {'gradient step ms':>17s} {'expansion ms':>13s}")
    for head, row in rows.items():
        print(
            f"{head:10s} {row['parameters']:11,d} {row['gradient_step_ms']:17.2f} {row['expansion_ms']:13.3f}"
        )
    flat, factored = rows["flat"], rows["factored"]
    print(
        f"flat / factored: parameters {flat['parameters'] / factored['parameters']:.1f}x, gradient step "
        f"{flat['gradient_step_ms'] / factored['gradient_step_ms']:.2f}x, expansion "
        f"{flat['expansion_ms'] / factored['expansion_ms']:.2f}x"
    )


if __name__ == "__main__":
    main()

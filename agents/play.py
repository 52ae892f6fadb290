"""Play any env yourself, in the terminal, against any agent.

    python -m agents.play leduc_holdem --against runs/nfsp_leduc
    python -m agents.play kuhn_poker --against cfr+:200 --seat 1 --games 3
    python -m agents.play goofspiel --param num_cards=5 --param imp_info=true --against ismcts:0.2s

``--against`` takes the agent specs of ``evaluate.py`` (``random``, ``cfr+:<iterations>``,
``es-mccfr:<iterations>``, ``oos:<iterations or seconds>``, ``ismcts:...``, a run
directory, checkpoint or agent file, ``scripted:<name>``): one spec for every other seat,
or one per other seat in seat order. ``--seat`` is yours (default 0). ``--param`` takes
``key=value`` game parameters typed as YAML (:mod:`hiddenenvs.params`).

The game loop, and what you see of the game (only what your seat may see), is
:mod:`hiddenenvs.play`.
"""

from __future__ import annotations

import argparse
import sys

import hiddenenvs
from agents.leaderboard.matches import agent_generator
from agents.leaderboard.specs import AgentSpecError, resolve_agent
from hiddenenvs.params import parse_params
from hiddenenvs.play import Quit, play_game
from hiddenenvs.registry import REGISTRY


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("env", help=f"a registered env: {', '.join(sorted(REGISTRY))}")
    parser.add_argument(
        "--against",
        nargs="+",
        default=["random"],
        metavar="SPEC",
        help="agent spec(s) for the other seats (evaluate.py's specs); default random",
    )
    parser.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a game parameter (repeatable)",
    )
    parser.add_argument(
        "--seed", type=int, default=None, help="first game's seed (then +1 per game)"
    )
    parser.add_argument("--games", type=int, default=1, help="games to play (default 1)")
    args = parser.parse_args(argv)

    try:
        params = parse_params(args.param)
        env = hiddenenvs.make(args.env, **params)
    except (ValueError, TypeError) as error:
        parser.error(str(error))
    seats = len(env.possible_agents)
    if not 0 <= args.seat < seats:
        parser.error(f"--seat must be in 0..{seats - 1} for {args.env}, got {args.seat}")
    human = env.possible_agents[args.seat]
    others = [p for p in range(seats) if p != args.seat]
    if len(args.against) not in (1, len(others)):
        parser.error(
            f"--against takes one spec, or one per other seat ({len(others)}), got {len(args.against)}"
        )
    specs = args.against * len(others) if len(args.against) == 1 else args.against
    try:
        opponents = {
            env.possible_agents[p]: resolve_agent(spec, args.env, p, params)
            for p, spec in zip(others, specs)
        }
    except AgentSpecError as error:
        parser.error(str(error))
    print(f"{args.env}: {REGISTRY[args.env].description}")  # the game in one line
    print(
        f"you are {human} (seat {args.seat}) against "
        + ", ".join(f"{agent}: {spec}" for agent, spec in zip(opponents, specs))
    )
    grand_total = 0.0
    try:
        for game_index in range(args.games):
            seed = None if args.seed is None else args.seed + game_index
            print(f"game {game_index + 1} of {args.games}")
            if seed is not None:  # each opponent its own stream, apart from the env's
                for agent, opponent in opponents.items():
                    opponent.rng = agent_generator(seed, env.possible_agents.index(agent))
            totals = play_game(env, human, opponents, seed)
            grand_total += totals[human]
            print(
                "game over; returns: "
                + ", ".join(f"{agent} {value:+g}" for agent, value in totals.items())
            )
    except Quit:
        print("\nstopped")
    print(f"your total: {grand_total:+g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

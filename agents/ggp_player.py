"""A general game player over HTTP serving any agent spec of this repository.

    python -m agents.ggp_player --port 9147 --player uct
    python -m agents.ggp_player --port 9148 --player alphabeta --seed 1
    python -m agents.ggp_player --port 9149 --player ismcts      # GDL-II matches too

The protocol (START, PLAY, STOP, ABORT; GDL-I and GDL-II) is :mod:`hiddenenvs.ggp.player`;
this module gives it the agents. ``--player`` takes the specs of
:func:`agents.specs.agent_for_game`: ``random``, ``alphabeta:6``, ``minimax``, ``maxn``,
``mc``, ``mc-memory``, ``uct:1s,c=40``, ``oos``, ``ismcts``, ... A spec without a budget
searches for the play clock minus ``--margin`` (default 0.5 s, the lecture's Monte Carlo
deadline: time to send the move). Classic searchers (:mod:`agents.search.classic`) also
stop at that deadline when their own budget is longer; OOS and IS-MCTS run the budget they
are given.
"""

from __future__ import annotations

import argparse

from agents.specs import agent_for_game, names_game_agent
from hiddenenvs.ggp.player import DEFAULT_MARGIN_SECONDS, AgentFactory, GgpPlayer, run_server


def spec_agent_factory(spec: str) -> AgentFactory:
    """``make_agent(game, player, seconds, seed)`` for a spec (ValueError if it names none)."""
    if not names_game_agent(spec):
        raise ValueError(
            f"unknown agent spec {spec!r}: expected 'random' or a search spec "
            f"(alphabeta:6, minimax, maxn, mc, mc-memory, uct, oos, ismcts, ...)"
        )

    def make_agent(game, player: int, seconds: float, seed: int | None):
        return agent_for_game(spec, game, player, seed, bare_argument=f"{seconds:g}s")

    return make_agent


def spec_player(
    spec: str = "uct",
    seed: int | None = None,
    margin: float = DEFAULT_MARGIN_SECONDS,
    max_instances: int | None = None,
    name: str | None = None,
) -> GgpPlayer:
    """A :class:`~hiddenenvs.ggp.player.GgpPlayer` whose agent is the one ``spec`` names."""
    return GgpPlayer(
        spec_agent_factory(spec),
        name or f"hiddenenvs-{spec.partition(':')[0]}",
        seed,
        margin,
        max_instances,
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--port", type=int, default=9147, help="port to listen on (0: any free one)"
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)"
    )
    parser.add_argument(
        "--player", default="uct", help="agent spec (default uct: UCT for the play clock)"
    )
    parser.add_argument("--seed", type=int, default=None, help="the agent's seed (default: fresh)")
    parser.add_argument(
        "--margin",
        type=float,
        default=DEFAULT_MARGIN_SECONDS,
        help="seconds kept from the play clock to send the move (default 0.5)",
    )
    parser.add_argument(
        "--max-instances",
        type=int,
        default=None,
        help="grounding limit for received sheets (default the GDL reader's)",
    )
    args = parser.parse_args(argv)
    try:
        player = spec_player(args.player, args.seed, args.margin, args.max_instances)
    except ValueError as error:
        parser.error(str(error))
    run_server(player, args.host, args.port)


if __name__ == "__main__":
    main()

"""The agent-spec resolver: one short string names an agent for one seat.

Every entry point resolves specs here: ``evaluate.py`` and the leaderboard
(:func:`agents.leaderboard.resolve_agent` adds ``scripted:<name>`` and file identities on
top), human play (``python -m agents.play``), the GGP player (``python -m
agents.ggp_player``, which has a game object but no registered env) and the SB3 wrapper
(:mod:`agents.sb3`).

=======================  ======================================================================
Spec                     Agent
=======================  ======================================================================
``random``               :class:`~agents.baselines.RandomAgent`
``cfr+:<iterations>``    CFR+'s average policy after that many iterations (``cfr:<n>`` for
                         vanilla CFR); the game tree must be enumerable
``<prefix>:<argument>``  a spec registered in :mod:`agents.search` (``es-mccfr:<iterations>``,
                         ``os-mccfr:<iterations>``, ``oos:10000`` / ``oos:2s``,
                         ``ismcts:1000`` / ``ismcts:1s``: iterations or seconds per move;
                         the classic GGP searchers ``alphabeta:6`` (a depth), ``minimax``,
                         ``maxn:1s``, ``mc:1s``, ``mc-memory:1s``, ``uct:1s,c=40``)
``<path>``               an agent file written by ``Agent.save``, a run checkpoint
                         (``checkpoint.pt``) or a run directory: the trainer's evaluation
                         agent for the seat (NFSP: its average policy)
=======================  ======================================================================

:func:`agent_for_game` resolves the specs that need only a game (the first three rows);
:func:`load_agent` resolves them all for a registered env.

>>> import hiddenenvs
>>> agent = load_agent("cfr+:200", "kuhn_poker", player=0)
>>> state = hiddenenvs.load_game("kuhn_poker").state_from_history([0, 1])  # player 0: Jack
>>> probabilities = agent.policy_probabilities(
...     state.information_state_tensor(0), state.legal_actions_mask(0), state.seat_view(0))
>>> bool(probabilities[0] > 0.6)                     # mostly passes with the Jack
True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import hiddenenvs
from agents.base import Agent, load_agent_file
from agents.baselines import RandomAgent, TabularPolicyAgent
from agents.catalogue import spec_forms
from agents.search import spec_builder
from hiddenenvs.game import Game

SPEC_HELP = spec_forms()  # every form, from the catalogue's spec entries
CFR_VARIANTS = ("cfr", "cfr+")


def names_game_agent(spec: str) -> bool:
    """Whether :func:`agent_for_game` resolves ``spec`` (no file, no registered env needed)."""
    variant, separator, argument = spec.partition(":")
    if spec == "random" or (variant in CFR_VARIANTS and argument):
        return True
    return (bool(argument) or not separator) and spec_builder(variant) is not None


def agent_for_game(
    spec: str, game: Game, player: int = 0, seed: int | None = None, bare_argument: str = ""
) -> Agent:
    """The agent ``spec`` names for seat ``player`` of ``game``: ``random``, ``cfr+:<n>`` /
    ``cfr:<n>`` or a search spec. A bare search prefix (``uct``) gets ``bare_argument``
    (the GGP player passes the play clock's budget, e.g. ``"1.5s"``)."""
    if spec == "random":
        return RandomAgent(game.info.num_distinct_actions, seed)
    variant, separator, argument = spec.partition(":")
    if variant in CFR_VARIANTS and argument:
        from agents.cfr import CFRSolver

        if not argument.isdigit() or int(argument) < 1:
            raise ValueError(f"agent spec {spec!r}: iterations must be a positive integer")
        solver = CFRSolver(game, variant=variant)
        solver.iterate(int(argument))
        return TabularPolicyAgent.from_policy(solver.average_policy(), player, seed)
    builder = spec_builder(variant) if argument or not separator else None
    if builder is None:
        raise ValueError(f"agent spec {spec!r} does not resolve: expected {SPEC_HELP}")
    return builder(argument if separator else bare_argument, game, player, seed)


def load_agent(
    spec: str, env_name: str, player: int = 0, seed: int | None = None, **env_params: Any
) -> Agent:
    """The agent a spec names, for seat ``player`` of ``env_name`` (see the module docstring)."""
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"agent spec must be a non-empty string: {SPEC_HELP}; got {spec!r}")
    game = hiddenenvs.load_game(env_name, **env_params)
    num_players = game.info.num_players
    if not 0 <= player < num_players:
        raise ValueError(f"player must be in 0..{num_players - 1} for {env_name}, got {player}")
    if names_game_agent(spec):
        return agent_for_game(spec, game, player, seed)
    path = Path(spec)
    if path.is_dir():
        if not (path / "checkpoint.pt").is_file():
            raise ValueError(
                f"agent spec {spec!r} does not resolve: no such file: {path / 'checkpoint.pt'} (a run "
                "directory holds its checkpoint.pt once the run has saved one)"
            )
        path = path / "checkpoint.pt"
    if not path.is_file():
        if "/" in spec or "\\" in spec or path.suffix:  # written as a path: say it is missing
            raise ValueError(
                f"agent spec {spec!r} does not resolve: no such file or directory: {path}"
            )
        raise ValueError(f"agent spec {spec!r} does not resolve: expected {SPEC_HELP}")
    from agents.checkpoint import load_checkpoint
    from agents.runs import RUN_CHECKPOINT_FORMAT, learner_from_checkpoint

    payload = load_checkpoint(path)
    if isinstance(payload, dict) and payload.get("format") == RUN_CHECKPOINT_FORMAT:
        trained_on = payload["config"]["env"]["name"]
        if trained_on != env_name:
            raise ValueError(
                f"agent spec {spec!r}: this run trained on {trained_on}, not {env_name}"
            )
        return learner_from_checkpoint(payload).evaluation_agent(player)
    agent = load_agent_file(path)
    made_for = getattr(getattr(agent, "game", None), "spec", None)
    if made_for is not None and made_for.name != env_name:
        raise ValueError(f"agent spec {spec!r}: this agent plays {made_for}, not {env_name}")
    from agents.checkpoint import check_agent_fits_game

    check_agent_fits_game(agent, game, path)
    return agent

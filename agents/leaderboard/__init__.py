"""The leaderboard: play agents against each other, keep every result, rank them.

==========================  =================================================================
Module                      What it does
==========================  =================================================================
:mod:`.store`               the SQLite results store (one row per match; resumable)
:mod:`.matches`             gauntlet / round-robin schedules, seat rotation, duplicate
                            matches, parallel play on PettingZoo AEC envs
:mod:`.stats`               Wilson and t intervals, Bradley-Terry Elo by maximum likelihood,
                            optional OpenSkill
:mod:`.specs`               agent specs (``random``, ``cfr+:<n>``, checkpoints, scripted bots)
                            and exploitability of an agent on enumerable games
:mod:`.report`              the leaderboard of one env: rich tables, markdown, CSV, PNG
:mod:`.replay`              a stored match re-simulated from its env seed and actions, one
                            frame per decision with each seat's view
:mod:`.site`                the store as a static site (``evaluate.py --html``) or served live
:mod:`.browser_play`        a person's game against an agent, served in the browser
:mod:`.command`             ``hiddenenvs leaderboard export`` / ``serve``
==========================  =================================================================

>>> from agents.leaderboard import evaluate
>>> board = evaluate("kuhn_poker", {}, ["random", "cfr+:100"], games=20,
...                  db_path=":memory:", progress=False)            # doctest: +SKIP
>>> [s.agent for s in board.standings]                               # doctest: +SKIP
['cfr+:100', 'random']

``evaluate.py`` is the command line over :func:`evaluate`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from agents.leaderboard.matches import MODES, EnvVariant, play_all, schedule
from agents.leaderboard.report import (
    RANK_BY,
    Leaderboard,
    build_leaderboard,
    print_leaderboard,
    write_outputs,
)
from agents.leaderboard.specs import (
    ACCEPTED_FORMS,
    AgentSpecError,
    agent_identity,
    exploitability_of,
    resolve_agent,
)
from agents.leaderboard.store import ResultStore

__all__ = [
    "ACCEPTED_FORMS",
    "MODES",
    "RANK_BY",
    "AgentSpecError",
    "EnvVariant",
    "Leaderboard",
    "ResultStore",
    "build_leaderboard",
    "evaluate",
    "print_leaderboard",
    "resolve_agent",
    "write_outputs",
]

DEFAULT_EXPLOITABILITY_MAX_NODES = 200_000


def evaluate(
    env: str,
    params: dict[str, Any],
    agents: Sequence[str],
    games: int,
    db_path: str | Path,
    mode: str = "round-robin",
    seed: int = 0,
    duplicate: bool = True,
    workers: int = 1,
    ray_address: str | None = None,
    exploitability_max_nodes: int = DEFAULT_EXPLOITABILITY_MAX_NODES,
    anchor: str | None = None,
    rank_by: str = "elo",
    progress: bool = True,
    first_seats: Sequence[int] | None = None,
) -> Leaderboard:
    """Play what the store lacks of this evaluation, then build its leaderboard.

    ``games`` is per seat order (a two-player pairing plays ``2 * games`` matches). Set
    ``exploitability_max_nodes=0`` to skip exploitability. ``ray_address`` plays the
    matches on ``workers`` Ray actors (``"local"``, ``"auto"`` or ``host:port``; see
    :func:`agents.leaderboard.matches.play_all`) instead of local processes.
    """
    variant = EnvVariant.resolve(env, params)
    # A spec naming a file is keyed by the file's content too: a replaced file is a new agent.
    identity = {spec: agent_identity(spec) for spec in agents}
    agents = [identity[spec] for spec in agents]
    if anchor is not None:
        anchor = identity.get(anchor, anchor)
    tasks = schedule(variant, agents, mode, games, seed, duplicate, first_seats)
    # Fail before any match if a spec does not resolve; keep the agents for exploitability.
    seat_0_agents = {spec: resolve_agent(spec, variant.name, 0, variant.params) for spec in agents}
    with ResultStore(db_path) as store:
        stored = store.stored_keys(variant.name, variant.params_json)
        todo = [task for task in tasks if task[0] not in stored]
        results = play_all(variant, todo, resolve_agent, workers, ray_address)
        if progress and todo:
            from agents.progress import progress_bar as tqdm  # a bar on a terminal, lines in a log

            results = tqdm(
                results,
                total=len(todo),
                desc=f"{env}: matches",
                unit="match",
                dynamic_ncols=True,
            )
        unsaved: list = []
        for result in results:
            # Once the database stayed locked past the store's patience, the rest are set
            # aside too (each would wait as long again); none is lost.
            if unsaved or store.add_patiently(result) is None:
                unsaved.append(result)
        if unsaved:
            path = store.set_aside(unsaved)
            print(
                f"evaluate: the results database {db_path} stayed locked for "
                f"{store.lock_patience_seconds:g} s; {len(unsaved)} played match(es) were written "
                f"to {path} instead and are added the next time the database is opened",
                file=sys.stderr,
            )
        if exploitability_max_nodes > 0:
            known = store.exploitability(variant.name, variant.params_json)
            for spec in agents:
                if spec in known:
                    continue
                value = exploitability_of(
                    spec,
                    variant.name,
                    variant.params,
                    exploitability_max_nodes,
                    seat_0_agents[spec],
                )
                if value is not None:  # a cache: lost only if the database stays locked
                    store.patiently(
                        partial(
                            store.set_exploitability, variant.name, variant.params_json, spec, value
                        )
                    )
        store.patiently(lambda: store.set_rank_by(variant.name, variant.params_json, rank_by))
        return build_leaderboard(store, variant.name, variant.params_json, anchor, rank_by)

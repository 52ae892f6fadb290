"""Agent specs for the leaderboard, and exploitability of the agent a spec names.

A spec resolves through :func:`agents.load_agent` (``random``, ``cfr+:<iterations>``, the
search specs, an agent file, a run checkpoint or run directory), or, for
``scripted:<name>``, to a scripted bot of :mod:`agents.scripted` when that module has
bots for the env. :func:`resolve_agent` turns every failure into an
:class:`AgentSpecError` that names the spec and lists the accepted forms.

Identity. A spec that names a file (an agent file, a run checkpoint, a run directory's
``checkpoint.pt``) is stored as ``<spec>#sha256:<16 hex digits of the file's content>``
(:func:`agent_identity`), so replacing the file at the same path makes a new agent with
results of its own, never the old agent's. Resolving such an identity checks the file still
has that content.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import hiddenenvs
from agents.catalogue import SCRIPTED_SPEC_FORMS, spec_forms

# The forms agents.load_agent resolves (the catalogue's spec entries), and scripted bots.
ACCEPTED_FORMS = f"{spec_forms()}; {SCRIPTED_SPEC_FORMS}"


# CFR specs are refused on trees larger than this (counting them takes a few seconds).
CFR_MAX_HISTORIES = 500_000


class AgentSpecError(ValueError):
    """An agent spec that does not resolve to an agent for the env."""


def _scripted_bots() -> dict[str, dict[str, Any]]:
    """``{env: {bot name: factory}}`` from agents.scripted (a broken import is an error)."""
    from agents.scripted import SCRIPTED_BOTS

    return SCRIPTED_BOTS


HASH_MARK = "#sha256:"


def _named_file(spec: str) -> Path | None:
    """The file a spec names (a run directory names its checkpoint), if any."""
    if spec.startswith("scripted:"):
        return None
    path = Path(spec)
    if path.is_dir():
        path = path / "checkpoint.pt"
    return path if path.is_file() else None


def _content_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def agent_identity(spec: str) -> str:
    """``spec``, plus the content hash of the file it names (see the module docstring)."""
    if HASH_MARK in spec:
        return spec
    path = _named_file(spec)
    return spec if path is None else f"{spec}{HASH_MARK}{_content_hash(path)}"


def resolve_agent(spec: str, env_name: str, seat: int, params: dict[str, Any]):
    """The agent ``spec`` (or an :func:`agent_identity`) names, for ``seat`` of ``env_name``."""
    if HASH_MARK in spec:
        spec, _, expected = spec.partition(HASH_MARK)
        path = _named_file(spec)
        found = _content_hash(path) if path is not None else "no file"
        if found != expected:
            raise AgentSpecError(
                f"agent spec {spec!r} does not resolve for {env_name}: its file has changed "
                f"(content hash {found}, stored results are for {expected})"
            )
    if spec.startswith("scripted:"):
        bots = _scripted_bots().get(env_name, {})
        name = spec.partition(":")[2]
        if name not in bots:
            available = ", ".join(f"scripted:{b}" for b in sorted(bots)) or "none for this env"
            raise AgentSpecError(
                f"agent spec {spec!r} does not resolve for {env_name}: no scripted bot named "
                f"{name!r} (scripted bots for {env_name}: {available})"
            )
        return bots[name](env_name, seat, params)
    from agents.specs import load_agent

    variant, _, iterations = spec.partition(":")
    if variant in ("cfr", "cfr+") and iterations:
        _check_cfr_is_feasible(spec, env_name, params)
    try:
        return load_agent(spec, env_name, player=seat, **params)
    except Exception as error:  # load_agent raises many kinds; all mean "does not resolve"
        reason = str(error).removeprefix(f"agent spec {spec!r} ").removeprefix("does not resolve: ")
        raise AgentSpecError(
            f"agent spec {spec!r} does not resolve for {env_name}: {reason}\n"
            f"accepted forms: {ACCEPTED_FORMS}"
        ) from error


def _check_cfr_is_feasible(spec: str, env_name: str, params: dict[str, Any]) -> None:
    """A CFR spec enumerates the whole tree: refuse at once where that cannot finish."""
    from hiddenenvs.analysis import tree_is_small

    if not tree_is_small(hiddenenvs.load_game(env_name, **params), CFR_MAX_HISTORIES):
        raise AgentSpecError(
            f"agent spec {spec!r} does not resolve for {env_name}: CFR needs the whole game "
            f"tree and {env_name}({', '.join(f'{k}={v}' for k, v in params.items())}) has more than "
            f"{CFR_MAX_HISTORIES:,} histories; use a trained checkpoint instead"
        )


def exploitability_of(
    spec: str, env_name: str, params: dict[str, Any], max_nodes: int, seat_0_agent=None
) -> float | None:
    """Exploitability of the profile where the spec's agent plays every seat.

    None when it is undefined (not a two-player zero-sum game) or too costly (more than
    ``max_nodes`` histories). The agent's policy is read at every information set from
    the information-state tensor (and the seat's view, for search agents), as the env
    shows it. ``seat_0_agent`` reuses an agent
    already resolved for seat 0 (a CFR+ spec solves the game once per resolution).
    """
    from agents.base import tabular_policy_of_agents
    from hiddenenvs.analysis import GameTree, exploitability, tree_is_small

    game = hiddenenvs.load_game(env_name, **params)
    if not game.info.is_two_player_zero_sum or not tree_is_small(game, max_nodes):
        return None
    seats = [seat_0_agent or resolve_agent(spec, env_name, 0, params)]
    seats += [
        resolve_agent(spec, env_name, seat, params) for seat in range(1, game.info.num_players)
    ]
    tree = GameTree.build(game)
    return float(exploitability(tree, tabular_policy_of_agents(tree, seats.__getitem__)))

"""Search algorithms over the game model, and the agent specs that name them.

=============================================  ==================================================
Module                                         Algorithm
=============================================  ==================================================
:mod:`agents.search.external_sampling_mccfr`   external-sampling MCCFR (Lanctot et al. 2009);
                                               trainer ``es-mccfr``, spec ``es-mccfr:<iterations>``
:mod:`agents.search.outcome_sampling_mccfr`    outcome-sampling MCCFR (Lanctot et al. 2009);
                                               trainer ``os-mccfr``, spec ``os-mccfr:<iterations>``
:mod:`agents.search.tree_mccfr`                their fast path and OOS's: array tables on the
                                               enumerated tree, compiled traversals
                                               (``_tree_mccfr.pyx``)
:mod:`agents.search.oos`                       Online Outcome Sampling (Lisý, Lanctot & Bowling
                                               2015), spec ``oos:<iterations>`` or ``oos:<seconds>s``
:mod:`agents.search.ismcts`                    information-set MCTS (Cowling, Powley & Whitehouse
                                               2012), spec ``ismcts:<iterations>`` or ``ismcts:<s>s``
:mod:`agents.search.minimax`                   classic GGP search: minimax, negamax, alpha-beta
                                               (paranoid for > 2 players), max^n with shallow
                                               pruning, soft-max^n; specs ``alphabeta:6``,
                                               ``minimax``, ``negamax``, ``negamax-alphabeta``,
                                               ``maxn:1s``, ``softmaxn``
:mod:`agents.search.montecarlo`                Monte Carlo, Monte Carlo with memory, UCT;
                                               specs ``mc:1s``, ``mc-memory:1s``, ``uct:1s,c=40``
:mod:`agents.search.classic`                   what those two share: goals 0..100, deadlines,
                                               compiled GDL playouts, the determinising agent
:mod:`agents.rebel`                            ReBeL-style belief-weighted subgame solving;
                                               spec ``rebel:<iterations>`` or ``rebel:<s>s``
=============================================  ==================================================

Spec registry. ``agents.specs.load_agent`` resolves ``<prefix>:<argument>`` through
:data:`SPEC_BUILDERS`, a :class:`hiddenenvs.registries.Registry`: a module registers a
builder ``(argument, game, player, seed) -> Agent`` with ``@register_spec(prefix)``, and the
modules of the catalogue's spec entries (:data:`agents.catalogue.PROJECT_SPECS`) are
imported (registering theirs) the first time a prefix is not found.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from agents.catalogue import spec_modules
from hiddenenvs.registries import Registry

SPEC_BUILDERS: Registry[Callable] = Registry(
    "agent spec",
    plugin_modules=spec_modules(),  # the catalogue's: modules whose import registers specs
)


def register_spec(prefix: str) -> Callable[[Callable], Callable]:
    """Register ``builder(argument, game, player, seed) -> Agent`` for ``<prefix>:<argument>``
    (a decorator); ValueError if another builder has ``prefix``."""
    return SPEC_BUILDERS.register(prefix)


def spec_builder(prefix: str) -> Callable | None:
    """The builder registered for ``prefix``, or None."""
    return SPEC_BUILDERS.get(prefix)


def parse_budget(spec: str, argument: str) -> tuple[int | None, float | None]:
    """``"10000"`` -> (10000 iterations, None); ``"2s"`` / ``"0.5s"`` -> (None, seconds)."""
    try:
        if argument.endswith("s"):
            seconds = float(argument[:-1])
            if seconds > 0:
                return None, seconds
        elif argument.isdigit() and int(argument) > 0:
            return int(argument), None
    except ValueError:
        pass
    raise ValueError(
        f"agent spec {spec!r}: the budget must be a positive number of iterations ('10000') "
        f"or of seconds per move ('2s'), got {argument!r}"
    )


class DeadlinePassed(Exception):
    """A search (or its set-up) reached its deadline before finishing: the move, game or
    step it belonged to is abandoned. Trainers read ``LoopContext.deadline`` (a
    ``time.perf_counter()`` time) and hand it to their searches, which check it between
    iterations and inside a deep walk, so no move runs past a run's budget."""


def now() -> float:
    """The clock deadlines are read on (``time.perf_counter()``; tests replace it)."""
    return time.perf_counter()


def check_deadline(deadline: float | None, what: str) -> None:
    """Raise :class:`DeadlinePassed` (naming ``what``) when ``deadline`` (a
    ``time.perf_counter()`` time, or None for none) has passed."""
    if deadline is not None and now() > deadline:
        raise DeadlinePassed(f"{what}: the deadline passed")

"""What a game offers to the algorithms that would play or solve it.

:func:`game_offers` reads a game's static facts (:class:`~hiddenenvs.game.GameInfo`) and
sizes its tree, counted exactly up to :data:`COUNT_LIMIT` nodes
(:func:`~hiddenenvs.analysis.size.tree_size`: deterministic, no clock), so a trainer can be
matched to a game before any work starts (``agents.capabilities``), the same way every time.

>>> import hiddenenvs
>>> offers = game_offers(hiddenenvs.load_game("kuhn_poker"))
>>> offers.two_player_zero_sum, offers.chance, offers.belief_sampler, str(offers.tree)
(True, 'explicit', True, '58 nodes')
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hiddenenvs.analysis.size import EXACT, TreeSize, external_sampling_nodes, tree_size
from hiddenenvs.game import ChanceMode, Dynamics, Game

# Counting stops here: no trainer enumerates a larger tree (CFR's limit, the largest; a count
# to it walks Python states for about 10 to 20 CPU seconds, once per game and process).
COUNT_LIMIT = 2_000_000
# Knuth probes per traverser for the external-sampling iteration size (fixed seed).
EXTERNAL_SAMPLING_PROBES = 256


@dataclass(frozen=True)
class GameOffers:
    """A game's facts as the capability check reads them.

    ``chance``: ``"none"`` (deterministic), ``"explicit"`` (chance nodes with outcome
    probabilities) or ``"sampled"`` (drawn inside the state, not enumerable);
    ``belief_sampler``: histories consistent with an information state can be drawn (by
    pruned enumeration where chance is explicit, or by the game's own sampler).
    """

    env: str
    label: str
    num_players: int
    simultaneous: bool
    chance: str
    utility: str
    two_player_zero_sum: bool
    belief_sampler: bool
    tree: TreeSize
    # Knuth's estimate of the nodes one external-sampling MCCFR iteration visits.
    external_sampling_nodes: float = math.inf


def _has_own_sampler(game: Game) -> bool:
    return type(game).sample_consistent_history is not Game.sample_consistent_history


def game_offers(game: Game) -> GameOffers:
    """The offers of ``game`` (its tree counted up to :data:`COUNT_LIMIT` nodes, unless an
    estimate puts it far above)."""
    info = game.info
    tree = tree_size(game, max_nodes=COUNT_LIMIT)
    chance = {
        ChanceMode.DETERMINISTIC: "none",
        ChanceMode.EXPLICIT_STOCHASTIC: "explicit",
        ChanceMode.SAMPLED_STOCHASTIC: "sampled",
    }[info.chance_mode]
    return GameOffers(
        env=game.spec.name,
        label=str(game.spec),
        num_players=info.num_players,
        simultaneous=info.dynamics is Dynamics.SIMULTANEOUS,
        chance=chance,
        utility=info.utility.value.replace("_", "-"),
        two_player_zero_sum=info.is_two_player_zero_sum,
        belief_sampler=chance != "sampled" or _has_own_sampler(game),
        tree=tree,
        # An iteration visits at most the whole tree: a counted tree bounds the estimate.
        external_sampling_nodes=min(
            float(tree.nodes) if tree.how == EXACT else math.inf,
            external_sampling_nodes(game, probes=EXTERNAL_SAMPLING_PROBES),
        ),
    )

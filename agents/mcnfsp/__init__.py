r"""Monte Carlo Neural Fictitious Self-Play (MCNFSP): NFSP with a tree-search best response.

Zhang et al. 2019, "Monte Carlo Neural Fictitious Self-Play: Approach to Approximate Nash
Equilibrium of Imperfect-Information Games" (arXiv:1903.09569), section 3 and Algorithm 1.
Fictitious play lets every player best-respond to the average of its opponents' past
strategies; NFSP (:mod:`agents.nfsp`) learns that best response with DQN. MCNFSP
replaces DQN by a Monte Carlo tree search guided by a policy-value network. Per player i:

- a best-response network ``f_BR(s) = (p, v)`` (policy logits, value in [-1, 1]) trained
  on a circular memory M_RL of search results ``(s, pi, z)`` with the AlphaZero loss

  .. math::

     \mathcal{L}(\theta_{BR}) = (z - v)^2 - \pi^\top \log p,

  ``pi`` the search's visit distribution at ``s``, ``z`` the return the player went on to
  earn from ``s`` divided by the game's utility bound;
- an average-policy network ``Pi(s)`` trained by classifying the search's own actions,
  kept in a reservoir memory M_SL (a uniform sample of all best-response play):

  .. math::

     \mathcal{L}(\theta_\Pi) = \mathbb{E}_{(s, a) \sim \mathcal{M}_{SL}}\left[-\log \Pi(a \mid s)\right];

- anticipatory dynamics, per *action* (NFSP draws per episode): the player acts with the
  search with probability eta (``anticipatory``), otherwise samples Pi; ``(s, a)`` enters
  M_SL only when the search acted.

The search is PUCT (AlphaGo Zero). Each simulation descends from the root by

.. math::

   a^* = \operatorname{argmax}_a \; Q(s, a) + c_{\text{puct}} \, P(s, a) \, \frac{\sqrt{N(s)}}{1 + N(s, a)},

``P`` f_BR's policy at the node, ``N`` visit counts, ``Q`` the mean return scaled to
[-1, 1] (an unvisited action takes the node's network value). A new node is expanded
with f_BR's ``(p, v)`` and ``v`` is backed up; a terminal backs up the returns earned on
the way. After ``num_simulations`` simulations ``pi(a) ∝ N(root, a)^(1 / temperature)``
and the action is sampled from ``pi`` (the paper's choice, at temperature 1); f_BR learns
``pi``, or with ``policy_target: visits`` N normalised (the paper's, whatever the temperature).

The paper's deviations, all in one place (:mod:`agents.mcnfsp.deviations`, which explains
each): two changes that make the search a best response (the others and chance averaged
by their policies in expectation, or sampled; a node per information set with roots drawn
from the searcher's beliefs), and options for large action spaces, all off by default (a
factored order head, rollout leaf values, a Gumbel root, replay ratios).

Where each part lives: :mod:`agents.mcnfsp.config` (the hyperparameters),
:mod:`agents.mcnfsp.tree` and :mod:`agents.mcnfsp.search` (the best-response search),
:mod:`agents.mcnfsp.agent` (a player: eta, M_RL, M_SL and both losses),
:mod:`agents.mcnfsp.learner` (the trainer), :mod:`agents.mcnfsp.self_play` (workers, and
play against a fixed opponent on the game model), :mod:`agents.mcnfsp.deviations`.

Settings (paper, Othello, section 3.3.1): M_RL 4M, M_SL 400K, Adam with learning rates
0.01 (RL) and 0.005 (SL), an update every 100 episodes, two convolutional layers
flattened to a 120-d vector then fully connected layers for boards (``network: auto``
picks it for ``(C, H, W)`` tensors; :mod:`agents.networks`), an MLP otherwise; the
paper's dropout is left out. The paper does not give eta, c_puct, the simulation count
or the gradient steps per update: eta 0.1 is OpenSpiel's NFSP default, the others are
set in ``configs/mcnfsp_*.yaml``. The evaluated and exported policy is Pi. How the
options and settings were chosen: ``docs/results/mcnfsp_history.md``.

Workers (engineering, not the paper's): with ``workers`` > 1, or a ``ray_address``
(``"local"``, ``"auto"`` or ``host:port``; ``train.py --address``), a step's episodes are
shared among that many :class:`~agents.mcnfsp.self_play.SelfPlayWorker` s of the project's one parallel map
(:class:`agents.parallel.WorkerPool`: ``spawn`` processes or Ray actors, on one machine or
a cluster), one piece each. A worker holds a copy of the players on the CPU, loads the
snapshot of f_BR and Pi it is sent with the piece, plays the piece's seeded episodes
through the loop's lockstep (:func:`agents.episodes.play_episodes`) with the players'
generators seeded from the piece, and sends back each search's M_RL and M_SL rows, which
the learner stores in piece order: the same seed and ``workers`` give the same run (not
the one-worker run's: the episodes share the players' generators differently). A piece
cut by the deadline cuts the step and nothing of it is kept; Ctrl-C or an error stops the
workers (:meth:`~agents.mcnfsp.learner.MCNFSP.close`). ``workers: 1`` (the default) plays in the training process.

    python train.py --config configs/mcnfsp_kuhn.yaml
    python train.py --config configs/mcnfsp_kuhn.yaml trainer.params.workers=2
"""

from agents.mcnfsp.agent import MCNFSPAgent, average_probabilities
from agents.mcnfsp.config import (
    GUMBEL_C_SCALE,
    GUMBEL_C_VISIT,
    GUMBEL_TARGET_WIDTH,
    MAX_HISTORY_BATCH,
    MCNFSPConfig,
    OpponentPolicy,
    architecture_for,
    utility_scale,
)
from agents.mcnfsp.deviations import SearchDeviations, replay_steps_due
from agents.mcnfsp.learner import MCNFSP
from agents.mcnfsp.search import BestResponseSearch
from agents.mcnfsp.self_play import SelfPlayWorker, play_against_policy
from agents.mcnfsp.tree import Node, searcher_decides

__all__ = [
    "GUMBEL_C_SCALE",
    "GUMBEL_C_VISIT",
    "GUMBEL_TARGET_WIDTH",
    "MAX_HISTORY_BATCH",
    "MCNFSP",
    "BestResponseSearch",
    "MCNFSPAgent",
    "MCNFSPConfig",
    "Node",
    "OpponentPolicy",
    "SearchDeviations",
    "SelfPlayWorker",
    "architecture_for",
    "average_probabilities",
    "play_against_policy",
    "replay_steps_due",
    "searcher_decides",
    "utility_scale",
]

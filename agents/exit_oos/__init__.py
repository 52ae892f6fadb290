r"""ExIt-OOS: expert iteration with an Online Outcome Sampling expert and a neural
apprentice (Kitchen & Benedetti 2018, "ExIt-OOS: Towards Learning from Planning in
Imperfect Information Games", arXiv:1808.10120).

Expert iteration (Anthony et al. 2017) alternates two steps. The *expert* is a search,
here OOS (:mod:`agents.search.oos`), whose rollout policy ``rho`` is the apprentice
``f_theta``; the *apprentice* is a network trained to imitate the expert. One iteration:

1. **Self-play.** ``games_per_iteration`` games (paper: 32, one per core), each move
   chosen by a fresh OOS search of ``simulations_per_move`` iterations (paper: 10,000)
   targeted at the mover's information set (``targeting``: PST for Leduc and Liar's Dice,
   IST for Goofspiel, as the paper), rolling out with ``rho = f_theta``. The move is
   drawn from OOS's average strategy ``sigma_oos`` at ``I_cur`` (S1: "only the average
   converges"), and ``(tensor(I_cur), mask, sigma_oos)`` is stored.
2. **Memory.** The game's moves go into a reservoir of 32,000 games with the paper's
   "decay ratio" 2 (:class:`agents.memories.GameReservoir`: the n-th game is kept with
   probability ``min(1, 2 K / n)``, replacing a random one).
3. **Training.** ``train_steps`` (paper: 128) Adam steps (lr 1e-3) on minibatches of the
   reservoir, minimising the divergence of the apprentice from the expert's answer

   .. math::

      \mathrm{KL}(\sigma_{oos} \,\|\, f_\theta) = \sum_{a \text{ legal}} \sigma_{oos}(a)
      \bigl(\log \sigma_{oos}(a) - \log f_\theta(a)\bigr)

The apprentice is an MLP with ReLUs and a softmax over the legal actions (illegal logits
masked): Leduc [128], II-Goofspiel(6) [128, 64] (the paper's sizes); Liar's Dice, where
the paper is silent, [128, 64] like Goofspiel(6), a game of similar size. It is what the
loop evaluates and exports (``policy_player<p>.pt``; one network plays every seat, its
input being the seat's information-state tensor).

The paper's deviations, all in one place (:mod:`agents.exit_oos.deviations`, which
explains each and what it measured): ``reweighting: none`` (OOS's own importance weights
instead of the paper's moving average), ``average_tremble`` (OOS's average strategy
weighed by a trembling reach, so a decision its current strategy does not lead to still
gets a target), ``prior_regret`` (each search starts at the apprentice's policy, not
uniform) and ``public_state_targets`` (PST's answers stored at every hand of the public
state), all off by default but ``configs/exit_oos_leduc.yaml`` turns the first three on.

Where each part lives: :mod:`agents.exit_oos.config` (the hyperparameters),
:mod:`agents.exit_oos.apprentice` (``f_theta``, its KL loss, ``rho``),
:mod:`agents.exit_oos.expert` (OOS as the teacher), :mod:`agents.exit_oos.self_play`
(games, workers), :mod:`agents.exit_oos.learner` (the iteration),
:mod:`agents.exit_oos.deviations`.

Design choices (the paper's engineering, on this code base):

- *The apprentice is fixed during an iteration's self-play*, so on an enumerable game
  (Kuhn, Leduc, II-Goofspiel(6), Liar's Dice(1): OOS's compiled ``tree`` backend) ``rho``
  is evaluated for every information set in ONE batched forward per iteration
  (:meth:`agents.search.oos.OOS.set_rollout_policy`) and the compiled walk reads the
  table: the same probabilities as a forward at every rollout step (tested), without a
  network call inside the search. This replaces the paper's state-machine batching of
  concurrent simulations, which exists to amortise exactly those per-step calls.
- On the ``model`` backend (games too large to enumerate, e.g. II-Goofspiel(13)) the
  paper's state machine: a worker plays ``concurrent_games`` games in lockstep, every
  OOS simulation suspends when its rollout needs ``rho``
  (:meth:`agents.search.oos.OOS.search_steps`), and
  when none can progress one batched forward answers them all
  (:func:`agents.search.oos.search_concurrently`). Each game keeps its own searches and
  seeded generators, so its moves do not depend on the games beside it, up to the last
  bits of a batched forward pass (runs are reproducible with the same ``workers`` and
  ``concurrent_games``).
- *Workers.* Self-play games run on ``workers`` workers of the project's one parallel
  map (:class:`agents.parallel.WorkerPool`, living as long as the learner): ``spawn``
  processes, or with ``ray_address`` (``"local"``, ``"auto"`` or ``host:port``;
  ``train.py --address``) Ray actors, on one machine or a cluster, with the same games (a
  piece whose actor dies is played again by its replacement). Each worker has its own OOS
  per seat; every game's OOS generators are seeded from the game's seed, which the loop's
  generator draws, so the stored games do not depend on the number of workers or on which
  worker plays which game, and a run resumed after SIGKILL produces the same networks as
  an uninterrupted one.
- *Budget.* ``simulations_per_move`` is the knob scaled down from the paper's 10,000: a
  move's search time grows linearly with it (configs use 1,000-2,000; each config states
  its run's budget). The run's deadline reaches every search, in the workers too: a game
  still in play there is dropped (the step is cut), and workers that do not stop within
  :data:`agents.parallel.STOP_SECONDS` are terminated, as
  :meth:`agents.exit_oos.learner.ExItOOS.close` terminates them on an error or Ctrl-C.
"""

from agents.exit_oos.apprentice import (
    ApprenticeRollout,
    Architecture,
    apprentice_network,
    architecture_for,
    kl_loss,
)
from agents.exit_oos.config import ExItOOSConfig
from agents.exit_oos.deviations import PublicStateTargets, deviation_options
from agents.exit_oos.expert import ExpertAnswer, expert_answer, expert_searches, oos_options
from agents.exit_oos.learner import ExItOOS
from agents.exit_oos.self_play import GameRecord, SelfPlayer, SelfPlayWorker

__all__ = [
    "ApprenticeRollout",
    "Architecture",
    "ExItOOS",
    "ExItOOSConfig",
    "ExpertAnswer",
    "GameRecord",
    "PublicStateTargets",
    "SelfPlayWorker",
    "SelfPlayer",
    "apprentice_network",
    "architecture_for",
    "deviation_options",
    "expert_answer",
    "expert_searches",
    "kl_loss",
    "oos_options",
]

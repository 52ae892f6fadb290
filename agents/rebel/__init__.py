r"""ReBeL for any game of the model: one belief-weighted subgame per decision.

ReBeL for GDL-II (Partridge & Thielscher, "Hidden Information General Game Playing with
Deep Learning and Search", Alg. 1 and Sect. 3) samples perfect-information states consistent with a role's percepts, solves each sampled state with
depth-limited CFR (goals at terminals, a value network at the frontier, CFR started from
a policy network) and averages the per-state policies. Solving each state on its own is
*strategy fusion*: in Monty Hall every sampled state knows where the car is, so the
averaged policy switches with p = 2/3 only. This package builds one subgame per decision
instead, as ReBeL (Brown, Bakhtin, Lerer & Gong 2020, "Combining Deep Reinforcement
Learning and Search for Imperfect-Information Games") does:

- **Chance root over beliefs.** The subgame's root is a chance node over the histories
  ``h`` consistent with the searcher's *public* state ``S`` (exact enumeration while it
  fits in ``max_root_nodes``), weighted by

  .. math::

     b(h) \propto \pi_c(h) \prod_q \pi_q^\sigma(h),

  the chance probabilities times every player's reach under the search policy ``σ``
  already computed at the earlier public states of ``S`` (a public belief state as in
  ReBeL, Brown, Bakhtin, Lerer & Gong 2020, Sect. 4; unsafe re-solving: no gadget).
  Restricted to the searcher's information set ``I`` this is the posterior
  ``P(h | I)`` of :mod:`hiddenenvs.beliefs`. Reach under σ is mixed with ``tremble``
  uniform so public states that σ never reaches still get a belief (the limit of
  trembling beliefs). When the exact walk is too large, the root holds ``samples``
  histories for the searcher's information set: from the game's exact posterior sampler
  (``sampler="posterior"``; GDL-II: forward filter, backward sampling; weight = count),
  or from the paper's own forward sampler with its invalid-state cache and policy-biased
  normalised proposals (``sampler="proposal"``, :class:`ProposalSampler`), each weighted
  by p_model / q_proposal, or from the paper's evaluation-mode sampler (shuffled child
  lists, reach probabilities stored per node: ``sampler="evaluation"``,
  :class:`EvaluationSampler`), the distinct draws weighted by their reach. With
  ``sampler="particles"`` the root is instead ``samples`` weighted particles over the
  *public* state (:meth:`ReBeLSearch.particle_beliefs`: a resampling particle filter
  with the same weights as the exact walk), one subgame per public state as with
  enumeration, falling back to the posterior sampler for an information set the
  particles missed.
- **One information set per role over them.** Every node of the subgame keeps the
  players' real ``information_state_key``, so the searcher's decision is a single
  information set spanning all root histories: the policy is a best response to the
  beliefs (Monty Hall switches with p = 1), not an average of clairvoyant solutions.
- **Depth-limited CFR+** (Tammelin 2014) over the subgame tree
  (:func:`hiddenenvs.analysis.tree.build_subgame_tree`, solved by
  :class:`agents.cfr.CFRSolver`): returns at terminals, ``leaf_value(states)`` at the
  frontier (a value network; by default the mean return of ``rollouts`` uniform random
  playouts), regrets warm-started from ``prior(state, player)`` when given (the paper's
  "CFR initialised from the policy network"; Brown & Sandholm 2016's strategy-based warm
  start), the linear average policy as the answer.
- **Iterative deepening** (the paper's evaluation protocol): depth 1, 2, ... public steps
  until the subgame has no frontier left, the subgame exceeds ``max_subgame_nodes``, the
  ``max_depth`` is reached or the ``seconds`` budget runs out; the deepest finished solve
  answers.

Which decisions get a new subgame (``resolve``): with ``"frontier"`` (default; ReBeL's
Alg. 1) the first subgame is rooted at the start of the game and a new one at each
public state on the previous subgame's frontier, so a decision inside a solved subgame
plays its σ (at full depth the first subgame is the whole game: CFR+); with
``"decision"`` every decision re-solves its own subgame from its beliefs (unsafe:
Liar's Dice 1x4f 0.064 exploitable against 0.0007); with ``"gadget"`` (two-player
zero-sum games) every decision is re-solved *safely*, CFR-D style (Burch, Johanson &
Bowling 2014): the new subgame's chance root weighs its histories by chance and the
searcher's reach only, and the opponent first chooses, per information set, between the
counterfactual best-response value the previous subgame already conceded to it and
playing on (:meth:`ReBeLSearch._solve_gadget`), so re-solving cannot make the
searcher's strategy more exploitable (Liar's Dice 1x4f at 200 iterations: 0.0011). Solves are cached by their root
public state, and σ at earlier public states is what the searcher computed (or would
have computed) there, so with enumerated beliefs the policy is a deterministic function
of the public state: :func:`rebel_policy` runs the search at every information set of a
small game for exact exploitability (``hiddenenvs.analysis``).

The paper's training loop (Alg. 1) is :class:`ReBeLLearner` (trainer ``rebel``): a
shared-trunk value/policy network (:class:`ReBeLNetwork`) over the propnet state.
Frontier values per public belief state instead of per history (ReBeL's value network,
recomputed at every CFR iteration): ``pbs_value``, :mod:`agents.rebel.pbs` (enumerated
public states only), trained
through the loop by ``ReBeLLearner`` with ``values: pbs`` (ReBeL's Alg. 1, value side),
its evaluation search re-solving as ``resolve`` says (``gadget``: CFR-D). Not here yet
(see the README, Trainers, ReBeL): PBS values and the gadget over particle beliefs.

One module per part of the method:

==============================  ==========================================================
Module                          Part
==============================  ==========================================================
:mod:`agents.rebel.search`      the subgame search, re-solving modes, iterative deepening
:mod:`agents.rebel.beliefs`     public belief states: exact walk, particles, sampled roots
:mod:`agents.rebel.samplers`    the GDL-II paper's forward and evaluation-mode samplers
:mod:`agents.rebel.gadget`      safe re-solving (CFR-D's gadget)
:mod:`agents.rebel.values`      frontier values per history: playouts, value/policy net
:mod:`agents.rebel.pbs`         frontier values per public belief state (ReBeL proper)
:mod:`agents.rebel.self_play`   Alg. 1's self-play games, the worker playing them in parallel
:mod:`agents.rebel.trainer`     the training loop (trainer ``rebel``), the agent, ``rebel:``
==============================  ==========================================================

>>> import hiddenenvs
>>> game = hiddenenvs.load_game("monty_hall")
>>> state = game.new_initial_state()
>>> state.apply_action(2); state.apply_actions([0])   # car behind door 3; candidate picks door 1
>>> while state.is_chance_node():                      # the host opens a goat door
...     state.apply_action(state.legal_actions()[0])
>>> policy = ReBeLSearch(game, iterations=50).policy(state.seat_view(0))
>>> game.action_to_string(0, int(policy.argmax())), bool(policy.max() > 0.99)
('switch', True)
"""

from agents.rebel.options import RESOLVE_MODES, SAMPLERS, VALUE_KINDS, SearchOptions
from agents.rebel.pbs import (
    FrontierGroups,
    PBSValue,
    PBSValueNetwork,
    marginals,
    set_frontier_values,
    solve_with_pbs_values,
    train_pbs_values,
)
from agents.rebel.samplers import EvaluationSampler, ProposalSampler
from agents.rebel.search import (
    ReBeLSearch,
    SubgameStructures,
    rebel_exploitability,
    rebel_policy,
)
from agents.rebel.trainer import ReBeLAgent, ReBeLConfig, ReBeLLearner
from agents.rebel.values import NetworkGuide, ReBeLNetwork, rollout_values, state_features

__all__ = [
    "RESOLVE_MODES",
    "SAMPLERS",
    "VALUE_KINDS",
    "EvaluationSampler",
    "FrontierGroups",
    "NetworkGuide",
    "PBSValue",
    "PBSValueNetwork",
    "ProposalSampler",
    "ReBeLAgent",
    "ReBeLConfig",
    "ReBeLLearner",
    "ReBeLNetwork",
    "ReBeLSearch",
    "SearchOptions",
    "SubgameStructures",
    "marginals",
    "rebel_exploitability",
    "rebel_policy",
    "rollout_values",
    "set_frontier_values",
    "solve_with_pbs_values",
    "state_features",
    "train_pbs_values",
]

# cython: boundscheck=False, wraparound=False, language_level=3
"""The AEC adapter's per-step methods, compiled (:mod:`hiddenenvs.pettingzoo_env`).

An AEC playout of II-Goofspiel(13) is 26 agent steps, each an ``agent_iter`` step, a
``last()`` and a ``step()``. As Python they cost about 6 microseconds of attribute reads,
dict lookups and calls per agent step, several times what the compiled game spends on
its part. These functions are the same methods, bound to the same classes
(``GameAECEnv.observe``, ``_mask``, ``step`` and ``reset``; the order-enforcing
wrapper's ``reset``, ``last`` and ``step``) plus the wrapper's iterator as a C type. They
keep the Python logic, with no interpreter in between, and read and write the env's
plain instance attributes in its ``__dict__`` directly (the classes define no descriptor
of those names), which skips a type lookup through the class hierarchy per access, the
largest cost left once compiled; what the env fixes when made is read from one C object
(``_Fixed``). Every uncommon branch (an action outside the mask or not an int, a
finished agent's ``step(None)``, rewards paid mid-game, automatic nodes, players out
early, infos in use, rendering) calls the env's Python methods, which name the culprit
and follow PettingZoo's rules as before.
"""

cimport numpy as cnp

cdef extern from "Python.h":
    # An object's instance __dict__ (made if it has none yet; a new reference).
    dict PyObject_GenericGetDict(object o, void *context)

from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from hiddenenvs.game import SIMULTANEOUS, TERMINAL

cnp.import_array()

cdef long _SIMULTANEOUS = SIMULTANEOUS
cdef long _TERMINAL = TERMINAL
cdef frozenset _NOBODY = frozenset()


cdef class _Fixed:
    """What a GameAECEnv fixes when it is made and its compiled methods read at every
    step, held as C fields (one dict lookup per call instead of one per value)."""

    cdef object possible_agents, agent_to_player, tensor_of, state_mask_of, no_action_mask
    cdef object mask_of_legal
    cdef bint flat, infos_in_use, terminal_rewards_only, may_finish_early
    cdef Py_ssize_t num_actions, num_players

    def __init__(self, dict env):
        self.possible_agents = env["possible_agents"]
        self.agent_to_player = env["agent_to_player"]
        self.tensor_of = env["_tensor_of"]
        self.state_mask_of = env["_state_mask_of"]
        self.no_action_mask = env["_no_action_mask"]
        self.mask_of_legal = env["_mask_of_legal"]
        self.flat = env["_flat"]
        self.infos_in_use = env["_infos_in_use"]
        self.terminal_rewards_only = env["_terminal_rewards_only"]
        self.may_finish_early = env["_may_finish_early"]
        self.num_actions = env["_num_actions"]
        self.num_players = env["_num_players"]


cdef inline _Fixed _fixed_of(dict env):
    """The env's _Fixed, made on first use (and again after unpickling, which drops it)."""
    fixed = env.get("_fixed")
    if fixed is None:
        fixed = env["_fixed"] = _Fixed(env)
    return <_Fixed> fixed


cdef inline bint _shown_mask_allows(object mask, object action, Py_ssize_t num_actions) except -1:
    """Whether ``action`` (a Python int) is an action the 1-D int8 ``mask`` allows."""
    cdef cnp.ndarray array
    cdef Py_ssize_t value
    if mask is None or type(action) is not int:
        return False
    try:
        value = action
    except OverflowError:
        return False
    if value < 0 or value >= num_actions:
        return False
    array = <cnp.ndarray?> mask
    if cnp.PyArray_NDIM(array) != 1 or cnp.PyArray_TYPE(array) != cnp.NPY_INT8 or cnp.PyArray_DIM(array, 0) <= value:
        return mask[value] != 0  # not an int8 mask row: numpy answers
    return (<char *> cnp.PyArray_DATA(array))[value * cnp.PyArray_STRIDE(array, 0)] != 0


def observe(self, agent):
    """``GameAECEnv.observe``: the agent's tensor, with its mask in the dict layout."""
    return observe_in(self, PyObject_GenericGetDict(self, NULL), agent)


cdef object observe_in(object self, dict env, object agent):
    cdef _Fixed fixed = _fixed_of(env)
    try:
        player = fixed.agent_to_player[agent]
    except (KeyError, TypeError):
        raise self._unknown_agent(agent) from None
    tensor = fixed.tensor_of(env["game_state"], player)
    if fixed.flat:
        return tensor.reshape(-1)
    return {"observation": tensor, "action_mask": _mask_of(self, env, agent, player)}


def mask(self, agent, player):
    """``GameAECEnv._mask``: the agent's read-only action mask at this node.

    The selected agent's is made once per selection (``observe`` and ``step`` both read
    it); a later mover of a simultaneous node gets its own; anyone else none.
    """
    return _mask_of(self, PyObject_GenericGetDict(self, NULL), agent, player)


cdef object _mask_of(object self, dict env, object agent, object player):
    cdef _Fixed fixed = _fixed_of(env)
    cdef long current_player
    if agent == env["agent_selection"]:
        selection_mask = env["_selection_mask"]
        if selection_mask is None:
            state = env["game_state"]
            current_player = state.current_player()
            if current_player == _TERMINAL:
                selection_mask = fixed.no_action_mask
            elif current_player == _SIMULTANEOUS and fixed.state_mask_of is not None:
                selection_mask = fixed.state_mask_of(state, player)
            else:
                selection_mask = fixed.mask_of_legal(tuple(self._legal_actions_of_selection()))
            env["_selection_mask"] = selection_mask
        return selection_mask
    waiting = env["_waiting"]
    if waiting is None:  # made when first asked: most steps never ask for another agent's mask
        waiting = env["_waiting"] = frozenset(env["_to_act"])
    if player in waiting:  # a simultaneous node: a later mover's turn is coming
        if fixed.state_mask_of is not None:
            return fixed.state_mask_of(env["game_state"], player)
        return fixed.mask_of_legal(tuple(env["game_state"].legal_actions(player)))
    return fixed.no_action_mask


def step(self, action):
    """``GameAECEnv.step``: play the selected agent's action (module docstring of
    :mod:`hiddenenvs.pettingzoo_env` for the rules)."""
    cdef long player
    cdef list to_act
    cdef dict env = PyObject_GenericGetDict(self, NULL)
    cdef _Fixed fixed = _fixed_of(env)
    agent = env["agent_selection"]
    if env["terminations"][agent] or env["truncations"][agent]:
        self._was_dead_step(action)
        self._selection_legal = self._selection_mask = None
        return
    # The usual case first: an int the mask the agent was shown (last() or observe()) allows.
    if _shown_mask_allows(env["_selection_mask"], action, fixed.num_actions):
        if env["_illegal_reports"]:
            env["_illegal_reports"].pop(agent, None)
    elif env["game_state"].current_player() == _TERMINAL:  # over at reset: this step ends it
        self._end_game_over_at_reset()
        return
    else:
        action = self._checked_action(agent, action)
    env["_cumulative_rewards"][agent] = 0.0
    rewards = env["rewards"]
    for name in rewards:
        rewards[name] = 0.0
    state = env["game_state"]
    if state.current_player() == _SIMULTANEOUS:
        to_act = env["_to_act"]
        env["_pending_joint"][to_act.pop(0)] = action
        env["_waiting"] = None
        if to_act:  # the state changes once the last mover has chosen
            env["agent_selection"] = fixed.possible_agents[to_act[0]]
            env["_selection_legal"] = env["_selection_mask"] = None
            if fixed.infos_in_use:
                self._refresh_infos()
            return
        state._apply_actions(env["_pending_joint"])
    else:
        state._apply_action(action)  # validated above
    player = state.current_player()
    if (fixed.terminal_rewards_only and not fixed.may_finish_early
            and (player >= 0 or (player == _SIMULTANEOUS and state.movers()))):
        # To a decision node, or a simultaneous node where someone chooses; nothing paid,
        # nobody out: what _after_transition(None) does in that case, without its
        # general tests.
        env["_selection_legal"] = env["_selection_mask"] = None
        if player >= 0:
            env["_to_act"] = [player]
            env["_waiting"] = _NOBODY
        else:
            to_act = list(range(fixed.num_players))
            env["_to_act"] = to_act
            env["_waiting"] = None
            env["_pending_joint"] = [-1] * fixed.num_players
            player = 0
        env["agent_selection"] = fixed.possible_agents[player]
        if fixed.infos_in_use:
            self._refresh_infos()
        if env["render_mode"] == "human":
            self.render()
        return
    settle_transition(self)


def reset(self, seed=None, options=None):
    """``GameAECEnv.reset``: a new episode, played to the first agent's choice."""
    self._new_episode(seed)
    cdef dict env = PyObject_GenericGetDict(self, NULL)
    cdef _Fixed fixed = _fixed_of(env)
    cdef list agents = list(fixed.possible_agents)
    env["agents"] = agents
    env["rewards"] = dict.fromkeys(agents, 0.0)
    env["_cumulative_rewards"] = dict.fromkeys(agents, 0.0)
    env["terminations"] = dict.fromkeys(agents, False)
    env["truncations"] = dict.fromkeys(agents, False)
    env["infos"] = {agent: {} for agent in agents}
    env["_illegal_reports"] = {}
    rewards = self._resolve_automatic_nodes()
    if env["game_state"].current_player() == _TERMINAL:
        # Over before anyone acted (terminal at its initial state, or every move forced):
        # nobody is terminated by reset (PettingZoo's rule); the first step ends it.
        env["_selection_legal"] = env["_selection_mask"] = None
        env["_to_act"] = []
        env["_waiting"] = _NOBODY
        env["agent_selection"] = agents[0]
    else:
        _after_transition_in(self, env, rewards)
    if fixed.infos_in_use:
        self._refresh_infos()


def after_transition(self, rewards):
    """``GameAECEnv._after_transition``: credit ``rewards`` (None: nothing paid), then
    pick the next agent to act (or end the game)."""
    _after_transition_in(self, PyObject_GenericGetDict(self, NULL), rewards)


cdef _after_transition_in(object self, dict env, object rewards):
    cdef _Fixed fixed = _fixed_of(env)
    cdef long player
    env["_selection_legal"] = env["_selection_mask"] = None
    possible_agents = fixed.possible_agents
    if rewards is not None:
        credited = env["rewards"]
        for player, agent in enumerate(possible_agents):
            if agent in credited:
                credited[agent] += float(rewards[player])
    state = env["game_state"]
    player = state.current_player()
    out = set(state.finished_players()) if fixed.may_finish_early else ()
    if player >= 0:
        env["_to_act"] = [player]
        env["_waiting"] = _NOBODY
        env["agent_selection"] = possible_agents[player]
    elif player == _SIMULTANEOUS:
        # Every live player acts in turn; the joint action collects their choices.
        to_act = [p for p in range(fixed.num_players) if p not in out]
        env["_to_act"] = to_act
        env["_waiting"] = None
        env["_pending_joint"] = [-1] * fixed.num_players
        env["agent_selection"] = possible_agents[to_act[0]]
    else:  # terminal
        env["_to_act"] = []
        env["_waiting"] = _NOBODY
        env["terminations"] = dict.fromkeys(env["agents"], True)
        env["agent_selection"] = env["agents"][0]
    if out:
        terminations = env["terminations"]
        finished = [
            agent
            for agent in (possible_agents[p] for p in out)
            if agent in terminations and not terminations[agent]
        ]
        if finished:  # players out before the end step(None) once, first (PettingZoo rule)
            for agent in finished:
                terminations[agent] = True
            self._deads_step_first()


def settle_transition(self):
    """``GameAECEnv._settle_transition``: after a transition that pays rewards, reaches an
    automatic node or the end, or finishes players: credit, play on, pick the next agent."""
    cdef dict env = PyObject_GenericGetDict(self, NULL)
    cdef _Fixed fixed = _fixed_of(env)
    rewards = self._add_rewards(None)
    if env["game_state"].current_player() < 0:  # chance, simultaneous or terminal: maybe automatic
        more_rewards = self._resolve_automatic_nodes()
        if more_rewards is not None:
            rewards = more_rewards if rewards is None else rewards + more_rewards
    _after_transition_in(self, env, rewards)
    if rewards is not None:
        self._accumulate_rewards()
    if fixed.infos_in_use:
        self._refresh_infos()
    if env["render_mode"] == "human":
        self.render()


def wrapper_reset(self, seed=None, options=None):
    """``FastOrderEnforcingWrapper.reset``: the base class's flags, then the env's reset."""
    cdef dict wrapper = PyObject_GenericGetDict(self, NULL)
    wrapper["_has_reset"] = True
    wrapper["_has_updated"] = True
    wrapper["env"].reset(seed=seed, options=options)


def wrapper_last(self, observe=True):
    """``FastOrderEnforcingWrapper.last``: the selected agent's observation, reward,
    termination, truncation and info, read from the wrapped env directly."""
    cdef dict wrapper = PyObject_GenericGetDict(self, NULL)
    if not wrapper["_has_reset"]:
        return OrderEnforcingWrapper.last(self, observe)  # raises the base class's error
    env_object = wrapper["env"]
    if type(env_object).step is not step:  # a wrapper around ours ("lose")
        agent = env_object.agent_selection
        return (
            env_object.observe(agent) if observe else None,
            env_object._cumulative_rewards[agent],
            env_object.terminations[agent],
            env_object.truncations[agent],
            env_object.infos[agent],
        )
    cdef dict env = PyObject_GenericGetDict(env_object, NULL)
    agent = env["agent_selection"]
    return (
        observe_in(env_object, env, agent) if observe else None,
        env["_cumulative_rewards"][agent],
        env["terminations"][agent],
        env["truncations"][agent],
        env["infos"][agent],
    )


def wrapper_step(self, action):
    """``FastOrderEnforcingWrapper.step``: the base class's checks, then the env's step."""
    cdef dict wrapper = PyObject_GenericGetDict(self, NULL)
    env = wrapper["env"]
    if wrapper["_has_reset"] and env.agents:
        wrapper["_has_updated"] = True
        env.step(action)
    else:
        OrderEnforcingWrapper.step(self, action)  # the base class's error or warning


cdef class AgentIterator:
    """``agent_iter()``'s iterator: PettingZoo's ``AECOrderEnforcingIterator`` (the same
    checks and error) as a C type, so each agent step of the loop is one C call.

    ``AgentIterator(wrapper, max_iter)``: ``wrapper`` is the order-enforcing wrapper,
    whose ``env`` does not change; at most ``max_iter`` agents are handed out (PettingZoo's
    default, 2**63, is held as 2**63 - 1).
    """

    cdef readonly object env  # the wrapper, as PettingZoo's iterator names it
    cdef readonly long long iters_til_term
    cdef dict _wrapper
    cdef object _wrapped

    def __init__(self, env, max_iter):
        self.env = env
        self.iters_til_term = min(max_iter, 2**63 - 1)
        self._wrapper = PyObject_GenericGetDict(env, NULL)
        self._wrapped = self._wrapper["env"]

    def __iter__(self):
        return self

    def __next__(self):
        wrapped = self._wrapped
        if not wrapped.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        if not self._wrapper["_has_updated"]:
            raise AssertionError("need to call step() or reset() in a loop over `agent_iter`")
        self._wrapper["_has_updated"] = False
        return wrapped.agent_selection

"""Pure-Python twin of :mod:`hiddenenvs._aec` (``GameAECEnv``'s and the order-enforcing
wrapper's per-step methods and the ``agent_iter`` iterator: the same logic, results and
errors), used when the compiled module is missing. The env's fixed values are read from
its attributes here; the compiled twin caches them in a C object."""

from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from hiddenenvs.game import SIMULTANEOUS, TERMINAL

_NOBODY: frozenset[int] = frozenset()


def _shown_mask_allows(mask, action, num_actions: int) -> bool:
    """Whether ``action`` (a Python int) is an action the 1-D mask allows."""
    if mask is None or type(action) is not int or action < 0 or action >= num_actions:
        return False
    return bool(mask[action] != 0)


def observe(self, agent):
    """``GameAECEnv.observe``: the agent's tensor, with its mask in the dict layout."""
    try:
        player = self.agent_to_player[agent]
    except (KeyError, TypeError):
        raise self._unknown_agent(agent) from None
    tensor = self._tensor_of(self.game_state, player)
    if self._flat:
        return tensor.reshape(-1)
    return {"observation": tensor, "action_mask": mask(self, agent, player)}


def mask(self, agent, player):
    """``GameAECEnv._mask``: the agent's read-only action mask at this node."""
    if agent == self.agent_selection:
        selection_mask = self._selection_mask
        if selection_mask is None:
            state = self.game_state
            current_player = state.current_player()
            if current_player == TERMINAL:
                selection_mask = self._no_action_mask
            elif current_player == SIMULTANEOUS and self._state_mask_of is not None:
                selection_mask = self._state_mask_of(state, player)
            else:
                selection_mask = self._mask_of_legal(tuple(self._legal_actions_of_selection()))
            self._selection_mask = selection_mask
        return selection_mask
    if self._waiting is None:
        self._waiting = frozenset(self._to_act)
    if player in self._waiting:  # a simultaneous node: a later mover's turn is coming
        if self._state_mask_of is not None:
            return self._state_mask_of(self.game_state, player)
        return self._mask_of_legal(tuple(self.game_state.legal_actions(player)))
    return self._no_action_mask


def step(self, action):
    """``GameAECEnv.step``: play the selected agent's action."""
    agent = self.agent_selection
    if self.terminations[agent] or self.truncations[agent]:
        self._was_dead_step(action)
        self._selection_legal = self._selection_mask = None
        return
    if _shown_mask_allows(self._selection_mask, action, self._num_actions):
        if self._illegal_reports:
            self._illegal_reports.pop(agent, None)
    elif self.game_state.current_player() == TERMINAL:  # over at reset: this step ends it
        self._end_game_over_at_reset()
        return
    else:
        action = self._checked_action(agent, action)
    self._cumulative_rewards[agent] = 0.0
    rewards = self.rewards
    for name in rewards:
        rewards[name] = 0.0
    state = self.game_state
    if state.current_player() == SIMULTANEOUS:
        to_act = self._to_act
        self._pending_joint[to_act.pop(0)] = action
        self._waiting = None
        if to_act:  # the state changes once the last mover has chosen
            self.agent_selection = self.possible_agents[to_act[0]]
            self._selection_legal = self._selection_mask = None
            if self._infos_in_use:
                self._refresh_infos()
            return
        state._apply_actions(self._pending_joint)
    else:
        state._apply_action(action)  # validated above
    player = state.current_player()
    if (
        self._terminal_rewards_only
        and not self._may_finish_early
        and (player >= 0 or (player == SIMULTANEOUS and state.movers()))
    ):
        self._selection_legal = self._selection_mask = None
        if player >= 0:
            self._to_act = [player]
            self._waiting = _NOBODY
        else:
            self._to_act = list(range(self._num_players))
            self._waiting = None
            self._pending_joint = [-1] * self._num_players
            player = 0
        self.agent_selection = self.possible_agents[player]
        if self._infos_in_use:
            self._refresh_infos()
        if self.render_mode == "human":
            self.render()
        return
    settle_transition(self)


def reset(self, seed=None, options=None):
    """``GameAECEnv.reset``: a new episode, played to the first agent's choice."""
    self._new_episode(seed)
    agents = list(self.possible_agents)
    self.agents = agents
    self.rewards = dict.fromkeys(agents, 0.0)
    self._cumulative_rewards = dict.fromkeys(agents, 0.0)
    self.terminations = dict.fromkeys(agents, False)
    self.truncations = dict.fromkeys(agents, False)
    self.infos = {agent: {} for agent in agents}
    self._illegal_reports = {}
    rewards = self._resolve_automatic_nodes()
    if self.game_state.current_player() == TERMINAL:
        # Over before anyone acted (terminal at its initial state, or every move forced):
        # nobody is terminated by reset (PettingZoo's rule); the first step ends it.
        self._selection_legal = self._selection_mask = None
        self._to_act = []
        self._waiting = _NOBODY
        self.agent_selection = agents[0]
    else:
        after_transition(self, rewards)
    if self._infos_in_use:
        self._refresh_infos()


def after_transition(self, rewards):
    """``GameAECEnv._after_transition``: credit ``rewards`` (None: nothing paid), then pick
    the next agent to act (or end the game)."""
    self._selection_legal = self._selection_mask = None
    possible_agents = self.possible_agents
    if rewards is not None:
        credited = self.rewards
        for player, agent in enumerate(possible_agents):
            if agent in credited:
                credited[agent] += float(rewards[player])
    state = self.game_state
    player = state.current_player()
    out = set(state.finished_players()) if self._may_finish_early else ()
    if player >= 0:
        self._to_act = [player]
        self._waiting = _NOBODY
        self.agent_selection = possible_agents[player]
    elif player == SIMULTANEOUS:
        to_act = [p for p in range(self._num_players) if p not in out]
        self._to_act = to_act
        self._waiting = None
        self._pending_joint = [-1] * self._num_players
        self.agent_selection = possible_agents[to_act[0]]
    else:  # terminal
        self._to_act = []
        self._waiting = _NOBODY
        self.terminations = dict.fromkeys(self.agents, True)
        self.agent_selection = self.agents[0]
    if out:
        terminations = self.terminations
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
    """``GameAECEnv._settle_transition``: credit, play on, pick the next agent."""
    rewards = self._add_rewards(None)
    if self.game_state.current_player() < 0:  # chance, simultaneous or terminal: maybe automatic
        more_rewards = self._resolve_automatic_nodes()
        if more_rewards is not None:
            rewards = more_rewards if rewards is None else rewards + more_rewards
    after_transition(self, rewards)
    if rewards is not None:
        self._accumulate_rewards()
    if self._infos_in_use:
        self._refresh_infos()
    if self.render_mode == "human":
        self.render()


def wrapper_reset(self, seed=None, options=None):
    """``FastOrderEnforcingWrapper.reset``: the base class's flags, then the env's reset."""
    self._has_reset = True
    self._has_updated = True
    self.env.reset(seed=seed, options=options)


def wrapper_last(self, observe=True):
    """``FastOrderEnforcingWrapper.last``: read from the wrapped env directly."""
    if not self._has_reset:
        return OrderEnforcingWrapper.last(self, observe)  # raises the base class's error
    env = self.env
    agent = env.agent_selection
    return (
        env.observe(agent) if observe else None,
        env._cumulative_rewards[agent],
        env.terminations[agent],
        env.truncations[agent],
        env.infos[agent],
    )


def wrapper_step(self, action):
    """``FastOrderEnforcingWrapper.step``: the base class's checks, then the env's step."""
    env = self.env
    if self._has_reset and env.agents:
        self._has_updated = True
        env.step(action)
    else:
        OrderEnforcingWrapper.step(self, action)  # the base class's error or warning


class AgentIterator:
    """``agent_iter()``'s iterator: PettingZoo's ``AECOrderEnforcingIterator`` checks."""

    def __init__(self, env, max_iter):
        self.env = env  # the wrapper, as PettingZoo's iterator names it
        self.iters_til_term = min(max_iter, 2**63 - 1)

    def __iter__(self):
        return self

    def __next__(self):
        wrapped = self.env.env
        if not wrapped.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        if not self.env._has_updated:
            raise AssertionError("need to call step() or reset() in a loop over `agent_iter`")
        self.env._has_updated = False
        return wrapped.agent_selection

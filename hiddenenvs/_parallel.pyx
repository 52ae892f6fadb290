# cython: boundscheck=False, wraparound=False, language_level=3
"""The parallel adapter's per-step methods, compiled (:mod:`hiddenenvs.pettingzoo_env`).

A parallel step of a two-player game (II-Goofspiel(13): 12 steps a playout) spent about
10 microseconds in Python: checks, the move, the node's masks, the five dicts, most of
it attribute reads and calls around compiled work that takes a fraction of that. These
are the same methods (``GameParallelEnv.step``, ``_node_masks``, ``_joint_action``,
``_step_dicts``), bound to the same class: the same attributes read and written in the
same order, with no interpreter in between. Uncommon branches (a missing, illegal or
non-integer action, rewards paid mid-game, automatic nodes, a state that answers player
by player, rendering) call the env's Python methods as before.
"""

cimport numpy as cnp

import numpy as np

from hiddenenvs._adapters import (
    accept_legal_actions,
    mask_rows,
    parallel_step_dicts,
    row_views,
    rows_with_any,
)
from hiddenenvs.game import SIMULTANEOUS, TERMINAL

cnp.import_array()

cdef long _SIMULTANEOUS = SIMULTANEOUS
cdef long _TERMINAL = TERMINAL


def node_masks(self):
    """``GameParallelEnv._node_masks``: every player's action mask at this node,
    (players, actions) read-only int8.

    Built once per node, with the players who act (from the legal lists as they are
    written in, or from a state's array in a few array passes): the observations hand
    out its rows and ``step`` checks each actor's action against its row (one lookup
    per actor, cheaper than array passes for a handful of players and a small share of
    a 160-fighter tick). A state may provide ``read_only_legal_actions_masks()`` (all
    players' masks as one read-only int8 array it keeps, used as it is: combat's
    fighters) or ``legal_actions_masks()`` (all players' masks in one array, copied
    unless read-only C-ordered int8, e.g. Goofspiel's hands made fresh in C); otherwise
    the masks come from ``legal_actions`` player by player
    (``_masks_player_by_player``).
    """
    cdef long current_player
    masks = self._masks
    if masks is not None:
        return masks
    state = self.game_state
    current_player = state.current_player()
    if current_player == _SIMULTANEOUS and self._read_only_masks_of is not None:
        masks = self._read_only_masks_of(state)
        self._actors = rows_with_any(masks)
    elif current_player == _SIMULTANEOUS and self._masks_of_all is not None:
        masks = self._masks_of_all(state)
        # Used as given when read-only C-ordered int8, made fresh for this node (Goofspiel's);
        # else copied, since a state may share its array with clones.
        if (not cnp.PyArray_Check(masks) or cnp.PyArray_TYPE(<cnp.ndarray> masks) != cnp.NPY_INT8
                or cnp.PyArray_ISWRITEABLE(<cnp.ndarray> masks)
                or not cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray> masks)):
            masks = np.array(masks, dtype=np.int8)
            masks.flags.writeable = False
        self._actors = rows_with_any(masks)
    else:
        masks = self._masks_player_by_player(current_player)
    self._masks = masks
    return masks


def node_mask_rows(self, masks):
    """``GameParallelEnv._mask_rows``: each player's read-only mask at this node, shared
    per legal set (few actions) or a row of ``masks``."""
    table = self._mask_table
    if table is None:
        return row_views(masks)
    return mask_rows(masks, table, self._mask_of_legal)


def joint_action(self, dict actions, dict reports):
    """``GameParallelEnv._joint_action``: the validated joint action (one entry per
    player, -1 where nobody acts), or None when an action lost the game (``"lose"``: the
    offenders are in ``reports``). Integer actions inside their rows of the node's masks
    pass in one compiled loop; any other goes through ``_checked_action``, which names
    the culprit, plays the no-op or records the loss."""
    cdef list joint = [-1] * self._num_players
    cdef bint lost = False
    masks = node_masks(self)  # before reading the actors it sets
    for player in accept_legal_actions(self._actors, actions, self.possible_agents, masks, joint):
        checked = self._checked_action(player, actions, reports)
        lost |= checked is None
        joint[player] = checked
    return None if lost else joint


def step(self, actions):
    """``GameParallelEnv.step``: every live agent's action at once (see the module
    docstring of :mod:`hiddenenvs.pettingzoo_env` for the rules)."""
    cdef long player
    state = self.game_state
    if state is None:
        raise ValueError(f"{self.game.NAME}: call reset() before step()")
    agents = self.agents
    if not agents:
        raise ValueError(f"{self.game.NAME}: the episode is over; call reset()")
    if not isinstance(actions, dict):
        raise TypeError(f"{self.game.NAME}: step() takes a dict {{agent: action}}, got "
                        f"{type(actions).__name__}")
    if not self._agent_names.issuperset(actions):
        unknown = sorted(map(repr, set(actions) - self._agent_names))
        raise ValueError(f"{self.game.NAME}: step() got actions for unknown agent(s) "
                         f"{', '.join(unknown)}; agents: {self.possible_agents}")
    if len(agents) < len(self.possible_agents) and not set(agents).issuperset(actions):
        finished = sorted(map(repr, set(actions) - set(agents)))
        raise ValueError(f"{self.game.NAME}: step() got actions for agent(s) no longer in play "
                         f"{', '.join(finished)} (terminated or truncated earlier); a parallel "
                         f"step takes actions for env.agents only")
    reports = {}
    joint = joint_action(self, actions, reports)
    if joint is None:
        return self._lost_by_illegal_actions(reports)
    player = state.current_player()
    if player == _TERMINAL:
        # Over at reset (terminal at its initial state, or every move to the end
        # forced): this step ends the episode and pays the game's returns,
        # everything the automatic moves earned.
        step_rewards = state.returns()
    else:
        if player == _SIMULTANEOUS:
            state._apply_actions(joint)  # validated above
        else:
            state._apply_action(joint[player])
        player = state.current_player()
        if player == _SIMULTANEOUS and self._terminal_rewards_only and state.movers():
            step_rewards = None  # to the next choices: nothing paid, no automatic node to play
        else:
            step_rewards = self._add_rewards(None)
            if player < 0:  # chance, simultaneous or terminal: maybe automatic
                more_rewards = self._resolve_automatic_nodes()
                if more_rewards is not None:
                    step_rewards = more_rewards if step_rewards is None else step_rewards + more_rewards
                player = state.current_player()
    done = player == _TERMINAL  # State.is_terminal, without two more calls
    if self._tensors_of_all is not None:  # every player's tensor and mask in one array each
        result = step_dicts(self, agents, step_rewards, done, reports)
    else:
        result = self._step_dicts_by_player(agents, step_rewards, done, reports)
    observations, rewards, terminations, truncations, infos, staying = result
    if len(staying) != len(agents):  # else the same list stays: action_masks keeps its rows
        self.agents = staying
    if self.render_mode == "human":
        self.render()
    return observations, rewards, terminations, truncations, infos


def step_dicts(self, list agents, step_rewards, bint done, dict reports):
    """``GameParallelEnv._step_dicts``: the step's five dicts and the agents still in
    play, in one compiled pass over the agents (``_adapters.parallel_step_dicts``), from
    the state's arrays."""
    state = self.game_state
    self._masks = None  # a new node
    masks = node_masks(self)
    tensors = self._tensors_of_all(state)
    rows = row_views(tensors.reshape(len(tensors), -1) if self._flat else tensors)
    finished = set(state.finished_players()) if not done and self._may_finish_early else None
    result = parallel_step_dicts(
        agents, self.agent_to_player, rows, node_mask_rows(self, masks),
        None if step_rewards is None else step_rewards.tolist(), done, finished, self._flat,
    )
    infos = result[4]
    for agent, report in reports.items():  # no-op reports ("lose" ends the step earlier)
        infos[agent] = {**report, **infos[agent]}
    return result

"""Pure-Python twin of :mod:`hiddenenvs._parallel` (``GameParallelEnv``'s per-step methods:
the same logic, results and errors), used when the compiled module is missing."""

import numpy as np

from hiddenenvs.game import SIMULTANEOUS, TERMINAL

try:
    from hiddenenvs._adapters import (
        accept_legal_actions,
        mask_rows,
        parallel_step_dicts,
        row_views,
        rows_with_any,
    )
except ImportError:
    from hiddenenvs._adapters_py import (
        accept_legal_actions,
        mask_rows,
        parallel_step_dicts,
        row_views,
        rows_with_any,
    )


def node_masks(self):
    """``GameParallelEnv._node_masks``: every player's action mask at this node,
    (players, actions) read-only int8, built once per node."""
    masks = self._masks
    if masks is not None:
        return masks
    state = self.game_state
    current_player = state.current_player()
    if current_player == SIMULTANEOUS and self._read_only_masks_of is not None:
        masks = self._read_only_masks_of(state)
        self._actors = rows_with_any(masks)
    elif current_player == SIMULTANEOUS and self._masks_of_all is not None:
        masks = self._masks_of_all(state)
        if (
            not isinstance(masks, np.ndarray)
            or masks.dtype != np.int8
            or masks.flags.writeable
            or not masks.flags.c_contiguous
        ):
            masks = np.array(masks, dtype=np.int8)
            masks.flags.writeable = False
        self._actors = rows_with_any(masks)
    else:
        masks = self._masks_player_by_player(current_player)
    self._masks = masks
    return masks


def node_mask_rows(self, masks):
    """``GameParallelEnv._mask_rows``: each player's read-only mask at this node."""
    table = self._mask_table
    if table is None:
        return row_views(masks)
    return mask_rows(masks, table, self._mask_of_legal)


def joint_action(self, actions: dict, reports: dict):
    """``GameParallelEnv._joint_action``: the validated joint action, or None when an
    action lost the game."""
    joint = [-1] * self._num_players
    lost = False
    masks = node_masks(self)  # before reading the actors it sets
    for player in accept_legal_actions(self._actors, actions, self.possible_agents, masks, joint):
        checked = self._checked_action(player, actions, reports)
        lost |= checked is None
        joint[player] = checked
    return None if lost else joint


def step(self, actions):
    """``GameParallelEnv.step``: every live agent's action at once."""
    state = self.game_state
    if state is None:
        raise ValueError(f"{self.game.NAME}: call reset() before step()")
    agents = self.agents
    if not agents:
        raise ValueError(f"{self.game.NAME}: the episode is over; call reset()")
    if not isinstance(actions, dict):
        raise TypeError(
            f"{self.game.NAME}: step() takes a dict {{agent: action}}, got {type(actions).__name__}"
        )
    if not self._agent_names.issuperset(actions):
        unknown = sorted(map(repr, set(actions) - self._agent_names))
        raise ValueError(
            f"{self.game.NAME}: step() got actions for unknown agent(s) "
            f"{', '.join(unknown)}; agents: {self.possible_agents}"
        )
    if len(agents) < len(self.possible_agents) and not set(agents).issuperset(actions):
        finished = sorted(map(repr, set(actions) - set(agents)))
        raise ValueError(
            f"{self.game.NAME}: step() got actions for agent(s) no longer in play "
            f"{', '.join(finished)} (terminated or truncated earlier); a parallel "
            f"step takes actions for env.agents only"
        )
    reports = {}
    joint = joint_action(self, actions, reports)
    if joint is None:
        return self._lost_by_illegal_actions(reports)
    player = state.current_player()
    if player == TERMINAL:
        # Over at reset (terminal at its initial state, or every move to the end
        # forced): this step ends the episode and pays the game's returns,
        # everything the automatic moves earned.
        step_rewards = state.returns()
    else:
        if player == SIMULTANEOUS:
            state._apply_actions(joint)  # validated above
        else:
            state._apply_action(joint[player])
        player = state.current_player()
        if player == SIMULTANEOUS and self._terminal_rewards_only and state.movers():
            step_rewards = None  # to the next choices: nothing paid, no automatic node to play
        else:
            step_rewards = self._add_rewards(None)
            if player < 0:  # chance, simultaneous or terminal: maybe automatic
                more_rewards = self._resolve_automatic_nodes()
                if more_rewards is not None:
                    step_rewards = (
                        more_rewards if step_rewards is None else step_rewards + more_rewards
                    )
                player = state.current_player()
    done = player == TERMINAL
    if self._tensors_of_all is not None:
        result = step_dicts(self, agents, step_rewards, done, reports)
    else:
        result = self._step_dicts_by_player(agents, step_rewards, done, reports)
    observations, rewards, terminations, truncations, infos, staying = result
    if len(staying) != len(agents):
        self.agents = staying
    if self.render_mode == "human":
        self.render()
    return observations, rewards, terminations, truncations, infos


def step_dicts(self, agents: list, step_rewards, done: bool, reports: dict):
    """``GameParallelEnv._step_dicts``: the step's five dicts and the agents still in
    play, from the state's arrays."""
    state = self.game_state
    self._masks = None  # a new node
    masks = node_masks(self)
    tensors = self._tensors_of_all(state)
    rows = row_views(tensors.reshape(len(tensors), -1) if self._flat else tensors)
    finished = set(state.finished_players()) if not done and self._may_finish_early else None
    result = parallel_step_dicts(
        agents,
        self.agent_to_player,
        rows,
        node_mask_rows(self, masks),
        None if step_rewards is None else step_rewards.tolist(),
        done,
        finished,
        self._flat,
    )
    infos = result[4]
    for agent, report in reports.items():
        infos[agent] = {**report, **infos[agent]}
    return result

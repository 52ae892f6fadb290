"""Pure-Python twin of :mod:`hiddenenvs._adapters` (the same functions, the same results and
errors), used by the PettingZoo adapters when the compiled module is missing (a build
without a C compiler); tests/test_pettingzoo_api.py plays both and compares."""

import numpy as np


def _checked_masks(masks) -> np.ndarray:
    if not (
        isinstance(masks, np.ndarray)
        and masks.ndim == 2
        and masks.dtype == np.int8
        and masks.flags.c_contiguous
    ):
        raise TypeError(f"masks must be a 2-D C-ordered int8 array, got {masks!r}")
    return masks


def row_views(array: np.ndarray) -> list:
    """The rows of ``array`` as a list of views."""
    return [array[row] for row in range(array.shape[0])]


def accept_legal_actions(
    actors: list, actions: dict, possible_agents: list, masks, joint: list
) -> list:
    """As the compiled ``accept_legal_actions``: write the legal integer actions into
    ``joint``; return the players left unchecked, in ``actors`` order."""
    num_players, num_actions = _checked_masks(masks).shape
    if len(possible_agents) != num_players or len(joint) != num_players:
        raise ValueError(
            f"accept_legal_actions: {num_players} mask rows need as many agents "
            f"and joint entries, got {len(possible_agents)} and {len(joint)}"
        )
    unchecked = []
    for player in actors:
        if player < 0 or player >= num_players:
            raise IndexError(
                f"accept_legal_actions: player {player} has no row in {num_players} masks"
            )
        action = actions.get(possible_agents[player])
        if type(action) is not int and not isinstance(action, np.integer):  # bools are neither
            unchecked.append(player)
            continue
        value = int(action)
        if 0 <= value < num_actions and masks[player, value]:
            joint[player] = value
        else:
            unchecked.append(player)
    return unchecked


def observation_dicts(agents: list, agent_to_player: dict, tensors, masks) -> dict:
    """``{agent: {"observation": tensors[p], "action_mask": masks[p]}}``, rows as views."""
    rows, mask_rows_ = row_views(tensors), list(masks)
    if len(rows) != len(agent_to_player) or len(mask_rows_) != len(agent_to_player):
        raise ValueError(
            f"observation_dicts: {len(agent_to_player)} players need as many tensors "
            f"and masks, got {len(rows)} and {len(mask_rows_)}"
        )
    return {
        agent: {
            "observation": rows[agent_to_player[agent]],
            "action_mask": mask_rows_[agent_to_player[agent]],
        }
        for agent in agents
    }


def values_by_agent(agents: list, agent_to_player: dict, values: list) -> dict:
    """``{agent: values[p]}`` for the agents, ``p`` their players."""
    if len(values) != len(agent_to_player):
        raise ValueError(
            f"values_by_agent: {len(agent_to_player)} players need as many values, "
            f"got {len(values)}"
        )
    return {agent: values[agent_to_player[agent]] for agent in agents}


def rows_with_any(masks) -> list:
    """The indices of the rows of ``masks`` with a non-zero entry, ascending."""
    return np.flatnonzero(_checked_masks(masks).any(axis=1)).tolist()


def mask_rows(masks, table: dict, mask_of_legal) -> list:
    """Every row of ``masks`` as a shared read-only mask, looked up in ``table`` by its
    legal set's bit code (made on first sight by ``mask_of_legal``)."""
    num_actions = masks.shape[1]
    if num_actions > 62:
        raise ValueError(f"mask_rows: bit codes hold at most 62 actions, got {num_actions}")
    codes = (masks.astype(np.int64) << np.arange(num_actions, dtype=np.int64)).sum(axis=1).tolist()
    rows = []
    for row, code in enumerate(codes):
        mask = table.get(code)
        if mask is None:
            mask = table[code] = mask_of_legal(tuple(np.flatnonzero(masks[row]).tolist()))
        rows.append(mask)
    return rows


def parallel_step_dicts(
    agents: list,
    agent_to_player: dict,
    observation_rows: list,
    mask_rows_: list,
    rewards,
    done: bool,
    finished,
    flat: bool,
) -> tuple:
    """A parallel step's five dicts and the agents still in play (see the compiled one)."""
    if (
        len(observation_rows) != len(agent_to_player)
        or len(mask_rows_) != len(agent_to_player)
        or (rewards is not None and len(rewards) != len(agent_to_player))
    ):
        raise ValueError(
            f"parallel_step_dicts: {len(agent_to_player)} players need as many "
            f"observations, masks and rewards, got {len(observation_rows)}, "
            f"{len(mask_rows_)} and {'none' if rewards is None else len(rewards)}"
        )
    observations, step_rewards, terminations, truncations, infos, staying = {}, {}, {}, {}, {}, []
    for agent in agents:
        player = agent_to_player[agent]
        mask = mask_rows_[player]
        if flat:
            observations[agent] = observation_rows[player]
            infos[agent] = {"action_mask": mask}
        else:
            observations[agent] = {"observation": observation_rows[player], "action_mask": mask}
            infos[agent] = {}
        step_rewards[agent] = 0.0 if rewards is None else rewards[player]
        ended = bool(done) or (finished is not None and player in finished)
        terminations[agent] = ended
        truncations[agent] = False
        if not ended:
            staying.append(agent)
    return observations, step_rewards, terminations, truncations, infos, staying

# cython: boundscheck=False, wraparound=False, language_level=3
"""Compiled per-agent loops of the PettingZoo adapters (:mod:`hiddenenvs.pettingzoo_env`).

A parallel step checks one action per live agent; with 160 combat fighters the Python
loop doing it (a dict lookup, type tests, a mask lookup per agent) cost as much as the
compiled tick itself. Here it is one C loop; anything unusual is handed back to the
adapter's Python path, which names the culprit, plays the no-op or records the loss.
"""

from libc.stdint cimport int8_t

import numpy as np

_NUMPY_INTEGER = np.integer


def accept_legal_actions(list actors, dict actions, list possible_agents,
                         const int8_t[:, ::1] masks, list joint):
    """Write ``joint[player]`` for every player in ``actors`` whose agent's action (in
    ``actions``, keyed by ``possible_agents[player]``) is an integer (Python or numpy,
    not a bool) inside its row of ``masks``; return the players left unchecked (no
    action, None, not an integer, out of range or masked out), in ``actors`` order."""
    cdef Py_ssize_t num_actions = masks.shape[1]
    cdef Py_ssize_t player
    cdef long long value
    cdef list unchecked = []
    if len(possible_agents) != masks.shape[0] or len(joint) != masks.shape[0]:
        raise ValueError(f"accept_legal_actions: {masks.shape[0]} mask rows need as many agents "
                         f"and joint entries, got {len(possible_agents)} and {len(joint)}")
    for player in actors:
        if player < 0 or player >= masks.shape[0]:
            raise IndexError(f"accept_legal_actions: player {player} has no row in {masks.shape[0]} masks")
        action = actions.get(possible_agents[player])
        if type(action) is not int and not isinstance(action, _NUMPY_INTEGER):  # bools are neither
            unchecked.append(player)
            continue
        try:
            value = action
        except OverflowError:
            unchecked.append(player)
            continue
        if 0 <= value < num_actions and masks[player, value]:
            joint[player] = <object> value
        else:
            unchecked.append(player)
    return unchecked


def observation_dicts(list agents, dict agent_to_player, tensors, masks):
    """``{agent: {"observation": tensors[p], "action_mask": masks[p]}}`` for the agents,
    ``p`` their players: PettingZoo's classic dict layout built from all players' tensors
    and masks as two arrays, their rows as views (no copy)."""
    cdef list rows = list(tensors)
    cdef list mask_rows = list(masks)
    cdef dict observations = {}
    cdef Py_ssize_t player
    if len(rows) != len(agent_to_player) or len(mask_rows) != len(agent_to_player):
        raise ValueError(f"observation_dicts: {len(agent_to_player)} players need as many tensors "
                         f"and masks, got {len(rows)} and {len(mask_rows)}")
    for agent in agents:
        player = agent_to_player[agent]
        observations[agent] = {"observation": rows[player], "action_mask": mask_rows[player]}
    return observations


def values_by_agent(list agents, dict agent_to_player, list values):
    """``{agent: values[p]}`` for the agents, ``p`` their players (e.g. a step's rewards)."""
    cdef dict out = {}
    if len(values) != len(agent_to_player):
        raise ValueError(f"values_by_agent: {len(agent_to_player)} players need as many values, "
                         f"got {len(values)}")
    for agent in agents:
        out[agent] = values[<Py_ssize_t> agent_to_player[agent]]
    return out


def rows_with_any(const int8_t[:, ::1] masks):
    """The indices of the rows of ``masks`` with a non-zero entry (the players who act), ascending."""
    cdef Py_ssize_t row, column
    cdef list rows = []
    for row in range(masks.shape[0]):
        for column in range(masks.shape[1]):
            if masks[row, column]:
                rows.append(row)
                break
    return rows

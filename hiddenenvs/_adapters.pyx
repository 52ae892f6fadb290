# cython: boundscheck=False, wraparound=False, language_level=3
"""Compiled per-agent loops of the PettingZoo adapters (:mod:`hiddenenvs.pettingzoo_env`).

A parallel step checks one action per live agent; with 160 combat fighters the Python
loop doing it (a dict lookup, type tests, a mask lookup per agent) cost as much as the
compiled tick itself. Here it is one C loop; anything unusual is handed back to the
adapter's Python path, which names the culprit, plays the no-op or records the loss. The
step's five dicts are built in one more C loop over the agents (``parallel_step_dicts``).
"""

from libc.stdint cimport int8_t

cdef extern from "Python.h":
    # A dict sized for n entries up front: a step's dicts then never grow as 160 agents go in.
    dict _PyDict_NewPresized(Py_ssize_t n)

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
    cdef dict observations = _PyDict_NewPresized(len(agents))
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


def mask_rows(const int8_t[:, ::1] masks, dict table, mask_of_legal):
    """Every row of ``masks`` as a shared read-only mask: ``table`` maps a row's legal
    set, as a bit code (action ``a`` is bit ``a``; at most 62 actions), to its mask,
    made on first sight by ``mask_of_legal(legal tuple)``. A handful of distinct sets
    (combat fighters' masks) then cost a lookup per player instead of a new array view."""
    cdef Py_ssize_t num_actions = masks.shape[1]
    cdef Py_ssize_t row, action
    cdef long long code
    cdef list rows = []
    if num_actions > 62:
        raise ValueError(f"mask_rows: bit codes hold at most 62 actions, got {num_actions}")
    for row in range(masks.shape[0]):
        code = 0
        for action in range(num_actions):
            if masks[row, action]:
                code |= 1LL << action
        mask = table.get(code)
        if mask is None:
            mask = table[code] = mask_of_legal(
                tuple([action for action in range(num_actions) if masks[row, action]]))
        rows.append(mask)
    return rows


def parallel_step_dicts(list agents, dict agent_to_player, list observation_rows, list mask_rows,
                        list rewards, bint done, set finished, bint flat):
    """A parallel step's five dicts in one pass over ``agents`` (keyed by agent, looked
    up per player ``p``): observation ``{"observation": observation_rows[p], "action_mask":
    mask_rows[p]}`` (``flat``: ``observation_rows[p]``, and the mask in the infos),
    reward ``rewards[p]`` (0.0 for all when ``rewards`` is None), termination ``done`` or
    ``p in finished`` (players leaving early; may be None), truncation False, infos empty
    (``flat``: the mask). Returns them and the agents still in play."""
    cdef Py_ssize_t count = len(agents)
    cdef dict observations = _PyDict_NewPresized(count), step_rewards = _PyDict_NewPresized(count)
    cdef dict terminations = _PyDict_NewPresized(count), truncations = _PyDict_NewPresized(count)
    cdef dict infos = _PyDict_NewPresized(count)
    cdef list staying = []
    cdef Py_ssize_t player
    cdef bint ended
    if len(observation_rows) != len(agent_to_player) or len(mask_rows) != len(agent_to_player) or (
            rewards is not None and len(rewards) != len(agent_to_player)):
        raise ValueError(f"parallel_step_dicts: {len(agent_to_player)} players need as many "
                         f"observations, masks and rewards, got {len(observation_rows)}, "
                         f"{len(mask_rows)} and {'none' if rewards is None else len(rewards)}")
    for agent in agents:
        player = agent_to_player[agent]
        mask = mask_rows[player]
        if flat:
            observations[agent] = observation_rows[player]
            infos[agent] = {"action_mask": mask}
        else:
            observations[agent] = {"observation": observation_rows[player], "action_mask": mask}
            infos[agent] = {}
        step_rewards[agent] = 0.0 if rewards is None else rewards[player]
        ended = done or (finished is not None and player in finished)
        terminations[agent] = ended
        truncations[agent] = False
        if not ended:
            staying.append(agent)
    return observations, step_rewards, terminations, truncations, infos, staying

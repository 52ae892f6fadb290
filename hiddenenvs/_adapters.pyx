# cython: boundscheck=False, wraparound=False, language_level=3
"""Compiled per-agent loops of the PettingZoo adapters (:mod:`hiddenenvs.pettingzoo_env`).

A parallel step checks one action per live agent; with 160 combat fighters the Python
loop doing it (a dict lookup, type tests, a mask lookup per agent) cost as much as the
compiled tick itself. Here it is one C loop; anything unusual is handed back to the
adapter's Python path, which names the culprit, plays the no-op or records the loss. The
step's five dicts are built in one more C loop over the agents (``parallel_step_dicts``).
"""

cimport numpy as cnp
from libc.stdint cimport int8_t

cdef extern from "Python.h":
    # A dict sized for n entries up front: a step's dicts then never grow as 160 agents go in.
    dict _PyDict_NewPresized(Py_ssize_t n)

import numpy as np

cnp.import_array()

_NUMPY_INTEGER = np.integer


cdef const int8_t *_mask_data(object masks, Py_ssize_t *rows, Py_ssize_t *columns) except NULL:
    """The data of a (players, actions) C-ordered int8 array, and its shape; TypeError
    naming what it got otherwise. (A typed memoryview would check the same, at several
    times the cost of these few tests for a two-player node.)"""
    if (not cnp.PyArray_Check(masks) or cnp.PyArray_NDIM(<cnp.ndarray> masks) != 2
            or cnp.PyArray_TYPE(<cnp.ndarray> masks) != cnp.NPY_INT8
            or not cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray> masks)):
        raise TypeError(f"masks must be a 2-D C-ordered int8 array, got {masks!r}")
    rows[0] = cnp.PyArray_DIM(<cnp.ndarray> masks, 0)
    columns[0] = cnp.PyArray_DIM(<cnp.ndarray> masks, 1)
    return <const int8_t *> cnp.PyArray_DATA(<cnp.ndarray> masks)


def row_views(cnp.ndarray array):
    """The rows of ``array`` as a list of views (``list(array)`` goes through numpy's
    sequence iterator, three times slower for two rows)."""
    cdef Py_ssize_t row
    return [array[row] for row in range(cnp.PyArray_DIM(array, 0))]


def accept_legal_actions(list actors, dict actions, list possible_agents, masks, list joint):
    """Write ``joint[player]`` for every player in ``actors`` whose agent's action (in
    ``actions``, keyed by ``possible_agents[player]``) is an integer (Python or numpy,
    not a bool) inside its row of ``masks``; return the players left unchecked (no
    action, None, not an integer, out of range or masked out), in ``actors`` order."""
    cdef Py_ssize_t num_players, num_actions
    cdef const int8_t *data = _mask_data(masks, &num_players, &num_actions)
    cdef Py_ssize_t player
    cdef long long value
    cdef list unchecked = []
    if len(possible_agents) != num_players or len(joint) != num_players:
        raise ValueError(f"accept_legal_actions: {num_players} mask rows need as many agents "
                         f"and joint entries, got {len(possible_agents)} and {len(joint)}")
    for player in actors:
        if player < 0 or player >= num_players:
            raise IndexError(f"accept_legal_actions: player {player} has no row in {num_players} masks")
        action = actions.get(possible_agents[player])
        if type(action) is not int and not isinstance(action, _NUMPY_INTEGER):  # bools are neither
            unchecked.append(player)
            continue
        try:
            value = action
        except OverflowError:
            unchecked.append(player)
            continue
        if 0 <= value < num_actions and data[player * num_actions + value]:
            joint[player] = <object> value
        else:
            unchecked.append(player)
    return unchecked


def observation_dicts(list agents, dict agent_to_player, tensors, masks):
    """``{agent: {"observation": tensors[p], "action_mask": masks[p]}}`` for the agents,
    ``p`` their players: PettingZoo's classic dict layout built from all players' tensors
    and masks as two arrays, their rows as views (no copy)."""
    cdef list rows = row_views(tensors)
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


def rows_with_any(masks):
    """The indices of the rows of ``masks`` (2-D C-ordered int8) with a non-zero entry
    (the players who act), ascending."""
    cdef Py_ssize_t num_rows, num_columns, row, column
    cdef const int8_t *data = _mask_data(masks, &num_rows, &num_columns)
    cdef list rows = []
    for row in range(num_rows):
        for column in range(num_columns):
            if data[row * num_columns + column]:
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

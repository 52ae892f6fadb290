"""One command for the speed pages, each contender against its peer on a pinned core.

Every figure is repeated, and the pages are regenerated with their provenance.

    python -m benchmarks speed [--force] [--repeats 5] [--seconds 1] [--core 0]
                               [--cores 0 1] [--peer-python PATH]
                               [--only cfr aec model vector fused tabular] [--no-write]

Each contender runs alone in its own process pinned to ``--core`` (ours, then the peer,
row by row): it builds what it needs, runs once untimed (compiles, caches), then runs
``--repeats`` slices of ``--seconds`` each and reports its rate per slice, in wall-clock
and in CPU time. A figure is the median of the slices, its spread the lowest and highest.

Peers run under ``--peer-python`` (default ``$HIDDENENVS_PEER_PYTHON``, else this Python),
a separate environment where they conflict with ours (pgx pins its own numpy)::

    python -m venv ../venv-peers && ../venv-peers/bin/pip install pgx jax open_spiel 'pettingzoo[classic]'
    HIDDENENVS_PEER_PYTHON=../venv-peers/bin/python python -m benchmarks speed

A peer that does not import there leaves its cells as ``-`` with the reason printed.

The pages ``docs/results/benchmarks.md`` and ``docs/results/vector.md`` each get their
generated block (between ``<!-- speed: begin -->`` and ``<!-- speed: end -->``) rewritten
with the date, commit, machine, load average and command; the rest of each page is left
as it is. On a shared machine the figures move with the load by a factor of three in
either direction, so the command refuses to write a page when the 1-minute load average
is above 1 at the start, or above 1.5 at the end of the one-core rows (the contender itself
keeps a core busy; the multi-core rows run last and load their cores themselves), unless
``--force`` (the page then says the load). ``--no-write`` prints the tables only.

Measurements (units per second; higher is better):

* ``cfr``: CFR+ iterations on Leduc hold'em, Liar's Dice (1 die, 6 faces) and
  II-Goofspiel(5) (ascending point cards) against OpenSpiel's C++ ``CFRPlusSolver``
  (Goofspiel through ``turn_based_simultaneous_game``), and exact exploitability
  computations of Leduc's uniform policy against ``pyspiel.exploitability``. OpenSpiel's
  Leduc deals suited cards (936 information sets to our 288); it is the same game
  (tests/test_against_openspiel.py).
* ``aec``: whole games per second through the AEC env with a user's loop (draw from the
  mask: ``aec_playout`` in ``benchmarks/timing.py``): Leduc against PettingZoo's
  ``leduc_holdem_v4``; Liar's Dice (1 and 2 dice), II-Goofspiel(13) and Othello 8x8
  against pyspiel states (one call per move; PettingZoo ships none of these games).
* ``model``: whole random games per second on the game model itself (``random_playout``:
  what a search or a solver written in Python drives) against pyspiel states, on Liar's
  Dice, II-Goofspiel(13) and Othello 8x8; ours should be at least as fast.
* ``vector``: agent-steps (decisions) per second, random legal play, at batch 1, 64, 1,024
  and 16,384 on Kuhn, Leduc and Othello 8x8: ``hiddenenvs.vector.make(..., copy=False)``
  with ``RandomLegalPolicy`` against pgx's ``jit(vmap(auto_reset(step, init)))`` with the
  legal random action drawn in the same jitted function, XLA on one thread.
* ``fused``: ours at its best, ``VectorEnv.play_random`` (many steps of random play per
  compiled call) at batch 1,024, on one core and, with ``threads`` = the number of
  ``--cores``, on all of them, against pgx fused the same way (the same number of steps in
  one jitted ``lax.fori_loop``, the state's buffers donated) on one core and with XLA free
  to use all of ``--cores``.
* ``tabular``: ours against ours, printed only (no page): ``VectorEnv.play`` with a
  ``TabularPolicy`` (CFR+'s average policy after 100 iterations, drawn in the compiled
  loop, ``FUSED_STEPS`` steps per call) against the Python step loop
  ``env.step(policy(step))`` with the same policy, at batch 1,024 on Kuhn and Leduc.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any, Callable

from benchmarks.timing import checkout_commit

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- speed: begin -->", "<!-- speed: end -->"
MAX_LOAD_AVERAGE = 1.0
# While the one-core rows run, the contender itself keeps one core busy (and the peer's
# runtime a few helper threads): a quiet machine reads 1.0-1.3 then (1.18 at 12:15 with
# nothing else running), so the end of the run is judged against this.
MAX_LOAD_AVERAGE_RUNNING = 1.5
VECTOR_BATCHES = (1, 64, 1024, 16384)
FUSED_STEPS = 16  # steps per call of the fused rows (batch 1,024), for both contenders
# (label, our game and parameters, the same game in OpenSpiel and its parameters)
MODEL_GAMES = (
    ("Liar's Dice (1 die)", "liars_dice", {"num_dice": 1}, "liars_dice", {}),
    (
        "II-Goofspiel(13) ascending",
        "goofspiel",
        {"num_cards": 13, "imp_info": True},
        "goofspiel",
        {"num_cards": 13, "imp_info": True, "points_order": "ascending"},
    ),
    ("Othello 8x8", "othello", {"board_size": 8}, "othello", {}),
)
VECTOR_GAMES = {"kuhn_poker": {}, "leduc_holdem": {}, "othello": {"board_size": 8}}
TABULAR_GAMES = ("kuhn_poker", "leduc_holdem")
PAGE_GROUPS = {"cfr", "aec", "model", "vector", "fused"}  # "tabular" goes on no page


# ---- workers: each builds one contender and returns its run_once (units done per call) ----
def _ours_cfr(game: str, params: dict) -> Callable[[], int]:
    import hiddenenvs
    from agents.cfr import CFRSolver

    solver = CFRSolver(hiddenenvs.load_game(game, **params), variant="cfr+")
    per_call = 10 if solver.tree.num_nodes < 10_000 else 1

    def run_once() -> int:
        solver.iterate(per_call)
        return per_call

    return run_once


def _openspiel_cfr(game: str) -> Callable[[], int]:
    import pyspiel

    solver = pyspiel.CFRPlusSolver(pyspiel.load_game(game))

    def run_once() -> int:
        solver.evaluate_and_update_policy()
        return 1

    return run_once


def _ours_exploitability(game: str) -> Callable[[], int]:
    import hiddenenvs
    from hiddenenvs.analysis import GameTree, TabularPolicy, exploitability

    tree = GameTree.build(hiddenenvs.load_game(game))
    uniform = TabularPolicy.uniform(tree)
    return lambda: (exploitability(tree, uniform), 1)[1]


def _openspiel_exploitability(game: str) -> Callable[[], int]:
    import pyspiel

    spiel_game = pyspiel.load_game(game)
    uniform = pyspiel.UniformRandomPolicy(spiel_game)
    return lambda: (pyspiel.exploitability(spiel_game, uniform), 1)[1]


def _ours_aec(game: str, params: dict) -> Callable[[], int]:
    import numpy as np

    import hiddenenvs
    from benchmarks.timing import aec_playout

    env, rng = hiddenenvs.make(game, **params), np.random.default_rng(0)
    return lambda: (aec_playout(env, rng), 1)[1]


def _ours_model(game: str, params: dict) -> Callable[[], int]:
    import numpy as np

    import hiddenenvs
    from hiddenenvs.game import random_playout

    game_model, rng = hiddenenvs.load_game(game, **params), np.random.default_rng(0)
    return lambda: (random_playout(game_model.new_initial_state(), rng), 1)[1]


def _pettingzoo_leduc() -> Callable[[], int]:
    import numpy as np
    from pettingzoo.classic import leduc_holdem_v4

    from benchmarks.timing import aec_playout

    env, rng = leduc_holdem_v4.env(), np.random.default_rng(0)
    return lambda: (aec_playout(env, rng), 1)[1]


def _openspiel_playout(game: str, params: dict | None = None) -> Callable[[], int]:
    """Whole random games on pyspiel states, one Python call per move (as a Python search
    drives them); chance drawn by its probabilities, simultaneous nodes one joint action."""
    import numpy as np
    import pyspiel

    spiel_game, rng = pyspiel.load_game(game, params or {}), np.random.default_rng(0)
    players = range(spiel_game.num_players())

    def run_once() -> int:
        state = spiel_game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probabilities = zip(*state.chance_outcomes())
                state.apply_action(outcomes[rng.choice(len(outcomes), p=probabilities)])
            elif state.is_simultaneous_node():
                joint = []
                for player in players:
                    legal = state.legal_actions(player)
                    joint.append(legal[rng.integers(len(legal))])
                state.apply_actions(joint)
            else:
                legal = state.legal_actions()
                state.apply_action(legal[rng.integers(len(legal))])
        return 1

    return run_once


def _ours_vector(game: str, params: dict, batch: int) -> Callable[[], int]:
    import hiddenenvs.vector as vector

    env = vector.make(game, num_envs=batch, seed=0, copy=False, **params)
    policy = vector.RandomLegalPolicy(seed=1)
    holder = {"step": env.reset()}

    def run_once() -> int:
        holder["step"] = env.step(policy(holder["step"].legal_action_masks))
        return batch

    return run_once


def _ours_fused(game: str, params: dict, batch: int, threads: int) -> Callable[[], int]:
    import hiddenenvs.vector as vector

    env = vector.make(game, num_envs=batch, seed=0, copy=False, **params)
    env.reset()
    policy = vector.RandomLegalPolicy(seed=1)
    return lambda: (env.play_random(FUSED_STEPS, policy, threads=threads), FUSED_STEPS * batch)[1]


def _ours_tabular(game: str, batch: int, fused: bool) -> Callable[[], int]:
    """CFR+'s average policy (100 iterations) as a vector ``TabularPolicy``: ``fused``,
    ``FUSED_STEPS`` steps per ``env.play`` call; else one ``env.step(policy(step))``."""
    import hiddenenvs.vector as vector
    from agents.cfr import CFRSolver

    env = vector.make(game, num_envs=batch, seed=0, copy=False)
    solver = CFRSolver(env.game, variant="cfr+")
    solver.iterate(100)
    policy = vector.TabularPolicy.from_policy(env, solver.average_policy(), seed=1)
    holder = {"step": env.reset()}
    if fused:
        return lambda: (env.play(FUSED_STEPS, policy), FUSED_STEPS * batch)[1]

    def run_once() -> int:
        holder["step"] = env.step(policy(holder["step"]))
        return batch

    return run_once


def _pgx_vector(game: str, batch: int, threads: int = 1, steps: int = 1) -> Callable[[], int]:
    """pgx at its best: ``steps`` random legal steps of every game in one jitted call (a
    ``lax.fori_loop`` when more than one), finished games reset inside it, the state's
    buffers donated to the next call."""
    if threads == 1:
        os.environ["XLA_FLAGS"] = (
            "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
        )
    import jax
    import jax.numpy as jnp
    import pgx
    from pgx.experimental import auto_reset

    env = pgx.make(game)
    step_with_reset = jax.vmap(auto_reset(env.step, env.init))

    def one_step(state, key):
        key, action_key, reset_key = jax.random.split(key, 3)
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        actions = jax.random.categorical(action_key, logits, axis=-1)
        return step_with_reset(state, actions, jax.random.split(reset_key, batch)), key

    @partial(jax.jit, donate_argnums=0)
    def play(state, key):
        if steps == 1:
            return one_step(state, key)
        return jax.lax.fori_loop(0, steps, lambda _, carry: one_step(*carry), (state, key))

    key = jax.random.PRNGKey(0)
    holder = {"state": jax.jit(jax.vmap(env.init))(jax.random.split(key, batch)), "key": key}

    def run_once() -> int:
        holder["state"], holder["key"] = play(holder["state"], holder["key"])
        jax.block_until_ready(holder["state"].current_player)
        return steps * batch

    return run_once


WORKERS: dict[str, Callable[..., Callable[[], int]]] = {
    "ours_cfr": _ours_cfr,
    "openspiel_cfr": _openspiel_cfr,
    "ours_exploitability": _ours_exploitability,
    "openspiel_exploitability": _openspiel_exploitability,
    "ours_aec": _ours_aec,
    "ours_model": _ours_model,
    "pettingzoo_leduc": _pettingzoo_leduc,
    "openspiel_playout": _openspiel_playout,
    "ours_vector": _ours_vector,
    "ours_fused": _ours_fused,
    "ours_tabular": _ours_tabular,
    "pgx_vector": _pgx_vector,
}


def run_worker(name: str, arguments: dict, seconds: float, repeats: int, cores: set[int]) -> dict:
    """Pin to ``cores``, build the contender, run once untimed, then ``repeats`` timed
    slices; the units per second of each slice, wall-clock and CPU time (CPU time summed
    over threads: on several cores, below the wall-clock rate)."""
    os.sched_setaffinity(0, cores)
    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = "1"
    run_once = WORKERS[name](**arguments)
    run_once()
    wall, cpu = [], []
    for _ in range(repeats):
        units = 0
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        while True:  # at least one call a slice, however late the first clock reading
            units += run_once()
            if time.perf_counter() - start_wall >= seconds:
                break
        wall.append(units / (time.perf_counter() - start_wall))
        cpu.append(units / max(time.process_time() - start_cpu, 1e-9))
    return {"wall": wall, "cpu": cpu}


# ---- the plan: rows of (ours, peer) contenders ----------------------------------------------
@dataclass
class Contender:
    worker: str
    arguments: dict[str, Any] = field(default_factory=dict)
    peer: bool = False
    all_cores: bool = False  # on every core of --cores instead of --core


@dataclass
class Row:
    group: str  # cfr, aec, model, vector, fused, tabular
    label: str
    unit: str
    ours: Contender
    peer: Contender
    peer_name: str
    goal: float | None = None  # ours / peer wanted
    results: dict[str, dict | str] = field(default_factory=dict)


def plan(num_cores: int = 2) -> list[Row]:
    rows = [
        Row(
            "cfr",
            "CFR+ iterations/s, Leduc hold'em",
            "iterations/s",
            Contender("ours_cfr", {"game": "leduc_holdem", "params": {}}),
            Contender("openspiel_cfr", {"game": "leduc_poker"}, peer=True),
            "OpenSpiel C++ `CFRPlusSolver`",
            100.0,
        ),
        Row(
            "cfr",
            "CFR+ iterations/s, Liar's Dice (1 die, 295k nodes)",
            "iterations/s",
            Contender("ours_cfr", {"game": "liars_dice", "params": {"num_dice": 1}}),
            Contender("openspiel_cfr", {"game": "liars_dice"}, peer=True),
            "OpenSpiel C++ `CFRPlusSolver`",
            10.0,
        ),
        Row(
            "cfr",
            "CFR+ iterations/s, II-Goofspiel(5)",
            "iterations/s",
            Contender(
                "ours_cfr", {"game": "goofspiel", "params": {"num_cards": 5, "imp_info": True}}
            ),
            Contender(
                "openspiel_cfr",
                {
                    "game": "turn_based_simultaneous_game(game=goofspiel("
                    "num_cards=5,imp_info=True,points_order=ascending))"
                },
                peer=True,
            ),
            "OpenSpiel C++ `CFRPlusSolver`",
            10.0,
        ),
        Row(
            "cfr",
            "exact exploitability of the uniform policy, Leduc hold'em",
            "computations/s",
            Contender("ours_exploitability", {"game": "leduc_holdem"}),
            Contender("openspiel_exploitability", {"game": "leduc_poker"}, peer=True),
            "OpenSpiel C++ `exploitability`",
        ),
        Row(
            "aec",
            "AEC env, Leduc hold'em, a user's loop",
            "games/s",
            Contender("ours_aec", {"game": "leduc_holdem", "params": {}}),
            Contender("pettingzoo_leduc", {}, peer=True),
            "PettingZoo `leduc_holdem_v4`",
            10.0,
        ),
        Row(
            "aec",
            "AEC env, Liar's Dice (1 die), a user's loop",
            "games/s",
            Contender("ours_aec", {"game": "liars_dice", "params": {"num_dice": 1}}),
            Contender("openspiel_playout", {"game": "liars_dice"}, peer=True),
            "OpenSpiel (pyspiel) states",
            0.5,
        ),
        Row(
            "aec",
            "AEC env, Liar's Dice (2 dice), a user's loop",
            "games/s",
            Contender("ours_aec", {"game": "liars_dice", "params": {"num_dice": 2}}),
            Contender(
                "openspiel_playout", {"game": "liars_dice", "params": {"numdice": 2}}, peer=True
            ),
            "OpenSpiel (pyspiel) states",
        ),
        Row(
            "aec",
            "AEC env, II-Goofspiel(13) ascending, a user's loop",
            "games/s",
            Contender(
                "ours_aec", {"game": "goofspiel", "params": {"num_cards": 13, "imp_info": True}}
            ),
            Contender(
                "openspiel_playout",
                {
                    "game": "goofspiel",
                    "params": {"num_cards": 13, "imp_info": True, "points_order": "ascending"},
                },
                peer=True,
            ),
            "OpenSpiel (pyspiel) states",
        ),
        Row(
            "aec",
            "AEC env, Othello 8x8, a user's loop",
            "games/s",
            Contender("ours_aec", {"game": "othello", "params": {"board_size": 8}}),
            Contender("openspiel_playout", {"game": "othello"}, peer=True),
            "OpenSpiel (pyspiel) states",
        ),
    ]
    for label, game, params, spiel_game, spiel_params in MODEL_GAMES:
        rows.append(
            Row(
                "model",
                f"game model, {label}",
                "games/s",
                Contender("ours_model", {"game": game, "params": params}),
                Contender(
                    "openspiel_playout", {"game": spiel_game, "params": spiel_params}, peer=True
                ),
                "OpenSpiel (pyspiel) states",
                1.0,
            )
        )
    for game, params in VECTOR_GAMES.items():
        for batch in VECTOR_BATCHES:
            rows.append(
                Row(
                    "vector",
                    f"{game}, batch {batch:,}",
                    "agent-steps/s",
                    Contender("ours_vector", {"game": game, "params": params, "batch": batch}),
                    Contender("pgx_vector", {"game": game, "batch": batch}, peer=True),
                    "pgx (CPU, jit + vmap, one XLA thread)",
                    10.0 if batch == 1024 else 1.0,
                )
            )
    for game, params in VECTOR_GAMES.items():
        for threads in sorted({1, num_cores}):
            where = "one core" if threads == 1 else f"{threads} cores"
            rows.append(
                Row(
                    "fused",
                    f"{game}, batch 1,024, `play_random`, {where}",
                    "agent-steps/s",
                    Contender(
                        "ours_fused",
                        {"game": game, "params": params, "batch": 1024, "threads": threads},
                        all_cores=threads > 1,
                    ),
                    Contender(
                        "pgx_vector",
                        {"game": game, "batch": 1024, "threads": threads, "steps": FUSED_STEPS},
                        peer=True,
                        all_cores=threads > 1,
                    ),
                    f"pgx (CPU, jit + vmap, {where})",
                    10.0,
                )
            )
    for game in TABULAR_GAMES:
        rows.append(
            Row(
                "tabular",
                f"{game}, batch 1,024, CFR+ average policy, fused `play`",
                "agent-steps/s",
                Contender("ours_tabular", {"game": game, "batch": 1024, "fused": True}),
                Contender("ours_tabular", {"game": game, "batch": 1024, "fused": False}),
                "ours, `env.step(policy(step))` loop",
            )
        )
    return rows


def measure(contender: Contender, args: argparse.Namespace) -> dict | str:
    """Run one contender in its own process; its slices' rates, or why it did not run."""
    python = args.peer_python if contender.peer else sys.executable
    command = [
        python,
        str(Path(__file__).resolve()),
        "--worker",
        contender.worker,
        json.dumps(contender.arguments),
        f"--seconds={args.seconds}",
        f"--repeats={args.repeats}",
        "--cores-for-worker="
        + ",".join(map(str, args.cores if contender.all_cores else [args.core])),
    ]
    environment = dict(os.environ, PYTHONPATH=str(ROOT))
    completed = subprocess.run(command, capture_output=True, text=True, env=environment, cwd=ROOT)
    if completed.returncode != 0:
        lines = completed.stderr.strip().splitlines() or ["no output"]
        return f"{contender.worker} failed under {python}: {lines[-1]}"
    return json.loads(completed.stdout.strip().splitlines()[-1])


# ---- tables and pages -----------------------------------------------------------------------
def _median(result: dict | str | None, clock: str) -> float | None:
    return statistics.median(result[clock]) if isinstance(result, dict) else None


def _number(rate: float) -> str:
    return f"{rate:,.0f}" if rate >= 100 else f"{rate:.3g}"


def _figure(result: dict | str | None, clock: str = "wall") -> str:
    if not isinstance(result, dict):
        return "-"
    rates = result[clock]
    return f"{_number(statistics.median(rates))} ({_number(min(rates))}-{_number(max(rates))})"


def _ratio(row: Row, clock: str) -> str:
    ours, peer = _median(row.results.get("ours"), clock), _median(row.results.get("peer"), clock)
    return f"{ours / peer:.1f}x" if ours and peer else "-"


def _goal(row: Row) -> str:
    ours, peer = _median(row.results.get("ours"), "wall"), _median(row.results.get("peer"), "wall")
    if row.goal is None:
        return ""
    if not (ours and peer):
        return f"{row.goal:g}x"
    return f"{row.goal:g}x: {'met' if ours / peer >= row.goal else 'not met'}"


def table(rows: list[Row]) -> str:
    lines = [
        "| what | unit | ours, median (min-max) | peer | peer, median (min-max) | ours / peer "
        "| ours / peer, CPU time | goal |",
        "|---|---|---:|---|---:|---:|---:|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row.label} | {row.unit} | {_figure(row.results.get('ours'))} | {row.peer_name} "
            f"| {_figure(row.results.get('peer'))} | {_ratio(row, 'wall')} | {_ratio(row, 'cpu')} "
            f"| {_goal(row)} |"
        )
    return "\n".join(lines)


def _machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, {platform.system()}"


def _without_paths(argv: list[str]) -> list[str]:
    """The command line as a page shows it: the peers' Python is this machine's path,
    shown by its option's name instead."""
    shown, hide_next = [], False
    for word in argv:
        if hide_next:
            shown.append("PEER_PYTHON")
        elif word.startswith("--peer-python="):
            shown.append("--peer-python=PEER_PYTHON")
        else:
            shown.append(word)
        hide_next = word == "--peer-python"
    return shown


def provenance(args: argparse.Namespace, loads: tuple[float, float], started: str) -> str:
    command = "python -m benchmarks speed " + " ".join(_without_paths(args.argv))
    return "\n".join(
        [
            "| | |",
            "|---|---|",
            f"| date | {started} |",
            f"| commit | `{checkout_commit()}` |",
            f"| machine | {_machine()}; each contender alone, pinned to core {args.core} "
            f"(multi-core rows: cores {', '.join(map(str, args.cores))}) |",
            f"| load average (1 min) | {loads[0]:.2f} at the start, {loads[1]:.2f} at the end "
            "of the one-core rows (the multi-core rows, run last, load their cores themselves)"
            + (
                " (**above the gates: written with --force, figures not comparable**)"
                if loads[0] > MAX_LOAD_AVERAGE or loads[1] > MAX_LOAD_AVERAGE_RUNNING
                else ""
            )
            + " |",
            f"| command | `{command.strip()}` |",
            f"| repeats | {args.repeats} slice(s) of {args.seconds:g} s per contender; median "
            "(lowest-highest) |",
        ]
    )


def write_block(page: Path, block: str) -> None:
    """Replace the page's generated block, or put it under the page's title."""
    text = page.read_text()
    generated = f"{BEGIN}\n{block}\n{END}"
    if BEGIN in text and END in text:
        before, rest = text.split(BEGIN, 1)
        text = before + generated + rest.split(END, 1)[1]
    else:
        title, _, body = text.partition("\n")
        text = f"{title}\n\n{generated}\n{body}"
    page.write_text(text)


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks speed", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--repeats", type=int, default=5, help="timed slices per contender")
    parser.add_argument("--seconds", type=float, default=1.0, help="length of one slice")
    parser.add_argument("--core", type=int, default=0, help="the CPU core every contender runs on")
    parser.add_argument(
        "--cores",
        type=int,
        nargs="+",
        default=sorted(os.sched_getaffinity(0)),
        help="the cores of the multi-core rows (default: all this process may use)",
    )
    parser.add_argument(
        "--peer-python",
        default=os.environ.get("HIDDENENVS_PEER_PYTHON", sys.executable),
        help="the Python with the peers installed (default $HIDDENENVS_PEER_PYTHON, else this one)",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        choices=[*sorted(PAGE_GROUPS), "tabular"],
        help="groups to run (tabular: printed, never written to a page)",
    )
    parser.add_argument("--force", action="store_true", help="write the pages even above load 1")
    parser.add_argument("--no-write", action="store_true", help="print the tables, write nothing")
    parser.add_argument("--worker", nargs=2, metavar=("NAME", "JSON"), help=argparse.SUPPRESS)
    parser.add_argument("--cores-for-worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        name, arguments = args.worker
        print(
            json.dumps(
                run_worker(
                    name,
                    json.loads(arguments),
                    args.seconds,
                    args.repeats,
                    set(map(int, args.cores_for_worker.split(","))),
                )
            )
        )
        return
    args.argv = argv
    if args.repeats < 1 or args.seconds <= 0:
        parser.error("--repeats must be >= 1 and --seconds > 0")
    if args.core not in os.sched_getaffinity(0):
        parser.error(
            f"--core {args.core} is not among this process's cores {sorted(os.sched_getaffinity(0))}"
        )
    start_load = os.getloadavg()[0]
    writing = not args.no_write and (not args.only or bool(PAGE_GROUPS & set(args.only)))
    if writing and start_load > MAX_LOAD_AVERAGE and not args.force:
        sys.exit(
            f"load average {start_load:.2f} is above {MAX_LOAD_AVERAGE:g}: the figures would not "
            "hold (on a shared machine they move by a factor of three); wait for a quiet "
            "moment, or pass --force (the page will say the load) or --no-write"
        )
    started = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    if not set(args.cores) <= os.sched_getaffinity(0):
        parser.error(f"--cores {args.cores} are not all among this process's cores")
    rows = [row for row in plan(len(args.cores)) if not args.only or row.group in args.only]
    # The multi-core rows load every core of --cores themselves, so they run last and the
    # load that judges the machine is read before them.
    rows.sort(key=lambda row: row.ours.all_cores)
    end_load = None
    for row in rows:
        if row.ours.all_cores and end_load is None:
            end_load = os.getloadavg()[0]
        for side, contender in (("ours", row.ours), ("peer", row.peer)):
            row.results[side] = measure(contender, args)
            if isinstance(row.results[side], str):
                print(f"# {row.label}: {row.results[side]}", file=sys.stderr)
        print(
            f"{row.label}: ours {_figure(row.results['ours'])}, {row.peer_name} "
            f"{_figure(row.results['peer'])}, {_ratio(row, 'wall')} ({_ratio(row, 'cpu')} CPU time)",
            flush=True,
        )
    loads = (start_load, os.getloadavg()[0] if end_load is None else end_load)
    pages = {
        ROOT / "docs/results/benchmarks.md": [
            r for r in rows if r.group in ("cfr", "aec", "model")
        ],
        ROOT / "docs/results/vector.md": [r for r in rows if r.group in ("vector", "fused")],
    }
    if not writing:
        return
    if loads[1] > MAX_LOAD_AVERAGE_RUNNING and not args.force:
        sys.exit(
            f"load average rose to {loads[1]:.2f} during the run: pages not written (--force to write)"
        )
    header = provenance(args, loads, started)
    for page, page_rows in pages.items():
        if page_rows:
            write_block(
                page,
                "## Generated by `python -m benchmarks speed`\n\n"
                + header
                + "\n\n"
                + table(page_rows),
            )
            print(f"wrote {page.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

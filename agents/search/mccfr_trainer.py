"""What the MCCFR solvers share: tables, seeding, the backend choice (the compiled tree
path of :mod:`agents.search.tree_mccfr` or the generic model-driven one), exact
exploitability, the trainer (an iteration-based :class:`agents.base.Learner`, like
:class:`agents.cfr.CFRLearner`) and the ``<name>:<iterations>`` agent specs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents.base import Learner, StepReport
from agents.catalogue import POSITIVE, RANGE, Range
from agents.errors import ConfigError
from agents.search.tables import RegretTables, TablePolicyAgent
from agents.search.tree_mccfr import BACKENDS, InfosetAbstraction, TreeTables, use_tree
from hiddenenvs.analysis import GameTree, TabularPolicy, exploitability
from hiddenenvs.game import Game


def run_until_deadline(iterate: Any, iterations: int, loop: Any, chunks: int = 20) -> int:
    """``iterate(n)`` until ``iterations`` are done, in up to ``chunks`` slices, stopping early
    when the loop's deadline passes (then fewer are done; none done marks the step cut).
    Without a deadline nothing is split: the same iterations run as one call would."""
    if loop is None or getattr(loop, "deadline", None) is None:
        iterate(iterations)
        return iterations
    size = max(1, iterations // chunks)
    done = 0
    while done < iterations and loop.time_left() > 0:
        batch = min(size, iterations - done)
        iterate(batch)
        done += batch
    if done == 0:
        loop.step_cut = True
        return 1  # the step counts nothing: the loop discards a cut step
    return done


class MCCFRSolverBase:
    """Tables, a seeded generator and an iteration counter; subclasses define ``iterate``.

    ``backend``: ``"tree"`` builds the game tree once and iterates in compiled code over
    array tables (:mod:`agents.search.tree_mccfr`); ``"model"`` walks the game model with
    tables keyed by information state (any game, however large); ``"auto"`` (default)
    takes the tree where :func:`agents.search.tree_mccfr.use_tree` finds it enumerable.
    ``abstraction``: an :class:`agents.search.tree_mccfr.InfosetAbstraction` of the game's
    tree (tree backend only): merged information sets share their tables.
    """

    def __init__(
        self,
        game: Game,
        seed: int | None = 0,
        backend: str = "auto",
        abstraction: InfosetAbstraction | None = None,
    ):
        self.game = game
        self.num_players = game.info.num_players
        self.rng = np.random.default_rng(seed)
        self.iteration = 0
        self.compiled = None  # the compiled traversals on the tree backend
        if abstraction is not None and backend == "model":
            raise ValueError(
                "an information-set abstraction needs the tree backend (backend='tree' or 'auto')"
            )
        self.tables: TreeTables | RegretTables
        if abstraction is not None or use_tree(game, backend):
            self.tables = TreeTables(GameTree.build(game), abstraction)
            self.compiled = self.tables.compile(self.rng)
        else:
            self.tables = RegretTables(game.info.num_distinct_actions)

    @property
    def backend(self) -> str:
        return "tree" if self.compiled is not None else "model"

    def iterate(self, iterations: int = 1) -> None:
        raise NotImplementedError

    def average_table(self) -> dict[tuple, np.ndarray]:
        return self.tables.average_table()

    def average_policy(self, tree: GameTree | None = None) -> TabularPolicy:
        """The average strategy on the game's enumerated tree (unvisited sets: uniform)."""
        return self.tables.tabular_policy(tree or GameTree.build(self.game))

    def exploitability(self) -> float:
        tree = GameTree.build(self.game)
        return float(exploitability(tree, self.average_policy(tree)))

    def state_dict(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "iteration": self.iteration,
            "rng": self.rng.bit_generator.state,
            "tables": self.tables.state_dict(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state.get("backend", "model") != self.backend:
            raise ValueError(
                f"checkpoint was written by the {state.get('backend', 'model')!r} MCCFR backend; "
                f"this solver runs {self.backend!r} (set trainer.params.backend to match)"
            )
        self.iteration = int(state["iteration"])
        self.rng.bit_generator.state = state["rng"]
        self.tables.load_state_dict(state["tables"])


@dataclass
class MCCFRConfig:
    """MCCFR trainer settings."""

    # MCCFR iterations (one traversal per player each) per loop step
    iterations_per_step: int = field(default=100, metadata={RANGE: POSITIVE})
    # outcome sampling only: epsilon of the update player's sampling policy
    exploration: float = field(default=0.6, metadata={RANGE: Range(0, 1, low_open=True)})
    backend: str = "auto"  # "tree" (compiled, enumerable games), "model" (any game) or "auto"

    def __post_init__(self):
        from agents.config import check_field_ranges

        check_field_ranges(self, "trainer.params")
        if self.backend not in BACKENDS:
            raise ConfigError(
                f"trainer.params.backend must be one of {BACKENDS}, got {self.backend!r}"
            )


class MCCFRLearner(Learner):
    """An MCCFR solver as a trainer: each loop step runs ``iterations_per_step``
    iterations (budgets and schedules count MCCFR iterations, as for CFR); the
    evaluation policy is the average strategy."""

    CONFIG_CLASS = MCCFRConfig
    SOLVER: type = MCCFRSolverBase

    def __init__(self, game: Game, config: MCCFRConfig, seed: int):
        super().__init__(game, config, seed)
        self.solver = self.SOLVER(game, seed=seed, **self._solver_options(config))

    def _solver_options(self, config: MCCFRConfig) -> dict[str, Any]:
        return {"backend": config.backend}

    def step(self, loop: Any) -> StepReport:
        done = run_until_deadline(self.solver.iterate, self.config.iterations_per_step, loop)
        return StepReport(
            episodes=0, iterations=done, metrics={"infosets": float(len(self.solver.tables))}
        )

    def evaluation_agent(self, player: int) -> TablePolicyAgent:
        return TablePolicyAgent(self.game, self.solver.average_table(), player)

    def evaluation_policy(self, tree: GameTree) -> TabularPolicy:
        return self.solver.average_policy(tree)

    def state_dict(self) -> dict[str, Any]:
        return self.solver.state_dict()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.solver.load_state_dict(state)


def table_agent_spec(
    name: str, solver_class: type, argument: str, game: Game, player: int, seed: int | None
) -> TablePolicyAgent:
    """The agent of spec ``<name>:<iterations>``: the solver's average strategy for ``player``."""
    if not argument.isdigit() or int(argument) < 1:
        raise ValueError(f"agent spec '{name}:{argument}': iterations must be a positive integer")
    solver = solver_class(game, seed=0)
    solver.iterate(int(argument))
    return TablePolicyAgent(game, solver.average_table(), player, seed)

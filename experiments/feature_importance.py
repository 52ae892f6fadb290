"""Feature importance by state-space abstraction on Goofspiel(5) (Fujii, "Evaluation of Feature
Importance in Game States"; ``trainers.md`` section 7), with the measures the paper leaves out.

    python -m experiments.feature_importance                        # the full study: 85 cells, 8-10 min on 2 idle cores
    python -m experiments.feature_importance --num-cards 4 --iterations 20000   # about 20 s

The method (Fujii, section 3). Player 0's information sets are described by features:
V0, its own remaining hand (what its legal actions are; always kept), and

==== ==========================================================================
C    the current point card
O    the opponent's remaining hand
D    the point cards still in the deck (not yet revealed)
P    the score difference, player 0's points minus player 1's
==== ==========================================================================

For a subset S of {C, O, D, P}, player 0's information sets with equal (V0, S) are merged
(:class:`agents.search.tree_mccfr.InfosetAbstraction`): player 0 learns one strategy per
abstract set, knowing only its hand and the features in S. Player 1 is not abstracted.
Both learn together with external-sampling MCCFR (Lanctot et al. 2009; the compiled tree
path of :mod:`agents.search.external_sampling_mccfr`), and the importance of S is read off
how close the result gets to the unabstracted game's equilibrium. With one player
abstracted, CFR converges to that player's least exploitable abstract strategy (Waugh et
al. 2009 and Johanson et al. 2012, cited by Fujii, section 2.5) when the abstraction has
perfect recall; these abstractions forget (a merged set joins histories with different
own bids), so here that is an empirical question, which the abstracted player's own
exploitability answers.

The game (section 4.1): Goofspiel with N = 5 cards, a shuffled point deck, both bids
revealed after each round, +1 / -1 / 0 for a win / loss / tie (``goofspiel(num_cards=5,
points_order="random", returns="win_loss")``). Even all four features do not identify
an information set: they forget which card won which round (Fujii's footnote 2: such
sets are "essentially the same game state"), so C+O+D+P is still an abstraction. The
control ``unabstracted`` (run by default beside the 16 subsets) leaves player 0 its whole
information state: plain ES-MCCFR, the "unabstracted player" the paper compares against.

The unabstracted baseline, player 1, has perfect recall: our Goofspiel's information
state lists every point card and both bids, round by round. OpenSpiel's Goofspiel (the
paper's environment) keeps the point-card sequence, both hands, the win sequence and the
points, so it forgets which card it bid in which round; ``--baseline openspiel`` gives
player 1 that information state (as an abstraction of the tree) to run the study as the
paper did.

Measures, at log-spaced checkpoints of each (subset, seed) cell, all exact on the tree
(:mod:`hiddenenvs.analysis`) for the average profile sigma = (sigma_0, sigma_1):

``exploitability``            the paper's eps(sigma) = (b_0(sigma_1) + b_1(sigma_0)) / 2 (section 2.2)
``abstracted_exploitability`` what sigma_0 alone gives away: b_1(sigma_0) minus the game value 0;
                              the paper's eps averages it with the learner's own error
``baseline_exploitability``   b_0(sigma_1): the same for the unabstracted player
``abstracted_return``         u_0(sigma): the abstracted player's expected return against the
                              unabstracted one it learned with (the paper's figures 2, 4, 6)

Outputs in ``--output``: ``results.csv`` (one row per cell and checkpoint), ``summary.csv``
(per subset at the last checkpoint: means and 95% t-intervals over seeds),
``config.json``, and the figures ``exploitability.png``, ``abstracted_exploitability.png``,
``abstracted_return.png`` (against iterations, grouped as the paper's figures 1-6) and
``final.png``. Files are replaced atomically; a rerun skips the finished cells (a cell's
rows are written when it finishes) and refuses an output directory made with other
settings.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import itertools
import json
import multiprocessing
import os
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

FEATURES = ("C", "O", "D", "P")
NO_FEATURES = "none"  # the label of the empty subset: the hand alone
UNABSTRACTED = "unabstracted"  # the control: player 0 keeps its whole information state too
BASELINES = ("perfect_recall", "openspiel")
RESULT_COLUMNS = (
    "features",
    "seed",
    "iterations",
    "exploitability",
    "abstracted_exploitability",
    "baseline_exploitability",
    "abstracted_return",
    "abstract_infosets",
    "seconds",
)
MEASURES = ("exploitability", "abstracted_exploitability", "abstracted_return")
ABSTRACTED_PLAYER = 0


def subset_label(features: Iterable[str]) -> str:
    """``("C", "O")`` -> ``"C+O"``; the empty subset -> ``"none"``."""
    return "+".join(features) or NO_FEATURES


def all_subsets() -> list[str]:
    """The 16 subsets of {C, O, D, P}, by size, as labels."""
    return [
        subset_label(combo)
        for size in range(len(FEATURES) + 1)
        for combo in itertools.combinations(FEATURES, size)
    ]


def study_labels() -> list[str]:
    """What the study runs by default: the 16 subsets and the unabstracted control."""
    return [*all_subsets(), UNABSTRACTED]


def parse_subset(label: str) -> tuple[str, ...]:
    """``"C+O"`` -> ``("C", "O")`` in canonical order (the control ``"unabstracted"`` -> all
    four, for grouping); a clear error for unknown features."""
    if label == NO_FEATURES:
        return ()
    if label == UNABSTRACTED:
        return FEATURES
    parts = label.split("+")
    unknown = [part for part in parts if part not in FEATURES]
    if unknown or len(set(parts)) != len(parts):
        raise ValueError(
            f"feature subset {label!r}: use features from {FEATURES} joined by '+', "
            f"each at most once, or {NO_FEATURES!r} or {UNABSTRACTED!r}"
        )
    return tuple(feature for feature in FEATURES if feature in parts)


@dataclasses.dataclass(frozen=True)
class StudyConfig:
    """The study's settings; ``config.json`` in the output directory records them."""

    num_cards: int = 5
    iterations: int = 50_000  # ES-MCCFR iterations (one traversal per player each) per cell
    checkpoints: int = 6  # log-spaced measurement points, the last at ``iterations``
    baseline: str = "perfect_recall"  # player 1's information state

    def __post_init__(self):
        if self.num_cards < 3:
            raise ValueError(f"num_cards must be >= 3 (two decided rounds), got {self.num_cards}")
        if self.iterations < 1 or self.checkpoints < 1:
            raise ValueError(
                f"iterations and checkpoints must be >= 1, got {self.iterations} and {self.checkpoints}"
            )
        if self.baseline not in BASELINES:
            raise ValueError(f"baseline must be one of {BASELINES}, got {self.baseline!r}")

    def checkpoint_iterations(self) -> list[int]:
        """Log-spaced from iterations / 200 to iterations, rounded to two significant digits."""
        first = max(1, self.iterations // 200)
        points = (
            np.geomspace(first, self.iterations, self.checkpoints)
            if self.checkpoints > 1
            else [self.iterations]
        )
        rounded = {int(float(f"{point:.2g}")) for point in points[:-1]} | {self.iterations}
        return sorted(point for point in rounded if 1 <= point <= self.iterations)


# ---- features and abstractions ----------------------------------------------------------------
FEATURE_COLUMN = {"C": 1, "O": 2, "D": 3, "P": 4}  # column 0 is the own hand, always kept


def load_goofspiel(num_cards: int):
    import hiddenenvs

    return hiddenenvs.load_game(
        "goofspiel", num_cards=num_cards, points_order="random", returns="win_loss"
    )


def _rounds(key: tuple) -> tuple[list[int], list[tuple[int, int]]]:
    """The point cards revealed (the current one last) and the bids of each finished round."""
    return [entry[0] for entry in key[0::2]], [entry[0] for entry in key[1::2]]


def feature_columns(tree, player: int) -> tuple[np.ndarray, np.ndarray]:
    """``player``'s information sets of a Goofspiel tree and, per set, its features as
    integers: own hand, C, O, D (card sets as bit masks, bit v for card v) and P."""
    game = tree.game
    if game.NAME != "goofspiel" or game.imp_info or game.fixed_points is not None:
        raise ValueError(
            f"feature importance needs Goofspiel with a random deck and revealed bids, got {game.spec}"
        )
    every_card = (1 << (game.num_cards + 1)) - 2  # bits 1..N
    infosets = np.flatnonzero(tree.infoset_player == player)
    columns = np.empty((len(infosets), 5), dtype=np.int64)
    for row, infoset in enumerate(infosets):
        points, bids = _rounds(tree.infoset_keys[infoset][1])
        own_bids = opponent_bids = revealed = score_difference = 0
        for point, pair in zip(points, bids):
            mine, theirs = pair[player], pair[1 - player]
            own_bids |= 1 << mine
            opponent_bids |= 1 << theirs
            score_difference += point * ((mine > theirs) - (mine < theirs))
        for point in points:
            revealed |= 1 << point
        columns[row] = (
            every_card ^ own_bids,
            points[-1],
            every_card ^ opponent_bids,
            every_card ^ revealed,
            score_difference,
        )
    return infosets, columns


def openspiel_information_state(key: tuple, player: int) -> tuple:
    """What OpenSpiel's Goofspiel information state holds (point-card sequence, both hands,
    win sequence; its points follow from these): bid order is forgotten."""
    points, bids = _rounds(key)
    own = tuple(sorted(pair[player] for pair in bids))
    opponent = tuple(sorted(pair[1 - player] for pair in bids))
    wins = tuple((b0 > b1) - (b0 < b1) for b0, b1 in bids)
    return tuple(points), own, opponent, wins


class StudyAbstractions:
    """The abstraction of each feature subset on one tree (features computed once)."""

    def __init__(self, tree, baseline: str, features: tuple[np.ndarray, np.ndarray] | None = None):
        self.tree = tree
        self.infosets, self.columns = (
            features if features is not None else feature_columns(tree, ABSTRACTED_PLAYER)
        )
        # The other player's sets: themselves (perfect recall) or OpenSpiel's information state.
        self.other_ids = np.arange(tree.num_infosets)
        if baseline == "openspiel":
            other = 1 - ABSTRACTED_PLAYER
            ids: dict[tuple, int] = {}
            for infoset in np.flatnonzero(tree.infoset_player == other):
                key = openspiel_information_state(tree.infoset_keys[infoset][1], other)
                self.other_ids[infoset] = ids.setdefault(key, infoset)

    def abstraction(self, label: str):
        """The :class:`InfosetAbstraction` keeping the own hand and the features of ``label``
        (nothing merged for player 0 with ``"unabstracted"``)."""
        from agents.search.tree_mccfr import InfosetAbstraction

        if label == UNABSTRACTED:
            return InfosetAbstraction(
                self.tree, self.other_ids
            )  # player 0's sets are their own ids there
        kept = [0] + [FEATURE_COLUMN[feature] for feature in parse_subset(label)]
        _, ids = np.unique(self.columns[:, kept], axis=0, return_inverse=True)
        abstract = self.other_ids.copy()
        abstract[self.infosets] = self.tree.num_infosets + ids.reshape(
            -1
        )  # apart from every other id
        return InfosetAbstraction(self.tree, abstract)


# ---- one cell ----------------------------------------------------------------------------------
def measure(tree, policy) -> dict[str, float]:
    """The measures of the module docstring for the profile ``policy`` (exact, on the tree)."""
    from hiddenenvs.analysis import best_response, expected_returns

    values = expected_returns(tree, policy)
    responses = [best_response(tree, policy, player)[0] for player in range(tree.num_players)]
    other = 1 - ABSTRACTED_PLAYER
    # Zero-sum with game value 0 (Goofspiel is symmetric): what a player's strategy gives
    # away is the opponent's best-response value against it.
    return {
        "exploitability": float(sum(responses) - values.sum()) / 2,
        "abstracted_exploitability": float(responses[other]),
        "baseline_exploitability": float(responses[ABSTRACTED_PLAYER]),
        "abstracted_return": float(values[ABSTRACTED_PLAYER]),
    }


def run_cell(
    tree, abstractions: StudyAbstractions, config: StudyConfig, label: str, seed: int
) -> list[dict]:
    """ES-MCCFR with subset ``label``'s abstraction from ``seed``; one row per checkpoint."""
    from agents.search.external_sampling_mccfr import ExternalSamplingMCCFR

    started = time.perf_counter()
    abstraction = abstractions.abstraction(label)
    solver = ExternalSamplingMCCFR(tree.game, seed=seed, backend="tree", abstraction=abstraction)
    abstract_infosets = abstraction.counts_by_player()[ABSTRACTED_PLAYER]
    rows = []
    for checkpoint in config.checkpoint_iterations():
        solver.iterate(checkpoint - solver.iteration)
        rows.append(
            {
                "features": label,
                "seed": seed,
                "iterations": checkpoint,
                **measure(tree, solver.average_policy(tree)),
                "abstract_infosets": abstract_infosets,
                "seconds": time.perf_counter() - started,
            }
        )
    return rows


# Per worker process: the tree and the features, built once for all its cells.
_WORKER: dict = {}


def _prepare_worker(config: StudyConfig) -> None:
    from hiddenenvs.analysis import GameTree

    tree = GameTree.build(load_goofspiel(config.num_cards))
    _WORKER.update(config=config, tree=tree, abstractions=StudyAbstractions(tree, config.baseline))


def _run_worker_cell(cell: tuple[str, int]) -> list[dict]:
    return run_cell(_WORKER["tree"], _WORKER["abstractions"], _WORKER["config"], *cell)


# ---- files ---------------------------------------------------------------------------------------
def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory and a rename."""
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(descriptor, "w", newline="") as handle:
            handle.write(text)
        os.chmod(temporary, 0o644)  # mkstemp's 0600 would make results private to their writer
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def csv_text(rows: Sequence[dict], columns: Sequence[str]) -> str:
    import io

    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(
            {
                column: (f"{row[column]:.6g}" if isinstance(row[column], float) else row[column])
                for column in columns
            }
        )
    return buffer.getvalue()


def read_results(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with open(path, newline="") as handle:
        reader = csv.DictReader(handle)
        if tuple(reader.fieldnames or ()) != RESULT_COLUMNS:
            raise ValueError(
                f"{path}: expected the columns {RESULT_COLUMNS}, found {reader.fieldnames}; "
                "give another --output"
            )
        rows = []
        for line, raw in enumerate(reader, start=2):
            try:
                row = {
                    "features": raw["features"],
                    "seed": int(raw["seed"]),
                    "iterations": int(raw["iterations"]),
                    "abstract_infosets": int(raw["abstract_infosets"]),
                }
                row.update(
                    {column: float(raw[column]) for column in RESULT_COLUMNS if column not in row}
                )
            except (TypeError, ValueError) as error:
                raise ValueError(f"{path}, line {line}: unreadable row ({error})") from error
            rows.append(row)
        return rows


def check_config(output: Path, config: StudyConfig) -> None:
    """Record ``config`` in ``output/config.json``, or refuse one made with other settings."""
    path = output / "config.json"
    recorded = dataclasses.asdict(config)
    if path.exists():
        found = json.loads(path.read_text())
        if found != recorded:
            raise ValueError(
                f"{output} holds results made with {found}, not {recorded}; "
                "give another --output or the same settings"
            )
        return
    write_atomically(path, json.dumps(recorded, indent=2) + "\n")


# ---- the study -----------------------------------------------------------------------------------
def run_study(
    config: StudyConfig,
    output: Path,
    subsets: Sequence[str],
    seeds: Sequence[int],
    workers: int = 1,
    progress: bool = True,
) -> list[dict]:
    """Run every unfinished (subset, seed) cell, rewriting ``results.csv`` as each finishes,
    then write ``summary.csv`` for these subsets and seeds; returns their rows (earlier
    runs' included). :func:`plot_study` draws the figures."""
    from tqdm import tqdm

    for label in subsets:
        parse_subset(label)
    output.mkdir(parents=True, exist_ok=True)
    check_config(output, config)
    results_path = output / "results.csv"
    last = config.checkpoint_iterations()[-1]
    rows = read_results(results_path)
    finished = {(row["features"], row["seed"]) for row in rows if row["iterations"] == last}
    rows = [
        row for row in rows if (row["features"], row["seed"]) in finished
    ]  # drop what a crash left
    # Seed by seed, so that a study stopped early has every subset with the same seeds.
    cells = [(label, seed) for seed in seeds for label in subsets if (label, seed) not in finished]

    def record(cell_rows: list[dict]) -> None:
        rows.extend(cell_rows)
        rows.sort(key=lambda row: (row["features"], row["seed"], row["iterations"]))
        write_atomically(results_path, csv_text(rows, RESULT_COLUMNS))
        bar.update()

    with tqdm(
        total=len(cells), desc="feature-importance cells", unit="cell", disable=not progress
    ) as bar:
        if cells and workers > 1:
            context = multiprocessing.get_context("spawn")  # no fork of a parent holding threads
            with context.Pool(min(workers, len(cells)), _prepare_worker, (config,)) as pool:
                for cell_rows in pool.imap_unordered(_run_worker_cell, cells):
                    record(cell_rows)
        elif cells:
            _prepare_worker(config)
            for cell in cells:
                record(_run_worker_cell(cell))
    wanted = {(label, seed) for label in subsets for seed in seeds}
    selected = [row for row in rows if (row["features"], row["seed"]) in wanted]
    summary = summarise(selected, subsets, last)
    write_atomically(
        output / "summary.csv", csv_text(summary, list(summary[0]) if summary else ["features"])
    )
    return selected


def interval(values: Sequence[float]) -> tuple[float, float]:
    """Mean and half-width of the 95% t-interval (0 for a single value)."""
    from scipy import stats

    values = np.asarray(values, dtype=np.float64)
    if len(values) < 2:
        return float(values.mean()), 0.0
    half = stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values))
    return float(values.mean()), float(half)


def summarise(rows: Sequence[dict], subsets: Sequence[str], last: int) -> list[dict]:
    """Per subset at the last checkpoint: abstract-set count, seeds, mean and 95% half-width
    of each measure."""
    summary = []
    for label in subsets:
        final = [row for row in rows if row["features"] == label and row["iterations"] == last]
        if not final:
            continue
        entry = {
            "features": label,
            "abstract_infosets": final[0]["abstract_infosets"],
            "seeds": len(final),
        }
        for name in (*MEASURES, "baseline_exploitability"):
            entry[name], entry[f"{name}_ci95"] = interval([row[name] for row in final])
        entry["seconds"] = float(np.mean([row["seconds"] for row in final]))
        summary.append(entry)
    return summary


def markdown_table(summary: Sequence[dict]) -> str:
    """The summary as the README's table, sorted by the abstracted player's exploitability."""
    lines = [
        "| features | player-0 abstract sets | eps (paper) | eps of player 0 alone | "
        "player 0's return vs player 1 |",
        "|---|---:|---:|---:|---:|",
    ]
    for entry in sorted(summary, key=lambda entry: entry["abstracted_exploitability"]):
        cells = [f"{entry[name]:.3f} ± {entry[name + '_ci95']:.3f}" for name in MEASURES]
        lines.append(
            f"| {entry['features']} | {entry['abstract_infosets']:,} | " + " | ".join(cells) + " |"
        )
    return "\n".join(lines)


# ---- figures ---------------------------------------------------------------------------------------
# The paper's figure groups: the richest subsets (figs. 1-2), single features (3-4), pairs (5-6).
# C+O+D+P and the unabstracted control are drawn in every group, for reference.
def figure_groups(subsets: Sequence[str]) -> list[tuple[str, list[str]]]:
    references = [label for label in (subset_label(FEATURES), UNABSTRACTED) if label in subsets]
    sizes = {label: len(parse_subset(label)) for label in subsets if label not in references}
    groups = [
        ("three or four features", [s for s in sizes if sizes[s] >= 3]),
        ("one feature or none", [s for s in sizes if sizes[s] <= 1]),
        ("two features", [s for s in sizes if sizes[s] == 2]),
    ]
    return [(title, members + references) for title, members in groups if members]


MEASURE_TITLES = {
    "exploitability": "exploitability of the profile (the paper's)",
    "abstracted_exploitability": "exploitability of the abstracted player alone",
    "abstracted_return": "abstracted player's expected return vs the unabstracted one",
}


def plot_study(rows: Sequence[dict], subsets: Sequence[str], output: Path) -> None:
    """``<measure>.png`` per measure (mean and 95% band over seeds against iterations, one
    panel per group) and ``final.png`` (every subset at the last checkpoint)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not rows:
        return
    last = max(row["iterations"] for row in rows)
    summary = summarise(rows, subsets, last)
    groups = figure_groups(subsets)
    colours = {label: plt.cm.tab20(index % 20) for index, label in enumerate(study_labels())}
    for name in MEASURES:
        figure, axes = plt.subplots(1, len(groups), figsize=(5.2 * len(groups), 4.2), squeeze=False)
        for axis, (title, members) in zip(axes[0], groups):
            for label in members:
                points = sorted({row["iterations"] for row in rows if row["features"] == label})
                stats = [
                    interval(
                        [
                            row[name]
                            for row in rows
                            if row["features"] == label and row["iterations"] == x
                        ]
                    )
                    for x in points
                ]
                mean, half = np.array(stats).T
                axis.plot(points, mean, label=label, color=colours.get(label), marker=".")
                axis.fill_between(
                    points, mean - half, mean + half, color=colours.get(label), alpha=0.2
                )
            axis.set_xscale("log")
            if name != "abstracted_return":
                axis.set_yscale("log")
            else:
                axis.axhline(0.0, color="grey", linewidth=0.8)
            axis.set_title(title)
            axis.set_xlabel("ES-MCCFR iterations")
            axis.grid(True, which="both", alpha=0.3)
            axis.legend(fontsize=8)
        axes[0][0].set_ylabel(MEASURE_TITLES[name])
        figure.tight_layout()
        _save(figure, output / f"{name}.png")
        plt.close(figure)

    ordered = sorted(summary, key=lambda entry: entry["abstracted_exploitability"], reverse=True)
    figure, axes = plt.subplots(
        1, len(MEASURES), figsize=(15, 0.35 * len(ordered) + 1.5), sharey=True
    )
    positions = np.arange(len(ordered))
    for axis, name in zip(axes, MEASURES):
        axis.barh(
            positions,
            [entry[name] for entry in ordered],
            xerr=[entry[f"{name}_ci95"] for entry in ordered],
            color=[colours.get(entry["features"]) for entry in ordered],
            capsize=2,
        )
        axis.set_title(MEASURE_TITLES[name], fontsize=9)
        axis.grid(True, axis="x", alpha=0.3)
    axes[0].set_yticks(positions, [entry["features"] for entry in ordered])
    figure.suptitle(f"after {last:,} iterations: mean and 95% interval over seeds")
    figure.tight_layout()
    _save(figure, output / "final.png")
    plt.close(figure)


def _save(figure, path: Path) -> None:
    """Save a figure atomically (render to a temporary file, then rename)."""
    descriptor, temporary = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.", suffix=".png"
    )
    os.close(descriptor)
    try:
        figure.savefig(temporary, dpi=80)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


# ---- command line ------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    defaults = StudyConfig()
    parser.add_argument(
        "--num-cards", type=int, default=defaults.num_cards, help="Goofspiel's N (default 5)"
    )
    parser.add_argument(
        "--iterations",
        type=int,
        default=defaults.iterations,
        help=f"ES-MCCFR iterations per cell (default {defaults.iterations:,})",
    )
    parser.add_argument(
        "--checkpoints",
        type=int,
        default=defaults.checkpoints,
        help=f"log-spaced measurement points per cell (default {defaults.checkpoints})",
    )
    parser.add_argument(
        "--baseline",
        choices=BASELINES,
        default=defaults.baseline,
        help="player 1's information state: perfect recall (default) or OpenSpiel's",
    )
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0..K-1 per subset (default 5)")
    parser.add_argument(
        "--subsets",
        default=",".join(study_labels()),
        help="comma-separated subsets such as C+O,none,unabstracted (default: all 16 and the "
        "unabstracted control)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="processes, one cell each at a time (default 2; each holds the tree, 2 GB for N=5)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=Path("results/feature_importance"),
        help="directory of the CSVs and figures (default results/feature_importance)",
    )
    args = parser.parse_args(argv)
    if args.seeds < 1 or args.workers < 1:
        parser.error("--seeds and --workers must be >= 1")
    try:
        config = StudyConfig(args.num_cards, args.iterations, args.checkpoints, args.baseline)
        subsets = [label.strip() for label in args.subsets.split(",") if label.strip()]
        for label in subsets:
            parse_subset(label)
    except ValueError as error:
        parser.error(str(error))
    started = time.perf_counter()
    rows = run_study(config, args.output, subsets, range(args.seeds), workers=args.workers)
    plot_study(rows, subsets, args.output)
    summary = summarise(rows, subsets, config.checkpoint_iterations()[-1])
    print(markdown_table(summary))
    print(
        f"\n{len(summary)} subsets x {args.seeds} seeds in {args.output}; "
        f"this run took {time.perf_counter() - started:.0f} s"
    )


if __name__ == "__main__":
    main()

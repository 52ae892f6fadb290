"""Training episodes per second through the common loop, with and without the vector env.

Runs :func:`agents.loop.train` twice on the same config (by default
``configs/nfsp_leduc.yaml``, NFSP on Leduc hold'em), one after the other, each with
``budget.seconds`` wall seconds (60 by default) into a temporary output directory:
first with the switch off (PettingZoo AEC envs), then on (one :mod:`hiddenenvs.vector`
env). The switch is ``vector_self_play`` (the loop's self-play: NFSP), or
``trainer.params.vector_envs`` for ANFSP (its actors' games). Everything else is the
config's: gradient steps, evaluations, checkpoints. It prints, per mode, the episodes
trained, the run's wall seconds and episodes per wall second, and the last exact
exploitability the run logged.

    python benchmarks/bench_vector_self_play.py [--config configs/nfsp_leduc.yaml] [--seconds 60]
    python benchmarks/bench_vector_self_play.py --config configs/anfsp_leduc.yaml

The two runs are sequential, not interleaved: load from other jobs on the machine falls
on each differently, so compare numbers from a quiet machine (or repeat).
"""

from __future__ import annotations

import argparse
import platform
import tempfile
from pathlib import Path

from agents.config import load_config
from agents.loop import train

REPO = Path(__file__).resolve().parent.parent


def switch_key(config_path: Path) -> str:
    """The setting that plays the config's trainer's games through the vector env."""
    trainer = load_config(config_path, ["output_dir=unused"]).trainer.name
    return "trainer.params.vector_envs" if trainer == "anfsp" else "vector_self_play"


def run(config_path: Path, seconds: float, vector: bool, output_dir: Path) -> dict:
    overrides = [
        f"budget.seconds={seconds}",
        "progress_bar=false",
        f"output_dir={output_dir}",
        f"{switch_key(config_path)}={str(vector).lower()}",
    ]
    result = train(load_config(config_path, overrides))
    last = result["last_evaluation"] or {}
    return {
        "episodes": result["episodes"],
        "wall_seconds": result["wall_seconds"],
        "exploitability": last.get("exploitability"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=REPO / "configs" / "nfsp_leduc.yaml")
    parser.add_argument("--seconds", type=float, default=60.0, help="budget.seconds of each run")
    args = parser.parse_args()
    print(
        f"{args.config.name}, budget.seconds={args.seconds:g} per run, {platform.processor() or platform.machine()}"
    )
    print(
        f"{switch_key(args.config):>26} {'episodes':>9} {'wall s':>7} {'episodes/s':>11} {'exploitability':>15}"
    )
    with tempfile.TemporaryDirectory() as scratch:
        for vector in (False, True):
            row = run(args.config, args.seconds, vector, Path(scratch) / str(vector))
            exploitability = (
                "-" if row["exploitability"] is None else f"{row['exploitability']:.4f}"
            )
            print(
                f"{str(vector).lower():>26} {row['episodes']:>9} {row['wall_seconds']:>7.1f} "
                f"{row['episodes'] / row['wall_seconds']:>11.0f} {exploitability:>15}",
                flush=True,
            )


if __name__ == "__main__":
    main()

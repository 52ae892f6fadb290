"""Record one combat episode as an animated GIF or a PNG strip of frames::

    python -m hiddenenvs.envs.combat.record --map small --attackers doctrine \\
        --defenders random --seed 0 --out episode.gif
    python -m hiddenenvs.envs.combat.record --mode fighter --out strip.png --frames 8

Teams play scripted policies (``doctrine`` or ``random``,
:mod:`hiddenenvs.envs.combat.doctrine`). A ``.gif`` output gets every recorded frame; a
``.png`` output gets ``--frames`` frames evenly spread over the episode, side by side.
``--visibility attackers`` darkens what the attackers do not see.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

import hiddenenvs
from hiddenenvs.envs.combat.doctrine import POLICIES
from hiddenenvs.envs.combat.maps import TEAMS


def record_frames(
    game, attackers: str, defenders: str, seed: int, every: int = 1
) -> list[np.ndarray]:
    """RGB frames of one episode: the start, then every ``every``-th transition, and the end."""
    state = game.new_initial_state(seed=seed)
    rng = np.random.default_rng(seed)
    team_size = game.team_size
    policy_names = (attackers, defenders)
    frames = [_captioned(state)]
    step = 0
    while not state.is_terminal():
        joint = [
            POLICIES[policy_names[p if game.mode == "commander" else p // team_size]](state, p, rng)
            for p in range(game.info.num_players)
        ]
        state.apply_actions(joint)
        step += 1
        if step % every == 0 or state.is_terminal():
            frames.append(_captioned(state))
    return frames


def _captioned(state) -> np.ndarray:
    image = Image.fromarray(state.render_rgb())
    attackers, defenders = state.battle.alive_counts()
    caption = f"tick {state.battle.tick}  attackers {attackers}  defenders {defenders}"
    if state.is_terminal():
        winner = state.battle.winner()
        caption += "  draw" if winner == -1 else f"  {TEAMS[winner]} win"
    ImageDraw.Draw(image).text((6, 4), caption, fill=(255, 255, 255))
    return np.asarray(image)


def save(frames: list[np.ndarray], path: Path, strip_frames: int, frame_seconds: float) -> None:
    if path.suffix == ".gif":
        images = [Image.fromarray(frame) for frame in frames]
        images[0].save(
            path,
            save_all=True,
            append_images=images[1:],
            duration=int(frame_seconds * 1000),
            loop=0,
        )
    elif path.suffix == ".png":
        picks = np.unique(
            np.linspace(0, len(frames) - 1, min(strip_frames, len(frames))).round().astype(int)
        )
        Image.fromarray(np.concatenate([frames[i] for i in picks], axis=1)).save(path)
    else:
        raise ValueError(f"--out must end in .gif or .png, got {path}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("commander", "fighter"), default="commander")
    parser.add_argument("--map", default="small", help="'default', 'small' or a .json map file")
    parser.add_argument("--attackers", choices=sorted(POLICIES), default="doctrine")
    parser.add_argument("--defenders", choices=sorted(POLICIES), default="random")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--visibility", choices=("none", "attackers", "defenders"), default="none")
    parser.add_argument("--every", type=int, default=1, help="record every n-th transition")
    parser.add_argument("--frames", type=int, default=8, help="frames in a PNG strip")
    parser.add_argument("--frame-seconds", type=float, default=0.15, help="GIF frame duration")
    parser.add_argument("--out", type=Path, default=Path("combat_episode.gif"))
    args = parser.parse_args(argv)
    game = hiddenenvs.load_game(
        "combat", mode=args.mode, map=args.map, render_visibility=args.visibility
    )
    frames = record_frames(
        game, args.attackers, args.defenders, args.seed, every=max(1, args.every)
    )
    save(frames, args.out, args.frames, args.frame_seconds)
    print(f"wrote {args.out}: {len(frames)} frames, {game}")


if __name__ == "__main__":
    main()

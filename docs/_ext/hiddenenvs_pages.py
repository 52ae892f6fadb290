"""Pages generated from the code at build time: one per env, one per trainer, the API reference.

Sphinx calls :func:`generate` when the builder starts, before it reads any source, so the
pages written here are read like the hand-written ones. Everything comes from the code:

- env pages from :data:`hiddenenvs.registry.REGISTRY` (players, actions, tensors,
  parameters with their defaults), the game class's :class:`~hiddenenvs.game.GameInfo`,
  its module docstring (rules, spaces, facts such as the game value), a tree size counted
  on the spot for games that enumerate in under ``TREE_NODE_CAP`` nodes, a PNG drawn by
  the env's ``rgb_array`` renderer where it has one, and the shipped configs that train on it;
- trainer pages from ``agents.catalogue.TRAINERS``: the module docstring (paper, equations,
  how the code maps to them), the config reference read from the trainer's
  ``CONFIG_CLASS`` dataclass (field, type, default, and the comment on the field's line),
  the shipped configs, the capability table when ``agents.capabilities`` exists, and the
  hand-written notes of ``docs/trainer_notes/<page>.md`` (deviations, results);
- API pages from walking the ``hiddenenvs`` and ``agents`` packages, one page per module,
  so a module that moves or appears is documented where it now is.

- example pages, one per script of ``examples/``: its docstring and the whole script.

Generated pages go to ``docs/envs/``, ``docs/trainers/``, ``docs/api/`` and ``docs/examples/``
(ignored by git except each folder's ``index.md``).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import io
import math
import pkgutil
import re
import tokenize
import typing
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent
ROOT = DOCS.parent
TREE_NODE_CAP = 30_000  # count a tree for the env page only below this many nodes
PICTURE_MOVES = 12  # random moves before an env's picture is drawn
API_PACKAGES = ("hiddenenvs", "agents")

# The nearest game of other libraries, by registered name: facts for readers who come from
# them (the OpenSpiel names are the ones tests/test_against_openspiel.py and the benchmarks
# load; PettingZoo's are its classic envs; MAgent2's battle is the benchmark's peer).
COUNTERPARTS = {
    "kuhn_poker": "OpenSpiel `kuhn_poker` (same trajectories, tested)",
    "leduc_holdem": "OpenSpiel `leduc_poker` (same trajectories, tested); PettingZoo `leduc_holdem_v4`",
    "rps": "OpenSpiel `matrix_rps`; PettingZoo `rps_v2`",
    "biased_rps": "OpenSpiel `matrix_rps` with scissors paying 2 (no direct counterpart)",
    "matching_pennies": "OpenSpiel `matrix_mp`",
    "goofspiel": "OpenSpiel `goofspiel` (`imp_info` as there)",
    "liars_dice": "OpenSpiel `liars_dice`",
    "othello": "OpenSpiel `othello` (same action numbers and rules on 8x8)",
    "combat": "no direct one; the benchmark's peer is MAgent2 `battle_v4`",
    "gdl_tictactoe": "OpenSpiel `tic_tac_toe`; PettingZoo `tictactoe_v3`",
    "blind_tictactoe": "close to OpenSpiel `phantom_ttt` (which is turn-based)",
    "biased_blind_tictactoe": "close to OpenSpiel `phantom_ttt` (which is turn-based)",
    "gdl_biased_rps": "the `biased_rps` env, as a GDL-II sheet",
    "monty_hall": "the GDL-II sheet of the GGP literature (Thielscher 2010)",
    "meier": "the GDL-II sheet of the GGP literature (Schiffel & Thielscher)",
}

ROLE = re.compile(r":(?:py:)?(class|func|meth|mod|attr|data|obj|exc):`([^`]+)`")


def docstring_as_markdown(text: str) -> str:
    """A docstring (Markdown tables, RST roles, simple tables, doctest and ``::`` blocks)
    as MyST Markdown."""
    text = inspect.cleandoc(text)
    text = ROLE.sub(lambda m: f"{{py:{m.group(1)}}}`{m.group(2)}`", text)
    lines = doctests_as_fences(simple_tables_as_markdown(text.splitlines()))
    lines = math_directives_as_fences(lines)
    return re.sub(r"::\n", ":\n", "\n".join(lines))


def math_directives_as_fences(lines: list[str]) -> list[str]:
    """RST ``.. math::`` blocks (the directive, a blank line, the indented LaTeX) as fenced
    ``{math}`` blocks at the directive's indentation, so a list item keeps its equation."""
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.strip() != ".. math::":
            out.append(line)
            index += 1
            continue
        indent = line[: len(line) - len(line.lstrip())]
        index += 1
        body: list[str] = []
        while index < len(lines) and (
            not lines[index].strip() or len(lines[index]) - len(lines[index].lstrip()) > len(indent)
        ):
            body.append(lines[index])
            index += 1
        while body and not body[-1].strip():
            body.pop()
        latex = inspect.cleandoc("\n".join(body))
        out += [
            f"{indent}```{{math}}",
            *(indent + row for row in latex.splitlines()),
            f"{indent}```",
        ]
        if index < len(lines) and lines[index].strip():
            out.append("")
    return out


def doctests_as_fences(lines: list[str]) -> list[str]:
    """Unindented doctest blocks (``>>>`` up to a blank line) as fenced ``pycon`` code:
    Markdown would run them together into one paragraph."""
    out: list[str] = []
    index = 0
    while index < len(lines):
        if not lines[index].startswith(">>>"):
            out.append(lines[index])
            index += 1
            continue
        out.append("```pycon")
        while index < len(lines) and lines[index].strip():
            out.append(lines[index])
            index += 1
        out.append("```")
    return out


def simple_tables_as_markdown(lines: list[str]) -> list[str]:
    """RST simple tables (``===  ===`` borders) as Markdown tables."""
    out: list[str] = []
    index = 0
    while index < len(lines):
        table = _simple_table_at(lines, index)
        if table is None:
            out.append(lines[index])
            index += 1
            continue
        rows, header_rows, index = table
        header = rows[0] if header_rows else [""] * len(rows[0])
        cell = lambda text: text.replace("|", "\\|")  # noqa: E731
        out.append("| " + " | ".join(cell(text) for text in header) + " |")
        out.append("|" + "---|" * len(header))
        out += ["| " + " | ".join(cell(text) for text in row) + " |" for row in rows[header_rows:]]
    return out


def safe_name(name: str) -> str:
    return name.replace("+", "_plus").replace("-", "_")


def write_if_changed(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def shipped_configs() -> list[tuple[str, dict, str]]:
    """``(file name, parsed config, its leading comment)`` for every ``configs/*.yaml``."""
    import yaml

    configs = []
    for path in sorted((ROOT / "configs").glob("*.yaml")):
        text = path.read_text()
        comment = []
        for line in text.splitlines():
            if not line.startswith("#"):
                break
            comment.append(line.lstrip("#").strip())
        configs.append((path.name, yaml.safe_load(text) or {}, " ".join(comment)))
    return configs


def first_sentence(text: str, limit: int = 160) -> str:
    """A config's leading comment, cut to its first sentence (the file has the rest)."""
    sentence = re.split(r"(?<=\.)\s", text, maxsplit=1)[0]
    return sentence if len(sentence) <= limit else sentence[: limit - 3].rsplit(" ", 1)[0] + "..."


def configs_table(configs: list[tuple[str, dict, str]], column: str) -> list[str]:
    if not configs:
        return ["No config in `configs/` uses it yet.", ""]
    lines = [f"| config | {column} | budget | what it is |", "|---|---|---|---|"]
    for name, data, comment in configs:
        other = (data.get("trainer") if column == "trainer" else data.get("env")) or {}
        budget = ", ".join(
            f"{k} {v}" for k, v in (data.get("budget") or {}).items() if v is not None
        )
        lines.append(
            f"| `configs/{name}` | `{other.get('name', '')}` | {budget} | {first_sentence(comment)} |"
        )
    return lines + [
        "",
        "Run one with `python train.py --config configs/NAME.yaml` (see {doc}`/guides/training`).",
        "",
    ]


# ---- env pages ---------------------------------------------------------------------------------


def count_tree(game) -> str:
    from hiddenenvs.analysis.tree import SubgameTooLarge, build_subgame_tree
    from hiddenenvs.game import ChanceMode

    if game.info.chance_mode is ChanceMode.SAMPLED_STOCHASTIC:
        return "sampled chance: not enumerable"
    try:
        tree = build_subgame_tree(game, [(game.new_initial_state(), 1.0)], max_nodes=TREE_NODE_CAP)
    except SubgameTooLarge:
        return f"more than {TREE_NODE_CAP:,} nodes with the default parameters (not counted here)"
    return f"{tree.num_nodes:,} nodes, {tree.num_infosets:,} information sets (default parameters)"


# Parameters of the pictured game where the defaults would draw badly: combat's default
# map is too large to read at page width; its commander mode has one view per team.
PICTURE_PARAMS = {
    "combat": {"map": "small", "mode": "commander"},
    "gdl": {"sheet": "tictactoe"},
    # II-Goofspiel, the flagship variant: each seat's view hides the opponent's bids
    "goofspiel": {"imp_info": True},
}
THUMBNAIL_PIXELS = 240  # the gallery's thumbnails: this wide, and shown at this width
THUMBNAIL_LINES = 7  # of a text env's state, the first lines in its thumbnail
PICTURE_STEPS_SHOWN = 14  # of a seat's knowledge, the last steps (the picture stays legible)


def mid_game_state(game, rng):
    """A state a few seeded random moves in, short of the end (the last move that would
    end the game is not played)."""
    from hiddenenvs.game import sample_chance_outcome

    state = game.new_initial_state(seed=0)
    moves = 0
    while moves < PICTURE_MOVES:
        following = state.clone()
        if following.is_chance_node():
            following.apply_action(sample_chance_outcome(following, rng))
        elif following.is_simultaneous_node():
            legal = [following.legal_actions(p) for p in range(game.info.num_players)]
            following.apply_actions([int(rng.choice(a)) if a else -1 for a in legal])
            moves += 1
        else:
            following.apply_action(int(rng.choice(following.legal_actions())))
            moves += 1
        if following.is_terminal():
            break
        state = following
    return state


def state_text(game, state) -> str:
    """The true state as the env's ``ansi`` render writes it (a GDL sheet's as a grid)."""
    from hiddenenvs.envs.gdl.game import GdlGame, grid_text

    if isinstance(game, GdlGame):
        return f"step {state.steps}\n" + grid_text(game.propnet.state_fluents(state.fluents))
    return str(state)


def seat_text(game, state, player: int) -> str:
    """What ``player`` knows, in the words of human play (``Game.describe_step``)."""
    steps = [game.describe_step(player, *entry) for entry in state.information_state_key(player)]
    steps = [text for text in steps if text]
    shown = [f"{i + 1}. {text}" for i, text in enumerate(steps)][-PICTURE_STEPS_SHOWN:]
    if len(steps) > PICTURE_STEPS_SHOWN:
        shown.insert(0, f"({len(steps) - PICTURE_STEPS_SHOWN} earlier steps)")
    view = getattr(game, "describe_view", None)
    extra = view(state, player) if view is not None else None
    return "\n".join(shown + ([extra] if extra else [])) or "(nothing yet)"


def wrapped(text: str, width: int = 36) -> str:
    import textwrap

    return "\n".join(
        "\n".join(textwrap.wrap(line, width, subsequent_indent="   ") or [""])
        for line in text.splitlines()
    )


def combat_legend(axis) -> None:
    """The legend of combat's picture, with the renderer's own colours."""
    from matplotlib.patches import Patch

    from hiddenenvs.envs.combat.maps import DOOR, GROUND, OBSTACLE, WALL
    from hiddenenvs.envs.combat.render import DESTINATION_COLOUR, TEAM_COLOURS, TERRAIN_COLOURS

    rgb = lambda colour: tuple(c / 255 for c in colour)  # noqa: E731
    entries = [
        Patch(color=rgb(TERRAIN_COLOURS[GROUND]), label="ground"),
        Patch(color=rgb(TERRAIN_COLOURS[OBSTACLE]), label="obstacle (blocks movement)"),
        Patch(color=rgb(TERRAIN_COLOURS[WALL]), label="wall"),
        Patch(color=rgb(TERRAIN_COLOURS[DOOR]), label="door"),
        Patch(fill=False, edgecolor=rgb(DESTINATION_COLOUR), label="destination area (orders)"),
        Patch(color=rgb(TEAM_COLOURS[0]), label="attacker (dark centre: health lost)"),
        Patch(color=rgb(TEAM_COLOURS[1]), label="defender (dark centre: health lost)"),
        Patch(color=(0.2, 0.25, 0.15), label="darkened: not seen by that team (fog)"),
    ]
    axis.legend(handles=entries, loc="center", ncol=2, frameon=False, fontsize=13)
    axis.axis("off")


def draw_picture(name: str, out: Path, thumbnail: Path) -> tuple[str, list[tuple[str, str]]]:
    """A PNG of the env mid-game, drawn by its own renderer: the true state (its
    ``rgb_array`` picture, else its ``ansi`` text) and, where information is hidden, each
    seat's view beside it (its picture with the fog of war, else what human play tells
    it); plus a thumbnail of the true state for the gallery. Returns the caption and, for
    an env drawn as text, the panels' titles and texts (the page shows them as text,
    legible at any width, and the PNG only as the thumbnail)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    import hiddenenvs
    from hiddenenvs.game import Information

    game = hiddenenvs.load_game(name, **PICTURE_PARAMS.get(name, {}))
    state = mid_game_state(game, np.random.default_rng(0))
    pictured = "rgb_array" in getattr(type(game), "RENDER_MODES", ())
    seats = [] if game.info.information is Information.PERFECT else list(game.info.player_names)
    panels = [("true state", state.render_rgb() if pictured else wrapped(state_text(game, state)))]
    for player, seat in enumerate(seats):
        if pictured and name == "combat":  # the team's fog of war
            from hiddenenvs.envs.combat.render import render_rgb

            panels.append((f"seen by {seat}", render_rgb(state.battle, visibility_team=player)))
        elif pictured:  # the seat's view: what it cannot see face down or left out
            panels.append((f"seen by {seat}", state.render_rgb(player=player)))
        else:
            panels.append((f"known to {seat}", wrapped(seat_text(game, state, player))))
    legend = name == "combat"
    width = 4.2 if pictured else 4.4
    text_lines = max((len(p.splitlines()) for _, p in panels if isinstance(p, str)), default=0)
    height = 4.2 if pictured else max(1.6, 0.17 * text_lines + 0.6)
    figure, axes = plt.subplots(
        2 if legend else 1,
        len(panels),
        figsize=(width * len(panels), height + (0.9 if legend else 0)),
        squeeze=False,
        gridspec_kw={"height_ratios": [height, 0.9]} if legend else None,
    )
    for axis, (title, content) in zip(axes[0], panels):
        axis.set_title(title, fontsize=14 if pictured else 12)
        if isinstance(content, str):
            axis.text(0, 1, content, family="monospace", fontsize=10, va="top", ha="left")
            axis.axis("off")
        else:
            axis.imshow(content)
            axis.set_xticks([])
            axis.set_yticks([])
    if legend:
        for axis in axes[1][1:]:
            axis.remove()
        combat_legend(axes[1][0])
        axes[1][0].set_position([0.05, 0.0, 0.9, 0.16])
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=90, bbox_inches="tight")
    plt.close(figure)
    # The gallery's thumbnail: the picture, or the first lines of the text, legible at
    # THUMBNAIL_PIXELS wide.
    thumb, axis = plt.subplots(figsize=(3.0, 3.0 if pictured else 1.6))
    if pictured:
        axis.imshow(panels[0][1])
    else:
        text = wrapped(state_text(game, state), 30).splitlines()[:THUMBNAIL_LINES]
        axis.text(0, 1, "\n".join(text), family="monospace", fontsize=10, va="top", ha="left")
    axis.axis("off")
    thumb.subplots_adjust(left=0.04, right=1, top=0.96, bottom=0)
    thumb.savefig(thumbnail, dpi=THUMBNAIL_PIXELS / 3.0)
    plt.close(thumb)
    shown = ", ".join(f"`{k}={v!r}`" for k, v in PICTURE_PARAMS.get(name, {}).items())
    text_panels = [] if pictured else [(title, str(content)) for title, content in panels]
    return text_panels, (
        f"A position {PICTURE_MOVES} seeded random moves in (or just before the end)"
        + (f", with {shown}" if shown else "")
        + ", drawn at build time by the env's own renderer: "
        + ("its `rgb_array` picture" if pictured else "its `ansi` text")
        + (
            "; beside it what each seat "
            + (
                ("sees (the team's fog of war)" if name == "combat" else "sees")
                if pictured
                else "knows, in the words of human play"
            )
            if seats
            else " (every player sees all of it)"
        )
        + "."
    )


def text_panels_html(panels: list[tuple[str, str]]) -> list[str]:
    """Panels of text side by side: one raw HTML table (a Markdown table cell holds one
    line), each text in a ``<pre>`` so grids keep their columns."""
    import html

    cell = lambda text: html.escape(text).replace("\n\n", "\n \n")  # noqa: E731
    return [
        '<table class="docutils align-default"><tr>'
        + "".join(f"<th>{html.escape(title)}</th>" for title, _ in panels)
        + "</tr><tr>"
        + "".join(
            f'<td style="vertical-align: top"><pre style="margin: 0">{cell(text)}</pre></td>'
            for _, text in panels
        )
        + "</tr></table>",
        "",
    ]


def combat_episode(out: Path) -> None:
    """An animated GIF of one combat episode on the small map: both teams play the
    scripted doctrine, one frame per commander step (``hiddenenvs record`` makes these)."""
    import hiddenenvs
    from hiddenenvs.envs.combat.record import record_frames, save

    game = hiddenenvs.load_game("combat", **PICTURE_PARAMS["combat"])
    out.parent.mkdir(parents=True, exist_ok=True)
    save(record_frames(game, "doctrine", "doctrine", seed=0), out, 8, 0.25)


def env_gallery() -> str:
    """The envs index's gallery (``docs/envs/gallery.inc``, included by its index.md): each
    env's thumbnail (drawn with its page's picture), name and one-line description."""
    import hiddenenvs

    lines = ["| | env | what it is |", "|---|---|---|"]
    for name, entry in hiddenenvs.registry.REGISTRY.items():
        description = f"{entry.description[0].upper()}{entry.description[1:]}.".replace("|", "\\|")
        lines.append(
            f"| [![{name}](img/{name}_thumbnail.png){{w={THUMBNAIL_PIXELS}px}}]({name}.md) | "
            f"[{name}]({name}.md) | "
            f"{description} |"
        )
    return "\n".join(lines) + "\n"


def estimated_tree(name: str) -> str:
    """The capability contract's tree size (counted, or Knuth's estimate), where it exists."""
    try:
        capabilities = importlib.import_module("agents.capabilities")
    except ModuleNotFoundError as error:
        if error.name != "agents.capabilities":
            raise
        return ""
    tree = capabilities.offers_for(name).tree
    if tree.nodes is None or tree.how != "estimated":
        return ""
    # The estimate samples random paths: its order of magnitude is what stays put between builds.
    return (
        f"; of the order of $10^{{{int(math.log10(tree.nodes))}}}$ nodes by Knuth's estimate "
        f"({{py:func}}`agents.capabilities.offers_for`)"
    )


def env_page(entry, row: dict, configs, capabilities) -> str:
    import hiddenenvs

    game_class = entry.game_class()
    game = hiddenenvs.load_game(entry.name)
    info = game.info
    module = importlib.import_module(game_class.__module__)
    lines = [
        f"# {entry.name}",
        "",
        f"{entry.description[0].upper()}{entry.description[1:]}.",
        "",
        "| | |",
        "|---|---|",
        f"| make it | `hiddenenvs.make({entry.name!r})`, `hiddenenvs.load_game({entry.name!r})` |",
        f"| game class | {{py:class}}`{game_class.__module__}.{game_class.__name__}` |",
        f"| players | {info.num_players}: {', '.join(f'`{n}`' for n in info.player_names)} |",
        f"| actions | `Discrete({info.num_distinct_actions})` |",
        f"| information-state tensor | `{tuple(info.information_state_tensor_shape)}` |",
        f"| observation tensor | `{tuple(info.observation_tensor_shape)}` |",
        f"| dynamics | {info.dynamics.value} (parallel API: "
        f"{'yes' if info.dynamics.value == 'simultaneous' else 'no'}) |",
        f"| chance | {info.chance_mode.value.replace('_', ' ')} |",
        f"| information | {info.information.value} |",
        f"| utility | {info.utility.value.replace('_', ' ')}, returns in "
        f"[{info.min_utility:g}, {info.max_utility:g}] |",
        f"| longest game | {info.max_game_length} moves |",
        f"| tree size | {count_tree(game)}{estimated_tree(entry.name)} |",
        f"| render modes | {', '.join(f'`{m}`' for m in getattr(game_class, 'RENDER_MODES', ()))} |",
        f"| counterpart | {COUNTERPARTS.get(entry.name, 'none known')} |",
        "",
    ]
    if entry.fixed_params:
        fixed = ", ".join(f"`{k}={v!r}`" for k, v in entry.fixed_params.items())
        lines += [f"The registered name fixes {fixed} on the game class.", ""]
    parameters = row.get("parameters") or {}
    lines += ["## Parameters", ""]
    if parameters:
        lines += ["| name | default |", "|---|---|"]
        lines += [f"| `{k}` | `{v!r}` |" for k, v in parameters.items()]
        lines += [
            "",
            "Give them to `make`, `make_parallel` or `load_game` as keywords, or as "
            "`env.params` in a run config. The module docstring below says what each means.",
            "",
        ]
    else:
        lines += ["None.", ""]
    text_panels, caption = draw_picture(
        entry.name,
        DOCS / "envs" / "img" / f"{entry.name}.png",
        DOCS / "envs" / "img" / f"{entry.name}_thumbnail.png",
    )
    lines += ["## Picture", ""]
    if text_panels:
        lines += text_panels_html(text_panels)
    else:
        lines += [
            f"![{entry.name} mid-game: the true state and each seat's view](img/{entry.name}.png)",
            "",
        ]
    lines += [caption, ""]
    if entry.name == "combat":
        combat_episode(DOCS / "envs" / "img" / "combat_episode.gif")
        lines += [
            "![a combat episode on the small map, both teams playing the doctrine]"
            "(img/combat_episode.gif)",
            "",
            "One episode on the small map, both teams playing the scripted doctrine "
            "(`hiddenenvs record --map small --attackers doctrine --defenders doctrine`).",
            "",
        ]
    lines += [
        "## Try it",
        "",
        "```{testcode}",
        "import hiddenenvs",
        "",
        f"env = hiddenenvs.make({entry.name!r})",
        "env.reset(seed=0)",
        "observation, reward, termination, truncation, info = env.last()",
        "print(observation['action_mask'].shape)",
        "```",
        "",
        "```{testoutput}",
        f"({info.num_distinct_actions},)",
        "```",
        "",
    ]
    fits = [name for name, data, _ in configs if (data.get("env") or {}).get("name") == entry.name]
    lines += ["## Training on it", ""]
    if capabilities is not None:
        lines += capabilities(entry.name)
    lines += configs_table([c for c in configs if c[0] in fits], "trainer")
    if module.__doc__:
        lines += [
            f"## Rules, spaces and facts (`{module.__name__}`)",
            "",
            f"```{{py:currentmodule}} {module.__name__}",
            "```",
            "",
            docstring_as_markdown(module.__doc__),
            "",
        ]
    return "\n".join(lines)


# ---- trainer pages -----------------------------------------------------------------------------


def field_comments(cls) -> dict[str, str]:
    """The comment on each dataclass field's line (``name: type = default  # comment``)."""
    try:
        source = inspect.getsource(cls)
    except (OSError, TypeError):
        return {}
    comments: dict[str, str] = {}
    pending: list[str] = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            line = token.line.strip()
            match = re.match(r"(\w+)\s*:", line)
            if match and not line.startswith("#"):
                comments[match.group(1)] = token.string.lstrip("# ").strip()
            elif line.startswith("#"):
                pending.append(token.string.lstrip("# ").strip())
        elif token.type == tokenize.NAME and pending and token.start[1] == 4:
            comments.setdefault(token.string, " ".join(pending))
            pending = []
        elif token.type == tokenize.NEWLINE:
            continue
    return comments


def default_of(field: dataclasses.Field) -> str:
    if field.default is not dataclasses.MISSING:
        return f"`{field.default!r}`"
    if field.default_factory is not dataclasses.MISSING:
        return f"`{field.default_factory()!r}`"
    return "required"


def type_name(annotation) -> str:
    if isinstance(annotation, str):
        return annotation
    if isinstance(annotation, type):
        return annotation.__name__
    return re.sub(r"\b(typing|builtins)\.", "", str(annotation))


def config_reference(cls) -> list[str]:
    if not dataclasses.is_dataclass(cls):
        return ["This trainer takes no parameters.", ""]
    hints = typing.get_type_hints(cls)
    comments = field_comments(cls)
    lines = [
        f"`trainer.params` is validated into {{py:class}}`{cls.__module__}.{cls.__qualname__}`; "
        "an unknown key or a wrongly typed value is refused with the allowed ones.",
        "",
        "| key | type | default | meaning |",
        "|---|---|---|---|",
    ]
    for field in dataclasses.fields(cls):
        meaning = comments.get(field.name, "").replace("|", "\\|")
        # A union's "|" would end the table cell: escaped, it shows inside the code span.
        kind = type_name(hints.get(field.name, field.type)).replace("|", "\\|")
        default = default_of(field).replace("|", "\\|")
        lines.append(f"| `{field.name}` | `{kind}` | {default} | {meaning} |")
    return lines + [""]


def trainer_page(name: str, target: str, configs, capabilities) -> str:
    module_name, class_name = target.split(":")
    module = importlib.import_module(module_name)
    cls = getattr(module, class_name)
    page = safe_name(name)
    lines = [
        f"# {name}",
        "",
        f"`trainer: {{name: {name}}}` in a run config trains {{py:class}}`{module_name}.{class_name}` "
        f"(module {{py:mod}}`{module_name}`).",
        "",
    ]
    if module.__doc__:
        lines += [
            "## The method and how the code maps to it",
            "",
            f"```{{py:currentmodule}} {module_name}",
            "```",
            "",
            docstring_as_markdown(module.__doc__),
            "",
        ]
    lines += ["## Config reference", ""] + config_reference(getattr(cls, "CONFIG_CLASS", None))
    lines += ["## Shipped configs", ""]
    lines += configs_table(
        [c for c in configs if (c[1].get("trainer") or {}).get("name") == name], "env"
    )
    lines += ["## Results", ""]
    curve = DOCS / "results" / "curves" / f"{page}.png"
    if curve.exists():
        lines += [
            f"![{name}: learning curves of its shipped configs](../results/curves/{page}.png)",
            "",
            "Learning curves of each shipped config on its flagship env, the mean over seeds with "
            "the band from the lowest to the highest seed, drawn by `python -m benchmarks train` "
            "(machine, commit, date and load on {doc}`/results/comparison`).",
            "",
        ]
    else:
        lines += [
            "No learning curve has been measured for this trainer yet: "
            "`python -m benchmarks train` draws one for every trainer with a flagship cell.",
            "",
        ]
    results = [
        path.stem
        for path in sorted((DOCS / "results").glob("*.md"))
        if path.stem not in ("index", "comparison")
        and (f"`{name}`" in path.read_text() or f"configs/{page}_" in path.read_text())
    ]
    lines += [
        "Measured runs, each with its date, commit, machine and command: "
        + ", ".join(f"{{doc}}`/results/{stem}`" for stem in results)
        + ("; " if results else "")
        + "every trainer side by side: {doc}`/results/comparison`.",
        "",
    ]
    if capabilities is not None:
        lines += ["## Envs it fits", ""] + capabilities(name, trainer=True)
    notes = DOCS / "trainer_notes" / f"{page}.md"
    if notes.exists():
        lines += [f"```{{include}} ../trainer_notes/{page}.md", ":heading-offset: 1", "```", ""]
    return "\n".join(lines)


def capability_lines():
    """Lines of the capability contract (:mod:`agents.capabilities`) for an env or a trainer
    page, from one table of every registered env with its default parameters; ``None``
    where the contract does not exist (yet) in this checkout."""
    try:
        capabilities = importlib.import_module("agents.capabilities")
    except ModuleNotFoundError as error:
        if error.name != "agents.capabilities":
            raise
        return None
    table = capabilities.capability_table()

    def lines(name: str, trainer: bool = False) -> list[str]:
        if trainer:
            rows = [
                f"| `{row['env']}` | {row['trainers'][name]} |"
                for row in table
                if name in row["trainers"]
            ]
            head = [
                "From {py:func}`agents.capabilities.capability_table` (each env with its default "
                "parameters; `python train.py --list` prints the same):",
                "",
                "| env | fits, or what it lacks |",
                "|---|---|",
            ]
        else:
            row = next((row for row in table if row["env"] == name), None)
            if row is None:
                return []
            rows = [
                f"| `{trainer_name}` | {cell} |" for trainer_name, cell in row["trainers"].items()
            ]
            head = [
                "Which trainers fit it with its default parameters ({py:func}`agents.capabilities.capability_table`; "
                "`python train.py --list` prints the same):",
                "",
                "| trainer | fits, or what it lacks |",
                "|---|---|",
            ]
        return head + rows + [""] if rows else []

    return lines


# ---- API pages ---------------------------------------------------------------------------------


def api_modules() -> list[str]:
    names = []
    for package_name in API_PACKAGES:
        package = importlib.import_module(package_name)
        names.append(package_name)
        for module in pkgutil.walk_packages(package.__path__, prefix=f"{package_name}."):
            if any(part.startswith("_") for part in module.name.split(".")):
                continue
            names.append(module.name)
    return sorted(names)


def undocumented_constants(module_name: str) -> list[str]:
    """Module-level names assigned in the module that autodoc would leave out: no doc
    comment, and not a class, function or module (those it documents by themselves)."""
    import ast

    from sphinx.pycode import ModuleAnalyzer

    module = importlib.import_module(module_name)
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):
        return []
    documented = {name for (_, name) in ModuleAnalyzer.for_module(module_name).find_attr_docs()}
    names = []
    for node in ast.parse(source).body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        for target in targets:
            if (
                not isinstance(target, ast.Name)
                or target.id.startswith("_")
                or target.id in documented
                or not hasattr(module, target.id)
            ):  # (a file edited since its import)
                continue
            value = getattr(module, target.id, None)
            if not is_type_alias(value) and (
                inspect.isclass(value) or inspect.isroutine(value) or inspect.ismodule(value)
            ):
                continue
            if target.id not in names:
                names.append(target.id)
    return names


def is_type_alias(value) -> bool:
    return (
        value is typing.Any
        or isinstance(value, typing.TypeVar)
        or typing.get_origin(value) is not None
    )


def alias_text(value) -> str:
    return re.sub(r"\b(typing|collections\.abc|builtins)\.", "", repr(value)).replace("`", "'")


def api_page(module_name: str) -> str:
    import hiddenenvs.game

    module = importlib.import_module(module_name)
    # A class named like one of the game model's (agents.leaderboard.stats.Game) is shown
    # but not indexed, so an annotation ``Game`` anywhere links to the model's.
    model_names = {
        name
        for name, value in vars(hiddenenvs.game).items()
        if inspect.isclass(value) and value.__module__ == "hiddenenvs.game"
    }
    homonyms = [
        name
        for name, value in vars(module).items()
        if inspect.isclass(value)
        and value.__module__ == module_name
        and name in model_names
        and module is not hiddenenvs.game
    ]
    from sphinx.pycode import ModuleAnalyzer

    documented = {name for (_, name) in ModuleAnalyzer.for_module(module_name).find_attr_docs()}
    # Annotated module data with a doc comment: autodoc would show the annotation as a
    # quoted string (``from __future__ import annotations``); listed below as written.
    annotated = [
        name
        for name in getattr(module, "__annotations__", {})
        if name in documented and not name.startswith("_") and hasattr(module, name)
    ]
    lines = [
        f"# `{module_name}`",
        "",
        "```{eval-rst}",
        # The docstrings' examples run as ``python -m doctest`` runs them: in the module's names.
        ".. testsetup:: *",
        "",
        f"   from {module_name} import *",
        "",
        f".. automodule:: {module_name}",
        "   :members:",
    ]
    if homonyms or annotated:
        lines.append(f"   :exclude-members: {', '.join(homonyms + annotated)}")
    lines.append("")
    for name in homonyms:
        lines += [f".. autoclass:: {module_name}.{name}", "   :members:", "   :no-index:", ""]
    for name in annotated + undocumented_constants(module_name):
        value = getattr(module, name)
        if is_type_alias(value):  # so that an annotation naming it links here
            lines += [f".. py:type:: {name}", "", f"   A type alias: ``{alias_text(value)}``.", ""]
            continue
        simple = isinstance(value, (bool, int, float, str)) and len(repr(value)) < 80
        lines += [f".. autodata:: {module_name}.{name}"] + ([] if simple else ["   :no-value:"])
        annotation = getattr(module, "__annotations__", {}).get(name)
        if (
            annotation is not None
        ):  # a string under ``from __future__ import annotations``: shown as written
            lines.append(
                f"   :annotation: : {annotation if isinstance(annotation, str) else type_name(annotation)}"
            )
        lines.append("")
    return "\n".join(lines + ["```", ""])


def example_page(script: Path) -> str:
    """A page per script of ``examples/``: its docstring, how to run it, the whole script."""
    import ast

    doc = ast.get_docstring(ast.parse(script.read_text())) or ""
    # The script is not a module of the API reference: its roles stay code.
    doc = ROLE.sub(lambda m: f"`{m.group(2).lstrip('~.')}`", doc)
    return "\n".join(
        [
            f"# `examples/{script.name}`",
            "",
            docstring_as_markdown(doc) if doc else "",
            "",
            f"```{{literalinclude}} ../../examples/{script.name}",
            ":language: python",
            "```",
            "",
        ]
    )


def generate(app) -> None:
    import hiddenenvs
    from agents.config import TRAINERS

    configs = shipped_configs()
    capabilities = capability_lines()
    rows = {row["name"]: row for row in hiddenenvs.list_envs()}
    pages = {}
    for name, entry in hiddenenvs.registry.REGISTRY.items():
        pages[DOCS / "envs" / f"{name}.md"] = env_page(entry, rows[name], configs, capabilities)
    for name in TRAINERS:
        pages[DOCS / "trainers" / f"{safe_name(name)}.md"] = trainer_page(
            name, TRAINERS.target(name), configs, capabilities
        )
    for module_name in api_modules():
        pages[DOCS / "api" / f"{module_name}.md"] = api_page(module_name)
    for script in sorted((ROOT / "examples").glob("*.py")):
        pages[DOCS / "examples" / f"{script.stem}.md"] = example_page(script)
    for path, text in pages.items():
        write_if_changed(path, text)
    write_if_changed(DOCS / "envs" / "gallery.inc", env_gallery())
    # A page of an env, trainer, module or example that no longer exists would be built from nothing.
    for folder in ("envs", "trainers", "api", "examples"):
        for path in (DOCS / folder).glob("*.md"):
            if path.name != "index.md" and path not in pages:
                path.unlink()


TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
TABLE_RULE = re.compile(r"^\s*\|[\s:|-]+\|\s*$")


def markdown_tables_as_rst(app, what, name, obj, options, lines: list[str]) -> None:
    """Docstrings write tables in Markdown (``| a | b |``); autodoc reads RST: make them list-tables.

    A module constant has no docstring of its own: autodoc hands over its type's (``dict``'s),
    which says nothing about the constant, so it is dropped."""
    if what == "property" and lines:
        # "(rows, columns) int32: what it holds" is prose; napoleon would read the part
        # before the colon as a type to link, word by word.
        lines[0] = re.sub(r"^(\(.*?\)\s*[\w.]+):\s", r"``\1`` — ", lines[0])
    if (
        what == "data"
        and type(obj).__doc__
        and "\n".join(lines).strip() == inspect.cleandoc(type(obj).__doc__).strip()
    ):
        lines[:] = []
        return
    out: list[str] = []
    index = 0
    while index < len(lines):
        if (
            TABLE_ROW.match(lines[index])
            and index + 1 < len(lines)
            and TABLE_RULE.match(lines[index + 1])
            and "-" in lines[index + 1]
        ):
            indent = lines[index][: len(lines[index]) - len(lines[index].lstrip())]
            rows = [lines[index]]
            index += 2
            while index < len(lines) and TABLE_ROW.match(lines[index]):
                rows.append(lines[index])
                index += 1
            cells = [
                [cell.strip() for cell in re.split(r"(?<!\\)\|", row.strip())[1:-1]] for row in rows
            ]
            width = max(len(row) for row in cells)
            if out and out[-1].strip():
                out.append("")
            out += [f"{indent}.. list-table::", f"{indent}   :header-rows: 1", ""]
            for row in cells:
                row = row + [""] * (width - len(row))
                out.append(f"{indent}   * - {row[0]}" if row[0] else f"{indent}   * -")
                out += [f"{indent}     - {cell}" if cell else f"{indent}     -" for cell in row[1:]]
            out.append("")
            continue
        out.append(lines[index])
        index += 1
    lines[:] = simple_tables_as_list_tables(out)


SIMPLE_TABLE_BORDER = re.compile(r"^(\s*)(=+)((\s+=+)+)\s*$")


def _simple_table_cells(line: str, starts: list[int]) -> list[str]:
    """A simple-table line cut at the column starts; text running into the gap before a
    column (a first column a few characters too wide) stays with its own column."""
    cells, begin = [], 0
    for start in starts[1:]:
        cut = start
        if line[start - 1 : start].strip():  # text runs across the boundary: cut at the next space
            space = line.find(" ", start)
            cut = len(line) if space < 0 else space
        cells.append(line[begin:cut].strip())
        begin = cut
    cells.append(line[begin:].strip())
    return cells


def _simple_table_at(lines: list[str], index: int) -> tuple[list[list[str]], int, int] | None:
    """The RST simple table whose top border is ``lines[index]``: ``(rows, header rows,
    the index after its bottom border)``, or None when no table starts there. A cell that
    runs into the gap after its column is forgiven; a first cell ending in a comma
    continues on the next line."""
    if not SIMPLE_TABLE_BORDER.match(lines[index]):
        return None
    starts = [m.start() for m in re.finditer(r"=+", lines[index])]
    body, borders, end = [], 1, index + 1
    while end < len(lines):
        if SIMPLE_TABLE_BORDER.match(lines[end]):
            borders += 1
            if borders == 3 or (
                borders == 2 and end + 1 < len(lines) and not lines[end + 1].strip()
            ):
                break
            body.append(None)  # the header's end
        elif not lines[end].strip():
            if end + 1 < len(lines) and SIMPLE_TABLE_BORDER.match(lines[end + 1]):
                end += 1
                continue
            body.append("")
        else:
            body.append(lines[end])
        end += 1
    if end >= len(lines):  # no closing border: not a table
        return None
    rows: list[list[str]] = []
    for line in body:
        if line is None or line == "":
            continue
        cells = _simple_table_cells(line, starts)
        if rows and (not cells[0] or rows[-1][0].endswith(",``") or rows[-1][0].endswith(",")):
            rows[-1] = [f"{a} {b}".strip() for a, b in zip(rows[-1], cells)]
        else:
            rows.append(cells)
    return rows, 1 if None in body else 0, end + 1


def simple_tables_as_list_tables(lines: list[str]) -> list[str]:
    """RST simple tables (``===  ===`` borders) as list-tables (autodoc reads RST)."""
    out: list[str] = []
    index = 0
    while index < len(lines):
        table = _simple_table_at(lines, index)
        if table is None:
            out.append(lines[index])
            index += 1
            continue
        rows, header_rows, index_after = table
        indent = SIMPLE_TABLE_BORDER.match(lines[index]).group(1)
        if out and out[-1].strip():
            out.append("")
        out += [f"{indent}.. list-table::", f"{indent}   :header-rows: {header_rows}", ""]
        for row in rows:
            out.append(f"{indent}   * - {row[0]}" if row[0] else f"{indent}   * -")
            out += [f"{indent}     - {cell}" if cell else f"{indent}     -" for cell in row[1:]]
        out.append("")
        index = index_after
    return out


def _lookup(target: str, module_name: str | None, class_name: str | None):
    """The object a Python reference names, as the docstring's own module sees it: a
    dotted path from an importable module, or a name in the module's or the class's scope."""
    parts = target.split(".")
    for cut in range(len(parts), 0, -1):  # the longest importable prefix
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for part in parts[cut:]:
                obj = getattr(obj, part)
            return obj
        except AttributeError:
            break
    scopes = []
    if module_name:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            module = None
        if module is not None:
            scope = module
            for part in (class_name or "").split(".") if class_name else []:
                scope = getattr(scope, part, None)
            if class_name and scope is not None:
                scopes.append(scope)
            scopes.append(module)
    for scope in scopes:
        obj = scope
        try:
            for part in parts:
                obj = getattr(obj, part)
            return obj
        except AttributeError:
            continue
    if (
        scopes and len(parts) == 1
    ):  # a module docstring naming a method of its one class that has it
        module = scopes[-1]
        owners = [
            value
            for value in vars(module).values()
            if inspect.isclass(value)
            and value.__module__ == module.__name__
            and parts[0] in vars(value)
        ]
        if len(owners) == 1:
            return getattr(owners[0], parts[0])
    return None


def resolve_by_import(app, env, node, contnode):
    """Link a reference Sphinx could not match by name to where its object is documented:
    a package's re-export (``hiddenenvs.analysis.GameTree``) or a name the docstring's
    module imported (``TabularPolicy`` in :mod:`hiddenenvs.beliefs`) is the object defined
    in another module, documented there under its own path."""
    from sphinx.util.nodes import make_refnode

    if node.get("refdomain") != "py":
        return None
    if node["reftarget"].startswith(("'", '"')):
        # A piece of a quoted annotation autodoc could not evaluate (a dataclass's generated
        # ``__init__`` under ``from __future__ import annotations``): it stays as written.
        return contnode
    obj = _lookup(node["reftarget"], node.get("py:module"), node.get("py:class"))
    if obj is None:
        return None
    if any(
        part.startswith("_") and not part.startswith("__") for part in node["reftarget"].split(".")
    ):
        # A private name: it exists (looked up above), but the API reference leaves private
        # names out, so it stays code, not a link.
        return contnode
    obj = inspect.unwrap(getattr(obj, "__func__", obj)) if callable(obj) else obj
    module = getattr(obj, "__module__", None) if not inspect.ismodule(obj) else None
    qualname = getattr(obj, "__qualname__", None)
    canonical = (
        obj.__name__
        if inspect.ismodule(obj)
        else f"{module}.{qualname}"
        if module and qualname
        else None
    )
    if canonical is None:
        return None
    domain = env.get_domain("py")
    entry = domain.objects.get(canonical) or domain.modules.get(canonical)
    if entry is None and module in domain.modules:
        # It exists but has no entry of its own (shown without an index entry, like
        # agents.leaderboard.stats.Game beside the model's Game): its module's page.
        entry = domain.modules[module]
    if entry is None:
        return None
    return make_refnode(
        app.builder, node["refdoc"], entry.docname, entry.node_id, contnode, canonical
    )


def setup(app):
    app.connect("missing-reference", resolve_by_import)
    app.connect("builder-inited", generate)
    app.connect(
        "autodoc-process-docstring", markdown_tables_as_rst, priority=400
    )  # before napoleon
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""Play any env yourself, in the terminal: the game loop of human play.

The command, which resolves the opponents' agent specs, lives with the agents::

    python -m agents.play leduc_holdem --against runs/nfsp_leduc
    python -m agents.play kuhn_poker --against cfr+:200 --seat 1 --games 3
    python -m agents.play goofspiel --param num_cards=5 --param imp_info=true --against ismcts:0.2s

:func:`play_game` takes the opponents as objects with ``act_in_env(env, agent,
observation)``, whatever made them. What you see is what your seat may see and nothing
else: the steps of your seat's information-state key as they come, in the game's words
(``Game.describe_step``: your cards and dice, the moves and percepts you know; the
opponents' private cards, dice, hidden bids and percepts are never shown, because your
key does not hold them; a step with nothing for you is not printed), the position where
your seat sees all of it (a game of perfect information: its board; a game's optional
``describe_view(state, player)``: a GDL-I sheet's grid), your rewards, and at your turn
the legal moves by number and name. A move you cannot avoid (a ``noop`` while others
move, the only legal call) is played for you. At a simultaneous node you choose without
seeing the others' choices, as the AEC env asks. Type a move's number or name (brackets
optional); anything else is answered with one line saying what fits; ``q`` or end of
input (Ctrl-D) quits (:class:`Quit`). When the game ends, everyone's return is shown (the
outcome is public). The state itself is shown only where your seat sees all of it.
"""

from __future__ import annotations

import sys

from hiddenenvs.core import Information

QUIT_WORDS = ("q", "quit", "exit")
ECHO_CHARACTERS = 40  # of a bad answer, echoed back (a pasted megabyte is not)


class Quit(Exception):
    """The human asked to stop (``q`` or end of input)."""


def _spelling(name: str) -> str:
    """How a typed move name is compared: case, spacing and outer brackets ignored."""
    name = " ".join(name.lower().split())
    return name[1:-1].strip() if name.startswith("(") and name.endswith(")") else name


def _plain(name: str) -> str:
    """A move's name as shown: a bracketed term (GDL's ``(claim 32)``) without its brackets."""
    return name[1:-1] if name.startswith("(") and name.endswith(")") else name


def _echo(answer: str) -> str:
    if len(answer) <= ECHO_CHARACTERS:
        return repr(answer)
    return f"{answer[:ECHO_CHARACTERS]!r}... ({len(answer):,} characters)"


def choose(prompt_lines: list[str], legal: dict[int, str], read=input) -> int:
    """Ask until the human names a legal action by number or name; each bad answer gets
    one line saying what fits. Numbers are compared as text, so a 5,000-digit answer is
    just not one of them."""
    print("\n".join(prompt_lines))
    by_text = {str(action): action for action in legal}
    by_text.update({_spelling(name): action for action, name in legal.items()})
    while True:
        try:
            answer = read("your move> ").strip()
        except EOFError:
            raise Quit from None
        if answer.lower() in QUIT_WORDS:
            raise Quit
        action = by_text.get(answer) if answer.isdigit() else by_text.get(_spelling(answer))
        if action is not None:
            return action
        print(
            f"not a legal move: {_echo(answer)}; type a number from "
            f"{min(legal)} to {max(legal)} shown above, or a move's name (q quits)"
            if len(legal) > 1
            else f"not a legal move: {_echo(answer)}; type {next(iter(legal))} (q quits)"
        )


def _columns(items: list[str], width: int = 78) -> list[str]:
    """Items in as many columns as fit ``width`` characters, read down each column."""
    cell = max(len(item) for item in items) + 3
    columns = max(1, min(len(items) // 8 + 1, width // cell))  # one column up to 7 items
    rows = -(-len(items) // columns)
    return [
        "  " + "".join(f"{items[i]:<{cell}}" for i in range(row, len(items), rows)).rstrip()
        for row in range(rows)
    ]


def _view(unwrapped, player: int) -> str | None:
    """The position as ``player`` sees all of it, or None when it hides something."""
    game, state = unwrapped.game, unwrapped.game_state
    describe_view = getattr(game, "describe_view", None)
    if describe_view is not None:
        return describe_view(state, player)
    if game.info.information is Information.PERFECT:
        return str(state)
    return None


def play_game(env, human: str, opponents: dict, seed: int | None) -> dict[str, float]:
    """One game; returns every agent's return. Prints only what ``human``'s seat may see.

    ``opponents`` maps every other agent name to an object with ``act_in_env(env, agent,
    observation)``; ``seed`` seeds the env (the caller seeds the opponents)."""
    env.reset(seed=seed)
    unwrapped = env.unwrapped
    player = unwrapped.agent_to_player[human]
    key_steps_seen = 0
    lines_shown = 0
    totals = dict.fromkeys(env.possible_agents, 0.0)

    def show_new_steps():
        nonlocal key_steps_seen, lines_shown
        key = unwrapped.seat_view(human).information_state_key
        for public, private in key[key_steps_seen:]:
            text = unwrapped.game.describe_step(player, public, private)
            key_steps_seen += 1
            if text:
                lines_shown += 1
                print(f"  step {lines_shown}: {text}")

    for agent in env.agent_iter():
        observation, _, termination, truncation, _ = env.last()
        if termination or truncation or not observation["action_mask"].any():
            env.step(None)  # done, or nothing to choose (e.g. the game was over at reset)
        elif agent == human:
            show_new_steps()
            legal = {
                int(a): _plain(unwrapped.game_state.action_to_string(player, int(a)))
                for a in observation["action_mask"].nonzero()[0]
            }
            if len(legal) == 1:  # nothing to decide: played for you
                (action, name), *_ = legal.items()
                if name != "noop":
                    print(f"  you {name} (your only legal move)")
                env.step(action)
            else:
                view = _view(unwrapped, player)
                lines = [] if view is None else [view]
                lines.append(f"your turn ({human}); legal moves:")
                lines += _columns([f"{action}: {name}" for action, name in legal.items()])
                env.step(choose(lines, legal))
        else:
            env.step(opponents[agent].act_in_env(env, agent, observation))
        for rewarded, reward in env.rewards.items():
            totals[rewarded] += reward
        if env.rewards.get(human):
            show_new_steps()
            print(f"  you receive {env.rewards[human]:+g}")
    show_new_steps()
    view = _view(unwrapped, player)
    if view is not None:
        print(view)
    return totals


if __name__ == "__main__":
    sys.exit("the play command resolves the agents' specs: python -m agents.play --help")

"""Play any env yourself, in the terminal: the game loop of human play.

The command, which resolves the opponents' agent specs, lives with the agents::

    python -m agents.play leduc_holdem --against runs/nfsp_leduc
    python -m agents.play kuhn_poker --against cfr+:200 --seat 1 --games 3
    python -m agents.play goofspiel --param num_cards=5 --param imp_info=true --against ismcts:0.2s

:func:`play_game` takes the opponents as objects with ``act_in_env(env, agent,
observation)``, whatever made them. What you see is what your seat may see and nothing
else: the steps of your seat's information-state key as they come, each as ``public |
yours`` (``hiddenenvs/game.py``: the public observation of the step and your private one;
the opponents' private cards, dice, hidden bids and percepts are never shown, because your
key does not hold them), your rewards, and at your turn the legal actions by number and
name. At a simultaneous node you choose without seeing the others' choices, as the AEC env
asks. Type an action's number or name; ``q`` or end of input (Ctrl-D) quits
(:class:`Quit`). When the game ends, everyone's return is shown (the outcome is public).
The state itself is never printed.
"""

from __future__ import annotations

import sys

QUIT_WORDS = ("q", "quit", "exit")


class Quit(Exception):
    """The human asked to stop (``q`` or end of input)."""


def choose(prompt_lines: list[str], legal: dict[int, str], read=input) -> int:
    """Ask until the human names a legal action by number or name."""
    print("\n".join(prompt_lines))
    by_name = {name.lower(): action for action, name in legal.items()}
    while True:
        try:
            answer = read("your move> ").strip()
        except EOFError:
            raise Quit from None
        if answer.lower() in QUIT_WORDS:
            raise Quit
        if answer.lstrip("-").isdigit() and int(answer) in legal:
            return int(answer)
        if answer.lower() in by_name:
            return by_name[answer.lower()]
        print(f"not a legal action: {answer!r}; type one of the numbers {sorted(legal)} or a name")


def play_game(env, human: str, opponents: dict, seed: int | None) -> dict[str, float]:
    """One game; returns every agent's return. Prints only what ``human``'s seat may see.

    ``opponents`` maps every other agent name to an object with ``act_in_env(env, agent,
    observation)``; ``seed`` seeds the env (the caller seeds the opponents)."""
    env.reset(seed=seed)
    unwrapped = env.unwrapped
    player = unwrapped.agent_to_player[human]
    shown_steps = 0
    totals = dict.fromkeys(env.possible_agents, 0.0)

    def show_new_steps():
        nonlocal shown_steps
        key = unwrapped.seat_view(human).information_state_key
        for public, private in key[shown_steps:]:
            print(
                f"  step {shown_steps + 1}: {unwrapped.game.describe_step(player, public, private)}"
            )
            shown_steps += 1

    for agent in env.agent_iter():
        observation, _, termination, truncation, _ = env.last()
        if termination or truncation or not observation["action_mask"].any():
            env.step(None)  # done, or nothing to choose (e.g. the game was over at reset)
        elif agent == human:
            show_new_steps()
            legal = {
                int(a): unwrapped.game_state.action_to_string(player, int(a))
                for a in observation["action_mask"].nonzero()[0]
            }
            lines = [f"your turn ({human}); legal actions:"]
            lines += [f"  {action}: {name}" for action, name in legal.items()]
            env.step(choose(lines, legal))
        else:
            env.step(opponents[agent].act_in_env(env, agent, observation))
        for rewarded, reward in env.rewards.items():
            totals[rewarded] += reward
        if env.rewards.get(human):
            show_new_steps()
            print(f"  you receive {env.rewards[human]:+g}")
    show_new_steps()
    return totals


if __name__ == "__main__":
    sys.exit("the play command resolves the agents' specs: python -m agents.play --help")

"""Play any env yourself, in the terminal, against any agent.

    python -m hiddenenvs.play leduc_holdem --against runs/nfsp_leduc
    python -m hiddenenvs.play kuhn_poker --against cfr+:200 --seat 1 --games 3
    python -m hiddenenvs.play goofspiel --param num_cards=5 --param imp_info=true --against ismcts:0.2s

``--against`` takes the agent specs of ``evaluate.py`` (``random``, ``cfr+:<iterations>``,
``es-mccfr:<iterations>``, ``oos:<iterations or seconds>``, ``ismcts:...``, a run
directory, checkpoint or agent file, ``scripted:<name>``): one spec for every other seat,
or one per other seat in seat order. ``--seat`` is yours (default 0).

What you see is what your seat may see and nothing else: the steps of your seat's
information-state key as they come, each as ``public | yours`` (``hiddenenvs/game.py``:
the public observation of the step and your private one; the opponents' private cards,
dice, hidden bids and percepts are never shown, because your key does not hold them),
your rewards, and at your turn the legal actions by number and name. At a simultaneous
node you choose without seeing the others' choices, as the AEC env asks. Type an action's
number or name; ``q`` or end of input (Ctrl-D) quits. When the game ends, everyone's
return is shown (the outcome is public). The state itself is never printed.
"""

from __future__ import annotations

import argparse
import sys

import hiddenenvs
from hiddenenvs.registry import REGISTRY

QUIT_WORDS = ("q", "quit", "exit")


class Quit(Exception):
    """The human asked to stop (``q`` or end of input)."""


def parse_params(pairs: list[str]) -> dict:
    """``key=value`` game parameters, values read as YAML scalars would be (3, true, 0.5, text)."""
    params = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"--param takes key=value, got {pair!r}")
        lowered = value.lower()
        if lowered in ("true", "false"):
            params[key] = lowered == "true"
            continue
        for kind in (int, float):
            try:
                params[key] = kind(value)
                break
            except ValueError:
                pass
        else:
            params[key] = value
    return params


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
    """One game; returns every agent's return. Prints only what ``human``'s seat may see."""
    from agents.leaderboard.matches import agent_generator

    env.reset(seed=seed)
    for seat, agent in enumerate(env.possible_agents):
        if agent in opponents and seed is not None:
            opponents[agent].rng = agent_generator(seed, seat)
    unwrapped = env.unwrapped
    player = unwrapped.agent_to_player[human]
    shown_steps = 0
    totals = dict.fromkeys(env.possible_agents, 0.0)

    def show_new_steps():
        nonlocal shown_steps
        key = unwrapped.seat_view(human).information_state_key
        for public, private in key[shown_steps:]:
            print(f"  step {shown_steps + 1}: {public!r}" + ("" if private is None else f" | yours: {private!r}"))
            shown_steps += 1

    for agent in env.agent_iter():
        observation, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
        elif agent == human:
            show_new_steps()
            legal = {int(a): unwrapped.state.action_to_string(player, int(a))
                     for a in observation["action_mask"].nonzero()[0]}
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("env", help=f"a registered env: {', '.join(sorted(REGISTRY))}")
    parser.add_argument("--against", nargs="+", default=["random"], metavar="SPEC",
                        help="agent spec(s) for the other seats (evaluate.py's specs); default random")
    parser.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                        help="a game parameter (repeatable)")
    parser.add_argument("--seed", type=int, default=None, help="first game's seed (then +1 per game)")
    parser.add_argument("--games", type=int, default=1, help="games to play (default 1)")
    args = parser.parse_args(argv)

    from agents.leaderboard.specs import AgentSpecError, resolve_agent

    params = parse_params(args.param)
    try:
        env = hiddenenvs.make(args.env, **params)
    except (ValueError, TypeError) as error:
        parser.error(str(error))
    seats = len(env.possible_agents)
    if not 0 <= args.seat < seats:
        parser.error(f"--seat must be in 0..{seats - 1} for {args.env}, got {args.seat}")
    human = env.possible_agents[args.seat]
    others = [p for p in range(seats) if p != args.seat]
    if len(args.against) not in (1, len(others)):
        parser.error(f"--against takes one spec, or one per other seat ({len(others)}), got {len(args.against)}")
    specs = args.against * len(others) if len(args.against) == 1 else args.against
    try:
        opponents = {env.possible_agents[p]: resolve_agent(spec, args.env, p, params) for p, spec in zip(others, specs)}
    except AgentSpecError as error:
        parser.error(str(error))
    print(f"{args.env}: you are {human} (seat {args.seat}) against "
          + ", ".join(f"{agent}: {spec}" for agent, spec in zip(opponents, specs)))
    grand_total = 0.0
    try:
        for game_index in range(args.games):
            seed = None if args.seed is None else args.seed + game_index
            print(f"game {game_index + 1} of {args.games}")
            totals = play_game(env, human, opponents, seed)
            grand_total += totals[human]
            print("game over; returns: " + ", ".join(f"{agent} {value:+g}" for agent, value in totals.items()))
    except Quit:
        print("\nstopped")
    print(f"your total: {grand_total:+g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Hard limits and bad inputs: each case a clear error naming the input and the limit."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
import pytest
from gymnasium.spaces import Discrete

import hiddenenvs
from hiddenenvs.envs.combat.maps import (
    MAPS_DIR,
    MAX_CELLS,
    MAX_DESTINATIONS,
    CombatMap,
    MapError,
)
from hiddenenvs.envs.gdl.game import GAMES_DIR
from hiddenenvs.envs.gdl.ground import DEFAULT_MAX_INSTANCES
from hiddenenvs.envs.gdl.parser import (
    GdlGroundingLimitError,
    GdlRecursionError,
    GdlRuleError,
    GdlSyntaxError,
    parse_text,
)
from hiddenenvs.envs.gdl.propnet import Propnet
from hiddenenvs.envs.gdl.validate import MAX_OR_ALTERNATIVES, MAX_TERM_DEPTH

RPS = (GAMES_DIR / "biased_rps.gdl").read_text()
REPO = Path(__file__).resolve().parent.parent


def _sheet(extra: str, text: str = RPS) -> Propnet:
    return Propnet(parse_text(text + "\n" + extra, "game.kif"), max_instances=50_000)


# ---- GDL ---------------------------------------------------------------------------------
def test_or_expansion_is_counted_before_it_is_done():
    body = " ".join("(or (hand rock) (hand paper))" for _ in range(26))  # 2^26 rules
    with pytest.raises(
        GdlSyntaxError,
        match=rf"game.kif:\d+:1: rule for foo: .* more than "
        rf"{MAX_OR_ALTERNATIVES:,} rules \(the limit\)",
    ):
        _sheet(f"(<= foo {body})")
    # not (or a b c) is one rule (De Morgan), so it is not counted as three.
    negated = " ".join("(not (or (hand rock) (hand paper) (hand scissors)))" for _ in range(26))
    _sheet(f"(<= foo (hand ?h) {negated})")


def test_deep_terms_are_refused_at_their_line_before_grounding():
    deep = "(g " * 330 + "a" + ")" * 330
    with pytest.raises(
        GdlSyntaxError,
        match=rf"game.kif:\d+:\d+: a term in the 'deep' rule at line "
        rf"\d+ nests more than {MAX_TERM_DEPTH} levels",
    ):
        _sheet(f"(deep {deep})\n(<= (legal ?r (wait)) (role ?r) (deep ?x) (true (round 1)))")


def test_terms_nested_deep_by_rules_are_a_located_error_not_a_recursion_crash():
    # Each rule wraps its argument 90 levels deeper: the sheet's terms stay under the limit,
    # the ground terms reach 1,080 levels, past Python's recursion limit.
    wrap = lambda depth, inner: "(f " * depth + inner + ")" * depth  # noqa: E731
    chain = "\n".join(f"(<= (p{k + 1} {wrap(90, '?x')}) (p{k} ?x))" for k in range(12))
    extra = f"(p0 a)\n{chain}\n(<= (legal ?r (wait ?x)) (role ?r) (p12 ?x) (true (round 1)))"
    with pytest.raises(
        GdlRecursionError, match=r"game.kif:\d+:\d+: the rules build terms nested too deeply"
    ):
        _sheet(extra)


def test_a_role_without_a_legal_rule_is_refused_at_load_time():
    text = RPS.replace(
        "(<= (legal ?r (throw ?h)) (role ?r) (hand ?h) (true (round 1)))",
        "(<= (legal row (throw ?h)) (hand ?h) (true (round 1)))",
    )
    with pytest.raises(
        GdlRuleError, match=r"game.kif:\d+:1: role column has no legal rule in game.kif"
    ):
        Propnet(parse_text(text, "game.kif"))


def test_grounding_blow_up_is_refused_naming_the_rule():
    numbers = "".join(f"(num {i})" for i in range(60))
    blow_up = "(<= (next (big ?a ?b ?c ?d)) (num ?a) (num ?b) (num ?c) (num ?d) (true (round 1)))"
    with pytest.raises(
        GdlGroundingLimitError,
        match=r"game.kif:\d+:1: grounding exceeds the limit of "
        r"50,000 instances; the rule for \(next \(big",
    ):
        _sheet(numbers + "\n" + blow_up)


DEFAULT_LIMIT_WORKER = r"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]),) * 2)
from hiddenenvs.envs.gdl.parser import GdlGroundingLimitError, parse_text
from hiddenenvs.envs.gdl.propnet import Propnet
try:
    Propnet(parse_text(sys.stdin.read(), "game.kif"))
except GdlGroundingLimitError as error:
    print(error)
"""


def test_grounding_blow_up_is_refused_at_the_default_limit_in_bounded_memory():
    # 13 million instances; the default limit stops it after 5-10 s of CPU
    # (benchmarks/bench_gdl_refusal.py), in well under the 1.5 GiB of address space the
    # worker gets (the old default, 3,000,000, needed about 2 GiB and 20-60 s).
    numbers = "".join(f"(num {i})" for i in range(60))
    blow_up = "(<= (next (big ?a ?b ?c ?d)) (num ?a) (num ?b) (num ?c) (num ?d) (true (round 1)))"
    worker = subprocess.run(
        [sys.executable, "-c", DEFAULT_LIMIT_WORKER, str(3 << 29)],
        input=f"{RPS}\n{numbers}\n{blow_up}",
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert worker.returncode == 0, worker.stderr[-2000:]
    assert re.match(
        rf"game.kif:\d+:1: grounding exceeds the limit of {DEFAULT_MAX_INSTANCES:,} "
        r"instances; the rule for \(next \(big",
        worker.stdout,
    ), worker.stdout


@pytest.mark.parametrize(
    "name", ["../games/tictactoe", "../../pettingzoo_env.py", "/etc/passwd", "..", ""]
)
def test_sheet_names_cannot_leave_the_shipped_folder(name):
    if name == "":  # empty means the default sheet
        assert hiddenenvs.load_game("gdl", sheet=name).info.short_name == "tictactoe"
        return
    with pytest.raises(
        ValueError, match="sheet= takes the name of a shipped rule sheet, not a path"
    ):
        hiddenenvs.load_game("gdl", sheet=name)


def test_sheet_text_given_as_a_path_says_so():
    with pytest.raises(ValueError, match=r"rules= takes the path of a rule sheet file, got text"):
        hiddenenvs.load_game("gdl", rules="(role a)\n(init (cell 1))")


# ---- combat maps ------------------------------------------------------------------------------
def _map(rows: int, cols: int, destinations: int) -> dict:
    data = json.loads((MAPS_DIR / "small.json").read_text())
    data["rows"] = ["W" * cols] + ["W" + "." * (cols - 2) + "W"] * (rows - 2) + ["W" * cols]
    data["destinations"] = [{"name": f"d{k}", "area": [0, 0]} for k in range(destinations)]
    return data


@pytest.mark.parametrize(
    "rows, cols, destinations, message",
    [
        (400, 400, 10_000, rf"400 x 400 cells is too large: .* {MAX_CELLS:,} cells in all"),
        (2000, 2000, 9, "2000 x 2000 cells is too large"),
        (16, 4096, 9, "16 x 4096 cells is too large: the limits are 512 cells a side"),
        (48, 48, 10_000, rf"10,000 destinations; the limit is {MAX_DESTINATIONS}"),
    ],
)
def test_oversized_maps_are_refused_before_allocating(rows, cols, destinations, message):
    with pytest.raises(MapError, match=message):
        CombatMap.from_dict(_map(rows, cols, destinations), source="huge.json")


def test_too_many_areas_and_oversized_files_are_refused(tmp_path):
    data = _map(200, 200, 9)
    data["area_size"] = 4  # 2,500 areas
    with pytest.raises(MapError, match="2,500 areas of 4 x 4 cells; the limit is 1,024"):
        CombatMap.from_dict(data, source="fine.json")
    path = tmp_path / "big.json"
    path.write_text(" " * (5 << 20) + "{}")
    with pytest.raises(MapError, match=r"big.json: 5,242,882 bytes; the limit is 4,194,304"):
        CombatMap.load(str(path))


def _small_map_text(field: str, value: str) -> str:
    """small.json with ``field``'s value replaced by the JSON text ``value``."""
    data = json.loads((MAPS_DIR / "small.json").read_text())
    data[field] = "@VALUE@"
    return json.dumps(data).replace('"@VALUE@"', value)


@pytest.mark.parametrize(
    "field, value, message",
    [
        (
            "birth_points",
            '{"attackers": [true, 4], "defenders": [1, 1]}',
            r"birth_points\['attackers'\] must be \[row, col\] \(two integers\), got \[True, 4\]",
        ),
        ("rows", '["", "", ""]', r"'rows' must be a non-empty list of non-empty strings"),
        (
            "door_capacity",
            str(2**70),
            r"'door_capacity' must be an integer in \[1, 1,024\], got 1180591620717411303424",
        ),
        (
            "max_ticks",
            "9" * 5_000,
            r"'max_ticks' must be an integer in \[1, 1,000,000\], got <a number of 5,000 digits>",
        ),
        ("max_ticks", "-" + "9" * 5_000, r"'max_ticks' must be .*, got <a number of 5,000 digits>"),
        ("max_ticks", "1e400", r"'max_ticks' must be an integer in \[1, 1,000,000\], got inf"),
        ("area_size", "NaN", r"'area_size' must be an integer in \[1, 512\], got nan"),
        (
            "destinations",
            '[{"name": "' + "n" * 10_000 + '", "area": [0, 0]}]',
            r"destination 0: 'name' must be a string of at most 60 characters, got 'n+\.\.\.n+'",
        ),
        (
            "destinations",
            "[" * 100_000 + "]" * 100_000,
            r"not valid JSON \(values nest too deeply\)",
        ),
    ],
)
def test_hostile_map_values_are_one_line_errors_naming_file_and_field(
    tmp_path, field, value, message
):
    path = tmp_path / "hostile.json"
    path.write_text(_small_map_text(field, value))
    with pytest.raises(MapError) as error:
        CombatMap.load(str(path))
    text = str(error.value)
    assert text.startswith(f"map {path}: "), text[:300]
    assert re.search(message, text), text[:300]
    assert "\n" not in text and len(text) < 200 + len(str(path)), text[:400]


def test_a_serpentine_map_at_full_size_has_exact_distance_fields():
    """A one-cell corridor winding over a 240 x 240 map: the longest shortest paths there are."""
    from test_combat import _bfs_to_area

    rows = [["W"] * 240] + [["W"] + ["."] * 238 + ["W"] for _ in range(238)] + [["W"] * 240]
    for row in range(2, 238, 2):
        rows[row][1:239] = ["#"] * 238
        rows[row][238 if row % 4 == 2 else 1] = "."
    data = _map(240, 240, 2)
    data.update(
        rows=["".join(r) for r in rows],
        area_size=20,
        birth_points={"attackers": [1, 1], "defenders": [237, 237]},
        destinations=[{"name": "corner", "area": [0, 0]}, {"name": "far", "area": [11, 11]}],
    )
    combat_map = CombatMap.from_dict(data, source="serpentine.json")
    for index, area in enumerate(combat_map.destination_areas):
        assert np.array_equal(combat_map.distance_fields[index], _bfs_to_area(combat_map, area))
    assert combat_map.distance_fields[0].max(initial=0, where=combat_map.passable) > 20_000


# ---- env entry points --------------------------------------------------------------------------
def test_aec_entry_points_name_bad_inputs():
    env = hiddenenvs.make("kuhn_poker")
    with pytest.raises(
        ValueError, match=r"reset\(seed=...\) takes None or a non-negative integer, got -1"
    ):
        env.reset(seed=-1)
    with pytest.raises(TypeError, match=r"got 1.5 \(float\)"):
        env.reset(seed=1.5)
    env.reset(seed=np.int64(3))
    with pytest.raises(
        ValueError, match=r"no agent named 'player_7'; agents: \['player_0', 'player_1'\]"
    ):
        env.observe("player_7")
    for bad in (1.7, "1", True, [1]):
        with pytest.raises(
            TypeError,
            match=rf"action for player_0 must be an integer in 0..1, got {re.escape(repr(bad))}",
        ):
            env.step(bad)
    env.step(np.int64(1))  # numpy integers are integers


def test_parallel_entry_points_name_bad_inputs():
    env = hiddenenvs.make_parallel("rps")
    with pytest.raises(ValueError, match=r"call reset\(\) before step\(\)"):
        env.step({"player_0": 0, "player_1": 0})
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"unknown agent\(s\) 'player_9'"):
        env.step({"player_0": 0, "player_1": 0, "player_9": 1})
    with pytest.raises(TypeError, match=r"action for player_1 must be an integer .* got '2'"):
        env.step({"player_0": 0, "player_1": "2"})
    with pytest.raises(TypeError, match=r"takes a dict \{agent: action\}, got list"):
        env.step([0, 0])
    env.step({"player_0": 0, "player_1": np.int32(2)})
    with pytest.raises(ValueError, match="the episode is over"):
        env.step({"player_0": 0, "player_1": 0})


def test_a_dead_fighter_s_action_is_refused_naming_it():
    """PettingZoo's parallel API: step() takes actions for ``env.agents``, the agents still
    in play; an action for a fighter that died is a caller's bug, refused by name."""
    env = hiddenenvs.make_parallel("combat", mode="fighter", map="small")
    observations, _ = env.reset(seed=1)
    rng = np.random.default_rng(1)
    while env.agents and len(env.agents) == len(
        env.possible_agents
    ):  # seed 1: one dies at step 186
        observations, *_ = env.step(
            {
                agent: int(rng.choice(np.flatnonzero(observations[agent]["action_mask"])))
                for agent in env.agents
            }
        )
    assert 0 < len(env.agents) < len(env.possible_agents)
    dead = next(agent for agent in env.possible_agents if agent not in env.agents)
    actions = {
        agent: int(np.flatnonzero(observations[agent]["action_mask"])[0]) for agent in env.agents
    }
    with pytest.raises(
        ValueError,
        match=rf"combat: step\(\) got actions for agent\(s\) no longer in play "
        rf"'{dead}' \(terminated or truncated earlier\)",
    ):
        env.step({**actions, dead: 0})
    env.step(actions)  # the live agents' actions alone are played


@pytest.mark.parametrize("make", [hiddenenvs.make, hiddenenvs.make_parallel])
def test_spaces_of_an_unknown_agent_name_the_known_agents(make):
    env = make("rps")
    for method in ("action_space", "observation_space"):
        with pytest.raises(
            ValueError, match=r"rps: no agent named 'nobody'; agents: \['player_0', 'player_1'\]"
        ):
            getattr(env, method)("nobody")
        with pytest.raises(ValueError, match=r"no agent named \['player_0'\]"):
            getattr(env, method)(["player_0"])  # unhashable: the same error, not a TypeError


def test_large_seeds_use_all_their_bits_as_gymnasium_does():
    """Gymnasium's ``seeding.np_random`` takes any non-negative integer (``SeedSequence``
    reads all its bits); so does ``reset(seed=...)`` here (Python's ``random.seed``):
    2**70 and 2**70 + 2**64 deal different cards (a seed cut to 64 bits would make them
    one), and a seed replays its deals."""

    def deals(seed):  # player_0's card in 20 Kuhn episodes: reset(seed), then reset()
        env = hiddenenvs.make("kuhn_poker")
        cards = []
        for episode in range(20):
            env.reset(seed=seed if episode == 0 else None)
            cards.append(int(np.argmax(env.observe("player_0")["observation"][2:5])))
        return cards

    assert deals(2**70) == deals(2**70)
    assert deals(2**70) != deals(2**70 + 2**64)
    with pytest.raises(ValueError, match=r"takes None or a non-negative integer, got -1"):
        hiddenenvs.make_parallel("rps").reset(seed=-1)


# ---- errors that used to be swallowed ------------------------------------------------------------
def test_a_broken_scripted_bot_import_is_an_error_not_no_bots(monkeypatch):
    from agents.leaderboard.specs import resolve_agent

    monkeypatch.setitem(sys.modules, "agents.scripted", None)  # importing it raises ImportError
    with pytest.raises(ImportError):
        resolve_agent("scripted:meier", "meier", 0, {})


def test_sb3_wrapper_does_not_hide_a_type_error_behind_an_unmasked_policy():
    from agents.sb3 import FrozenSB3Agent

    class Policy:
        def __init__(self, **_):
            pass

        def _get_constructor_parameters(self):
            return {}

        def state_dict(self):
            return {}

        def load_state_dict(self, _):
            pass

        def set_training_mode(self, _):
            pass

        def get_distribution(self, observations, action_masks=None):
            raise TypeError("a bug inside the policy")

    agent = FrozenSB3Agent(types.SimpleNamespace(action_space=Discrete(3), policy=Policy()))
    assert agent.takes_masks
    with pytest.raises(TypeError, match="a bug inside the policy"):
        agent.policy_probabilities_batch(np.zeros((1, 4)), np.ones((1, 3)))


# ---- leaderboard identity ------------------------------------------------------------------------
def test_a_replaced_agent_file_is_a_new_agent(tmp_path):
    from agents import TabularPolicyAgent
    from agents.cfr import CFRSolver
    from agents.leaderboard import AgentSpecError, evaluate, resolve_agent
    from agents.leaderboard.specs import agent_identity

    path = tmp_path / "agent.pt"
    db = tmp_path / "board.sqlite"

    def cfr_agent(iterations):  # one agent for both seats
        solver = CFRSolver(hiddenenvs.load_game("kuhn_poker"), variant="cfr+")
        solver.iterate(iterations)
        return TabularPolicyAgent.from_policy(solver.average_policy())

    cfr_agent(5).save(path)
    first = agent_identity(str(path))
    evaluate(
        "kuhn_poker",
        {},
        ["random", str(path)],
        games=3,
        db_path=db,
        workers=1,
        exploitability_max_nodes=0,
        progress=False,
    )
    cfr_agent(60).save(path)  # same path, new agent
    second = agent_identity(str(path))
    assert first != second and first.startswith(f"{path}#sha256:")
    with pytest.raises(AgentSpecError, match="its file has changed"):
        resolve_agent(first, "kuhn_poker", 0, {})
    board = evaluate(
        "kuhn_poker",
        {},
        ["random", str(path)],
        games=3,
        db_path=db,
        workers=1,
        exploitability_max_nodes=0,
        progress=False,
    )
    assert {s.agent for s in board.standings} == {"random", first, second}
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT COUNT(*) FROM matches").fetchone()[0] == 12
    assert agent_identity("random") == "random" and agent_identity("cfr+:5") == "cfr+:5"


# ---- run configs --------------------------------------------------------------------------------
LAUGHS = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
)


@pytest.mark.parametrize(
    "text, message",
    [
        (LAUGHS + "seed: *i\n", r":9:\d+: more than 64 YAML aliases"),
        (
            "x: &k0 [1, 2]\n"
            + "".join(f"k{i}: &k{i} [*k{i - 1}, *k{i - 1}]\n" for i in range(1, 40))
            + "seed: *k39\n",
            r":\d+:\d+: more than 64 YAML aliases",
        ),
        (
            "x: &k0 [1, 2]\n"
            + "".join(f"k{i}: &k{i} [*k{i - 1}, *k{i - 1}]\n" for i in range(1, 31))
            + "seed: *k30\n",
            r":\d+:\d+: expands into more than 100,000 values \(YAML aliases\?\), the limit",
        ),
        (
            "env: {name: kuhn_poker, params: &a {}}\nbudget: [*a, *a]\n",
            r"budget must be a mapping, got \[\{\}, \{\}\]",
        ),
        ("seed: &a [*a]\n", r":1:7: a YAML alias refers to its own anchor"),
        (
            "seed: !!python/object/apply:os.system ['true']\n",
            r":1:7: YAML tag 'tag:yaml.org,2002:python/object/apply:os.system' is not allowed",
        ),
        ("output_dir: !!python/name:os.system\n", r":1:13: YAML tag .* is not allowed in a config"),
        (
            "seed: " + "[" * 100_000 + "]" * 100_000 + "\n",
            r":1:39: values nest more than 32 levels deep",
        ),
        (
            "".join(" " * i + "a:\n" for i in range(0, 200, 2)),
            r":\d+:\d+: values nest more than 32 levels",
        ),
        ("seed: " + "9" * 5_000 + "\n", r":1:7: a number of 5,000 digits"),
        ("seed: [1, 2\n", r":2:\d+: not valid YAML: expected ',' or ']'"),
        ("seed: \x00\n", r"character 7 \(code point 0x0\) is not allowed in YAML"),
        ("budget: {seconds: .nan}\n", r"budget.seconds must be a finite number, got nan"),
        ("budget: {seconds: -5}\n", r"budget.seconds must be > 0, got -5.0"),
        ("budget: {seconds: .inf}\n", r"budget.seconds must be a finite number, got inf"),
        (
            "trainer: {name: nfsp, params: {rl_learning_rate: .nan}}\n",
            r"trainer.params.rl_learning_rate must be a finite number, got nan",
        ),
        (
            "trainer: {name: nfsp, params: {sl_learning_rate: 0}}\n",
            r"trainer.params.sl_learning_rate must be > 0",
        ),
        (
            "trainer: {name: nfsp, params: {hidden_sizes: [-64]}}\n",
            r"trainer.params.hidden_sizes\[0\] must be >= 1, got -64",
        ),
        (
            "trainer: {name: nfsp, params: {discount: 1.5}}\n",
            r"trainer.params.discount must be in \[0, 1\], got 1.5",
        ),
        (
            "seed: 1180591620717411303424\n",
            r"seed must be at most 2\*\*63 - 1, got 1180591620717411303424",
        ),
        ("seed: -1\n", r"seed must be >= 0, got -1"),
        (
            "trainer: {name: nfsp, params: {reservoir_capacity: 1e11}}\n",
            (
                r"the run needs at least [\d,.]+ GiB of memory \(trainer.params.reservoir_capacity=100000000000.0: "
                r"[\d,.]+ GiB\); the limit here is [\d,.]+ GiB"
            ),
        ),
        (
            "trainer: {name: nfsp, params: {hidden_sizes: [100000, 100000]}}\n",
            r"the run needs at least [\d,.]+ GiB of memory \(trainer.params.hidden_sizes=\[100000, 100000\]",
        ),
        (
            "output_dir: " + "x" * 10_000 + "\n",
            r"output_dir 'x+\.\.\.x+': a name of 10,000 bytes in it; the file system takes at most 255",
        ),
        (
            "".join(f"k{i}: {i}\n" for i in range(20)),
            r"unknown key\(s\) \['k0', 'k1', 'k10', 'k11', 'k12'\] and 15 more; allowed keys:",
        ),
        (
            "env: {name: " + "n" * 100_000 + "}\n",
            r"env.name: unknown env 'n+\.\.\.n+'; registered envs: ",
        ),
        (
            "trainer: {name: nfsp, params: {optimizer: " + "x" * 10_000 + "}}\n",
            r"trainer.params.optimizer must be 'adam' or 'sgd', got 'x+\.\.\.$",
        ),
        (
            "env: {name: kuhn_poker, params: {" + "p" * 1_000 + ": 1}}\n",
            r"env: kuhn_poker: unknown parameter\(s\) .*\.\.\.$",
        ),
    ],
)
def test_hostile_configs_are_one_line_errors_naming_the_file(tmp_path, text, message):
    from agents.config import QUOTE_CHARS, ConfigError, load_config

    path = tmp_path / "hostile.yaml"
    path.write_text(
        text + f"output_dir: {tmp_path / 'run'}\n" if "output_dir" not in text else text
    )
    with pytest.raises(ConfigError) as error:
        load_config(path)
    text = str(error.value)
    assert text.startswith(f"{path}:"), text[:300]
    assert re.search(message, text), text[:300]
    assert "\n" not in text and len(text) < 400 + 2 * QUOTE_CHARS + len(str(path)), text[:600]


def test_many_environments_are_refused_with_an_estimate(tmp_path):
    from agents.config import ConfigError, load_config

    with pytest.raises(
        ConfigError,
        match=r"the run needs at least [\d,.]+ GiB of memory "
        r"\(num_envs=100000000: [\d,.]+ GiB\)",
    ):
        load_config(
            REPO / "configs" / "nfsp_kuhn.yaml", ["num_envs=100000000", f"output_dir={tmp_path}"]
        )


def test_an_output_dir_inside_a_file_is_refused(tmp_path):
    from agents.config import ConfigError, load_config

    (tmp_path / "file").write_text("")
    with pytest.raises(
        ConfigError,
        match=re.escape(
            f"output_dir '{tmp_path}/file/run': '{tmp_path}/file' is a file, not a directory"
        ),
    ):
        load_config(None, [f"output_dir={tmp_path}/file/run"])


def test_scientific_notation_is_a_number_in_files_and_overrides(tmp_path):
    from agents.config import load_config

    path = tmp_path / "run.yaml"
    path.write_text(
        (REPO / "configs" / "nfsp_kuhn.yaml").read_text()
        + f"output_dir: {tmp_path / 'run'}\n".replace("output_dir", "output_dir")
    )
    text = path.read_text().replace("rl_learning_rate: 0.01", "rl_learning_rate: 1e-3")
    path.write_text(text.replace("output_dir: runs/nfsp_kuhn\n", ""))
    config = load_config(
        path,
        [
            "trainer.params.sl_learning_rate=5E-4",
            "budget.episodes=1e5",
            "evaluation.every_episodes=2.5e+3",
        ],
    )
    assert config.trainer.params["rl_learning_rate"] == 0.001
    assert config.trainer.params["sl_learning_rate"] == 0.0005
    assert config.budget.episodes == 100_000 and isinstance(config.budget.episodes, int)
    assert config.evaluation.every_episodes == 2_500


@pytest.mark.parametrize("name", sorted(p.name for p in (REPO / "configs").glob("*.yaml")))
def test_every_shipped_config_passes_the_limits(tmp_path, name):
    from agents.config import load_config

    load_config(REPO / "configs" / name, [f"output_dir={tmp_path / 'run'}"])


# ---- GGP player over HTTP (loopback only) -----------------------------------------------------------
@pytest.fixture
def player_server(monkeypatch):
    import threading

    from agents.ggp_player import spec_player
    from hiddenenvs.ggp import player as player_module

    monkeypatch.setattr(player_module._Handler, "timeout", 1.0)  # cut a stalled client off in 1 s
    player = spec_player("random", seed=0)
    server = player_module.serve(player, host="127.0.0.1", port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield player, server.server_address[1]
    server.shutdown()
    server.server_close()
    player.close()


def _exchange(port: int, data: bytes) -> bytes:
    """Send ``data`` on a new loopback connection; everything the player sends back until
    it closes the connection (it answers HTTP/1.0: one request per connection)."""
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(data)
        received = b""
        for _ in range(1_000):  # bounded: the player closes after its answer
            chunk = connection.recv(65_536)
            if not chunk:
                break
            received += chunk
    return received


def _post(port: int, body: str) -> tuple[int, str]:
    data = body.encode()
    reply = _exchange(
        port,
        b"POST / HTTP/1.0\r\nContent-Type: text/acl\r\nContent-Length: "
        + str(len(data)).encode()
        + b"\r\n\r\n"
        + data,
    )
    head, _, text = reply.partition(b"\r\n\r\n")
    return int(head.split()[1]), text.decode()


@pytest.mark.parametrize("declared", [b"abc", b"-5", b"1e3", b"\xd9\xa3", b"9" * 40])
def test_player_answers_malformed_content_length_with_400(player_server, declared):
    _, port = player_server
    reply = _exchange(port, b"POST / HTTP/1.0\r\nContent-Length: " + declared + b"\r\n\r\n(info)")
    status = int(reply.split()[1])
    if declared == b"9" * 40:
        assert status == 413 and b"the limit is 4,000,000" in reply
    else:
        assert status == 400 and b"Content-Length must be a non-negative integer" in reply, reply
    assert _post(port, "(info)")[0] == 200  # the player still serves


def test_player_cuts_a_stalled_client_off(player_server):
    import socket

    _, port = player_server
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(
            b"POST / HTTP/1.0\r\nContent-Length: 100\r\n\r\n(in"
        )  # 97 bytes never come
        assert connection.recv(1_024) == b""  # closed by the player at its read timeout, no answer
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(b"POST / HTTP/1.0\r\n")  # the headers never end
        assert connection.recv(1_024) == b""  # http.server's own read times out and closes
    assert _post(port, "(info)")[0] == 200


def _start(match_id: str, start_clock: float = 30, sheet: str = RPS) -> str:
    rules = " ".join(line.split(";", 1)[0] for line in sheet.splitlines())
    return f"(start {match_id} row ({rules}) {start_clock:g} 5)"


def test_player_caps_matches_and_releases_them_at_stop_abort_and_idle(player_server):
    from hiddenenvs.envs.gdl import propnet
    from hiddenenvs.ggp.player import MAX_MATCHES

    player, port = player_server
    for index in range(MAX_MATCHES):
        assert _post(port, _start(f"m{index}")) == (200, "ready")
    directories = [match.directory for match in player.matches.values()]
    sheets = [str(match.sheet_path) for match in player.matches.values()]
    assert all(d.is_dir() for d in directories)
    assert {key[0] for key in propnet._SHEETS.entries} >= set(sheets)
    status, text = _post(port, _start("one_too_many"))
    assert status == 503 and f"{MAX_MATCHES} matches in progress (the limit)" in text
    assert _post(port, "(stop m0 nil)") == (200, "done")
    assert _post(port, "(abort m1)") == (200, "aborted")
    assert _post(port, _start("m4")) == (200, "ready")
    player.handle("(info)", received=time.monotonic() + 10**6)  # every match idle past its limit
    assert player.matches == {}
    assert not any(d.is_dir() for d in directories)
    assert not {key[0] for key in propnet._SHEETS.entries} & set(sheets), "compiled sheets kept"


def test_player_answers_start_within_its_clock_and_grounds_one_sheet_at_a_time(
    player_server, monkeypatch
):
    import threading

    from hiddenenvs.ggp import player as player_module

    player, port = player_server
    release = threading.Event()
    slow_directories = []
    real_load = player_module.load_sheet_game

    def slow_load(path, max_instances, max_load_seconds):  # a sheet that grounds past the clock
        assert 0 < max_load_seconds <= 0.5  # what the 1 s start clock leaves the GDL reader
        slow_directories.append(Path(path).parent)
        release.wait(60)
        return real_load(path, max_instances)

    monkeypatch.setattr(player_module, "load_sheet_game", slow_load)
    status, text = _post(port, _start("slow", start_clock=1.0))
    assert status == 400 and "not read and grounded within the start clock less 0.5 s" in text
    status, text = _post(port, _start("next"))  # the slow sheet still grounds: one at a time
    assert status == 503 and "still being read and grounded" in text
    monkeypatch.setattr(player_module, "load_sheet_game", real_load)
    release.set()
    for _ in range(600):  # the late load ends, its match is closed, the lock is free
        if player.loading.acquire(timeout=0.1):
            player.loading.release()
            break
    assert not slow_directories[0].exists() and "slow" not in player.matches
    assert _post(port, _start("next")) == (200, "ready")

"""Fuzzing: mutated rule sheets, map files, run configs (as dicts and as YAML files), agent
files, GGP message sequences, and runs into and resumes of a run directory (some of its
files damaged) end in a clear error or success, in bounded time and
memory, never a crash; so do generated small sheets played through the parallel and AEC
envs and a GGP match (terminal at reset, forced moves, up to 24 roles, simultaneous
moves, goal values that break the rules), sheet paths that are not regular files, and
vector envs with any batch size, seed and action.

Every case runs in one worker process whose address space is capped with
``resource.setrlimit(RLIMIT_AS)`` (:data:`MEMORY_LIMIT`): a case that tried to allocate
past it would die with a ``MemoryError``, which counts as a failure, as does any error
that is not the loader's own (``GdlError``, ``MapError``, ``ConfigError``, the agent file
errors, the GGP player's), a message of several lines or longer than
:data:`MAX_MESSAGE_CHARS` (configs, maps, agent files), or a case that takes longer than
:data:`SECONDS_PER_CASE` (wall clock; the worker is killed past it). The default run tries
:data:`EXAMPLES` cases per property (``FUZZ_EXAMPLES``); the ``slow`` variants try
:data:`SLOW_EXAMPLES` (``FUZZ_SLOW_EXAMPLES``).
"""

from __future__ import annotations

import base64
import json
import os
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
MEMORY_LIMIT = 3 << 30  # bytes of address space for the worker (torch's import needs ~1.5 GiB)
SECONDS_PER_CASE = 30.0  # generous: the shared machine is slow; the cases take < 1 s alone
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "12"))
SLOW_EXAMPLES = int(os.environ.get("FUZZ_SLOW_EXAMPLES", "150"))
MAX_MESSAGE_CHARS = 1_500
ONE_LINE_KINDS = (
    "config",
    "config_yaml",
    "map",
    "map_json",
    "agent_file",
    "gdl_play",
    "gdl_file",
    "vector",
    "runs",
)

WORKER = r"""
import base64, itertools, json, resource, shutil, sys, tempfile, time, traceback
from pathlib import Path
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
import hiddenenvs
from agents.base import load_agent_file
from agents.checkpoint import (AgentGameMismatchError, CorruptedFileError, UnsafeFileError,
                               check_agent_fits_game)
from agents.config import ConfigError, config_from_dict, load_config
from agents.ggp_player import spec_player
from hiddenenvs.envs.combat.maps import CombatMap, MapError
from hiddenenvs.envs.gdl.parser import GdlError, parse_text
from hiddenenvs.envs.gdl.propnet import Propnet
from hiddenenvs.ggp.kif import MessageError
from hiddenenvs.ggp.player import ProtocolError

FILES = Path(tempfile.mkdtemp(prefix="fuzz-limits-"))
NUMBERS = itertools.count()
KUHN = hiddenenvs.load_game("kuhn_poker")


def written(suffix, data):  # a new file each case (the map loader caches by path)
    path = FILES / f"case{next(NUMBERS)}{suffix}"
    (path.write_bytes if isinstance(data, bytes) else path.write_text)(data)
    return path


def load_yaml_config(text):
    return load_config(written(".yaml", text + f"\noutput_dir: {FILES / 'run'}\n"))


def load_agent(encoded):
    path = written(".pt", base64.b64decode(encoded))
    check_agent_fits_game(load_agent_file(path), KUHN, path)


def play_messages(messages):
    player = spec_player("random", seed=0)
    try:
        for message in messages:
            try:
                player.handle(message)
            except (ProtocolError, MessageError, GdlError, ValueError):
                pass  # answered with HTTP 400 and the message
    finally:
        player.close()


def play_sheet(text):  # a random game through the parallel and AEC envs; a GGP START, STOP
    import random
    import numpy as np
    path = written(".kif", text)
    rng = random.Random(0)
    env = hiddenenvs.make_parallel("gdl", rules=str(path), max_instances=20_000)
    observations, _ = env.reset(seed=0)
    while env.agents:
        actions = {}
        for agent in env.agents:
            legal = np.flatnonzero(observations[agent]["action_mask"]).tolist()
            actions[agent] = rng.choice(legal) if legal else 0
        observations, *_ = env.step(actions)
    aec = hiddenenvs.make("gdl", rules=str(path), max_instances=20_000)
    aec.reset(seed=0)
    for agent in aec.agent_iter(100_000):
        observation, _, termination, truncation, _ = aec.last()
        legal = np.flatnonzero(observation["action_mask"]).tolist()
        aec.step(None if termination or truncation or not legal else rng.choice(legal))
    player = spec_player("random", seed=0)
    try:
        role = text.split("(role ", 1)[1].split(")", 1)[0]
        player.handle(f"(start m {role} ({text}) 30 5)")
        player.handle("(stop m nil)")
        assert not player.matches, "a STOP left its match open"
    finally:
        player.close()


def read_sheet_file(case):
    kind, = case
    path = FILES / f"case{next(NUMBERS)}.kif"
    if kind == "device":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        import os
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "dangling":
        path.symlink_to(FILES / "nowhere")
    hiddenenvs.load_game("gdl", rules=str(path))


def step_vector(case):
    import hiddenenvs.vector as vector
    import numpy as np
    env = vector.make(case["name"], num_envs=case["num_envs"], seed=case["seed"])
    env.reset()
    shape = (env.num_envs, env.num_players) if env.simultaneous else (env.num_envs,)
    dtype = np.uint64 if case["action"] >= 2**63 else np.int64
    if case["action"] < -(2**63) or case["action"] >= 2**64:
        actions = np.full(shape, case["action"], dtype=object)
    else:
        actions = np.full(shape, case["action"], dtype=dtype)
    env.step(actions)


class RunRefused(Exception):  # train.py refused a step in one line, leaving the run as it was
    pass


def train_quietly(arguments):  # train.py's exit status and its stderr
    import contextlib, io
    import train
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = train.main(arguments)
    return status, err.getvalue().strip()


def files_of(directory):
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def run_directory_steps(case):
    # A small CFR run, then the case's steps on its run directory: another run into it, a
    # resume with overrides, a file of it damaged. A refused step must say so in one line
    # (exit 2, or 1 for an unreadable file) and leave the directory as it was.
    run = FILES / f"run{next(NUMBERS)}"
    tiny = ["budget.iterations=4", "evaluation.every_iterations=2",
            "checkpoint_every_iterations=2", "progress_bar=false"]
    status, err = train_quietly(["--config", "configs/cfr_kuhn.yaml", f"output_dir={run}"] + tiny)
    assert status == 0, err
    refusals = []
    for step in case:
        kind, argument = step
        if kind == "damage":
            name, how = argument
            path = run / name
            if path.is_file():
                data = path.read_bytes()
                path.write_bytes({"truncate": data[: len(data) // 2], "garbage": b"\x00garbage",
                                  "empty": b""}[how])
            continue
        before = files_of(run)
        if kind == "again":
            arguments = ["--config", "configs/cfr_kuhn.yaml", f"output_dir={run}"] + tiny + argument
        else:  # resume
            arguments = ["--resume", str(run), "budget.iterations=8"] + argument
        status, err = train_quietly(arguments)
        if status == 0:
            assert kind == "resume", f"a second run replaced the first: {arguments}"
            continue
        assert "\n" not in err and "Traceback" not in err and 0 < len(err) <= 1500, err[:3000]
        assert status in (1, 2), (status, err)
        if kind == "again" or status == 2:
            assert files_of(run) == before, f"a refused step changed the run: {arguments}"
        refusals.append(err)
    if refusals:
        raise RunRefused(" | ".join(refusals))


LOADERS = {
    "runs": (run_directory_steps, RunRefused),
    "gdl": (lambda case: Propnet(parse_text(case, "fuzz.kif"), max_instances=20_000), GdlError),
    "map": (lambda case: CombatMap.from_dict(case, source="fuzz.json"), MapError),
    "map_json": (lambda case: CombatMap.load(str(written(".json", case))), MapError),
    "config": (config_from_dict, ConfigError),
    "config_yaml": (load_yaml_config, ConfigError),
    "agent_file": (load_agent, (UnsafeFileError, CorruptedFileError, AgentGameMismatchError)),
    "ggp": (play_messages, ()),
    "gdl_play": (play_sheet, GdlError),
    "gdl_file": (read_sheet_file, GdlError),
    "vector": (step_vector, (ValueError, TypeError)),
}
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    load, clear = LOADERS[request["kind"]]
    start = time.perf_counter()
    try:
        load(request["case"])
        outcome, message = "ok", ""
    except clear as error:
        outcome, message = "clear", str(error)
    except BaseException:
        outcome, message = "crash", traceback.format_exc()
    print(json.dumps({"outcome": outcome, "message": message,
                      "seconds": time.perf_counter() - start}), flush=True)
shutil.rmtree(FILES, ignore_errors=True)
"""


def _start_worker() -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(MEMORY_LIMIT)],
        cwd=REPO,
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    ready, _, _ = select.select([process.stdout], [], [], 300)
    if not ready or not process.stdout.readline():
        process.kill()
        pytest.fail("the fuzz worker did not start")
    return process


@pytest.fixture(scope="module")
def worker():
    processes = [_start_worker()]

    def run(kind: str, case) -> dict:
        process = processes[0]
        process.stdin.write(json.dumps({"kind": kind, "case": case}) + "\n")
        process.stdin.flush()
        ready, _, _ = select.select([process.stdout], [], [], SECONDS_PER_CASE)
        if not ready:  # a hang: kill it, start another for the next case, and fail this one
            process.kill()
            process.wait()
            processes[0] = _start_worker()
            pytest.fail(
                f"{kind} case still running after {SECONDS_PER_CASE:g} s: {str(case)[:300]}"
            )
        reply = process.stdout.readline()
        if not reply:
            code = process.wait()
            processes[0] = _start_worker()
            pytest.fail(f"the worker died (exit {code}) on this {kind} case: {str(case)[:300]}")
        result = json.loads(reply)
        assert result["outcome"] != "crash", f"{kind} case crashed:\n{result['message']}"
        if result["outcome"] == "clear":
            message = result["message"]
            assert message.strip(), "an error without a message"
            if kind in ONE_LINE_KINDS:
                assert "\n" not in message and len(message) <= MAX_MESSAGE_CHARS, message[:3000]
        return result

    yield run
    processes[0].stdin.close()
    processes[0].wait(timeout=30)


def fuzz_property(kind: str, strategy, examples: int, slow: bool = False):
    """A test that hands ``examples`` cases drawn from ``strategy`` to the worker."""

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
        ],
    )
    @given(case=strategy)
    def test(worker, case):
        worker(kind, case)

    return pytest.mark.slow(test) if slow else test


# ---- rule sheets ----------------------------------------------------------------------------
SHEETS = ["biased_rps.gdl", "monty_hall.gdl", "tictactoe.gdl"]
TOKEN = re.compile(r"\(|\)|[^\s();]+")
INSERTS = [
    "(",
    ")",
    "(or",
    "(not",
    "(distinct",
    "(<=",
    "?x",
    "?y",
    "legal",
    "true",
    "does",
    "next",
    "init",
    "sees",
    "goal",
    "terminal",
    "role",
    "random",
    "100",
    "101",
    "-1",
    "base",
]


def _tokens(name: str) -> list[str]:
    text = "\n".join(
        line.split(";", 1)[0]
        for line in (REPO / "hiddenenvs/envs/gdl/games" / name).read_text().splitlines()
    )
    return TOKEN.findall(text)


@st.composite
def mutated_sheets(draw) -> str:
    tokens = list(_tokens(draw(st.sampled_from(SHEETS))))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["delete", "insert", "duplicate", "swap", "nest", "or"]))
        at = draw(st.integers(0, len(tokens) - 1))
        if kind == "delete":
            del tokens[at : at + draw(st.integers(1, 3))]
        elif kind == "insert":
            tokens.insert(at, draw(st.sampled_from(INSERTS)))
        elif kind == "duplicate":
            length = draw(st.integers(1, 40))
            tokens[at:at] = tokens[at : at + length] * draw(st.integers(1, 30))
        elif kind == "swap":
            other = draw(st.integers(0, len(tokens) - 1))
            tokens[at], tokens[other] = tokens[other], tokens[at]
        elif kind == "nest":
            depth = draw(st.integers(1, 600))
            tokens[at : at + 1] = ["(f"] * depth + [tokens[at]] + [")"] * depth
        else:  # a run of disjunctions, the or-expansion bomb
            tokens[at:at] = ["(or", "(true", "x)", "(true", "y))"] * draw(st.integers(1, 30))
        if not tokens:
            tokens = ["("]
    return " ".join(tokens)


test_mutated_rule_sheets_end_in_a_clear_gdl_error = fuzz_property("gdl", mutated_sheets(), EXAMPLES)
test_many_mutated_rule_sheets = fuzz_property("gdl", mutated_sheets(), SLOW_EXAMPLES, slow=True)


# ---- map files ----------------------------------------------------------------------------------
SMALL_MAP = json.loads((REPO / "hiddenenvs/envs/combat/maps/small.json").read_text())
ODD_VALUES = st.one_of(
    st.integers(-10, 10),
    st.integers(-(2**63), 2**63),
    st.none(),
    st.text(max_size=3),
    st.lists(st.integers(-5, 50), max_size=3),
    st.floats(allow_nan=True),
    st.booleans(),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)


@st.composite
def mutated_maps(draw) -> dict:
    data = json.loads(json.dumps(SMALL_MAP))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["value", "drop", "resize", "destinations", "birth", "cell"]))
        if kind == "value":
            data[draw(st.sampled_from(sorted(data)))] = draw(ODD_VALUES)
        elif kind == "drop":
            data.pop(draw(st.sampled_from(sorted(data))), None)
        elif kind == "resize":  # up to 3000 x 3000 cells: far past the limits
            height, width = draw(st.integers(1, 3000)), draw(st.integers(1, 3000))
            data["rows"] = (
                ["W" * width]
                + ["W" + "." * max(0, width - 2) + "W"] * max(0, height - 2)
                + ["W" * width]
            )
            data["area_size"] = draw(st.sampled_from([1, 2, 4, 8, 20, 0, -3]))
        elif kind == "destinations":
            count = draw(st.integers(0, 20_000))
            data["destinations"] = [
                {"name": str(k), "area": [draw(st.integers(-2, 8)), 1]}
                for k in range(min(count, 3))
            ] * max(1, count // 3)
        elif kind == "birth":
            data["birth_points"] = {"attackers": draw(ODD_VALUES), "defenders": [1, 1]}
        else:
            rows = data.get("rows")
            if isinstance(rows, list) and rows and isinstance(rows[0], str) and rows[0]:
                row = draw(st.integers(0, len(rows) - 1))
                col = draw(st.integers(0, len(rows[row]) - 1)) if rows[row] else 0
                rows[row] = rows[row][:col] + draw(st.sampled_from(".#WDx")) + rows[row][col + 1 :]
    return data


test_mutated_map_files_end_in_a_clear_map_error = fuzz_property("map", mutated_maps(), EXAMPLES)
test_many_mutated_map_files = fuzz_property("map", mutated_maps(), SLOW_EXAMPLES, slow=True)

SMALL_MAP_TEXT = json.dumps(SMALL_MAP)
ODD_JSON = [
    "true",
    "null",
    "NaN",
    "-Infinity",
    "1e400",
    "9" * 5_000,
    "-" + "9" * 400,
    str(2**70),
    '""',
    "[]",
    "{}",
    "[true, 4]",
    '["", ""]',
    "[" * 5_000 + "]" * 5_000,
    '"' + "x" * 10_000 + '"',
    "0.5",
]


@st.composite
def mutated_map_texts(draw) -> str:
    """small.json as text: a field's value replaced by odd JSON, or the text cut or spliced."""
    kind = draw(st.sampled_from(["value", "value", "cut", "splice"]))
    if kind == "value":
        data = json.loads(SMALL_MAP_TEXT)
        field = draw(
            st.sampled_from(sorted(data) + ["birth_points.attackers", "destinations.0.area"])
        )
        parent, _, child = field.partition(".")
        marker = '"@ODD@"'
        if child:
            target = data[parent]
            key = int(child.split(".")[0]) if parent == "destinations" else child
            if parent == "destinations":
                target[key]["area"] = "@ODD@"
            else:
                target[key] = "@ODD@"
        else:
            data[parent] = "@ODD@"
        return json.dumps(data).replace(marker, draw(st.sampled_from(ODD_JSON)), 1)
    at = draw(st.integers(0, len(SMALL_MAP_TEXT)))
    if kind == "cut":
        return SMALL_MAP_TEXT[:at]
    return (
        SMALL_MAP_TEXT[:at]
        + draw(st.sampled_from(ODD_JSON + ["{", "]", ",", '"']))
        + SMALL_MAP_TEXT[at:]
    )


test_mutated_map_texts_end_in_a_clear_map_error = fuzz_property(
    "map_json", mutated_map_texts(), EXAMPLES
)
test_many_mutated_map_texts = fuzz_property(
    "map_json", mutated_map_texts(), SLOW_EXAMPLES, slow=True
)


# ---- run configs ---------------------------------------------------------------------------------
KUHN_CONFIG = yaml.safe_load((REPO / "configs" / "nfsp_kuhn.yaml").read_text())


def _paths(value, prefix=()):
    if isinstance(value, dict):
        for key, item in value.items():
            yield prefix + (key,)
            yield from _paths(item, prefix + (key,))


PATHS = sorted(_paths(KUHN_CONFIG))


@st.composite
def mutated_configs(draw) -> dict:
    data = json.loads(json.dumps(KUHN_CONFIG))
    data["output_dir"] = "runs/fuzz"  # never written: only validated
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(PATHS))
        parent = data
        for key in path[:-1]:
            parent = parent.get(key) if isinstance(parent, dict) else None
        if not isinstance(parent, dict):
            continue
        kind = draw(st.sampled_from(["value", "drop", "unknown"]))
        if kind == "value":
            parent[path[-1]] = draw(
                ODD_VALUES | st.sampled_from(["gdl", "combat", "chess", "../x"])
            )
        elif kind == "drop":
            parent.pop(path[-1], None)
        else:
            parent[draw(st.text(min_size=1, max_size=5))] = draw(ODD_VALUES)
    return data


test_mutated_configs_end_in_a_clear_config_error = fuzz_property(
    "config", mutated_configs(), EXAMPLES
)
test_many_mutated_configs = fuzz_property("config", mutated_configs(), SLOW_EXAMPLES, slow=True)

KUHN_TEXT = (
    (REPO / "configs" / "nfsp_kuhn.yaml").read_text().replace("output_dir: runs/nfsp_kuhn\n", "")
)
YAML_LINES = [line for line in KUHN_TEXT.splitlines() if line.strip() and not line.startswith("#")]
LAUGHS = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
)
ODD_YAML = [
    ".nan",
    "-.inf",
    "1e-3",
    "5E+4",
    "1e400",
    "9" * 5_000,
    "-5",
    "0",
    "[-64]",
    "!!python/object:os.system {}",
    "!!python/name:os.system",
    "!!binary aGk=",
    "*undefined",
    "[" * 3_000 + "]" * 3_000,
    "&x [*x]",
    "{a: 1, a: 2}",
    "'" + "x" * 10_000 + "'",
    "yes",
    "~",
    "2018-01-01",
    "0x_1f",
    "1_000",
    ":",
    "- 1",
    "\t",
]


@st.composite
def mutated_yaml_configs(draw) -> str:
    """nfsp_kuhn.yaml as text: a value replaced by odd YAML, a line dropped or cut, or a
    billion-laughs block put before it."""
    lines = list(YAML_LINES)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["value", "value", "drop", "cut", "laughs"]))
        at = draw(st.integers(0, len(lines) - 1))
        if kind == "value" and ":" in lines[at]:
            key = lines[at].split(":", 1)[0]
            lines[at] = f"{key}: {draw(st.sampled_from(ODD_YAML))}"
        elif kind == "drop":
            del lines[at]
        elif kind == "cut":
            lines[at] = lines[at][: draw(st.integers(0, len(lines[at])))]
        else:
            lines[0:0] = LAUGHS.splitlines() + [f"seed: *{chr(97 + draw(st.integers(0, 8)))}"]
        if not lines:
            lines = ["{}"]
    return "\n".join(lines) + "\n"


test_mutated_yaml_configs_end_in_a_clear_config_error = fuzz_property(
    "config_yaml", mutated_yaml_configs(), EXAMPLES
)
test_many_mutated_yaml_configs = fuzz_property(
    "config_yaml", mutated_yaml_configs(), SLOW_EXAMPLES, slow=True
)


# ---- agent files --------------------------------------------------------------------------------
def _agent_file_bytes() -> bytes:
    import io

    import torch

    from agents.networks import AveragePolicyAgent, mlp

    torch.manual_seed(0)
    agent = AveragePolicyAgent(
        mlp(11, [4], 2), {"input_size": 11, "hidden_sizes": [4], "num_actions": 2}
    )
    from agents.checkpoint import registered_agent_name, to_data

    buffer = io.BytesIO()
    torch.save(
        to_data(
            {
                "format": "hiddenenvs-agent-v2",
                "agent": registered_agent_name(AveragePolicyAgent),
                "state": agent.state_dict(),
            }
        ),
        buffer,
    )
    return buffer.getvalue()


AGENT_FILE = _agent_file_bytes()


@st.composite
def damaged_agent_files(draw) -> str:
    """A Kuhn agent file (base64) with bytes flipped, cut short, inserted or overwritten."""
    data = bytearray(AGENT_FILE)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "flip", "cut", "insert", "overwrite"]))
        at = draw(st.integers(0, max(0, len(data) - 1)))
        if kind == "flip" and data:
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "cut":
            del data[at:]
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=64))
        else:
            chunk = draw(st.binary(min_size=1, max_size=64))
            data[at : at + len(chunk)] = chunk
    return base64.b64encode(bytes(data)).decode()


test_damaged_agent_files_end_in_a_clear_error = fuzz_property(
    "agent_file", damaged_agent_files(), EXAMPLES
)
test_many_damaged_agent_files = fuzz_property(
    "agent_file", damaged_agent_files(), SLOW_EXAMPLES, slow=True
)


# ---- GGP messages -----------------------------------------------------------------------------------
RPS_RULES = " ".join(
    line.split(";", 1)[0]
    for line in (REPO / "hiddenenvs/envs/gdl/games/biased_rps.gdl").read_text().splitlines()
)
GGP_MATCH = [
    "(info)",
    f"(start m row ({RPS_RULES}) 30 5)",
    "(play m nil)",
    "(play m 1 (throw rock) ((threw column paper)))",
    "(stop m 1 (throw rock) nil)",
    "(abort m)",
]
GGP_ODD = [
    "(",
    ")",
    "nil",
    "m",
    "other",
    "(play)",
    "-1",
    "1e999",
    "0",
    "nan",
    "(throw rock)",
    "(start)",
    "((((((((((((((((((((",
    "(info) (info)",
    "\x00",
    "x" * 5_000,
    "row",
    "random",
    "(f " * 300,
]


@st.composite
def mutated_ggp_matches(draw) -> list[str]:
    """A GDL-II match's messages (biased rock-paper-scissors) dropped, repeated, swapped or
    with a token replaced or inserted."""
    messages = list(GGP_MATCH)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["drop", "repeat", "swap", "token", "insert"]))
        at = draw(st.integers(0, len(messages) - 1))
        if kind == "drop" and len(messages) > 1:
            del messages[at]
        elif kind == "repeat":
            messages.insert(at, messages[at])
        elif kind == "swap":
            other = draw(st.integers(0, len(messages) - 1))
            messages[at], messages[other] = messages[other], messages[at]
        else:
            tokens = messages[at].replace("(", " ( ").replace(")", " ) ").split()
            position = draw(st.integers(0, len(tokens)))
            odd = draw(st.sampled_from(GGP_ODD))
            if kind == "token" and position < len(tokens):
                tokens[position] = odd
            else:
                tokens.insert(position, odd)
            messages[at] = " ".join(tokens)
    return messages


test_mutated_ggp_messages_are_answered_never_crash = fuzz_property(
    "ggp", mutated_ggp_matches(), EXAMPLES
)
test_many_mutated_ggp_messages = fuzz_property(
    "ggp", mutated_ggp_matches(), SLOW_EXAMPLES, slow=True
)


# ---- generated sheets played through every adapter ------------------------------------------
GOAL_VALUES = ["0", "50", "100", "100", "50", "101", "\u00b2", "9" * 5_000, "050"]


@st.composite
def generated_sheets(draw) -> str:
    """Roles with 1-4 moves (1: forced), up to 24 of them, an optional ``random`` role, a
    game over after 0-4 steps (0: at its initial state); each role's goal a drawn value,
    sometimes a second one when its last move was (m 1) (two goal values: a conflict)."""
    moves = draw(st.lists(st.integers(1, 4), min_size=1, max_size=draw(st.sampled_from([3, 24]))))
    with_random = draw(st.booleans())
    length = draw(st.integers(0, 4))
    roles = [f"r{i}" for i in range(len(moves))] + (["random"] if with_random else [])
    lines = [" ".join(f"(role {r})" for r in roles), "(init (step 0))"]
    lines += [f"(succ {k} {k + 1})" for k in range(4)]
    for role, count in zip(roles, moves + ([2] if with_random else [])):
        lines += [f"(legal {role} (m {m}))" for m in range(1, count + 1)]
    lines += [
        "(<= (next (step ?y)) (true (step ?x)) (succ ?x ?y))",
        "(<= (next (last ?r ?m)) (does ?r ?m))",
        f"(<= terminal (true (step {length})))",
    ]
    for role in roles[: len(moves)]:
        lines.append(f"(goal {role} {draw(st.sampled_from(GOAL_VALUES))})")
        if draw(st.integers(0, 9)) == 0:
            lines.append(f"(<= (goal {role} 0) (true (last {role} (m 1))))")
    return "\n".join(lines) + "\n"


test_generated_sheets_play_through_every_adapter = fuzz_property(
    "gdl_play", generated_sheets(), EXAMPLES
)
test_many_generated_sheets = fuzz_property("gdl_play", generated_sheets(), SLOW_EXAMPLES, slow=True)


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and /dev/zero are POSIX")
@pytest.mark.parametrize("kind", ["device", "fifo", "directory", "dangling"])
def test_sheet_paths_that_are_not_regular_files_are_refused(worker, kind):
    assert worker("gdl_file", [kind])["outcome"] == "clear"


# ---- run directories and resume ---------------------------------------------------------------
OVERRIDES = st.lists(
    st.sampled_from(
        [
            "seed=3",
            "trainer.name=nfsp",
            "env.name=leduc_holdem",
            "env.params.deck_size=5",
            "trainer.params.variant=cfr",
            "budget.iterations=0",
            "budget.iterations=-1",
            "output_dir=",
            "env.name=",
            "seed=nan",
        ]
    ),
    max_size=2,
)
run_steps = st.lists(
    st.one_of(
        st.tuples(st.just("again"), OVERRIDES),
        st.tuples(st.just("resume"), OVERRIDES),
        st.tuples(
            st.just("damage"),
            st.tuples(
                st.sampled_from(["checkpoint.pt", "config.yaml", "metrics.csv", "run.json"]),
                st.sampled_from(["truncate", "garbage", "empty"]),
            ),
        ),
    ),
    min_size=1,
    max_size=3,
)
# Each case trains up to four times (about 1 s of CPU each): a third of the examples.
test_run_directories_are_never_overwritten_and_resume_checks_them = fuzz_property(
    "runs", run_steps, max(2, EXAMPLES // 3)
)
test_many_run_directory_cases = fuzz_property("runs", run_steps, SLOW_EXAMPLES // 5, slow=True)


# ---- vector envs -----------------------------------------------------------------------------
vector_cases = st.fixed_dictionaries(
    {
        "name": st.sampled_from(["kuhn_poker", "leduc_holdem", "rps", "goofspiel", "othello"]),
        "num_envs": st.one_of(st.integers(1, 64), st.sampled_from([10**6, 10**7, 10**9, 2**63])),
        "seed": st.one_of(
            st.none(), st.integers(0, 2**70), st.sampled_from([-1, 2**64 - 1, 2**64, 2**200])
        ),
        "action": st.one_of(
            st.integers(-1, 3), st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63) - 1])
        ),
    }
)
test_vector_envs_take_any_size_seed_and_action = fuzz_property("vector", vector_cases, EXAMPLES)
test_many_vector_cases = fuzz_property("vector", vector_cases, SLOW_EXAMPLES, slow=True)

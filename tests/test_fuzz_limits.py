"""Fuzzing: mutated rule sheets, map files and run configs end in a clear error, in bounded
time and memory, never a crash.

Every case runs in one worker process whose address space is capped with
``resource.setrlimit(RLIMIT_AS)`` (:data:`MEMORY_LIMIT`): a case that tried to allocate
past it would die with a ``MemoryError``, which counts as a failure, as does any error
that is not the loader's own (``GdlError``, ``MapError``, ``ConfigError``) or a case that
takes longer than :data:`SECONDS_PER_CASE`. Examples per property are few (the default run
takes well under a minute); raise ``FUZZ_EXAMPLES`` to search longer.
"""

from __future__ import annotations

import json
import os
import re
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
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "40"))

WORKER = r"""
import json, resource, sys, time, traceback
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from agents.config import ConfigError, config_from_dict
from hiddenenvs.envs.combat.maps import CombatMap, MapError
from hiddenenvs.envs.gdl.parser import GdlError, parse_text
from hiddenenvs.envs.gdl.propnet import Propnet

LOADERS = {
    "gdl": (lambda case: Propnet(parse_text(case, "fuzz.kif"), max_instances=20_000), GdlError),
    "map": (lambda case: CombatMap.from_dict(case, source="fuzz.json"), MapError),
    "config": (config_from_dict, ConfigError),
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
"""


@pytest.fixture(scope="module")
def worker():
    process = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(MEMORY_LIMIT)], cwd=REPO, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    ready = process.stdout.readline()
    if not ready:
        pytest.fail(f"fuzz worker did not start: {process.stderr.read()}")

    def run(kind: str, case) -> dict:
        process.stdin.write(json.dumps({"kind": kind, "case": case}) + "\n")
        process.stdin.flush()
        reply = process.stdout.readline()
        assert reply, f"the worker died on this {kind} case: {process.stderr.read()[-2000:]}"
        result = json.loads(reply)
        assert result["outcome"] != "crash", f"{kind} case crashed:\n{result['message']}"
        if result["outcome"] == "clear":
            assert result["message"].strip(), "an error without a message"
        assert result["seconds"] < SECONDS_PER_CASE, f"{kind} case took {result['seconds']:.1f} s"
        return result

    yield run
    process.stdin.close()
    process.wait(timeout=30)


FUZZ_SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                         suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                HealthCheck.too_slow, HealthCheck.data_too_large])

# ---- rule sheets ----------------------------------------------------------------------------
SHEETS = ["biased_rps.gdl", "monty_hall.gdl", "tictactoe.gdl"]
TOKEN = re.compile(r"\(|\)|[^\s();]+")
INSERTS = ["(", ")", "(or", "(not", "(distinct", "(<=", "?x", "?y", "legal", "true", "does",
           "next", "init", "sees", "goal", "terminal", "role", "random", "100", "101", "-1", "base"]


def _tokens(name: str) -> list[str]:
    text = "\n".join(line.split(";", 1)[0] for line in (REPO / "hiddenenvs/envs/gdl/games" / name)
                     .read_text().splitlines())
    return TOKEN.findall(text)


@st.composite
def mutated_sheets(draw) -> str:
    tokens = list(_tokens(draw(st.sampled_from(SHEETS))))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["delete", "insert", "duplicate", "swap", "nest", "or"]))
        at = draw(st.integers(0, len(tokens) - 1))
        if kind == "delete":
            del tokens[at:at + draw(st.integers(1, 3))]
        elif kind == "insert":
            tokens.insert(at, draw(st.sampled_from(INSERTS)))
        elif kind == "duplicate":
            length = draw(st.integers(1, 40))
            tokens[at:at] = tokens[at:at + length] * draw(st.integers(1, 30))
        elif kind == "swap":
            other = draw(st.integers(0, len(tokens) - 1))
            tokens[at], tokens[other] = tokens[other], tokens[at]
        elif kind == "nest":
            depth = draw(st.integers(1, 600))
            tokens[at:at + 1] = ["(f"] * depth + [tokens[at]] + [")"] * depth
        else:  # a run of disjunctions, the or-expansion bomb
            tokens[at:at] = ["(or", "(true", "x)", "(true", "y))"] * draw(st.integers(1, 30))
        if not tokens:
            tokens = ["("]
    return " ".join(tokens)


@FUZZ_SETTINGS
@given(text=mutated_sheets())
def test_mutated_rule_sheets_end_in_a_clear_gdl_error(worker, text):
    worker("gdl", text)


# ---- map files ----------------------------------------------------------------------------------
SMALL_MAP = json.loads((REPO / "hiddenenvs/envs/combat/maps/small.json").read_text())
ODD_VALUES = st.one_of(st.integers(-10, 10), st.integers(-(2**63), 2**63), st.none(), st.text(max_size=3),
                       st.lists(st.integers(-5, 50), max_size=3), st.floats(allow_nan=True),
                       st.booleans(), st.dictionaries(st.text(max_size=2), st.integers(), max_size=2))


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
            data["rows"] = ["W" * width] + ["W" + "." * max(0, width - 2) + "W"] * max(0, height - 2) + ["W" * width]
            data["area_size"] = draw(st.sampled_from([1, 2, 4, 8, 20, 0, -3]))
        elif kind == "destinations":
            count = draw(st.integers(0, 20_000))
            data["destinations"] = [{"name": str(k), "area": [draw(st.integers(-2, 8)), 1]}
                                    for k in range(min(count, 3))] * max(1, count // 3)
        elif kind == "birth":
            data["birth_points"] = {"attackers": draw(ODD_VALUES), "defenders": [1, 1]}
        else:
            rows = data.get("rows")
            if isinstance(rows, list) and rows and isinstance(rows[0], str) and rows[0]:
                row = draw(st.integers(0, len(rows) - 1))
                col = draw(st.integers(0, len(rows[row]) - 1)) if rows[row] else 0
                rows[row] = rows[row][:col] + draw(st.sampled_from(".#WDx")) + rows[row][col + 1:]
    return data


@FUZZ_SETTINGS
@given(data=mutated_maps())
def test_mutated_map_files_end_in_a_clear_map_error(worker, data):
    worker("map", data)


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
            parent[path[-1]] = draw(ODD_VALUES | st.sampled_from(["gdl", "combat", "chess", "../x"]))
        elif kind == "drop":
            parent.pop(path[-1], None)
        else:
            parent[draw(st.text(min_size=1, max_size=5))] = draw(ODD_VALUES)
    return data


@FUZZ_SETTINGS
@given(data=mutated_configs())
def test_mutated_configs_end_in_a_clear_config_error(worker, data):
    worker("config", data)

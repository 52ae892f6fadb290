"""How long and how much memory each hostile input of issue 40 takes to be refused.

Each case runs in a fresh child process: the child imports what the case needs, writes
its hostile file to a temporary folder, then times the call that refuses it and reports
how far the call raised the process's peak resident set (``ru_maxrss`` after the call
minus before it, the imports of torch and the package already done; 0 means the refusal
stayed under the peak the imports had reached, about 400 MB). The table is what
``docs/guides/limits.md`` quotes.

    python benchmarks/bench_limits.py              # every case
    python benchmarks/bench_limits.py laughs tag   # the cases named
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

PRELUDE = r"""
import json, resource, sys, tempfile, time
from pathlib import Path
import torch, hiddenenvs, agents.config, agents.nfsp, agents.specs, agents.ggp_player  # the baseline
hiddenenvs.load_game("kuhn_poker")
folder = Path(tempfile.mkdtemp(prefix="bench-limits-"))
def write(name, data):
    path = folder / name
    (path.write_bytes if isinstance(data, bytes) else path.write_text)(data)
    return path
def config(text):
    from agents.config import load_config
    path = write("hostile.yaml", text + ("" if "output_dir" in text else f"\noutput_dir: {folder / 'run'}\n"))
    return lambda: load_config(path)
def map_file(field, value):
    from hiddenenvs.envs.combat.maps import MAPS_DIR, CombatMap
    data = json.loads((MAPS_DIR / "small.json").read_text())
    data[field] = "@V@"
    path = write("hostile.json", json.dumps(data).replace('"@V@"', value))
    return lambda: CombatMap.load(str(path))
def agent_file(damage):
    from agents.base import load_agent_file
    from agents.networks import AveragePolicyAgent, mlp
    path = folder / "agent.pt"
    AveragePolicyAgent(mlp(11, [64], 2), {"input_size": 11, "hidden_sizes": [64], "num_actions": 2}).save(path)
    path.write_bytes(damage(path.read_bytes()))
    return lambda: load_agent_file(path)
"""

RUN = r"""
call = make()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
try:
    call()
    message = "(accepted)"
except Exception as error:
    message = f"{type(error).__name__}: {error}"
seconds = time.perf_counter() - start
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(json.dumps({"seconds": seconds, "peak_growth_mb": grown / 1024, "message": message}))
"""

LAUGHS = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
)

CASES = {
    # configs
    "laughs": f"make = lambda: config({LAUGHS + 'seed: *i'!r})",
    "alias_chain": "make = lambda: config('x: &k0 [1, 2]\\n' + ''.join(f'k{i}: &k{i} [*k{i-1}, *k{i-1}]\\n' "
    "for i in range(1, 31)) + 'seed: *k30')",
    "tag": "make = lambda: config(\"seed: !!python/object/apply:os.system ['true']\")",
    "nesting": "make = lambda: config('seed: ' + '[' * 500_000 + ']' * 500_000)",
    "digits": "make = lambda: config('seed: ' + '9' * 5_000)",
    "big_file": "make = lambda: config('#' * (2 << 20))",
    "seconds_nan": "make = lambda: config('budget: {seconds: .nan}')",
    "seconds_negative": "make = lambda: config('budget: {seconds: -5}')",
    "learning_rate_nan": "make = lambda: config('trainer: {name: nfsp, params: {rl_learning_rate: .nan}}')",
    "hidden_negative": "make = lambda: config('trainer: {name: nfsp, params: {hidden_sizes: [-64]}}')",
    "num_envs": "make = lambda: config('num_envs: 100000000')",
    "reservoir": "make = lambda: config('trainer: {name: nfsp, params: {reservoir_capacity: 1e11}}')",
    "output_dir": "make = lambda: config('output_dir: /proc/version/run')",
    # combat maps
    "birth_point": "make = lambda: map_file('birth_points', '{\"attackers\": [true, 4], \"defenders\": [1, 1]}')",
    "empty_rows": 'make = lambda: map_file(\'rows\', \'["", "", ""]\')',
    "door_capacity": "make = lambda: map_file('door_capacity', str(2**70))",
    "max_ticks_digits": "make = lambda: map_file('max_ticks', '9' * 5_000)",
    # agent files
    "agent_truncated": "make = lambda: agent_file(lambda data: data[:len(data) // 2])",
    "agent_bit_flip": "make = lambda: agent_file(lambda data: data[:600] + bytes([data[600] ^ 16]) + data[601:])",
    "agent_other_game": (
        "def make():\n"
        "    from agents.networks import AveragePolicyAgent, mlp\n"
        "    from agents.specs import load_agent\n"
        "    path = folder / 'kuhn.pt'\n"
        "    AveragePolicyAgent(mlp(11, [64], 2), {'input_size': 11, 'hidden_sizes': [64], "
        "'num_actions': 2}).save(path)\n"
        "    return lambda: load_agent(str(path), 'leduc_holdem')"
    ),
    # GGP player
    "ggp_content_length": (
        "def make():\n"
        "    import socket, threading\n"
        "    from agents.ggp_player import spec_player\n"
        "    from hiddenenvs.ggp.player import serve\n"
        "    server = serve(spec_player('random', seed=0), port=0)\n"
        "    threading.Thread(target=server.serve_forever, daemon=True).start()\n"
        "    def send():\n"
        "        with socket.create_connection(('127.0.0.1', server.server_address[1]), timeout=30) as c:\n"
        "            c.sendall(b'POST / HTTP/1.0\\r\\nContent-Length: abc\\r\\n\\r\\n(info)')\n"
        "            reply = c.recv(4096).decode()\n"
        "        raise ValueError(reply.splitlines()[0] + ' / ' + reply.splitlines()[-1])\n"
        "    return send"
    ),
    "ggp_big_sheet": (
        "def make():\n"
        "    from agents.ggp_player import spec_player\n"
        "    player = spec_player('random', seed=0)\n"
        "    facts = ' '.join(f'(fact{k} a{k})' for k in range(177_000))\n"
        "    message = f'(start big row ((role row) (init (round 1)) {facts}) 10 5)'\n"
        "    return lambda: player.handle(message)"
    ),
}


def run(name: str) -> dict:
    child = subprocess.run(
        [sys.executable, "-c", PRELUDE + CASES[name] + "\n" + RUN],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    lines = child.stdout.strip().splitlines()
    if child.returncode or not lines:
        return {
            "seconds": float("nan"),
            "peak_growth_mb": float("nan"),
            "message": f"child failed: {child.stderr.strip()[-300:]}",
        }
    return json.loads(lines[-1])


def main(argv: list[str]) -> None:
    names = argv or list(CASES)
    print(f"{'case':<20} {'seconds':>8} {'peak +MB':>9}  message")
    for name in names:
        result = run(name)
        message = " ".join(result["message"].split())
        print(
            f"{name:<20} {result['seconds']:>8.3f} {result['peak_growth_mb']:>9.1f}  {message[:110]}",
            flush=True,
        )


if __name__ == "__main__":
    main(sys.argv[1:])

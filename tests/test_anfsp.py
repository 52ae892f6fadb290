"""ANFSP (agents/anfsp.py): its config, its accumulated gradients, and runs on Ray.

The Ray runs skip cleanly when Ray is absent (`pip install -e ".[distributed]"`). Every
test that starts Ray stops it (the learner shuts down the local Ray it started; the
cluster fixture shuts its cluster down), with at most 2 CPUs.
"""

import csv
import math
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

import train as train_cli
from agents.anfsp import ANFSPConfig, _ActorAgent, epsilon_at, mean_epsilon
from agents.base import Transition
from agents.checkpoint import load_checkpoint
from agents.config import ConfigError, config_from_dict
from agents.networks import AveragePolicyAgent, mlp

REPO = Path(__file__).resolve().parent.parent
KUHN_UNIFORM_EXPLOITABILITY = 0.4583333  # 11/24: the exploitability of uniform play

RUN = {
    "env": {"name": "kuhn_poker"},
    "trainer": {
        "name": "anfsp",
        "params": {
            "hidden_sizes": [16],
            "num_actors": 2,
            "num_cpus": 2,
            "min_reservoir_size": 100,
            "batch_size": 32,
            "optimizer": "adam",
            "rl_learning_rate": 0.01,
            "sl_learning_rate": 0.01,
            "envs_per_actor": 4,
            "target_update_every_actions": 2000,
        },
    },
    "seed": 3,
    "budget": {"episodes": 3000},
    "evaluation": {"every_episodes": 1000},
    "checkpoint_every_episodes": 500,
    "progress_bar": False,
}


def _run(output_dir, **changes):
    data = yaml.safe_load(yaml.safe_dump(RUN))
    data["output_dir"] = str(output_dir)
    for dotted, value in changes.items():
        node = data
        *parents, last = dotted.split("__")
        for part in parents:
            node = node[part]
        node[last] = value
    return data


def _rows(run_dir):
    with (Path(run_dir) / "metrics.csv").open() as handle:
        return list(csv.DictReader(handle))


# ---- no Ray needed ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "params, message",
    [
        ({"num_actors": 0}, "num_actors must be >= 1"),
        ({"gradient_every": 0}, "gradient_every must be >= 1"),
        ({"windows_in_flight": 0}, "windows_in_flight must be >= 1"),
        ({"epsilon_choices": []}, "epsilon_choices must be a non-empty list"),
        (
            {"epsilon_choices": [0.1, 1.5]},
            "epsilon_choices must be a non-empty list of rates in [0, 1]",
        ),
        ({"anticipatory": 2.0}, "anticipatory must be in [0, 1]"),
        ({"optimizer": "rmsprop"}, "optimizer must be 'adam' or 'sgd'"),
        ({"average_policy_ema": 1.0}, "average_policy_ema must be in [0, 1) (0: off)"),
        ({"actor_num_cpus": 0}, "actor_num_cpus must be > 0"),
        ({"num_actors": 4, "num_cpus": 2}, "need 4 CPUs but num_cpus is 2"),
        ({"address": "auto", "num_cpus": 2}, "drop num_cpus"),
        ({"address": " "}, "address must be 'auto' or host:port"),
        ({"num_actor": 2}, "unknown key(s) ['trainer.params.num_actor']"),
        ({"num_actors": "two"}, "trainer.params.num_actors must be int"),
    ],
)
def test_config_errors_name_the_key(params, message):
    with pytest.raises(ConfigError) as error:
        config_from_dict({"trainer": {"name": "anfsp", "params": params}})
    assert message in str(error.value)


def test_oversubscription_is_allowed_when_asked_for():
    config = ANFSPConfig(num_actors=4, actor_num_cpus=0.5, num_cpus=2)
    assert config.local_num_cpus() == 2
    assert ANFSPConfig(num_actors=3).local_num_cpus() == 3


def test_address_option_only_for_distributed_trainers(capsys):
    code = train_cli.main(
        ["--config", str(REPO / "configs" / "cfr_kuhn.yaml"), "--address", "auto"]
    )
    assert code == 2 and "does not run on Ray" in capsys.readouterr().err
    arguments = train_cli.parse_arguments(["--config", "x.yaml", "--address", "10.0.0.1:6379"])
    assert (
        train_cli._address_override({"trainer": {"name": "anfsp"}}, arguments.address)
        == 'trainer.params.address="10.0.0.1:6379"'
    )


def test_epsilon_decays_like_one_over_square_root():
    assert epsilon_at(0.2, 0, 1000) == 0.2
    assert math.isclose(epsilon_at(0.2, 3000, 1000), 0.1)  # 4x the steps: half the rate
    assert math.isclose(
        epsilon_at(0.2, 99_000, 1000) / epsilon_at(0.2, 399_000, 1000), 2.0, rel_tol=1e-3
    )


def test_chunk_gradients_are_the_sums_of_their_per_step_td_gradients():
    architecture = {"input_size": 3, "hidden_sizes": [8], "num_actions": 2}
    agent = _ActorAgent(architecture, anticipatory=1.0, seed=0)
    rng = np.random.default_rng(1)
    for step in range(7):
        done = step % 3 == 2
        agent.observe(
            Transition(
                rng.random(3, dtype=np.float32),
                np.array([1, 1], np.int8),
                int(rng.integers(2)),
                float(rng.normal()),
                rng.random(3, dtype=np.float32),
                np.zeros(2, np.int8) if done else np.array([1, step % 2], np.int8),
                done,
            )
        )
    chunks, _ = agent.td_gradients(discount=0.9, chunk_size=3)
    assert [count for _, count in chunks] == [4, 3]  # 7 steps: two chunks of at least 3
    per_step = []
    for transition in list(agent.transitions):  # one step at a time, as in the paper
        with torch.no_grad():
            next_q = agent.target_network(torch.from_numpy(transition.next_observation[None]))[0]
            legal = transition.next_action_mask > 0
            bootstrap = 0.0 if transition.done else float(next_q[torch.from_numpy(legal)].max())
        q = agent.q_network(torch.from_numpy(transition.observation[None]))[0, transition.action]
        agent.q_network.zero_grad()
        ((transition.reward + 0.9 * bootstrap - q) ** 2).backward()
        per_step.append(
            [parameter.grad.numpy().copy() for parameter in agent.q_network.parameters()]
        )
    for (got, _), steps in zip(chunks, (per_step[:4], per_step[4:])):
        for got_parameter, *step_parameters in zip(got, *steps):
            np.testing.assert_allclose(
                got_parameter, np.sum(step_parameters, axis=0), rtol=1e-5, atol=1e-6
            )
    whole, _ = agent.td_gradients(discount=0.9, chunk_size=32)  # fewer steps than a chunk: one
    assert len(whole) == 1 and whole[0][1] == 7


def test_average_policy_ema_is_the_polyak_average_of_pi_with_a_warm_up_and_what_is_evaluated():
    pytest.importorskip("ray", reason='ANFSP needs Ray: pip install -e ".[distributed]"')
    from agents.runs import build_learner

    params = dict(RUN["trainer"]["params"], average_policy_ema=0.9)
    learner = build_learner(
        config_from_dict({**RUN, "trainer": {"name": "anfsp", "params": params}})
    )
    rng = np.random.default_rng(0)
    reservoir = learner.reservoirs[0]
    for _ in range(64):
        reservoir.add(
            rng,
            observation=rng.random(11, dtype=np.float32),
            action_mask=np.ones(2, np.int8),
            action=int(rng.integers(2)),
        )
    assert all(
        torch.equal(a, p)
        for a, p in zip(
            learner.average_networks[0].parameters(), learner.policy_networks[0].parameters()
        )
    )
    # The n-th SL step's decay is min(d, (1 + n) / (10 + n)): 1/10, 2/11, 3/12, then d = 0.9
    # once the warm-up is over (n >= 81).
    for steps, decay in ((0, 1 / 10), (1, 2 / 11), (2, 3 / 12), (500, 0.9)):
        learner.sl_steps[0] = steps
        before = [p.detach().clone() for p in learner.average_networks[0].parameters()]
        learner._sl_step(0)
        assert learner.sl_steps == [steps + 1, 0]
        for old, average, current in zip(
            before,
            learner.average_networks[0].parameters(),
            learner.policy_networks[0].parameters(),
        ):
            torch.testing.assert_close(average, decay * old + (1 - decay) * current)
            assert not torch.equal(average, current)  # the SL step moved Pi; its average moved less
    sent = learner._weights()["policy"][0]  # the actors play Pi itself
    np.testing.assert_array_equal(
        sent,
        torch.nn.utils.parameters_to_vector(learner.policy_networks[0].parameters())
        .detach()
        .numpy(),
    )
    assert learner.evaluation_agent(0).network is learner.average_networks[0]
    restored = build_learner(
        config_from_dict({**RUN, "trainer": {"name": "anfsp", "params": params}})
    )
    restored.load_state_dict(learner.state_dict())
    for got, want in zip(
        restored.average_networks[0].parameters(), learner.average_networks[0].parameters()
    ):
        assert torch.equal(got, want)
    assert restored.sl_steps == [501, 0]
    learner.close()
    restored.close()


def test_the_output_without_exploration_removes_the_reservoirs_mean_exploration_rate(tmp_path):
    pytest.importorskip("ray", reason='ANFSP needs Ray: pip install -e ".[distributed]"')
    from agents.runs import build_learner

    # The closed-form mean of the schedule against the mean over its steps.
    per_step = [epsilon_at(0.2, t, 20_000) for t in range(100_000)]
    assert math.isclose(mean_epsilon(0.2, len(per_step), 20_000), np.mean(per_step), rel_tol=1e-4)
    # A network whose output is epsilon-greedy play, (1 - e) * one-hot + e * uniform over the
    # legal actions, gives back the one-hot; over one legal action nothing changes.
    architecture = {"input_size": 11, "hidden_sizes": [4], "num_actions": 3}
    network = mlp(11, [4], 3)
    exploration = 0.3
    with torch.no_grad():
        network[-1].weight.zero_()
        network[-1].bias.copy_(torch.log(torch.tensor([exploration / 2, 1 - exploration / 2, 0.5])))
    agent = AveragePolicyAgent(network, architecture, exploration_share=exploration)
    masks = np.array([[1, 1, 0], [0, 0, 1]], np.int8)
    np.testing.assert_allclose(
        agent.policy_probabilities_batch(np.zeros((2, 11)), masks),
        [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
        atol=1e-6,
    )
    untouched = AveragePolicyAgent(network, architecture).policy_probabilities_batch(
        np.zeros((1, 11)), masks[:1]
    )
    np.testing.assert_allclose(untouched, [[exploration / 2, 1 - exploration / 2, 0.0]], rtol=1e-5)
    agent.save(tmp_path / "agent.pt")  # the share travels with the exported policy
    assert AveragePolicyAgent.load(tmp_path / "agent.pt").exploration_share == exploration
    for bad in (1.0, -0.1, float("nan"), "0.1"):
        with pytest.raises(ValueError, match="exploration_share"):
            AveragePolicyAgent(network, architecture, exploration_share=bad)
    # The learner's rate: each slot's mean epsilon, weighted by its transitions.
    for option in (True, False):
        params = dict(
            RUN["trainer"]["params"],
            output_without_exploration=option,
            epsilon_decay_transitions=1000,
        )
        learner = build_learner(
            config_from_dict({**RUN, "trainer": {"name": "anfsp", "params": params}})
        )
        assert learner.reservoir_exploration_rate() == 0.0  # nothing played yet
        learner.slot_transitions = [3000, 1000]
        expected = np.average(
            [mean_epsilon(e, t, 1000) for e, t in zip(learner.epsilon_starts, [3000, 1000])],
            weights=[3000, 1000],
        )
        assert math.isclose(learner.reservoir_exploration_rate(), expected)
        assert learner.evaluation_agent(0).exploration_share == (expected if option else 0.0)
        learner.close()


# ---- on Ray ----------------------------------------------------------------------------------------
ray = pytest.importorskip("ray", reason='ANFSP runs need Ray: pip install -e ".[distributed]"')


def test_kuhn_on_a_local_ray_through_train_py(tmp_path):
    from agents.loop import train

    # Two windows queued at each actor, as in the Leduc config (the SIGKILL test runs one).
    result = train(config_from_dict(_run(tmp_path / "run", trainer__params__windows_in_flight=2)))
    assert not ray.is_initialized(), "the run must stop the local Ray it started"
    rows = _rows(tmp_path / "run")
    episodes = [int(r["episodes"]) for r in rows]
    exploitability = [float(r["exploitability"]) for r in rows]
    assert episodes[0] == 0 and episodes == sorted(set(episodes)) and len(rows) >= 4
    assert episodes[-1] == result["episodes"] >= 3000
    assert all(0.0 <= e <= 1.0 for e in exploitability)
    assert exploitability[-1] < KUHN_UNIFORM_EXPLOITABILITY  # better than uniform play
    assert float(rows[-1]["actions"]) > 0 and float(rows[-1]["reservoir_size"]) > 0
    agent = AveragePolicyAgent.load(tmp_path / "run" / "policy_player0.pt")
    probabilities = agent.policy_probabilities(np.zeros(11, np.float32), np.array([1, 1], np.int8))
    assert math.isclose(probabilities.sum(), 1.0, rel_tol=1e-6)
    state = load_checkpoint(tmp_path / "run" / "checkpoint.pt")["learner"]
    assert state["slots"]["generations"] == [1, 1] and state["counters"]["actor_replacements"] == 0


@pytest.mark.slow  # two local Ray start-ups: 0.5-2 minutes on the shared 2-core machine
def test_sigkill_then_resume_continues_from_the_checkpoint(tmp_path):
    run_dir = tmp_path / "killed"
    config_path = tmp_path / "run.yaml"
    config_path.write_text(yaml.safe_dump(_run(run_dir, budget={"episodes": 4000})))
    process = subprocess.Popen(
        [sys.executable, "train.py", "--config", str(config_path)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    checkpoint = run_dir / "checkpoint.pt"
    try:
        deadline = time.monotonic() + 180
        while not checkpoint.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # somewhere between two checkpoints
        process.send_signal(signal.SIGKILL)
        process.wait()
    finally:  # the killed driver's own local Ray (its session's processes) goes with it
        _kill_session(process.pid)
    assert process.returncode == -signal.SIGKILL, process.stderr.read().decode()[-2000:]
    interrupted_at = load_checkpoint(checkpoint)["loop"]["episodes"]
    assert 0 < interrupted_at < 4000

    resumed = subprocess.run(
        [sys.executable, "train.py", "--resume", str(run_dir)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    final = load_checkpoint(checkpoint)
    assert final["loop"]["episodes"] >= 4000
    generations = final["learner"]["slots"]["generations"]
    assert generations == [2, 2], "the resumed run starts a fresh actor in every slot"
    episodes = [int(r["episodes"]) for r in _rows(run_dir)]
    assert episodes == sorted(set(episodes)) and episodes[-1] == final["loop"]["episodes"]


def _kill_session(session_id):
    """SIGKILL whatever is left of a process group (a killed driver's raylet and workers)."""
    import os

    try:
        os.killpg(session_id, signal.SIGKILL)
    except ProcessLookupError:
        pass


@pytest.mark.slow
def test_two_node_cluster_trains_replaces_a_killed_actor_and_resumes(tmp_path, two_node_cluster):
    from agents.loop import train

    assert len([n for n in ray.nodes() if n["Alive"]]) == 2  # two raylets
    run_dir = tmp_path / "cluster"
    config = _run(run_dir, budget={"episodes": 4000}, trainer__params__windows_in_flight=2)
    del config["trainer"]["params"]["num_cpus"]
    config["trainer"]["params"]["address"] = two_node_cluster.address
    killed = []

    def kill_one_actor_mid_run():
        deadline = time.monotonic() + 240
        while not (run_dir / "checkpoint.pt").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        names = [n for n in ray.util.list_named_actors() if n.startswith("anfsp-actor-0-")]
        if names:
            ray.kill(ray.get_actor(names[0]), no_restart=True)
            killed.append(names[0])

    killer = threading.Thread(target=kill_one_actor_mid_run, daemon=True)
    killer.start()
    first = train(config_from_dict(config))
    killer.join(timeout=10)
    assert killed == ["anfsp-actor-0-0"]
    state = load_checkpoint(run_dir / "checkpoint.pt")
    assert state["learner"]["counters"]["actor_replacements"] >= 1
    assert state["learner"]["slots"]["generations"][0] >= 2  # slot 0 got a new actor
    assert first["episodes"] >= 4000
    assert float(_rows(run_dir)[-1]["actor_nodes"]) == 2  # the actors ran on both raylets
    assert ray.is_initialized(), "a run on a cluster leaves the cluster alone"

    config["budget"]["episodes"] = 6000
    resumed = train(config_from_dict(config), resume=True)
    rows = _rows(run_dir)
    episodes = [int(r["episodes"]) for r in rows]
    assert episodes == sorted(set(episodes)) and resumed["episodes"] >= 6000
    assert (
        rows[-1]["exploitability"] != ""
        and float(rows[-1]["exploitability"]) < KUHN_UNIFORM_EXPLOITABILITY
    )
    assert first["episodes"] < min(e for e in episodes if e > first["episodes"])


def _leduc_learner(**params):
    from agents.runs import build_learner

    return build_learner(
        config_from_dict(
            {
                "env": {"name": "leduc_holdem"},
                "output_dir": "unused",
                "seed": 0,
                "trainer": {
                    "name": "anfsp",
                    "params": {"hidden_sizes": [8], "envs_per_actor": 8, **params},
                },
            }
        )
    )


def test_actors_play_through_the_vector_env_seed_for_seed():
    """With vector_envs an actor plays its envs_per_actor games through hiddenenvs.vector: a
    window holds at least gradient_every transitions per player, each a legal decision whose
    next tensor starts the player's next one, and the same seeds give the same window."""
    pytest.importorskip("ray", reason='ANFSP needs Ray: pip install -e ".[distributed]"')
    from agents.anfsp import ActorLearner

    learner = _leduc_learner(vector_envs=True)
    windows, actors = [], []
    for _ in range(2):
        actor = ActorLearner(*learner._actor_arguments(slot=0, generation=0))
        assert actor.vector_env is not None and not actor.envs
        windows.append(actor.play_window(learner._weights(), 0.1, 32))
        actors.append(actor)
    first, second = windows
    assert first["episodes"] % 8 == 0 and min(first["transitions"]) >= 32
    assert first["transitions"] == second["transitions"] and first["episodes"] == second["episodes"]
    for chunks, again in zip(first["gradients"], second["gradients"]):
        for (gradient, rows), (gradient_again, rows_again) in zip(chunks, again):
            assert rows == rows_again
            assert all(np.array_equal(a, b) for a, b in zip(gradient, gradient_again))
    for transition in actors[0].agents[0].transitions:
        assert transition.action_mask[transition.action] == 1
        assert transition.done or transition.next_action_mask.any()
    learner.close()


def test_vector_envs_on_an_env_without_a_kernel_is_refused_before_ray_starts():
    pytest.importorskip("ray", reason='ANFSP needs Ray: pip install -e ".[distributed]"')
    from agents.runs import build_learner

    config = config_from_dict(
        {
            "env": {"name": "meier"},
            "output_dir": "unused",
            "trainer": {"name": "anfsp", "params": {"vector_envs": True}},
        }
    )
    with pytest.raises(ConfigError, match="vector_envs: env 'meier' has no vector kernel"):
        build_learner(config)


def test_a_ray_that_does_not_start_ends_the_run_with_one_line(monkeypatch):
    """Ray's own start-up failures (a plain Exception, e.g. the node timing out on a loaded
    machine) become a TrainingError that train.py prints as one line, not a traceback."""
    from types import SimpleNamespace

    from agents.actor_pool import ActorPool
    from agents.run import TrainingError

    def timed_out(self, ready_timeout=None):
        raise Exception(
            "The current node timed out during startup. This could happen because some of "
            "the raylet failed to startup or the GCS has become overloaded.\nmore detail"
        )

    monkeypatch.setattr(ActorPool, "start", timed_out)
    learner = _leduc_learner()
    with pytest.raises(TrainingError) as caught:
        learner._ensure_running(SimpleNamespace(deadline=None))
    message = str(caught.value)
    assert message.startswith("trainer anfsp: Ray did not start (Exception: The current node")
    assert "\n" not in message and "ray start --head" in message

"""The Ray actor pool (agents/actor_pool.py) serving evaluate.py: the same results as
in-process play, a killed actor's match replayed, errors that say what is wrong. Skips
without Ray (`pip install -e ".[distributed]"`); every test stops the Ray it starts."""

import pytest

import evaluate as evaluate_cli
from agents.leaderboard import ResultStore, resolve_agent
from agents.leaderboard.matches import EnvVariant, play_all, schedule

ray = pytest.importorskip("ray", reason='the actor pool needs Ray: pip install -e ".[distributed]"')


def kuhn_tasks(games: int):
    variant = EnvVariant.resolve("kuhn_poker", {})
    return variant, schedule(variant, ["random", "cfr+:30"], "round-robin", games, series_seed=5)


@pytest.mark.slow  # a local Ray start-up: minutes on 2 cores, run in .ci/run's slow step
def test_ray_actors_play_the_same_matches_and_replay_one_whose_actor_died():
    variant, tasks = kuhn_tasks(games=30)
    in_process = {r.key: r.returns for r in play_all(variant, tasks, resolve_agent, workers=1)}
    on_ray, killed, replaced = {}, [], []
    for result in play_all(variant, tasks, resolve_agent, workers=2, ray_address="local"):
        on_ray[result.key] = result.returns
        names = ray.util.list_named_actors()
        if not killed:
            ray.kill(ray.get_actor("match-player-0-0"), no_restart=True)
            killed.append(True)
        elif "match-player-0-1" in names:
            replaced.append(True)
    assert not ray.is_initialized(), "the pool stops the local Ray it started"
    assert replaced, "slot 0 got a fresh actor after the kill"
    assert on_ray == in_process and len(on_ray) == len(tasks)


@pytest.mark.slow  # a local Ray start-up: minutes on 2 cores, run in .ci/run's slow step
def test_evaluate_py_on_local_ray_stores_every_match(tmp_path):
    db = tmp_path / "board.sqlite"
    code = evaluate_cli.main(
        [
            "--env",
            "kuhn_poker",
            "--agents",
            "random",
            "cfr+:30",
            "--games",
            "10",
            "--workers",
            "2",
            "--ray",
            "local",
            "--db",
            str(db),
            "--out",
            str(tmp_path),
            "--quiet",
        ]
    )
    assert code == 0
    with ResultStore(db) as store:
        assert (
            len(store.stored_keys("kuhn_poker", EnvVariant.resolve("kuhn_poker", {}).params_json))
            == 20
        )


def test_a_ray_address_without_a_cluster_says_so():
    variant, tasks = kuhn_tasks(games=1)
    with pytest.raises(RuntimeError, match="--ray='127.0.0.1:1'.*no Ray cluster there"):
        list(play_all(variant, tasks, resolve_agent, workers=1, ray_address="127.0.0.1:1"))
    assert not ray.is_initialized()


@pytest.mark.slow  # a local Ray start-up: minutes on 2 cores, run in .ci/run's slow step
def test_exit_oos_self_play_on_ray_actors_stores_the_games_of_the_single_process_run(tmp_path):
    from agents.checkpoint import load_checkpoint
    from agents.config import config_from_dict
    from agents.loop import train
    from test_exit_oos import RUN, _assert_same_state

    states = []
    for name, extra in (("local", {"workers": 0}), ("ray", {"workers": 2, "ray_address": "local"})):
        params = {**RUN["trainer"]["params"], **extra}
        train(
            config_from_dict(
                {
                    **RUN,
                    "trainer": {"name": "exit_oos", "params": params},
                    "budget": {"iterations": 2},
                    "output_dir": str(tmp_path / name),
                }
            )
        )
        states.append(load_checkpoint(tmp_path / name / "checkpoint.pt")["learner"])
    assert not ray.is_initialized(), "the trainer stops the local Ray its pool started"
    _assert_same_state(*states)


@pytest.mark.slow  # a two-node Ray start-up: minutes on 2 cores, run in .ci/run's slow step
def test_exit_oos_self_play_on_a_two_node_cluster_through_train_py_address(
    tmp_path, two_node_cluster
):
    """``train.py --address`` puts ExIt-OOS's two self-play workers on the cluster's two
    one-CPU nodes (one actor each: each needs a CPU) and stores the games of the
    single-process run."""
    import train as train_cli
    from agents.checkpoint import load_checkpoint
    from test_exit_oos import _assert_same_state

    assert len([node for node in ray.nodes() if node["Alive"]]) == 2  # two raylets
    arguments = [
        "--config",
        "exit_oos_leduc",
        "env.name=kuhn_poker",
        "budget.iterations=2",
        "evaluation.every_iterations=2",
        "checkpoint_every_episodes=null",
        "checkpoint_every_iterations=2",
        "progress_bar=false",
        "trainer.params.games_per_iteration=8",
        "trainer.params.simulations_per_move=50",
        "trainer.params.train_steps=4",
        "trainer.params.hidden_sizes=[16]",
    ]
    local, cluster = tmp_path / "local", tmp_path / "cluster"
    assert train_cli.main([*arguments, "trainer.params.workers=0", f"output_dir={local}"]) == 0
    on_cluster = [*arguments, "trainer.params.workers=2", f"output_dir={cluster}"]
    assert train_cli.main([*on_cluster, "--address", two_node_cluster.address]) == 0
    assert ray.is_initialized(), "a run on a cluster leaves the cluster alone"
    assert not ray.util.list_named_actors(), "the run's actors are gone"
    _assert_same_state(
        load_checkpoint(local / "checkpoint.pt")["learner"],
        load_checkpoint(cluster / "checkpoint.pt")["learner"],
    )


class _Sleeper:
    def nap(self, seconds: float) -> float:
        import time

        time.sleep(seconds)
        return seconds


def test_an_actor_with_two_calls_queued_dies_once_is_replaced_once_and_both_calls_are_lost():
    """...and a call still running at a timeout is reported as none, then dropped by close()."""
    import sys

    from ray import cloudpickle

    from agents.actor_pool import ActorPool, Finished, Lost

    cloudpickle.register_pickle_by_value(
        sys.modules[__name__]
    )  # Ray's workers cannot import tests/
    pool = ActorPool(_Sleeper, lambda slot, generation: (), num_actors=1, name="sleeper")
    pool.start()
    try:
        pool.submit(0, "nap", 30.0, tag="first")
        pool.submit(0, "nap", 0.0, tag="second")  # waits at the actor behind the first
        ray.kill(ray.get_actor("sleeper-0-0"), no_restart=True)
        lost = [pool.next(), pool.next()]
        assert all(isinstance(result, Lost) for result in lost)
        assert sorted(result.tag for result in lost) == ["first", "second"]
        assert pool.replacements == 1 and pool.generations == [2]
        pool.submit(0, "nap", 0.0, tag="after")  # the fresh actor serves the slot
        result = pool.next()
        assert isinstance(result, Finished) and result.tag == "after" and pool.in_flight == 0
        # A call not back within a timeout stays in flight (a trainer's deadline cuts its step)...
        pool.submit(0, "nap", 30.0, tag="long")
        assert pool.next(timeout=0.2) is None and pool.in_flight == 1
    finally:
        pool.close()  # ...and close() drops it without waiting for the actor
    assert not ray.is_initialized() and pool.in_flight == 0
    pool.close()  # idempotent

"""benchmarks/self_play_workers.py runs, in one process, with a tiny budget."""

from benchmarks import self_play_workers


def test_the_trainers_with_workers_are_found_in_the_catalogue():
    names = [entry.name for entry in self_play_workers.trainers_with_workers()]
    assert "mcnfsp" in names and "exit_oos" in names and "nfsp" in names and "cfr" not in names


def test_one_worker_row_for_mcnfsp(capsys):
    arguments = [
        "--trainers",
        "mcnfsp",
        "--workers",
        "1",
        "--seconds",
        "0.01",
        "--set",
        "trainer.params.num_simulations=4",
        "trainer.params.hidden_sizes=[8]",
        "num_envs=4",
    ]
    assert self_play_workers.main(arguments) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| mcnfsp")]
    assert len(rows) == 1
    cells = [cell.strip() for cell in rows[0].strip("|").split("|")]
    assert cells[:3] == ["mcnfsp", "mcnfsp_kuhn", "1"]
    steps, episodes = int(cells[3]), int(cells[4])
    assert steps >= 1 and episodes == 4 * steps

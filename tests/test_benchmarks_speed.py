"""`python -m benchmarks speed`: the page block, the load refusal, one worker's figures."""

import pytest

from benchmarks import speed


def test_generated_block_goes_under_the_title_then_is_replaced_in_place(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Title\n\nhand-written notes\n")
    speed.write_block(page, "first")
    assert (
        page.read_text() == f"# Title\n\n{speed.BEGIN}\nfirst\n{speed.END}\n\nhand-written notes\n"
    )
    speed.write_block(page, "second")
    assert (
        page.read_text() == f"# Title\n\n{speed.BEGIN}\nsecond\n{speed.END}\n\nhand-written notes\n"
    )


def test_refuses_to_write_pages_above_load_one(monkeypatch):
    monkeypatch.setattr(speed.os, "getloadavg", lambda: (3.5, 3.0, 2.0))
    monkeypatch.setattr(speed, "measure", lambda *args: pytest.fail("measured despite the load"))
    with pytest.raises(SystemExit, match="load average 3.50 is above 1"):
        speed.main(["--only", "cfr"])


def test_worker_reports_one_rate_per_slice_and_the_table_their_median(monkeypatch):
    # In a worker process the pinning and thread settings are the point; here they would
    # outlive the test.
    pinned = []
    monkeypatch.setattr(speed.os, "sched_setaffinity", lambda pid, cores: pinned.append(cores))
    monkeypatch.setattr(speed.os, "environ", dict(speed.os.environ))
    result = speed.run_worker(
        "ours_cfr", {"game": "kuhn_poker", "params": {}}, seconds=0.01, repeats=3, cores={0}
    )
    assert len(result["wall"]) == len(result["cpu"]) == 3 and min(result["wall"]) > 0
    assert pinned == [{0}]
    row = speed.plan()[0]
    row.results = {
        "ours": {"wall": [30.0, 10.0, 20.0], "cpu": [1.0] * 3},
        "peer": {"wall": [0.2], "cpu": [0.5]},
    }
    assert f"| {row.label} | iterations/s | 20 (10-30) |" in speed.table([row])
    assert "| 100.0x | 2.0x | 100x: met |" in speed.table([row])

"""agents.progress: a bar on a terminal, a plain line every N seconds anywhere else."""

import io

from agents.progress import PlainProgress, end_at_reached, progress_bar


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_terminal_gets_tqdm_and_a_file_gets_plain_lines():
    from tqdm import tqdm

    bar = progress_bar(total=10, file=Terminal())
    assert isinstance(bar, tqdm)
    bar.close()
    assert isinstance(progress_bar(total=10, file=io.StringIO()), PlainProgress)


def test_plain_progress_writes_a_line_every_period_and_at_the_end():
    now = [0.0]
    out = io.StringIO()
    progress = PlainProgress(
        file=out, every_seconds=30, total=200, unit="episodes", desc="nfsp", clock=lambda: now[0]
    )
    for _ in range(10):  # 10 updates over 50 seconds: lines at 30 s, then at close
        now[0] += 5
        progress.update(20)
    progress.set_postfix({"exploitability": "0.0312"})
    progress.close()
    progress.close()  # once only
    assert out.getvalue().splitlines() == [
        "nfsp: 120/200 episodes (60%), 30 s elapsed",
        "nfsp: 200/200 episodes (100%), 50 s elapsed, exploitability=0.0312",
    ]


def test_plain_progress_over_an_iterable_counts_its_items():
    out = io.StringIO()
    assert list(progress_bar(range(3), file=out, total=3, unit="match", desc="matches")) == [
        0,
        1,
        2,
    ]
    assert out.getvalue().startswith("matches: 3/3 match (100%)")


def test_a_bar_ends_at_what_the_run_reached():
    """An episode budget spent at 35 s of a 70 s bar: the bar ends full at 35, not at 50%."""
    now = [0.0]
    out = io.StringIO()
    progress = PlainProgress(file=out, every_seconds=60, total=70, unit="s", clock=lambda: now[0])
    now[0] = 35
    progress.update(35.2)
    end_at_reached(progress)
    assert out.getvalue().splitlines() == ["35/35 s (100%), 35 s elapsed"]

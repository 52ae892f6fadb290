"""The leaderboard site: matches stored with their actions, replays that re-simulate them,
old stores that still load, the static site and (with Chromium) the site in a browser."""

import csv
import json
import re
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from agents.leaderboard import evaluate
from agents.leaderboard.matches import EnvVariant, MatchPlayer, schedule
from agents.leaderboard.replay import replay
from agents.leaderboard.site import export_site
from agents.leaderboard.specs import resolve_agent
from agents.leaderboard.store import ResultStore
from firefox_bidi import FIREFOX, FirefoxBiDi

AGENTS = ["random", "cfr+:20", "cfr:5"]
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def kuhn_store(tmp_path_factory):
    """A tiny Kuhn round robin: 3 pairings x 2 seat orders x 2 games = 12 matches."""
    db = tmp_path_factory.mktemp("board") / "kuhn.sqlite"
    evaluate("kuhn_poker", {}, AGENTS, games=2, db_path=db, workers=1, progress=False)
    return db


@pytest.fixture(scope="module")
def kuhn_site(kuhn_store, tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    export_site(kuhn_store, out)
    return out


def test_every_match_is_stored_with_actions_and_its_replay_reproduces_it(kuhn_store):
    with ResultStore(kuhn_store) as store:
        matches = store.stored_matches("kuhn_poker")
    assert len(matches) == 12
    for match in matches:
        result = match.result
        # Kuhn: 2 or 3 bets/passes, then each finished agent's step with None.
        decisions = result.actions[:-2]
        assert len(decisions) in (2, 3) and all(isinstance(a, int) for a in decisions)
        assert result.actions[-2:] == (None, None)
        played = replay("kuhn_poker", {}, result.env_seed, result.actions, result.returns)
        assert played.reproduces and played.final_returns == list(result.returns)
        assert played.frames[-1].returns == list(result.returns)
        # The start, two cards dealt by chance, then one frame per decision.
        assert [f.chance for f in played.frames[1:]] == [True, True] + [False] * len(decisions)
        # Each seat saw its own card and not the other's: the true state names both.
        cards = re.search(r"cards: (\w) (\w)", played.frames[-1].state).groups()
        assert played.frames[0].seen == [0, 0] and played.frames[-1].seen == [
            len(v) for v in played.views
        ]
        for seat, view in enumerate(played.views):
            private = [step for step in view if step.startswith("your card")]
            assert private == [f"your card: {cards[seat]}"]


@pytest.mark.parametrize(
    "env_name, params",
    [
        ("leduc_holdem", {}),  # chance in the middle of the game
        ("goofspiel", {"num_cards": 4}),  # simultaneous moves
        ("liars_dice", {}),
        ("othello", {"board_size": 4}),
        ("meier", {}),  # GDL-II: a random role, private percepts
        ("blind_tictactoe", {}),
        ("combat", {"map": "small", "team_size": 2}),  # chance sampled from seeds
    ],
)
def test_replays_of_every_kind_of_game_reproduce_the_match(tmp_path, env_name, params):
    variant = EnvVariant.resolve(env_name, params)
    # Two uniform random agents under two names (a schedule needs distinct specs).
    player = MatchPlayer(variant, lambda spec, env, seat, p: resolve_agent("random", env, seat, p))
    for key, env_seed in schedule(variant, ["a", "b"], "round-robin", 3, 7):
        result = player.play(key, env_seed)
        played = replay(env_name, variant.params, env_seed, result.actions, result.returns)
        assert played.reproduces
        assert played.frames[-1].returns == list(result.returns)
        # Every env draws itself: a picture in every frame, as a PNG.
        pictures = [frame.picture for frame in played.frames]
        assert all(p.startswith("data:image/png;base64,iVBORw0KGgo") for p in pictures)
        # Each seat's view drawn (Game.describe_view) where the game draws one: blind
        # tic-tac-toe's board, what combat's sides see; it changes as the game goes on.
        boards = [frame.boards for frame in played.frames]
        if env_name in ("blind_tictactoe", "combat"):
            assert all(None not in seat_boards for seat_boards in boards)
            assert all("'s board\n(" in b[0] or "attackers see, tick" in b[0] for b in boards)
            assert len({b[0] for b in boards}) > 1
        else:
            assert all(seat_boards == [None, None] for seat_boards in boards)


def test_a_replay_of_actions_that_are_not_the_match_says_so():
    with pytest.raises(ValueError, match="end before the match does"):
        replay("kuhn_poker", {}, 3, [0], [1.0, -1.0])
    with pytest.raises(ValueError, match="ended before its 5 stored actions"):
        replay("kuhn_poker", {}, 3, [0, 0, None, None, None], [1.0, -1.0])
    # pass, pass (then each finished agent's step): a real game, with other returns
    played = replay("kuhn_poker", {}, 3, [0, 0, None, None], [5.0, -5.0])
    assert not played.reproduces and played.final_returns != [5.0, -5.0]


def _old_store(path: Path) -> None:
    """A store as evaluate.py wrote it before matches kept their actions."""
    connection = sqlite3.connect(path)
    connection.executescript(
        """
        CREATE TABLE matches (id INTEGER PRIMARY KEY, env TEXT NOT NULL, params TEXT NOT NULL,
            seats TEXT NOT NULL, series_seed INTEGER NOT NULL, game_index INTEGER NOT NULL,
            env_seed INTEGER NOT NULL, returns TEXT NOT NULL, seconds REAL NOT NULL,
            finished_at TEXT NOT NULL, UNIQUE (env, params, seats, series_seed, game_index));
        """
    )
    params = json.dumps(
        EnvVariant.resolve("kuhn_poker", {}).params, sort_keys=True, separators=(",", ":")
    )
    for index, (seats, returns) in enumerate(
        [(["random", "x"], [1.0, -1.0]), (["x", "random"], [2.0, -2.0])]
    ):
        connection.execute(
            "INSERT INTO matches (env, params, seats, series_seed, game_index, env_seed, returns, "
            "seconds, finished_at) VALUES ('kuhn_poker', ?, ?, 0, ?, 11, ?, 0.1, '2025-01-01')",
            (params, json.dumps(seats), index, json.dumps(returns)),
        )
    connection.commit()
    connection.close()


def test_an_old_store_without_actions_loads_and_shows_its_numbers(tmp_path):
    db = tmp_path / "old.sqlite"
    _old_store(db)
    with ResultStore(db) as store:
        results = store.results()
        assert [r.returns for r in results] == [(1.0, -1.0), (2.0, -2.0)]
        assert all(r.actions is None for r in results)
    index = export_site(db, tmp_path / "site")
    board = (index.parent / "kuhn_poker" / "index.html").read_text()
    assert "no (stored before replays)" in board
    assert ">x</a>" in board and ">random</a>" in board
    assert "+1, -1" in board and "+2, -2" in board  # each match's stored returns
    match = (index.parent / "kuhn_poker" / "match-1.html").read_text()
    assert "has no replay" in match and "id='replay-data'" not in match


def test_set_aside_matches_keep_their_actions(tmp_path, kuhn_store):
    with ResultStore(kuhn_store) as store:
        result = store.results()[0]
    db = tmp_path / "copy.sqlite"
    with ResultStore(db) as store:
        store.set_aside([result])
    with ResultStore(db) as store:
        assert store.recovered == 1 and store.results() == [result]


def test_the_site_has_a_page_per_agent_and_per_match(kuhn_site):
    board = kuhn_site / "kuhn_poker"
    assert sorted(p.name for p in board.glob("agent-*.html")) == [
        "agent-1.html",
        "agent-2.html",
        "agent-3.html",
    ]
    assert len(list(board.glob("match-*.html"))) == 12
    page = (board / "index.html").read_text()
    assert "http://" not in page and "https://" not in page  # nothing from the network
    assert page.count("class='cell'") == 6  # 3 agents: every ordered pair but the diagonal
    assert "exploitability" in page


def test_the_commands_write_the_site(kuhn_store, tmp_path, capsys):
    from agents.cli import main as hiddenenvs

    assert hiddenenvs(["leaderboard", "export", str(kuhn_store), str(tmp_path / "a")]) == 0
    assert (tmp_path / "a" / "kuhn_poker" / "index.html").is_file()
    assert hiddenenvs(["leaderboard", "export", str(tmp_path / "none.sqlite"), str(tmp_path)]) == 2
    assert "no results database" in capsys.readouterr().err

    sys.path.insert(0, str(REPO))
    try:
        import evaluate as evaluate_cli
    finally:
        sys.path.remove(str(REPO))
    html = tmp_path / "b"
    assert evaluate_cli.main(["--show", "--db", str(kuhn_store), "--html", str(html)]) == 0
    assert (html / "index.html").is_file() and (html / "kuhn_poker" / "match-12.html").is_file()


def test_an_agent_from_a_training_run_shows_the_run_its_config_and_its_curve(tmp_path):
    """A run directory on the board: its page names the run, shows the config saved in
    checkpoint.pt and one curve point per row of metrics.csv; a checkpoint replaced after
    the matches is said, not hidden."""
    pytest.importorskip("torch")
    from agents.checkpoint import atomic_torch_save, load_checkpoint
    from agents.config import load_config
    from agents.loop import train
    from agents.runs import validate_run

    run_dir = tmp_path / "run"
    overrides = [
        f"output_dir={run_dir}",
        "budget.iterations=30",
        "evaluation.every_iterations=10",
        "progress_bar=false",
        "seed=4",
    ]
    train(load_config("cfr_kuhn", overrides, validate=validate_run))
    with (run_dir / "metrics.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    db = tmp_path / "board.sqlite"
    evaluate("kuhn_poker", {}, ["random", str(run_dir)], games=1, db_path=db, progress=False)
    site = export_site(db, tmp_path / "site").parent / "kuhn_poker"
    (page,) = [p.read_text() for p in site.glob("agent-*.html") if "Training run" in p.read_text()]
    assert f"<code id='run-dir'>{run_dir}</code>: cfr on kuhn_poker, seed 4." in page
    assert "exploitability against iterations" in page
    # One point per evaluation row (at iterations 0, 10, 20, 30), the last one's value said.
    assert page.count("<circle ") == len(rows) == 4
    assert f"the last: {float(rows[-1]['exploitability']):.4g} after 30 iterations" in page
    config = re.search(r"<pre id='run-config'>(.*?)</pre>", page, re.S).group(1)
    assert "name: cfr" in config and "iterations: 30" in config and "seed: 4" in config
    assert "class='warning'" not in page
    # The run directory's checkpoint replaced: the page says its hash changed.
    payload = load_checkpoint(run_dir / "checkpoint.pt")
    payload["config"]["seed"] = 5
    atomic_torch_save(payload, run_dir / "checkpoint.pt")
    site = export_site(db, tmp_path / "site2").parent / "kuhn_poker"
    (page,) = [p.read_text() for p in site.glob("agent-*.html") if "Training run" in p.read_text()]
    assert "has changed since these matches were played" in page and "seed 5." in page
    # Agents that came from no run (random) get no such section.
    assert sum("Training run" in p.read_text() for p in site.glob("agent-*.html")) == 1


# ---- in a real browser ---------------------------------------------------------------------
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
GECKODRIVER = shutil.which("geckodriver")  # not packaged by Debian; see firefox_bidi.py


# Selenium drives Firefox only through geckodriver, which Debian does not package: the
# selenium tests run on Firefox where it is installed, and Firefox is tested through
# WebDriver BiDi everywhere it is installed (test_the_site_in_firefox and the one after).
@pytest.fixture(params=["chromium"] + (["firefox"] if GECKODRIVER else []))
def browser(request):
    """A selenium driver: Chromium (Debian's chromium and chromium-driver), and Firefox
    where geckodriver is installed."""
    webdriver = pytest.importorskip("selenium.webdriver")
    if request.param == "chromium":
        if CHROMIUM is None or CHROMEDRIVER is None:
            pytest.skip(
                "needs chromium and chromedriver (apt-get install chromium chromium-driver)"
            )
        from selenium.webdriver.chrome.service import Service

        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for argument in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=1200,900"):
            options.add_argument(argument)
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    else:
        if FIREFOX is None:
            pytest.skip("needs firefox (apt-get install firefox-esr)")
        from selenium.webdriver.firefox.service import Service as FirefoxService

        options = webdriver.FirefoxOptions()
        options.binary_location = FIREFOX
        for argument in ("-headless", "--width=1200", "--height=900"):
            options.add_argument(argument)
        driver = webdriver.Firefox(service=FirefoxService(GECKODRIVER), options=options)
    yield driver
    driver.quit()


def test_the_site_in_a_browser(browser, kuhn_site, kuhn_store):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    browser.get((kuhn_site / "index.html").as_uri())
    browser.find_element(By.LINK_TEXT, "kuhn_poker").click()
    rows = browser.find_elements(By.CSS_SELECTOR, "#standings tbody tr")
    assert [row.find_elements(By.TAG_NAME, "td")[0].text for row in rows] == ["1", "2", "3"]
    # Sort by games, then by agent name: the rows follow each click.
    agent_header = browser.find_element(By.CSS_SELECTOR, "#standings th[data-column='1']")
    agent_header.click()
    names = [
        r.find_elements(By.TAG_NAME, "td")[1].text
        for r in browser.find_elements(By.CSS_SELECTOR, "#standings tbody tr")
    ]
    assert names == sorted(AGENTS)
    agent_header.click()
    names = [
        r.find_elements(By.TAG_NAME, "td")[1].text
        for r in browser.find_elements(By.CSS_SELECTOR, "#standings tbody tr")
    ]
    assert names == sorted(AGENTS, reverse=True)

    cell = browser.find_elements(By.CSS_SELECTOR, "#heatmap td.cell")[0]
    ActionChains(browser).move_to_element(cell).perform()
    tooltip = browser.find_element(By.ID, "tooltip")
    assert tooltip.is_displayed()
    assert re.search(
        r"mean return -?\d\.\d+ \[-?\d\.\d+, -?\d\.\d+\] \(95% CI\).*; 4 games$", tooltip.text
    )

    with ResultStore(kuhn_store) as store:
        match = store.stored_matches("kuhn_poker")[0]
    browser.get((kuhn_site / "kuhn_poker" / f"match-{match.id}.html").as_uri())
    position = browser.find_element(By.ID, "position")
    assert position.text.startswith("step 0 of ")
    steps = int(position.text.split()[-1])
    forward = browser.find_element(By.ID, "forward")
    for _ in range(steps + 2):  # two more than there are: it stays at the end
        forward.click()
    assert position.text == f"step {steps} of {steps} (end)"
    returns = browser.find_element(By.ID, "returns").text
    expected = [
        f"player_{seat}: {'+' if r > 0 else ''}{r:g}" for seat, r in enumerate(match.result.returns)
    ]
    assert returns.splitlines() == [*expected, "final returns"]
    browser.find_element(By.ID, "back").click()
    assert position.text == f"step {steps - 1} of {steps}"


@pytest.fixture(scope="module")
def firefox():
    """One Firefox for the module's Firefox tests (it takes seconds to start)."""
    if FIREFOX is None:
        pytest.skip("needs firefox (apt-get install firefox-esr)")
    pytest.importorskip("websocket")  # websocket-client, installed with selenium
    driver = FirefoxBiDi()
    yield driver
    driver.close()


def test_the_site_in_firefox(firefox, kuhn_site, kuhn_store):
    """The same walk as test_the_site_in_a_browser, in Firefox: real pointer clicks and
    hovers through WebDriver BiDi, the page read back with scripts."""
    firefox.get((kuhn_site / "index.html").as_uri())
    firefox.click("#boards a")
    firefox.wait_for("document.getElementById('standings') !== null")

    def column(index):
        return firefox.run(
            "Array.from(document.querySelectorAll('#standings tbody tr'))"
            f".map(function (r) {{ return r.cells[{index}].textContent; }})"
        )

    assert column(0) == ["1", "2", "3"]
    firefox.click("#standings th[data-column='1']")
    assert column(1) == sorted(AGENTS)
    firefox.click("#standings th[data-column='1']")
    assert column(1) == sorted(AGENTS, reverse=True)

    firefox.hover("#heatmap td.cell")
    assert firefox.run("document.getElementById('tooltip').hidden") is False
    tooltip = firefox.run("document.getElementById('tooltip').textContent")
    assert re.search(
        r"mean return -?\d\.\d+ \[-?\d\.\d+, -?\d\.\d+\] \(95% CI\).*; 4 games$", tooltip
    )

    with ResultStore(kuhn_store) as store:
        match = store.stored_matches("kuhn_poker")[0]
    firefox.get((kuhn_site / "kuhn_poker" / f"match-{match.id}.html").as_uri())

    def position():
        return firefox.run("document.getElementById('position').textContent")

    assert position().startswith("step 0 of ")
    steps = int(position().split()[-1])
    for _ in range(steps + 2):  # two more than there are: it stays at the end
        firefox.click("#forward")
    assert position() == f"step {steps} of {steps} (end)"
    expected = [
        f"player_{seat}: {'+' if r > 0 else ''}{r:g}" for seat, r in enumerate(match.result.returns)
    ]
    returns = firefox.run("document.getElementById('returns').textContent")
    assert returns.splitlines() == [*expected, "final returns"]
    firefox.click("#back")
    assert position() == f"step {steps - 1} of {steps}"
    assert firefox.screenshot().startswith(b"\x89PNG")


def test_a_match_whose_actions_no_longer_fit_the_env_gets_a_page_saying_so(tmp_path):
    from agents.leaderboard.store import MatchKey, MatchResult

    db = tmp_path / "changed.sqlite"
    params = EnvVariant.resolve("kuhn_poker", {}).params_json
    with ResultStore(db) as store:
        for index, actions in enumerate([(0,), (0, 0, None, None)]):
            key = MatchKey("kuhn_poker", params, ("random", "x"), 0, index)
            store.add(MatchResult(key, 3, (1.0, -1.0), 0.0, actions))
    index = export_site(db, tmp_path / "site")
    broken = (index.parent / "kuhn_poker" / "match-1.html").read_text()
    assert "No replay: kuhn_poker: the stored actions (1) end before the match does" in broken
    fits = (index.parent / "kuhn_poker" / "match-2.html").read_text()
    assert "id='replay-data'" in fits


def test_the_server_renders_pages_live_from_the_store(tmp_path, kuhn_store, kuhn_site):
    import threading
    import urllib.error
    import urllib.request

    from agents.leaderboard.site import LeaderboardServer
    from agents.leaderboard.store import MatchKey, MatchResult

    db = tmp_path / "live.sqlite"
    shutil.copy(kuhn_store, db)
    server = LeaderboardServer(db, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:

        def get(path):
            with urllib.request.urlopen(server.url + path, timeout=30) as response:
                return response.read().decode()

        board = get("kuhn_poker/index.html")
        assert "Matches (12)" in board and "http-equiv='refresh'" in board
        exported = (kuhn_site / "kuhn_poker" / "match-1.html").read_text()
        assert get("kuhn_poker/match-1.html") == exported  # the same page as the export
        with ResultStore(db) as store:  # an evaluation adds a match meanwhile
            key = MatchKey("kuhn_poker", "{}", ("random", "cfr:5"), 1, 0)
            store.add(MatchResult(key, 3, (1.0, -1.0), 0.0, (0, 0, None, None)))
        assert "Matches (13)" in get("kuhn_poker/index.html")
        with pytest.raises(urllib.error.HTTPError, match="404"):
            get("kuhn_poker/match-999.html")
    finally:
        server.shutdown()
        server.server_close()


def test_a_person_plays_an_agent_in_the_browser_and_the_game_is_stored(
    browser, tmp_path, kuhn_store
):
    import threading

    from selenium.webdriver.common.by import By

    from agents.leaderboard.site import LeaderboardServer

    db = tmp_path / "play.sqlite"
    shutil.copy(kuhn_store, db)
    server = LeaderboardServer(db, port=0, refresh_seconds=None)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    # The page answers asynchronously (a new game, a move) and draws its parts again: an
    # element is waited for, and one found a moment before may be gone, so a stale one is
    # looked up afresh. (At load 2 on CI the view was not there yet right after "start".)
    wait = WebDriverWait(browser, 30, ignored_exceptions=(StaleElementReferenceException,))

    def element(element_id):
        return wait.until(lambda browser: browser.find_element(By.ID, element_id))

    try:
        browser.get(server.url + "kuhn_poker/index.html")
        element("play").click()
        element("start").click()  # the best agent, you in seat 0
        # Your card shows (the view may be drawn before its text).
        wait.until(lambda browser: "your card:" in element("your-view").text)

        def result_or_first_move(browser):
            if browser.find_elements(By.ID, "result"):
                return "result"
            buttons = browser.find_elements(By.CSS_SELECTOR, "#actions button")
            return buttons[0] if buttons and buttons[0].is_displayed() else False

        while (step := wait.until(result_or_first_move)) != "result":
            try:
                step.click()  # pass / call
            except StaleElementReferenceException:
                continue
        result = element("result").text
        assert result.startswith("Game over. Returns: player_0: ")
        element("match").click()
        assert element("position").text.startswith("step 0 of ")
    finally:
        server.shutdown()
        server.server_close()
    with ResultStore(db) as store:
        match = store.stored_matches("kuhn_poker")[-1]
    assert match.id == 13 and match.result.key.seats[0] == "human"
    assert match.result.key.seats[1] in AGENTS
    played = replay(
        "kuhn_poker", {}, match.result.env_seed, match.result.actions, match.result.returns
    )
    assert played.reproduces
    # The person pressed the first button each time: pass, Kuhn's action 0.
    assert [f.move for f in played.frames if f.move.startswith("player_0")] == (
        ["player_0: pass"] * len([f for f in played.frames if f.move.startswith("player_0")])
    )


def test_a_person_plays_an_agent_in_firefox(firefox, tmp_path, kuhn_store):
    """The served board's play pages in Firefox: a form, a POST per move, the replay link."""
    import threading

    from agents.leaderboard.site import LeaderboardServer

    db = tmp_path / "play.sqlite"
    shutil.copy(kuhn_store, db)
    server = LeaderboardServer(db, port=0, refresh_seconds=None)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        firefox.get(server.url + "kuhn_poker/index.html")
        firefox.click("#play")
        firefox.wait_for("document.getElementById('start') !== null")
        firefox.click("#start")
        view = firefox.wait_for("(document.getElementById('your-view') || {}).textContent")
        assert "your card:" in view
        pressed = 0
        while True:
            state = firefox.wait_for(
                "document.getElementById('result') ? 'over' :"
                " document.querySelector('#actions button') ? 'move' : ''"
            )
            if state == "over":
                break
            firefox.run("document.body.dataset.old = 'yes'")  # gone once the next page loads
            firefox.click("#actions button")
            firefox.wait_for("document.readyState === 'complete' && !document.body.dataset.old")
            pressed += 1
        assert pressed >= 1
        result = firefox.run("document.getElementById('result').textContent")
        assert result.startswith("Game over. Returns: player_0: ")
        firefox.click("#match")
        position = firefox.wait_for("(document.getElementById('position') || {}).textContent")
        assert position.startswith("step 0 of ")
    finally:
        server.shutdown()
        server.server_close()
    with ResultStore(db) as store:
        match = store.stored_matches("kuhn_poker")[-1]
    assert match.id == 13 and match.result.key.seats[0] == "human"


def test_a_human_game_shows_only_the_seat_view_refuses_illegal_moves_and_is_stored(tmp_path):
    from agents.leaderboard.browser_play import HumanGame

    game = HumanGame("kuhn_poker", {}, "{}", "cfr:5", human_seat=1, env_seed=5)  # the agent opens
    view = game.view()
    assert len(view) == 3 and view[1].startswith("your card: ")  # own card only
    assert view[0] == "a card to your opponent, face down" and view[2] in ("pass", "bet")
    assert game.legal() == {0: "pass", 1: "bet"}  # check or bet; after a bet: fold or call
    with pytest.raises(ValueError, match="action 7 is not legal now; legal: \\[0, 1\\]"):
        game.play(7)
    while not game.finished:
        game.play(0)
    with ResultStore(tmp_path / "h.sqlite") as store:
        match_id = game.record(store)
        (match,) = store.stored_matches(match_id=match_id)
    assert match.result.key.seats == ("cfr:5", "human")
    assert match.result.returns == (game.totals["player_0"], game.totals["player_1"])
    played = replay(
        "kuhn_poker", {}, match.result.env_seed, match.result.actions, match.result.returns
    )
    assert played.reproduces


def test_a_human_game_of_blind_tictactoe_shows_the_seat_board():
    from agents.leaderboard.browser_play import HumanGame
    from agents.leaderboard.site import _game_body

    params = EnvVariant.resolve("blind_tictactoe", {})
    game = HumanGame(
        "blind_tictactoe", params.params, params.params_json, "random", human_seat=0, env_seed=1
    )
    assert game.board().startswith("xplayer's board\n(x yours, o found taken, . untried)")
    marks = {name: action for action, name in game.legal().items()}
    game.play(marks["(mark 2 2)"])
    body = _game_body(game)
    board = re.search(r"<pre class='board' id='your-board'>(.*?)</pre>", body, re.S).group(1)
    assert re.search(r"\n2   \. [xo] \.\n", board)  # the tried cell: mine, or found taken
    assert "you mark 2 2; you see " in body and "<li></li>" not in body  # no empty steps


def test_a_blind_tictactoe_replay_draws_each_seat_board_in_a_browser(browser, tmp_path):
    from selenium.webdriver.common.by import By

    variant = EnvVariant.resolve("blind_tictactoe", {})
    player = MatchPlayer(variant, lambda spec, env, seat, p: resolve_agent("random", env, seat, p))
    db = tmp_path / "btt.sqlite"
    with ResultStore(db) as store:
        for key, env_seed in schedule(variant, ["a", "b"], "round-robin", 1, 3):
            store.add(player.play(key, env_seed))
    site = export_site(db, tmp_path / "site").parent / "blind_tictactoe"
    browser.get((site / "match-1.html").as_uri() + "#end")
    for seat, role in enumerate(["xplayer", "oplayer"]):
        board = browser.find_element(By.ID, f"board-{seat}")
        assert board.is_displayed() and board.text.startswith(f"{role}'s board\n(")
        steps = browser.find_element(By.ID, f"view-{seat}").text.splitlines()
        assert steps and all(
            re.fullmatch(r"\d+\. you mark \d \d; you see (ok|fail)", s) for s in steps
        )
    browser.find_element(By.ID, "first").click()  # the start: nothing tried yet
    assert browser.find_element(By.ID, "board-0").text.endswith("3   . . .")

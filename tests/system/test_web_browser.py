"""`arena serve` in a real browser: headless Chromium (Selenium) against the real server.

The server runs uvicorn in a thread on a free port over a database with a small tournament of
each game (tests/support/web_replay.py builds it), one of whose bots is named
`<script>alert(1)</script>`. The tests walk leaderboard → bot → game, step through replays with
the keyboard, check every seat view against the cards hidden from that seat (the API's
`?check=1` data), and save screenshots: under docs/screenshots/ when ARENA_SCREENSHOTS=1, else
in a temporary folder (a test run leaves the checkout as it was).

Needs `selenium`, a Chromium and its chromedriver (Debian: `apt-get install chromium
chromium-driver`; .ci/run installs them when it can); without them every test here is skipped,
naming what is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from arena.store import Store
from tests.support.paths import ROOT
from tests.support.web_replay import XSS, build_db

SHOTS = (ROOT / "docs" / "screenshots" if os.environ.get("ARENA_SCREENSHOTS") == "1"
         else Path(tempfile.mkdtemp(prefix="arena-shots-")))
GAMES = ["xeri", "crossfire", "crosswalk", "battlefield_cribbage", "xeri_4p"]
# Test names of game forms that are not game names: (game, number of seats).
FORMS = {"xeri_4p": ("xeri", 4)}
WAIT = 20  # seconds a page may take to show what a test waits for (a bound, not a measure)

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed "
                                "(pip install selenium)")
uvicorn = pytest.importorskip("uvicorn", reason="uvicorn is not installed")
from selenium.common.exceptions import NoAlertPresentException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402


def _browser() -> tuple[str | None, str | None]:
    chrome = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                   if shutil.which(n)), None)
    return chrome, shutil.which("chromedriver")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _app(db: Path, tmp: Path):
    """The real app (create_app); before it existed, a stand-in serving only the replay routes."""
    try:
        from arena.web import create_app
    except ImportError:
        return _standin_app(db, tmp), False
    return create_app(db), True


def _standin_app(db: Path, tmp: Path):
    """The two replay routes, /static and a minimal base.html (in `tmp`), as the contract says."""
    import jinja2
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles
    from starlette.templating import Jinja2Templates

    from arena.web import replay

    web = ROOT / "arena" / "web"
    (tmp / "base").mkdir(exist_ok=True)
    (tmp / "base" / "base.html").write_text(
        "<!doctype html><html><head><meta charset='utf-8'><title>{% block title %}{% endblock %}"
        "</title>{% block head %}{% endblock %}</head><body><main>{% block content %}"
        "{% endblock %}</main>{% block scripts %}{% endblock %}</body></html>")
    env = jinja2.Environment(autoescape=True, loader=jinja2.ChoiceLoader([
        jinja2.FileSystemLoader(web / "templates"), jinja2.FileSystemLoader(tmp / "base")]))
    templates = Jinja2Templates(env=env)

    def page(request):
        with_store = Store.open_readonly(db)
        gid = request.path_params["game_id"]
        return templates.TemplateResponse(request, "replay.html", {
            "game_id": gid, "meta": replay.game_meta(with_store, gid)})

    def api(request):
        store = Store.open_readonly(db)
        return JSONResponse(replay.replay_data(
            store, request.path_params["game_id"], request.query_params.get("view", "full"),
            check=request.query_params.get("check") == "1"))

    return Starlette(routes=[
        Route("/games/{game_id}", page), Route("/api/games/{game_id}/replay", api),
        Mount("/static", StaticFiles(directory=web / "static"), name="static")])


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    """The populated database."""
    return build_db(tmp_path_factory.mktemp("webbrowser"))


@pytest.fixture(scope="module")
def server(db, tmp_path_factory):
    """The base URL of the app served by uvicorn in a thread, and whether it is the real app."""
    app, real = _app(db, tmp_path_factory.mktemp("standin"))
    for url in _serve(app):
        yield url, real


def _serve(app):
    """Serve `app` with uvicorn in a thread while the generator is suspended: its base URL."""
    port = _free_port()
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + WAIT
    while not srv.started:
        if time.monotonic() > deadline or not thread.is_alive():
            pytest.fail("the server did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(WAIT)


@pytest.fixture(scope="module")
def driver():
    """Headless Chromium, or a skip naming what is missing."""
    chrome, chromedriver = _browser()
    missing = [name for name, path in (("chromium", chrome), ("chromedriver", chromedriver))
               if path is None]
    if missing:
        pytest.skip(f"no {' and no '.join(missing)} on PATH (Debian: apt-get install chromium "
                    "chromium-driver)")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chrome
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1280,1000", "--force-device-scale-factor=1"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(options=options, service=Service(chromedriver))
    yield browser
    browser.quit()


def wait(driver, condition, message: str):
    """Wait (bounded) until `condition(driver)` is truthy; its value."""
    return WebDriverWait(driver, WAIT).until(condition, message)


def no_alert(driver) -> None:
    """Fail if a JavaScript alert is open (an injected script ran)."""
    try:
        text = driver.switch_to.alert.text
    except NoAlertPresentException:
        return
    pytest.fail(f"an alert opened: {text!r}")


def js_errors(driver) -> list[str]:
    """Severe browser console entries since the last call (script errors, CSP refusals)."""
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def game_of(db: Path, game: str, with_bot: str | None = None) -> str:
    """The id of a stored game of `game` (one `with_bot` played, if given); "xeri_4p" is Xeri
    with four seats, "xeri" with two."""
    store = Store.open_readonly(db)
    game, seats = FORMS.get(game, (game, 2 if game == "xeri" else None))
    sql = "select g.id from games g where g.game = ?"
    args = [game]
    if seats:
        sql += " and g.num_seats = ?"
        args.append(seats)
    if with_bot:
        sql += " and exists (select 1 from game_seats s where s.game_id = g.id and s.bot = ?)"
        args.append(with_bot)
    return next(store.db.query(sql + " order by g.id limit 1", args))["id"]


def open_replay(driver, base: str, gid: str) -> int:
    """Open a game's replay page, wait for its frames; the last step number."""
    driver.get(f"{base}/games/{gid}")
    counter = wait(driver, lambda d: d.find_element(By.ID, "counter").text
                   if d.find_element(By.ID, "step").get_attribute("max") not in ("0", None)
                   else None, "the replay did not load")
    return int(counter.split("/")[1])


def step_shown(driver) -> int:
    """The step the page shows, read from the counter (and checked against the slider)."""
    # Both in one script: the page's JS runs between two WebDriver calls, and while a replay
    # plays it may move on in between (two reads then disagree by a step on a loaded machine).
    counter, slider = driver.execute_script(
        "return [document.getElementById('counter').textContent,"
        " Number(document.getElementById('step').value)];")
    slider = int(slider)
    shown = int(counter.split()[1])
    assert shown == slider, (counter, slider)
    return shown


def press(driver, key, times: int = 1) -> None:
    """Send a key to the page (not to a control)."""
    body = driver.find_element(By.TAG_NAME, "body")
    for _ in range(times):
        body.send_keys(key)


def drawn_cards(driver) -> list[str]:
    """Every card identity on the page: the data-card of each element."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('[data-card]')).map(e => e.dataset.card)")


def hidden_lists(base: str, db: Path, gid: str, view: str) -> list[list[str]]:
    """Per frame, the cards hidden from the seat: from the API with ?check=1."""
    with urllib.request.urlopen(f"{base}/api/games/{gid}/replay?view={view}&check=1") as r:
        frames = json.load(r)["frames"]
    assert all("hidden" in f for f in frames), "the replay API ignored ?check=1"
    return [f["hidden"] for f in frames]


def test_leaderboard_sorts_and_leads_to_a_bot_and_a_game(driver, server):
    base, real = server
    if not real:
        pytest.skip("the leaderboard and bot pages (arena.web.create_app) are not there yet")
    driver.get(f"{base}/leaderboard/xeri")
    table = wait(driver, lambda d: d.find_elements(By.ID, "leaderboard"),
                 "no #leaderboard table")[0]
    th = table.find_element(By.CSS_SELECTOR, "th[data-sort=rating]")
    index = driver.execute_script("return Array.from(arguments[0].parentNode.children)"
                                  ".indexOf(arguments[0])", th)
    th.click()
    order = th.get_attribute("aria-sort")
    values = [float(v) for v in driver.execute_script(
        "return Array.from(arguments[0].tBodies[0].rows).map(r => {"
        " const c = r.cells[arguments[1]];"
        " return c.getAttribute('data-value') ?? c.textContent.trim(); })", table, index)]
    assert order in ("ascending", "descending") and len(set(values)) >= 2  # a real reorder
    assert values == sorted(values, reverse=order == "descending")
    assert XSS in table.text  # the bot's name is text in the table
    no_alert(driver)
    SHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SHOTS / "leaderboard.png"))

    link = table.find_element(By.CSS_SELECTOR, "a.bot-link")
    link.click()
    wait(driver, lambda d: "/bots/" in d.current_url, "the bot link did not open a bot page")
    game = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "a.game-link"),
                "no a.game-link on the bot page")[0]
    game.click()
    wait(driver, lambda d: "/games/" in d.current_url, "the game link did not open a replay")
    wait(driver, lambda d: d.find_element(By.ID, "step").get_attribute("max") != "0",
         "the replay did not load")
    no_alert(driver)
    assert not js_errors(driver)


def test_the_keyboard_and_buttons_step_through_a_replay(driver, server, db):
    base, _ = server
    last = open_replay(driver, base, game_of(db, "xeri"))
    assert last > 5 and step_shown(driver) == 0
    press(driver, Keys.ARROW_RIGHT, 3)
    assert step_shown(driver) == 3
    press(driver, Keys.ARROW_LEFT)
    assert step_shown(driver) == 2
    press(driver, Keys.END)
    assert step_shown(driver) == last
    press(driver, Keys.HOME)
    assert step_shown(driver) == 0
    driver.find_element(By.ID, "next").click()
    driver.find_element(By.ID, "next").click()
    assert step_shown(driver) == 2
    driver.find_element(By.ID, "prev").click()
    assert step_shown(driver) == 1
    driver.find_element(By.ID, "last").click()
    assert step_shown(driver) == last
    driver.find_element(By.ID, "first").click()
    assert step_shown(driver) == 0
    # Space plays: the step advances by itself, and space again pauses it.
    press(driver, Keys.SPACE)
    wait(driver, lambda d: step_shown(d) >= 2, "play did not advance")
    press(driver, Keys.SPACE)
    assert "playing" not in driver.find_element(By.ID, "play").get_attribute("class")
    # The slider moves the frame too.
    slider = driver.find_element(By.ID, "step")
    slider.send_keys(Keys.HOME)
    assert step_shown(driver) == 0
    assert driver.find_elements(By.CSS_SELECTOR, "#table .card")
    assert not js_errors(driver)


def test_a_link_opens_a_view_at_a_step(driver, server, db):
    base, _ = server
    gid = game_of(db, "crossfire")
    driver.get(f"{base}/games/{gid}#view=seat:1&step=3")
    wait(driver, lambda d: d.find_element(By.ID, "counter").text.startswith("Step 3 /"),
         "the linked step was not shown")
    assert Select(driver.find_element(By.ID, "view")).first_selected_option.get_attribute(
        "value") == "seat:1"
    press(driver, Keys.ARROW_RIGHT)
    assert step_shown(driver) == 4 and driver.current_url.endswith("#view=seat%3A1&step=4")


@pytest.mark.parametrize("game", GAMES)
def test_no_seat_view_draws_a_card_hidden_from_that_seat(driver, server, db, game):
    base, _ = server
    gid = game_of(db, game)
    last = open_replay(driver, base, gid)
    views = [o.get_attribute("value") for o in
             Select(driver.find_element(By.ID, "view")).options]
    seats = [v for v in views if v.startswith("seat:")]
    assert views[0] == "full" and seats
    backs_seen = 0
    for view in seats:
        hidden = hidden_lists(base, db, gid, view)
        assert len(hidden) == last + 1
        Select(driver.find_element(By.ID, "view")).select_by_value(view)
        press(driver, Keys.HOME)
        wait(driver, lambda d: d.find_element(By.ID, "status").text == "", "view did not load")
        for step in range(last + 1):
            assert step_shown(driver) == step
            drawn = set(drawn_cards(driver))
            assert not drawn & set(hidden[step]), (view, step, sorted(drawn & set(hidden[step])))
            if hidden[step]:
                backs_seen += bool(driver.find_elements(By.CSS_SELECTOR, "#table .card.back"))
            press(driver, Keys.ARROW_RIGHT)
    assert backs_seen  # hidden cards were drawn as backs somewhere
    # The full view does draw cards a seat could not see: the check above is not vacuous.
    Select(driver.find_element(By.ID, "view")).select_by_value("full")
    press(driver, Keys.HOME)
    wait(driver, lambda d: set(drawn_cards(d)) & set(hidden_lists(base, db, gid, seats[0])[0]),
         "the full view does not show the hidden cards")
    assert not js_errors(driver)


HOLD_FETCHES = """
window.__held = [];
const realFetch = window.fetch;
window.fetch = (...args) => new Promise((resolve) => window.__held.push(() => resolve(realFetch(...args))));
"""


@pytest.mark.parametrize("game", GAMES)
def test_steps_shown_while_a_view_loads_draw_the_loaded_views_frames(driver, server, db, game):
    # Switching from the full view to a seat's, the seat's frames are fetched; a step shown before
    # they arrive must draw the frames the page has, as the view they belong to (not the full
    # view's frames as if they were the seat's: the renderer would look for a hand it lacks).
    base, _ = server
    gid = game_of(db, game)
    open_replay(driver, base, gid)
    js_errors(driver)  # what earlier pages logged is not this test's
    driver.execute_script(HOLD_FETCHES)
    Select(driver.find_element(By.ID, "view")).select_by_value("seat:0")
    press(driver, Keys.HOME)
    press(driver, Keys.ARROW_RIGHT, 2)
    assert step_shown(driver) == 2
    assert driver.execute_script("return window.__held.length") == 1  # still loading
    assert not js_errors(driver)
    assert "view=full" in driver.current_url  # what is drawn is still the full view
    driver.execute_script("window.__held.forEach((release) => release())")
    wait(driver, lambda d: d.find_element(By.ID, "status").text == "", "the view did not load")
    assert step_shown(driver) == 2 and "view=seat%3A0" in driver.current_url
    hidden = hidden_lists(base, db, gid, "seat:0")[2]
    assert not set(drawn_cards(driver)) & set(hidden)
    assert not js_errors(driver)


def test_a_bot_name_with_markup_is_text(driver, server, db):
    base, _ = server
    gid = game_of(db, "xeri", with_bot=XSS)
    open_replay(driver, base, gid)
    no_alert(driver)
    assert XSS in driver.find_element(By.ID, "replay-seats").text
    labels = [o.text for o in Select(driver.find_element(By.ID, "view")).options]
    assert any(XSS in label for label in labels)
    press(driver, Keys.ARROW_RIGHT)
    assert XSS in driver.find_element(By.ID, "scores").text
    assert XSS in driver.find_element(By.ID, "last-moves").text or XSS in driver.find_element(
        By.ID, "table").text
    # No element was made from the name: the only scripts are the page's own files and data.
    scripts = driver.execute_script(
        "return Array.from(document.scripts).map(s => s.src || s.type)")
    assert all(s.startswith(base) or s == "application/json" for s in scripts), scripts
    no_alert(driver)


@pytest.mark.parametrize("game", GAMES)
def test_every_game_is_drawn_as_cards_on_a_table(driver, server, db, game):
    base, _ = server
    gid = game_of(db, game, with_bot=XSS)
    last = open_replay(driver, base, gid)
    press(driver, Keys.ARROW_RIGHT, max(1, last // 2))
    table = driver.find_element(By.ID, "table")
    assert table.find_elements(By.CSS_SELECTOR, ".card[data-card]")
    assert table.find_elements(By.CSS_SELECTOR, ".last-move")
    assert driver.find_elements(By.CSS_SELECTOR, "#last-moves li.move")
    assert len(driver.find_elements(By.CSS_SELECTOR, "#scores li")) >= 2
    assert "{" not in table.text  # a table, not a JSON dump
    seat_view = "seat:0"
    Select(driver.find_element(By.ID, "view")).select_by_value(seat_view)
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#table .card.back"),
         "a seat view shows no face-down card")
    if game not in FORMS:  # docs/screenshots has one picture per game
        SHOTS.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(SHOTS / f"{game}.png"))
    if game == "battlefield_cribbage":
        Select(driver.find_element(By.ID, "view")).select_by_value("full")
        wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#table .face-down-known"),
             "the full view does not mark face-down cards")
        driver.save_screenshot(str(SHOTS / "replay.png"))
    no_alert(driver)
    assert not js_errors(driver)


def test_four_seat_xeri_draws_four_hands_in_two_partnerships(driver, server, db):
    base, _ = server
    gid = game_of(db, "xeri_4p")
    last = open_replay(driver, base, gid)
    hand_js = ("return Array.from(document.querySelectorAll('#table .seat-zone[data-seat]'))"
               ".map(z => [Number(z.dataset.seat), z.querySelectorAll('.hand .card').length,"
               " z.querySelectorAll('.hand .card.back').length, z.classList.contains('last-move'),"
               " z.closest('[data-side]').dataset.side])")
    with urllib.request.urlopen(f"{base}/api/games/{gid}/replay?view=full") as r:
        frames = json.load(r)["frames"]
    for view in ("full", "seat:0", "seat:1", "seat:2", "seat:3"):
        Select(driver.find_element(By.ID, "view")).select_by_value(view)
        press(driver, Keys.HOME)
        wait(driver, lambda d: d.find_element(By.ID, "status").text == "", "view did not load")
        me = None if view == "full" else int(view.split(":")[1])
        for step in [*range(0, last, 5), last]:
            press(driver, Keys.ARROW_RIGHT, step - step_shown(driver))
            assert step_shown(driver) == step
            frame = frames[step]
            zones = driver.execute_script(hand_js)
            # Four hands; every one but the viewer's face down in a seat view; each in its side.
            assert sorted(z[0] for z in zones) == [0, 1, 2, 3], (view, step, zones)
            movers = {m["seat"] for m in frame["moves"]}
            for seat, cards, backs, lit, side in zones:
                assert cards == len(frame["view"]["hands"][seat]), (view, step, seat)
                assert backs == (0 if me is None or seat == me else cards), (view, step, seat)
                assert int(side) == seat % 2 and lit == (seat in movers), (view, step, seat)
            table = driver.find_element(By.ID, "table").text
            assert "partnership seats 0 + 2" in table and "partnership seats 1 + 3" in table
            assert f"deal {frame['view']['deal_in_round'] + 1} of 2" in table
            if frame["moves"]:
                card = frame["moves"][0]["action"]["card"]
                assert driver.find_elements(
                    By.CSS_SELECTOR, f"#table .card.last-move[data-card='{card}']"), (view, step)
    assert not js_errors(driver)


@pytest.fixture(scope="module")
def logs_server(tmp_path_factory):
    """The real app over a database of one game whose bots logged at known plies."""
    from arena.web import create_app
    from tests.support.game_logs import record_logged_game

    path = tmp_path_factory.mktemp("gamelogs") / "logs.db"
    record_logged_game(path)
    yield from _serve(create_app(path))


def test_the_log_lines_of_a_step_show_beside_its_move(driver, logs_server):
    from tests.support.game_logs import MOVES

    assert open_replay(driver, logs_server, "g") == MOVES
    press(driver, Keys.ARROW_RIGHT, 3)  # step 3: ply 2's move, seat 0 ("a") logged while asked
    assert step_shown(driver) == 3
    shown = wait(driver, lambda d: [e.text for e in d.find_elements(By.CSS_SELECTOR,
                                                                    "#step-logs .log-line span")],
                 "no log line beside the move")
    assert shown == ["a", "<b>a thinks about ply 2</b>"]  # bot, line as text: no markup run
    current = driver.find_elements(By.CSS_SELECTOR, "#move-list tr.current")
    assert [row.get_attribute("data-ply") for row in current] == ["2"]
    assert "a thinks about ply 2" in current[0].text
    press(driver, Keys.END)  # the last step: its move's lines and those after the last move
    texts = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#step-logs .log-text")]
    assert texts[-1] == "b ends" and any("dropped" in t for t in texts)
    driver.find_elements(By.CSS_SELECTOR, "#move-list tr.move-row")[1].click()
    assert step_shown(driver) == 2
    no_alert(driver)
    assert not js_errors(driver)

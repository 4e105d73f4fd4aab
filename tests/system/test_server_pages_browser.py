"""The author's pages of `arena server` in a real browser (headless Chromium, as
tests/system/test_web_browser.py runs it): sign in with the token, a session cookie scripts cannot
read, the upload form with a file, the game page's logs of one's own bot, signing out.
Skipped without selenium, chromium or chromedriver."""

from __future__ import annotations

import pytest

from arena.server.app import create_server_app
from tests.support.game_logs import record_logged_game
from tests.support.server import bot_archive, logged_game_with_authors
from tests.system.test_web_browser import _serve, driver, js_errors, no_alert, wait  # noqa: F401

By = pytest.importorskip("selenium.webdriver.common.by").By  # skipped above when it is missing


@pytest.fixture(scope="module")
def pages_server(tmp_path_factory):
    """(base URL, alice's token, a bot archive on disk) of a server over game g, whose bot b is
    alice's."""
    tmp = tmp_path_factory.mktemp("serverpages")
    db = tmp / "arena.db"
    token = logged_game_with_authors(db)["alice"]
    archive = tmp / "webbot.tar.gz"
    archive.write_bytes(bot_archive(tmp, "webbot", "1"))
    for url in _serve(create_server_app(db)):
        yield url, token, archive


def game_page(driver, base: str) -> None:
    """Open game g's page and wait until it is drawn (a loaded machine once gave an empty page
    source right after the load: what is or is not on it must be read from the page itself)."""
    driver.get(base + "/games/g")
    wait(driver, lambda d: d.find_elements(By.ID, "replay"), "game g's page was not drawn")


def test_an_author_signs_in_uploads_sees_own_logs_and_signs_out(driver, pages_server):
    base, token, archive = pages_server
    driver.delete_all_cookies()
    game_page(driver, base)
    assert "b after dropping" not in driver.page_source  # not signed in: b's logs are alice's
    driver.get(base + "/me")
    wait(driver, lambda d: d.find_elements(By.NAME, "token"), "/me did not lead to the sign-in form")
    driver.find_element(By.NAME, "token").send_keys(token)
    driver.find_element(By.CSS_SELECTOR, "form.signin button").click()
    wait(driver, lambda d: d.find_elements(By.ID, "upload"), "signing in did not lead to /me")
    assert "arena_session" not in driver.execute_script("return document.cookie")  # HttpOnly
    driver.find_element(By.NAME, "archive").send_keys(str(archive))
    driver.find_element(By.CSS_SELECTOR, "#upload form button").click()
    ok = wait(driver, lambda d: d.find_elements(By.ID, "upload-ok"), "the upload was not received")
    assert "received" in ok[0].text
    assert "webbot" in driver.find_element(By.ID, "submissions").text
    game_page(driver, base)
    assert "b after dropping" in driver.page_source  # alice sees her bot's per-move logs
    driver.get(base + "/me")
    driver.find_element(By.CSS_SELECTOR, "form.signout button").click()
    wait(driver, lambda d: d.find_elements(By.ID, "signin-link"), "signing out did not end")
    driver.get(base + "/me")
    wait(driver, lambda d: d.find_elements(By.NAME, "token"), "signed out, /me still showed")
    no_alert(driver)
    assert not js_errors(driver)


@pytest.fixture(scope="module")
def rooted_server(tmp_path_factory):
    """The base URL of a server over game g mounted under /arena, as a proxy's path prefix puts
    it (its root path is /arena)."""
    from starlette.applications import Starlette
    from starlette.routing import Mount

    tmp = tmp_path_factory.mktemp("rooted")
    db = tmp / "arena.db"
    record_logged_game(db)
    for url in _serve(Starlette(routes=[Mount("/arena", app=create_server_app(db))])):
        yield url + "/arena"


def test_under_a_root_path_the_replay_loads_and_every_link_stays_under_it(driver, rooted_server):
    base = rooted_server
    driver.delete_all_cookies()
    driver.get(base + "/games/g")
    # replay.js fetched the frames under the root path: the controls show and nothing failed
    wait(driver, lambda d: not d.find_element(By.ID, "replay-controls").get_attribute("hidden"),
         "the replay viewer did not start")
    wait(driver, lambda d: d.find_element(By.ID, "status").text == "", "the replay did not load")
    assert js_errors(driver) == []
    # the stylesheet was found (the page is styled, not the browser's default)
    assert driver.execute_script(
        "return [...document.styleSheets].some(s => s.href && s.href.includes('/arena/static/'))"
        " && getComputedStyle(document.querySelector('header.top')).display !== 'inline'")
    hrefs = driver.execute_script(
        "return [...document.querySelectorAll('a[href], link[href], script[src], form[action]')]"
        ".map(e => e.href || e.src || e.action)")
    assert hrefs and all(h.startswith(base + "/") or h == base or h.startswith("data:")
                         for h in hrefs), hrefs
    driver.find_element(By.CSS_SELECTOR, "header.top nav a[href$='/bots']").click()
    wait(driver, lambda d: d.current_url == base + "/bots", "the nav link left the root path")
    driver.find_element(By.LINK_TEXT, "a").click()
    wait(driver, lambda d: d.current_url.startswith(base + "/bots/a"), "a bot link left the root")

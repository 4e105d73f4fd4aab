"""The XSS sweep of tests/system/test_server_xss.py in a real browser (headless Chromium, as
tests/system/test_web_browser.py runs it): the pages of hostile bots uploaded through the real API
and played by a real ladder, anonymously and signed in as their author, each replay stepped from
its first frame to its last — no alert opens, no element a payload would inject is in the DOM
(scripts drawn from JSON included), and the console shows no script error or CSP refusal.
Skipped without selenium, chromium or chromedriver."""

from __future__ import annotations

import urllib.parse

import pytest

from tests.system.test_server_xss import PAYLOAD, VERSION, played  # noqa: F401  (the fixture)
from tests.system.test_web_browser import driver, js_errors, no_alert, press, wait  # noqa: F401

By = pytest.importorskip("selenium.webdriver.common.by").By  # skipped above when it is missing
Keys = pytest.importorskip("selenium.webdriver.common.keys").Keys

pytestmark = pytest.mark.slow
INJECTED = ("return document.querySelectorAll('img[src=\"x\"], [onerror], [onload], "
            "script:not([src]):not([type=\"application/json\"]), a[href^=\"javascript:\"]').length")


def look(driver, url: str) -> None:
    """Load `url`, step a replay through to its end; fail on any sign a payload ran."""
    driver.get(url)
    wait(driver, lambda d: d.execute_script("return document.readyState") == "complete",
         f"{url} did not load")
    if driver.find_elements(By.ID, "step"):
        # Loaded when its status line leaves "Loading…" (a forfeit at the first move has no step).
        wait(driver, lambda d: "Loading" not in d.find_element(By.ID, "status").text,
             f"the replay of {url} did not load")
        assert "Could not load" not in driver.find_element(By.ID, "status").text, url
        press(driver, Keys.END)
        press(driver, Keys.HOME)
        press(driver, Keys.ARROW_RIGHT, 3)
    no_alert(driver)
    assert driver.execute_script(INJECTED) == 0, url
    # The error page's own 404 is logged as a failed load: no script error.
    assert [e for e in js_errors(driver) if "status of 404" not in e] == [], url


def test_no_payload_runs_in_a_browser_on_any_page(driver, played):  # noqa: F811
    server, tokens, ids, games = played
    quoted = urllib.parse.quote
    pages = ["/", "/leaderboard/xeri", "/ladders/1", "/bots", "/bots/xss",
             f"/bots/xss?version={quoted(VERSION)}", "/bots/xssfail",
             *(f"/games/{g}" for g in games), f"/bots/{quoted(PAYLOAD, safe='')}"]
    driver.delete_all_cookies()
    for page in pages:
        look(driver, server.base + page)
    driver.get(server.base + "/signin")
    driver.find_element(By.NAME, "token").send_keys(tokens["alice"])
    driver.find_element(By.CSS_SELECTOR, "form.signin button").click()
    wait(driver, lambda d: d.find_elements(By.ID, "upload"), "signing in did not lead to /me")
    for page in ["/me", *pages]:
        look(driver, server.base + page)
    assert "&lt;script&gt;" not in driver.execute_script("return document.body.innerText")
    driver.get(server.base + "/me")
    # Alice sees her bots' stderr, as text: the payload is on the page and did nothing.
    assert "<script>alert(1)</script>" in driver.find_element(By.TAG_NAME, "body").text
    driver.delete_all_cookies()

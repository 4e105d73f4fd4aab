"""`arena submit` and `arena submissions` through the CLI against a stand-in server (the issue 26
contract's routes, tests/support/submit_server.py) on 127.0.0.1: an upload followed to its
verdict, --no-wait, every refusal and failure as one line, the token never shown nor in a URL."""

from __future__ import annotations

import io
import json
import os
import socket
import sys
import tarfile

import pytest
from typer.testing import CliRunner

from arena import submit
from arena.cli import app
from arena.cli._app import console, err_console
from tests.support.botfolders import make_bot
from tests.support.submit_server import (
    AUTHOR_TOKEN,
    FAILED_REPORT,
    ORGANISER_TOKEN,
    FakeServer,
    serve_app,
    serving,
)

runner = CliRunner()
SECRETS = [AUTHOR_TOKEN, ORGANISER_TOKEN]


@pytest.fixture(scope="module")
def server():
    """The stand-in server, started once for the module."""
    with serving(FakeServer()) as fake:
        yield fake


@pytest.fixture
def fake(server, monkeypatch, tmp_path):
    """The server, reset, as ARENA_SERVER with an author's ARENA_TOKEN; polling made quick."""
    server.reset()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # never the machine's own config
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("ARENA_SERVER", server.url)
    monkeypatch.setenv("ARENA_TOKEN", AUTHOR_TOKEN)
    monkeypatch.setattr(submit, "POLL_FIRST_S", 0.01)
    monkeypatch.setattr(submit, "POLL_MAX_S", 0.05)
    return server


@pytest.fixture
def bot(tmp_path):
    return make_bot(tmp_path / "rb", "rb", "1.2")


def invoke(*args: str):
    result = runner.invoke(app, list(args))
    assert "Traceback (most recent call last)" not in result.output, result.output
    assert not [t for t in SECRETS if t in result.output]  # a token is never printed
    return result


def one_line_error(result, code: int, *says: str) -> str:
    """The command failed with `code` and said so on one line naming each of `says`."""
    text = result.output.strip()
    assert result.exit_code == code, text
    errors = [line for line in text.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "\n" not in errors[0], text
    assert "╭" not in text
    for part in says:
        assert part in errors[0], (part, errors[0])
    return errors[0]


def test_an_upload_is_followed_to_a_clean_check(fake, bot):
    result = invoke("submit", str(bot))
    assert result.exit_code == 0, result.output
    out = result.output
    assert "packed rb 1.2:" in out and "archive" in out
    assert f"submitted rb 1.2 as submission 1 ({fake.url}/api/submissions/1)" in out
    assert "checking…" in out
    assert "clean: rb 1.2 passed its check" in out
    upload, *polls = fake.requests
    assert (upload["method"], upload["path"]) == ("POST", "/api/submissions")
    assert upload["headers"]["authorization"] == f"Bearer {AUTHOR_TOKEN}"
    assert upload["headers"]["content-type"] == "application/gzip"
    with tarfile.open(fileobj=io.BytesIO(upload["body"]), mode="r:gz") as tar:
        assert "bot.toml" in tar.getnames()
    assert polls and all(p["path"] == "/api/submissions/1" for p in polls)
    assert all(AUTHOR_TOKEN not in r["path"] + r["query"] for r in fake.requests)


def test_a_failed_check_shows_its_problems_and_exits_1(fake, bot):
    fake.statuses = ["checking", "failed"]
    result = invoke("submit", str(bot))
    assert result.exit_code == 1, result.output
    out = result.output
    assert "failed: rb 1.2: its check found 1 problem" in out
    assert "problem in xeri (2 seats, game 7): crash: the bot exited" in out
    assert "what happened: exit code 1" in out and "hint: read the traceback" in out


def test_no_wait_returns_once_uploaded(fake, bot):
    result = invoke("submit", str(bot), "--no-wait")
    assert result.exit_code == 0, result.output
    assert "submitted rb 1.2 as submission 1" in result.output
    assert "`arena submissions` shows it" in result.output
    assert [r["method"] for r in fake.requests] == ["POST"]


def test_the_option_and_the_token_file_are_used(fake, bot, tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_SERVER", "https://not-this-one.invalid")
    monkeypatch.delenv("ARENA_TOKEN")
    token = tmp_path / "token"
    token.write_text(AUTHOR_TOKEN + "\n")
    token.chmod(0o600)
    result = invoke("submit", str(bot), "--server", fake.url + "/", "--token-file", str(token),
                    "--no-wait")
    assert result.exit_code == 0, result.output
    assert fake.requests[0]["headers"]["authorization"] == f"Bearer {AUTHOR_TOKEN}"


@pytest.mark.parametrize("command", (("submit", "--no-wait"), ("submissions",)))
def test_the_token_file_option_wins_over_arena_token_which_wins_over_the_config_file(
        fake, bot, tmp_path, monkeypatch, command):
    config = tmp_path / "home" / ".config" / "arena" / "token"
    config.parent.mkdir(parents=True)
    config.write_text("arena_from_the_config_file\n")
    config.chmod(0o600)
    given = tmp_path / "given"
    given.write_text(ORGANISER_TOKEN + "\n")
    given.chmod(0o600)
    args = [command[0], *([str(bot)] if command[0] == "submit" else []), *command[1:]]
    # ARENA_TOKEN is the author's (the fixture): the option's file is the organiser's.
    assert invoke(*args, "--token-file", str(given)).exit_code == 0
    assert invoke(*args).exit_code == 0
    monkeypatch.delenv("ARENA_TOKEN")
    invoke(*args)  # the config file's token is unknown to the server: refused, but it was sent
    sent = [r["headers"]["authorization"] for r in fake.requests]
    first = {"submit": 1, "submissions": 2}[command[0]]  # requests a command makes
    assert sent[0] == f"Bearer {ORGANISER_TOKEN}"
    assert sent[first] == f"Bearer {AUTHOR_TOKEN}"
    assert sent[2 * first] == "Bearer arena_from_the_config_file"


def test_a_token_file_others_can_read_is_refused_before_anything_is_sent(fake, bot, tmp_path,
                                                                         monkeypatch):
    monkeypatch.delenv("ARENA_TOKEN")
    token = tmp_path / "home" / ".config" / "arena" / "token"
    token.parent.mkdir(parents=True)
    token.write_text(AUTHOR_TOKEN)
    token.chmod(0o644)
    one_line_error(invoke("submit", str(bot)), 2, "mode 0644", f"chmod 600 {token}")
    token.chmod(0o600)
    assert invoke("submit", str(bot), "--no-wait").exit_code == 0
    assert len(fake.requests) == 1


def test_no_token_says_how_to_get_one(fake, bot, monkeypatch):
    monkeypatch.delenv("ARENA_TOKEN")
    one_line_error(invoke("submit", str(bot)), 2, "no API token", "arena author add")
    one_line_error(invoke("submissions"), 2, "no API token")
    assert fake.requests == []


def test_a_bad_folder_is_refused_before_anything_is_sent(fake, tmp_path):
    (tmp_path / "bot.toml").write_text('name = "rb"\ncommand = ["x"]\ngames = ["poker"]\n')
    one_line_error(invoke("submit", str(tmp_path)), 2, "games", "poker")
    one_line_error(invoke("submit", str(tmp_path / "nope")), 2, "no such folder")
    assert fake.requests == []


@pytest.mark.parametrize("status, code, says", [
    (400, 2, "refused (400: archive holds '../x')"),
    (401, 2, "the token was refused (401: archive holds '../x')"),
    (403, 2, "not allowed (403: archive holds '../x')"),
    (404, 2, "not found (404: archive holds '../x'); is this an `arena server`"),
    (413, 2, "too large for the server (413: archive holds '../x')"),
    (429, 1, "a limit was reached (429: archive holds '../x'); try again in 60 s"),
    (500, 1, "the server answered 500 (archive holds '../x')"),
])
def test_each_refusal_of_an_upload_is_one_line_quoting_the_server(fake, bot, status, code, says):
    fake.refuse["POST /api/submissions"] = (status, {"error": "archive holds '../x'"},
                                            {"Retry-After": "60"})
    one_line_error(invoke("submit", str(bot)), code, f"{fake.url}: POST /api/submissions: {says}")


def test_an_archive_refused_before_it_is_all_sent_gets_the_servers_413(fake, bot):
    (bot / "weights.bin").write_bytes(os.urandom(24 << 20))  # incompressible: a 24 MiB archive
    fake.archive_limit = 1 << 20
    result = invoke("submit", str(bot))
    one_line_error(result, 2, "413: archive over the limit of 1,048,576 bytes")
    assert "archive 24.0 MiB" in result.output


def test_the_servers_own_refusal_of_a_wrong_token(fake, bot, monkeypatch):
    monkeypatch.setenv("ARENA_TOKEN", "arena_revoked")
    line = one_line_error(invoke("submit", str(bot)), 2, "401: unknown or revoked token")
    assert "arena_revoked" not in line


def test_an_error_that_echoes_the_token_or_control_characters_is_made_safe(fake, bot):
    fake.refuse["POST /api/submissions"] = (
        403, {"error": f"token {AUTHOR_TOKEN} may not\n\x1b[2Jupload [red]x[/red]"})
    line = one_line_error(invoke("submit", str(bot)), 2, "token <token> may not",
                          "\\x0a\\x1b[2Jupload [red]x[/red]")
    assert AUTHOR_TOKEN not in line


def test_a_refusal_while_following_is_one_line(fake, bot):
    fake.refuse["GET /api/submissions/{id}"] = (404, {"error": "no submission 1 of yours"})
    result = invoke("submit", str(bot))
    one_line_error(result, 2, "GET /api/submissions/1: not found (404: no submission 1 of yours)")
    assert "submitted rb 1.2 as submission 1" in result.output


def test_a_redirect_is_not_followed(fake, bot):
    fake.refuse["POST /api/submissions"] = (307, {"error": "moved"},
                                            {"Location": "https://elsewhere.example/api"})
    one_line_error(invoke("submit", str(bot)), 1, "redirected (307) to https://elsewhere.example/api",
                   "give the final address as --server")
    assert len(fake.requests) == 1


def test_an_answer_that_is_not_json_is_one_line(fake, bot):
    fake.refuse["POST /api/submissions"] = (201, b"<html>welcome to nginx</html>")
    one_line_error(invoke("submit", str(bot)), 1, "(201) is not JSON", "it starts <html>welcome",
                   "is this an `arena server`?")


def test_an_unreachable_server_is_one_line(fake, bot, monkeypatch):
    with socket.socket() as s:  # a port nothing listens on once closed
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}"
    monkeypatch.setenv("ARENA_SERVER", url)
    one_line_error(invoke("submit", str(bot)), 1, f"cannot reach {url}", "refused")
    one_line_error(invoke("submissions"), 1, f"cannot reach {url}")


def test_https_to_a_plain_http_server_is_one_line(fake):
    url = fake.url.replace("http://", "https://")
    one_line_error(invoke("submissions", "--server", url), 1, f"cannot reach {url}", "SSL")


def test_a_server_that_never_answers_times_out_in_one_line(fake, bot, monkeypatch):
    monkeypatch.setattr(submit, "UPLOAD_TIMEOUT_S", 0.5)
    with socket.socket() as silent:  # accepts connections (the backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        monkeypatch.setenv("ARENA_SERVER", url)
        one_line_error(invoke("submit", str(bot)), 1,
                       "no answer to POST /api/submissions within 0.5 s")


def test_a_check_that_outlasts_the_timeout_is_one_line(fake, bot):
    fake.statuses = ["checking"]
    one_line_error(invoke("submit", str(bot), "--timeout", "1"), 1,
                   "submission 1 is still checking after 1 s", "arena submissions")


def test_plain_http_to_another_machine_is_warned_about(fake, bot, monkeypatch):
    monkeypatch.setenv("ARENA_SERVER", "http://192.0.2.1:9")  # TEST-NET: never answers
    monkeypatch.setattr(submit, "UPLOAD_TIMEOUT_S", 0.3)
    result = invoke("submit", str(bot))
    assert "warning: http://192.0.2.1:9 is plain http to another machine" in result.output


def test_submissions_lists_mine_only(fake):
    fake.add("rb", "1", "clean")
    fake.add("rb", "2", "failed", "its check found 2 problems")
    fake.add("bobs_bot", "9", "clean", author="bob")
    result = invoke("submissions")
    assert result.exit_code == 0, result.output
    out = result.output
    assert f"ada's submissions at {fake.url}" in out
    assert "its check found 2 problems" in out and "2026-12-03 21:02" in out
    assert "bobs_bot" not in out
    lines = out.splitlines()
    assert lines.index(next(x for x in lines if " 2 " in x and "rb" in x)) < lines.index(
        next(x for x in lines if " 1 " in x and "rb" in x))  # newest first
    assert [r["path"] for r in fake.requests] == ["/api/me", "/api/submissions"]


def test_an_organiser_sees_every_authors_submissions(fake, monkeypatch):
    fake.add("rb", "1", "clean")
    fake.add("bobs_bot", "9", "checking", author="bob")
    monkeypatch.setenv("ARENA_TOKEN", ORGANISER_TOKEN)
    result = invoke("submissions", "--json")
    assert result.exit_code == 0, result.output
    assert [r["bot"] for r in json.loads(result.stdout)] == ["bobs_bot", "rb"]
    out = invoke("submissions").output
    assert "every author's submissions" in out
    row = next(line for line in out.splitlines() if "bobs_bot" in line)
    assert [c.strip() for c in row.split("│")][1:4] == ["2", "bob", "bobs_bot"]


def test_no_submissions_yet_says_how_to_make_one(fake):
    result = invoke("submissions")
    assert result.exit_code == 0 and "no submissions of ada" in result.output
    assert "arena submit PATH" in result.output


@pytest.mark.parametrize("width", (80, 120, 200))
def test_the_submissions_table_fits_the_width(fake, width, monkeypatch):
    monkeypatch.setattr(console, "_width", width)
    monkeypatch.setattr(err_console, "_width", width)
    fake.add("xeri_heuristic_deluxe", "1.0.0-rc.12", "clean")
    fake.add("random_walker_supreme", "2026.12.03", "failed",
             "its check found 2 problems: crash in xeri (2 seats), timeout in crossfire")
    out = invoke("submissions").output
    assert max(len(line) for line in out.splitlines()) <= width
    for value in ("xeri_heuristic_deluxe", "1.0.0-rc.12", "random_walker_supreme", "2026.12.03",
                  "failed", "clean"):
        assert value in out


# -- against the real server (arena.server), its check stubbed -----------------------------------


@pytest.fixture
def real(tmp_path, monkeypatch):
    """`arena server`'s app over a temp database (a 64 KiB archive limit; checks stubbed: a bot
    named crasher fails with a report of bot check's shape), served on 127.0.0.1; its tokens."""
    from arena.server.app import ServerConfig, create_server_app
    from arena.server.authors import add_author
    from arena.server.checks import CheckPool
    from arena.store import Store
    from arena.uploads import UploadLimits

    db = tmp_path / "arena.db"
    store = Store(db)
    tokens = {"ada": add_author(store, "ada"), "bob": add_author(store, "bob")}
    store.db.conn.close()

    def check(db_path, name, version):
        if name == "crasher":
            return False, FAILED_REPORT, "xeri with 2 seats: crash: the bot exited"
        return True, {"clean": True, "problems": []}, None

    config = ServerConfig(archive_limits=UploadLimits(archive_bytes=64 * 1024))
    app = create_server_app(db, config, CheckPool(db, 1, check=check))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(submit, "POLL_FIRST_S", 0.05)
    monkeypatch.setattr(submit, "POLL_MAX_S", 0.2)
    monkeypatch.setattr(sys.modules[__name__], "SECRETS", [*SECRETS, *tokens.values()])
    for url in serve_app(app):
        monkeypatch.setenv("ARENA_SERVER", url)
        monkeypatch.setenv("ARENA_TOKEN", tokens["ada"])
        yield url, tokens


def test_against_the_real_server_clean_failed_refused_and_listed(real, tmp_path, monkeypatch):
    url, tokens = real
    result = invoke("submit", str(make_bot(tmp_path / "rb", "rb", "1")))
    assert result.exit_code == 0, result.output
    assert "clean: rb 1 passed its check" in result.output
    result = invoke("submit", str(make_bot(tmp_path / "crasher", "crasher", "1")))
    assert result.exit_code == 1, result.output
    assert "failed: crasher 1: its check found 1 problem" in result.output
    assert "problem in xeri (2 seats, game 7): crash:" in result.output
    big = make_bot(tmp_path / "big", "big", "1")
    (big / "weights.bin").write_bytes(os.urandom(200_000))
    one_line_error(invoke("submit", str(big)), 2, "413:", "65,536 bytes")
    listed = invoke("submissions", "--json")
    assert [(r["bot"], r["status"]) for r in json.loads(listed.stdout)] == [
        ("crasher", "failed"), ("rb", "clean")]
    monkeypatch.setenv("ARENA_TOKEN", tokens["bob"])
    assert "no submissions of bob" in invoke("submissions").output  # ada's are hers
    one_line_error(invoke("submit", str(big), "--no-wait"), 2, "413:")
    monkeypatch.setenv("ARENA_TOKEN", tokens["ada"] + "x")
    one_line_error(invoke("submissions"), 2, "the token was refused (401:")

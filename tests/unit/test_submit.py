"""The submit client's pure parts (arena.submit): what a bot folder packs to, where the token and
the server come from (and which token files are refused), how a check is followed and shown."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from arena import submit
from arena.errors import ConfigError
from arena.submit import (
    FollowTimeout,
    ServerError,
    config_dir,
    find_server,
    find_token,
    follow,
    pack_bot,
    sends_token_in_clear,
    verdict_lines,
)
from tests.support.botfolders import make_bot

TOKEN = "arena_" + "t" * 43


def members(data: bytes) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return {m.name: m for m in tar.getmembers()}


def content(data: bytes, name: str) -> bytes:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return tar.extractfile(name).read()


# -- packing ------------------------------------------------------------------------------------------


def test_a_bot_folder_packs_its_files_at_the_archive_root_without_the_leftovers(tmp_path):
    folder = make_bot(tmp_path / "rb", "rb", "1.2")
    (folder / "lib").mkdir()
    (folder / "lib" / "model.json").write_text("{}")
    (folder / "run.sh").write_text("#!/bin/sh\n")
    (folder / "run.sh").chmod(0o755)
    (folder / ".settings.json").write_text("{}")  # a dotfile the bot reads is the bot's
    for leftover in (".git/HEAD", "__pycache__/random_bot.cpython-311.pyc", "lib/old.pyc",
                     "random_bot.py~", "#random_bot.py#", ".random_bot.py.swp", ".DS_Store"):
        (folder / leftover).parent.mkdir(parents=True, exist_ok=True)
        (folder / leftover).write_text("x")
    os.symlink("ada@host.1234:1", folder / ".#random_bot.py")  # Emacs' lock: a dangling link

    packed = pack_bot(folder)

    names = members(packed.data)
    assert set(names) == {"bot.toml", "random_bot.py", "arenabot.py", "lib", "lib/model.json",
                          "run.sh", ".settings.json"}
    assert (packed.name, packed.version) == ("rb", "1.2")
    assert packed.files == len(names)
    assert names["run.sh"].mode == 0o755 and names["bot.toml"].mode == 0o644
    assert all(m.uid == 0 and m.uname == "" for m in names.values())  # the author's user stays home
    assert content(packed.data, "lib/model.json") == b"{}"
    assert pack_bot(folder).data == packed.data  # the same folder, the same bytes


def test_the_manifest_file_itself_names_its_folder(tmp_path):
    folder = make_bot(tmp_path / "rb")
    assert "bot.toml" in members(pack_bot(folder / "bot.toml").data)


def test_a_folder_without_bot_toml_is_refused(tmp_path):
    (tmp_path / "bot.py").write_text("")
    with pytest.raises(ConfigError, match=r"no bot\.toml in this folder"):
        pack_bot(tmp_path)
    with pytest.raises(ConfigError, match="no such folder"):
        pack_bot(tmp_path / "missing")
    with pytest.raises(ConfigError, match=r"give the bot's folder"):
        pack_bot(tmp_path / "bot.py")
    os.symlink("bot.py", tmp_path / "bot.toml")
    with pytest.raises(ConfigError, match=r"bot\.toml is a link"):
        pack_bot(tmp_path)


@pytest.mark.parametrize("manifest, says", [
    ('name = "rb"\nversion = "1"\n', "command"),
    ('name = "rb"\ncommand = ["python3", "x.py"]\ngames = ["no_such_game"]\n', "games"),
    ('name = "no spaces allowed"\ncommand = ["x"]\n', "bot name"),
    ('name = "rb"\ncommand = ["x"]\nworkdir = "../.."\n', "outside the bot's folder"),
    ('name = "rb"\ncommand = ["x"]\nworkdir = "src"\n', "not a folder"),
    ('name = "rb"\ncommand = [\n', "bot.toml"),
])
def test_a_manifest_mistake_is_said_before_anything_is_uploaded(tmp_path, manifest, says):
    (tmp_path / "bot.toml").write_text(manifest)
    with pytest.raises(ConfigError, match=says) as err:
        pack_bot(tmp_path)
    assert "\n" not in str(err.value)


def test_a_link_out_of_the_folder_is_refused_naming_it(tmp_path):
    folder = make_bot(tmp_path / "rb")
    (tmp_path / "secret.txt").write_text("s3cret")
    os.symlink("../secret.txt", folder / "data.txt")
    with pytest.raises(ConfigError, match=r"'data\.txt' is a link to '\.\./secret\.txt', outside"):
        pack_bot(folder)
    (folder / "data.txt").unlink()
    os.symlink("/etc/passwd", folder / "passwd")
    with pytest.raises(ConfigError, match="outside the bot's folder"):
        pack_bot(folder)


def test_a_link_inside_the_folder_is_packed_as_the_file_it_points_to(tmp_path):
    folder = make_bot(tmp_path / "rb")
    (folder / "weights-v3.bin").write_bytes(b"\x00\x01")
    os.symlink("weights-v3.bin", folder / "weights.bin")
    packed = pack_bot(folder)
    info = members(packed.data)["weights.bin"]
    assert info.isfile() and content(packed.data, "weights.bin") == b"\x00\x01"


@pytest.mark.parametrize("make, says", [
    (lambda f: os.symlink("gone.py", f / "helper.py"), "does not exist"),
    (lambda f: ((f / "lib").mkdir(), os.symlink("lib", f / "lib2")), "link to the folder"),
    (lambda f: os.mkfifo(f / "pipe"), "not a regular file or folder"),
])
def test_dangling_links_links_to_folders_and_fifos_are_refused(tmp_path, make, says):
    folder = make_bot(tmp_path / "rb")
    make(folder)
    with pytest.raises(ConfigError, match=says):
        pack_bot(folder)


# -- the token ---------------------------------------------------------------------------------------


def token_file(path: Path, mode: int = 0o600, text: str = TOKEN + "\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)
    return path


def test_the_token_comes_from_the_option_then_arena_token_then_the_config_folder(tmp_path):
    home = {"HOME": str(tmp_path / "home")}
    token_file(tmp_path / "home" / ".config" / "arena" / "token", text="arena_from_config\n")
    given = token_file(tmp_path / "given", text="\n  arena_from_given  \n")
    env = {**home, "ARENA_TOKEN": "arena_from_env"}
    assert find_token(None, home) == "arena_from_config"
    assert find_token(given, home) == "arena_from_given"
    assert find_token(None, env) == "arena_from_env"  # the environment wins over the config
    assert find_token(given, env) == "arena_from_given"  # the command line wins over both
    assert find_token(None, {**home, "ARENA_TOKEN": "  "}) == "arena_from_config"  # blank: unset


def test_an_explicit_token_file_is_checked_even_when_arena_token_is_set(tmp_path):
    env = {"HOME": str(tmp_path), "ARENA_TOKEN": "arena_from_env"}
    with pytest.raises(ConfigError, match="no such file"):
        find_token(tmp_path / "nowhere", env)  # never a silent fall back to the environment
    with pytest.raises(ConfigError, match="chmod 600"):
        find_token(token_file(tmp_path / "open", 0o644), env)


def test_xdg_config_home_moves_the_config_folder_unless_relative(tmp_path):
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert config_dir(env) == tmp_path / "xdg" / "arena"
    assert config_dir({**env, "XDG_CONFIG_HOME": "rel"}) == tmp_path / ".config" / "arena"
    token_file(tmp_path / "xdg" / "arena" / "token", text="arena_xdg\n")
    assert find_token(None, env) == "arena_xdg"


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660, 0o606])
def test_a_token_file_others_can_read_or_change_is_refused_with_the_chmod_to_run(tmp_path, mode):
    path = token_file(tmp_path / "token", mode)
    with pytest.raises(ConfigError) as err:
        find_token(path, {})
    message = str(err.value)
    assert f"mode 0{mode:o}" in message and f"run `chmod 600 {path}`" in message
    assert TOKEN not in message and "\n" not in message


def test_a_private_token_file_is_read(tmp_path):
    assert find_token(token_file(tmp_path / "token", 0o600), {}) == TOKEN
    assert find_token(token_file(tmp_path / "token2", 0o400), {}) == TOKEN


def test_no_token_says_how_to_get_one(tmp_path):
    with pytest.raises(ConfigError) as err:
        find_token(None, {"HOME": str(tmp_path)})
    message = str(err.value)
    assert "ARENA_TOKEN" in message and "arena author add" in message
    assert str(tmp_path / ".config" / "arena" / "token") in message
    with pytest.raises(ConfigError, match="no such file"):
        find_token(tmp_path / "nowhere", {})
    with pytest.raises(ConfigError, match="is empty"):
        find_token(token_file(tmp_path / "empty", text="\n\n"), {})


def test_a_token_that_cannot_go_in_a_header_is_refused_without_being_shown(tmp_path):
    for bad in ("arena_secret with space", "arena_secret\x1b[2J"):
        with pytest.raises(ConfigError, match="not a token") as err:
            find_token(None, {"ARENA_TOKEN": bad})
        assert "secret" not in str(err.value)


# -- the server --------------------------------------------------------------------------------------


def test_the_server_comes_from_the_option_then_arena_server_then_the_config_file(tmp_path):
    env = {"HOME": str(tmp_path)}
    (tmp_path / ".config" / "arena").mkdir(parents=True)
    (tmp_path / ".config" / "arena" / "server").write_text("\nhttps://from-file.example/\n")
    assert find_server(None, env) == "https://from-file.example"
    with_env = {**env, "ARENA_SERVER": "https://from-env.example/arena/"}
    assert find_server(None, with_env) == "https://from-env.example/arena"  # a root path stays
    assert find_server("http://127.0.0.1:8000", with_env) == "http://127.0.0.1:8000"


def test_no_server_names_the_three_places(tmp_path):
    with pytest.raises(ConfigError) as err:
        find_server(None, {"HOME": str(tmp_path)})
    assert "--server" in str(err.value) and "ARENA_SERVER" in str(err.value)
    assert str(tmp_path / ".config" / "arena" / "server") in str(err.value)


@pytest.mark.parametrize("url, says", [
    ("ftp://host", "not a server URL"),
    ("file:///etc/passwd", "not a server URL"),
    ("host:8000", "not a server URL"),
    ("https://ada:arena_tok@host", "never in the URL"),
    ("https://host/?token=arena_tok", "no ?query"),
    ("http://host:99999", "port"),
])
def test_a_server_url_that_is_not_one_is_refused(url, says):
    with pytest.raises(ConfigError, match=says.replace("?", r"\?")) as err:
        find_server(url, {})
    assert "arena_tok" not in str(err.value) or "?" in url  # a user:password is never echoed


def test_plain_http_is_flagged_only_off_this_machine():
    assert sends_token_in_clear("http://arena.example.org")
    assert sends_token_in_clear("http://10.0.0.5:8000")
    assert not sends_token_in_clear("http://127.0.0.1:8000")
    assert not sends_token_in_clear("http://localhost:8000")
    assert not sends_token_in_clear("http://[::1]:8000")
    assert not sends_token_in_clear("https://arena.example.org")


# -- following a check -------------------------------------------------------------------------------


class Scripted:
    """A client whose submission() answers from a list (a ServerError is raised)."""

    server = "http://127.0.0.1:1"

    def __init__(self, answers):
        self.answers = list(answers)
        self.asked = 0

    def submission(self, ident):
        self.asked += 1
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        return {"id": ident, "status": answer}


class Clock:
    def __init__(self):
        self.now = 0.0
        self.sleeps: list[float] = []

    def sleep(self, s):
        self.sleeps.append(s)
        self.now += s

    def __call__(self):
        return self.now


def test_following_backs_off_from_half_a_second_to_five_and_reports_each_new_status():
    clock = Clock()
    seen = []
    client = Scripted(["received"] + ["checking"] * 9 + ["clean"])
    final = follow(client, 7, 600, on_change=lambda s: seen.append(s["status"]),
                   sleep=clock.sleep, clock=clock)
    assert final["status"] == "clean"
    assert seen == ["received", "checking", "clean"]
    assert clock.sleeps[:3] == [0.5, 0.75, 1.125]
    assert max(clock.sleeps) == 5.0 and clock.sleeps[-1] == 5.0
    assert all(b >= a for a, b in zip(clock.sleeps, clock.sleeps[1:]))


def test_following_gives_up_at_the_timeout_saying_where_to_look():
    clock = Clock()
    with pytest.raises(FollowTimeout, match=r"still checking after 20 s; `arena submissions`"):
        follow(Scripted(["checking"]), 3, 20, sleep=clock.sleep, clock=clock)
    assert clock.now == 20  # the last sleep is cut to the deadline


def test_following_asks_again_through_a_restart_but_not_past_a_refusal():
    clock = Clock()
    retried = []
    down = ServerError("cannot reach it", transient=True)
    client = Scripted(["checking", down, down, ServerError("503", 503, transient=True), "failed"])
    assert follow(client, 1, 600, on_retry=retried.append, sleep=clock.sleep,
                  clock=clock)["status"] == "failed"
    assert retried == [down]  # said once per outage
    with pytest.raises(ServerError, match="gone"):
        follow(Scripted(["checking", ServerError("gone", 404)]), 1, 600, sleep=clock.sleep,
               clock=clock)
    with pytest.raises(ServerError, match="neither pending nor final"):
        follow(Scripted(["exploded"]), 1, 600, sleep=clock.sleep, clock=clock)


def test_a_failed_verdict_lists_the_reports_problems_on_safe_lines():
    sub = {"id": 4, "bot": "rb", "version": "2", "status": "failed",
           "reason": "its check found 1 problem",
           "report": {"problems": [{"game": "xeri", "seats": 2, "options": {"rounds": 3},
                                    "game_id": "12", "words": "crash: the bot exited",
                                    "detail": "exit code 1\nthen more", "hint": "see stderr",
                                    "evidence": "\x1b[31mred"}]}}
    lines = verdict_lines(sub)
    assert lines[0] == "failed: rb 2: its check found 1 problem"  # each problem said in full
    assert lines[1] == "problem in xeri (2 seats, rounds=3, game 12): crash: the bot exited"
    assert "  what happened: exit code 1\\x0athen more" in lines
    assert "  evidence: \\x1b[31mred" in lines and "  hint: see stderr" in lines
    assert verdict_lines({"status": "clean", "bot": "rb", "version": "2"})[0].startswith("clean: rb 2")
    text_report = verdict_lines({"status": "failed", "bot": "rb", "report": "no bot.toml"})
    assert text_report == ["failed: rb: its check found 1 problem", "problem: no bot.toml"]
    no_report = verdict_lines({"status": "failed", "bot": "rb", "version": "2", "report": None,
                               "reason": "the check could not run: no python3"})
    assert no_report == ["failed: rb 2: the check could not run: no python3"]


def test_a_size_reads_in_bytes_kib_or_mib():
    assert submit.size_text(812) == "812 bytes"
    assert submit.size_text(14_540) == "14.2 KiB"
    assert submit.size_text(3 << 20) == "3.0 MiB"

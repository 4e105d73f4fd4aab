"""Submitting a bot to a competition server (`arena submit`, `arena submissions`): the client side.

The author's bot folder is packed as a .tar.gz in memory (what `arena bot add` would snapshot,
less editor backups), its manifest checked here with the registry's own parser so a mistake is
said before anything is uploaded. The archive goes to `POST /api/submissions` with the author's
token in an `Authorization: Bearer` header (never in a URL, never printed); the client then polls
`GET /api/submissions/{id}` until the server's check is `clean` or `failed`.

The token comes from `--token-file`, else `ARENA_TOKEN`, else the token file of the config folder
(`$XDG_CONFIG_HOME/arena/token`, by default `~/.config/arena/token`); a token file is read only
when its owner alone may read it. The server comes from `--server`, else `ARENA_SERVER`, else the
file `server` in the same folder: a command-line option wins over the environment, and the
environment over the config folder.
HTTP is the standard library's (`urllib.request`), redirects not followed: a redirect would carry
the token to another address.
"""

from __future__ import annotations

import fnmatch
import gzip
import http.client
import io
import ipaddress
import json
import os
import re
import stat
import tarfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.errors import ConfigError, FollowTimeout, ServerError

TOKEN_ENV = "ARENA_TOKEN"
SERVER_ENV = "ARENA_SERVER"
MANIFEST = "bot.toml"
FINAL = ("clean", "failed")
PENDING = ("received", "checking")
# Polling backs off from the first delay to the longest: a check takes seconds to minutes.
POLL_FIRST_S, POLL_MAX_S, POLL_GROWTH = 0.5, 5.0, 1.5
DEFAULT_WAIT_S = 600.0  # how long `arena submit` follows a check by default
REQUEST_TIMEOUT_S = 30.0  # one answer of the server
UPLOAD_TIMEOUT_S = 120.0  # an upload of a few MB over a slow link
ANSWER_MAX_BYTES = 8 << 20  # a submission's report holds a stderr tail; nothing legitimate is larger
TOKEN_FILE_MAX_BYTES = 4096
_TOKEN = re.compile(r"[\x21-\x7e]{1,1024}")  # one header-safe word: no space, no control character
# Editor leftovers: backups (`bot.py~`, `#bot.py#`), Emacs locks (`.#bot.py`, a dangling link),
# Vim swap files, and macOS folder metadata. Never part of a bot.
BACKUP_PATTERNS = ("*~", "#*#", ".#*", ".*.sw?", ".DS_Store")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
SERVER_TEXT_MAX = 300  # characters of a server's error message shown


# -- where the token and the server come from -----------------------------------------------------


def config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The client's configuration folder: `$XDG_CONFIG_HOME/arena`, else `~/.config/arena`."""
    env = os.environ if environ is None else environ
    xdg = env.get("XDG_CONFIG_HOME", "")
    if xdg and Path(xdg).is_absolute():  # the XDG spec: a relative value is ignored
        return Path(xdg) / "arena"
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    return home / ".config" / "arena"


def find_token(token_file: Path | None = None, environ: Mapping[str, str] | None = None) -> str:
    """The API token: `token_file` (--token-file), else `ARENA_TOKEN`, else the config folder's
    `token` file; what is given on the command line wins over the environment, which wins over
    the configuration."""
    env = os.environ if environ is None else environ
    if token_file is not None:
        return read_token_file(Path(token_file).expanduser())
    value = env.get(TOKEN_ENV, "").strip()
    if value:
        return checked_token(value, f"${TOKEN_ENV}")
    path = config_dir(env) / "token"
    if not os.path.lexists(path):
        raise ConfigError(f"no API token: set {TOKEN_ENV} or write it to {path} (chmod 600); "
                          "the competition's organiser gives you one (`arena author add NAME` "
                          "prints it)")
    return read_token_file(path)


def read_token_file(path: Path) -> str:
    """The token in `path`, refused (ConfigError) when other users may read or change the file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        raise ConfigError(f"token file {path}: no such file") from None
    except OSError as exc:
        raise ConfigError(f"token file {path}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(f"token file {path}: not a regular file")
        if st.st_mode & 0o077:
            raise ConfigError(f"token file {path} is open to other users (mode "
                              f"{stat.S_IMODE(st.st_mode):04o}); run `chmod 600 {path}`")
        data = f.read(TOKEN_FILE_MAX_BYTES + 1)
    if len(data) > TOKEN_FILE_MAX_BYTES:
        raise ConfigError(f"token file {path}: over {TOKEN_FILE_MAX_BYTES:,} bytes; it holds "
                          "one line, the token")
    lines = [line.strip() for line in data.decode("utf-8", "replace").splitlines()]
    token = next((line for line in lines if line), "")
    if not token:
        raise ConfigError(f"token file {path} is empty; write the token the organiser gave you "
                          "into it")
    return checked_token(token, f"token file {path}")


def checked_token(token: str, source: str) -> str:
    """`token` when it can go in a header (one word of printable ASCII); the message never shows it."""
    if not _TOKEN.fullmatch(token):
        raise ConfigError(f"{source}: not a token (one word of printable ASCII, such as the "
                          "`arena_…` line `arena author add` printed)")
    return token


def find_server(server: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """The server's base URL: `server` (--server), else `ARENA_SERVER`, else the config's `server` file."""
    env = os.environ if environ is None else environ
    if server:
        return server_url(server, "--server")
    if env.get(SERVER_ENV, "").strip():
        return server_url(env[SERVER_ENV].strip(), f"${SERVER_ENV}")
    path = config_dir(env) / "server"
    try:
        text = path.read_text(encoding="utf-8", errors="replace")[:4096]
    except FileNotFoundError:
        raise ConfigError(f"no server: give --server URL, set {SERVER_ENV}, or write the URL to "
                          f"{path}") from None
    except OSError as exc:
        raise ConfigError(f"server file {path}: {exc.strerror or exc}") from None
    value = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if not value:
        raise ConfigError(f"server file {path} is empty; write the server's URL into it")
    return server_url(value, f"server file {path}")


def server_url(value: str, source: str = "--server") -> str:
    """`value` as a base URL (`https://host[:port][/root]`, no trailing slash), or ConfigError."""
    bad = f"{source}: {shown_text(value)} is not a server URL"
    parts = urllib.parse.urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{bad} (give http://HOST:PORT or https://HOST, as the organiser "
                          "published it)")
    if parts.username is not None or parts.password is not None:
        raise ConfigError(f"{source}: a URL with a user or password; the token goes in "
                          f"{TOKEN_ENV} or the token file, never in the URL")
    if parts.query or parts.fragment:
        raise ConfigError(f"{bad} (no ?query or #fragment: only the server's address and root "
                          "path)")
    try:
        parts.port  # noqa: B018  (a port out of range raises)
    except ValueError:
        raise ConfigError(f"{bad} (its port is not a number from 0 to 65535)") from None
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))


def sends_token_in_clear(url: str) -> bool:
    """True when `url` is plain http to another machine: the token would cross the network readable."""
    parts = urllib.parse.urlsplit(url)
    return parts.scheme == "http" and not is_loopback(parts.hostname or "")


def is_loopback(host: str) -> bool:
    """True when `host` is this machine (127.0.0.0/8, ::1, localhost)."""
    if host.lower() in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


# -- packing ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Packed:
    """A bot folder packed for upload: the .tar.gz bytes and what went into them."""

    data: bytes
    name: str  # the manifest's bot name and version
    version: str
    files: int
    unpacked_bytes: int
    folder: Path


def skipped(name: str, is_dir: bool) -> bool:
    """True for what is never uploaded: version control, caches, bytecode, editor backups."""
    from arena.registry import IGNORED_DIRS, IGNORED_SUFFIXES

    if is_dir and name in IGNORED_DIRS:
        return True
    if not is_dir and name.endswith(IGNORED_SUFFIXES):
        return True
    return any(fnmatch.fnmatchcase(name, p) for p in BACKUP_PATTERNS)


def bot_folder(path: str | Path) -> Path:
    """The folder to pack: `path` itself, or the folder of a `bot.toml` given as the path."""
    path = Path(path)
    if path.is_file():
        if path.name != MANIFEST:
            raise ConfigError(f"{path}: give the bot's folder (the one holding its {MANIFEST})")
        path = path.parent
    if not path.is_dir():
        raise ConfigError(f"no such folder: {path}")
    manifest = path / MANIFEST
    if manifest.is_symlink():
        raise ConfigError(f"{manifest} is a link; the manifest must be a file of the bot's "
                          "folder")
    if not manifest.is_file():
        raise ConfigError(f"{path}: no {MANIFEST} in this folder; a bot is submitted as its "
                          f"folder with a {MANIFEST} manifest (see protocol/README.md)")
    return path


def check_manifest(folder: Path) -> Any:
    """The folder's manifest, validated as the registry will (names, fields, games, workdir)."""
    from arena.config import load_manifest
    from arena.games import get_game

    path = folder / MANIFEST
    manifest = load_manifest(path)
    for game in manifest.games:
        try:
            get_game(game)
        except ConfigError as exc:
            raise ConfigError(f"{path}: games: {exc}") from None
    root = folder.resolve()
    workdir = (root / manifest.workdir).resolve()
    if not workdir.is_relative_to(root):
        raise ConfigError(f"{path}: workdir {manifest.workdir!r} is outside the bot's folder; "
                          "only that folder is uploaded")
    if not workdir.is_dir():
        raise ConfigError(f"{path}: workdir {manifest.workdir!r} is not a folder of the bot")
    return manifest


def pack_bot(path: str | Path) -> Packed:
    """The bot folder at `path` as a .tar.gz in memory, its manifest checked first.

    Skipped: `.git` and the registry's other ignored folders, bytecode, editor backups. A link
    to a file inside the folder is packed as that file (the registry holds regular files only);
    a link out of the folder, a dangling one, one to a folder, or a FIFO, socket or device is
    refused (ConfigError, one line naming it).
    """
    from arena.registry import MAX_ENTRIES, MAX_SNAPSHOT_BYTES

    folder = bot_folder(path)
    manifest = check_manifest(folder)
    root = folder.resolve()
    buffer = io.BytesIO()
    count = total = 0

    def refuse(rel: str, what: str) -> ConfigError:
        return ConfigError(f"bot folder {folder}: {shown_text(rel)} {what}")

    # mtime=0: the same folder packs to the same bytes (gzip would stamp the time of packing).
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:

        def add(rel: str, source: str, st: os.stat_result, is_dir: bool) -> None:
            nonlocal count, total
            count += 1
            if count > MAX_ENTRIES:
                raise ConfigError(f"bot folder {folder}: more than {MAX_ENTRIES:,} files and "
                                  "folders; a bot folder should hold only the bot")
            info = tarfile.TarInfo(rel)
            info.mtime = int(st.st_mtime)
            info.uid = info.gid = 0  # the author's user and group names stay home
            info.uname = info.gname = ""
            if is_dir:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
                return
            with open(source, "rb", opener=_no_follow) as f:
                size = os.fstat(f.fileno()).st_size
                total += size
                if total > MAX_SNAPSHOT_BYTES:
                    raise ConfigError(f"bot folder {folder}: more than "
                                      f"{MAX_SNAPSHOT_BYTES >> 20} MiB of files (at "
                                      f"{shown_text(rel)}); a bot folder should hold only the bot")
                info.size = size
                info.mode = 0o755 if st.st_mode & 0o111 else 0o644
                tar.addfile(info, f)

        def visit(directory: str, prefix: str) -> None:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
            for entry in entries:
                rel = prefix + entry.name
                st = entry.stat(follow_symlinks=False)
                if skipped(entry.name, stat.S_ISDIR(st.st_mode)):
                    continue
                if stat.S_ISDIR(st.st_mode):
                    add(rel, entry.path, st, True)
                    visit(entry.path, rel + "/")
                elif stat.S_ISREG(st.st_mode):
                    add(rel, entry.path, st, False)
                elif stat.S_ISLNK(st.st_mode):
                    target = Path(os.path.realpath(entry.path))
                    link = os.readlink(entry.path)
                    if not target.is_relative_to(root):
                        raise refuse(rel, f"is a link to {shown_text(link)}, outside the bot's "
                                          "folder; copy what it needs into the folder")
                    if not target.exists():
                        raise refuse(rel, f"is a link to {shown_text(link)}, which does not exist")
                    if not target.is_file():
                        raise refuse(rel, f"is a link to the folder {shown_text(link)}; a bot "
                                          "folder may link only to files")
                    add(rel, str(target), target.stat(), False)
                else:
                    raise refuse(rel, "is not a regular file or folder (a FIFO, socket or "
                                      "device); a bot folder may hold only files and folders")

        try:
            visit(str(folder), "")
        except OSError as exc:
            where = f"{shown_text(exc.filename)}: " if isinstance(exc.filename, str) else ""
            raise ConfigError(f"bot folder {folder}: {where}{exc.strerror or exc}") from None
    return Packed(buffer.getvalue(), manifest.name, manifest.version, count, total, folder)


def _no_follow(path: str, flags: int) -> int:
    """open() that refuses to follow a link swapped in after the scan."""
    return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC)


# -- the server's API ---------------------------------------------------------------------------------


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Redirects are answered, not followed: the token would go to the new address."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None  # urllib then raises the 3xx as an HTTPError


class _KeepAlive:
    """urllib's connection without its `Connection: close`: a server that answers 413 before
    reading a large upload then drains the rest instead of resetting the connection mid-send
    (which would lose its answer)."""

    def request(self, method, url, body=None, headers=None, *, encode_chunked=False):
        """Send the request, minus the Connection header urllib forces."""
        kept = {k: v for k, v in (headers or {}).items() if k.lower() != "connection"}
        super().request(method, url, body, kept, encode_chunked=encode_chunked)


class _KeepAliveHTTP(_KeepAlive, http.client.HTTPConnection):
    """Plain HTTP, kept alive while the upload is sent."""


class _KeepAliveHTTPS(_KeepAlive, http.client.HTTPSConnection):
    """HTTPS, kept alive while the upload is sent."""


class _Handler(urllib.request.HTTPHandler):
    def http_open(self, req):
        return self.do_open(_KeepAliveHTTP, req)


class _HandlerTLS(urllib.request.HTTPSHandler):
    def https_open(self, req):
        return self.do_open(_KeepAliveHTTPS, req, context=self._context)


class Client:
    """The server's JSON API as the author's token sees it."""

    def __init__(self, server: str, token: str, timeout: float | None = None):
        self.server = server
        self._token = token
        self.timeout = timeout or REQUEST_TIMEOUT_S
        # A server on this machine (a tunnel, a test) is never reached through $http_proxy.
        handlers: list[Any] = [_NoRedirect(), _Handler(), _HandlerTLS()]
        if is_loopback(urllib.parse.urlsplit(server).hostname or ""):
            handlers.append(urllib.request.ProxyHandler({}))
        self._opener = urllib.request.build_opener(*handlers)

    def upload(self, archive: bytes) -> dict:
        """POST the .tar.gz `archive`: the server's answer ({id, bot, version, status, url})."""
        answer = self._request("POST", "/api/submissions", archive, "application/gzip",
                               UPLOAD_TIMEOUT_S)
        if not isinstance(answer.get("id"), (int, str)) or isinstance(answer.get("id"), bool):
            raise ServerError(f"{self.server}: the upload's answer has no submission id")
        return answer

    def submission(self, submission_id: int | str) -> dict:
        """One submission of the author's, with its check report."""
        ident = urllib.parse.quote(str(submission_id), safe="")
        return self._request("GET", f"/api/submissions/{ident}")

    def submissions(self) -> list[dict]:
        """The author's submissions (an organiser's: everyone's), as the server lists them."""
        rows = self._request("GET", "/api/submissions").get("submissions")
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise ServerError(f"{self.server}: GET /api/submissions: no list of submissions in "
                              "the answer")
        return rows

    def me(self) -> dict:
        """Who the token belongs to: {name, role}."""
        return self._request("GET", "/api/me")

    def _request(self, method: str, route: str, body: bytes | None = None,
                 content_type: str | None = None, timeout: float | None = None) -> dict:
        url = self.server + route
        headers = {"Authorization": f"Bearer {self._token}", "Accept": "application/json",
                   "User-Agent": "arena-submit"}
        if content_type:
            headers["Content-Type"] = content_type
        request = urllib.request.Request(url, data=body, headers=headers, method=method)
        wait = timeout or self.timeout
        what = f"{method} {route}"
        try:
            with self._opener.open(request, timeout=wait) as response:
                raw = response.read(ANSWER_MAX_BYTES + 1)
                status = response.status
        except urllib.error.HTTPError as exc:
            raise self._refusal(exc, what) from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise ServerError(f"{self.server}: no answer to {what} within {wait:g} s",
                                  transient=True) from None
            reason = getattr(exc.reason, "strerror", None) or exc.reason
            if body and isinstance(exc.reason, (ConnectionResetError, BrokenPipeError)):
                raise ServerError(f"{self.server}: the connection broke while sending "
                                  f"{size_text(len(body))} ({self._clean(reason)}); a server "
                                  "cuts off an upload over its size limit so: ask the organiser "
                                  "for the limit", transient=True) from None
            raise ServerError(f"cannot reach {self.server}: {self._clean(reason)}",
                              transient=True) from None
        except TimeoutError:
            raise ServerError(f"{self.server}: no answer to {what} within {wait:g} s",
                              transient=True) from None
        except (http.client.HTTPException, OSError) as exc:
            raise ServerError(f"{self.server}: the connection broke during {what}: "
                              f"{self._clean(getattr(exc, 'strerror', None) or exc)}",
                              transient=True) from None
        if len(raw) > ANSWER_MAX_BYTES:
            raise ServerError(f"{self.server}: the answer to {what} is over "
                              f"{ANSWER_MAX_BYTES >> 20} MiB")
        try:
            answer = json.loads(raw)
        except ValueError:
            raise ServerError(f"{self.server}: the answer to {what} ({status}) is not JSON "
                              f"(it starts {self._clean(raw[:60])}); is this an `arena server`?"
                              ) from None
        if not isinstance(answer, dict):
            raise ServerError(f"{self.server}: the answer to {what} is not a JSON object")
        return answer

    def _refusal(self, exc: urllib.error.HTTPError, what: str) -> ServerError:
        """The error an HTTP error status stands for, quoting the server's `{"error": …}`."""
        code = exc.code
        try:
            raw = exc.read(64 * 1024)
        except (OSError, http.client.HTTPException):
            raw = b""
        try:
            said = json.loads(raw).get("error")
        except (ValueError, AttributeError):
            said = None
        said = self._clean(said) if isinstance(said, str) and said.strip() else (
            self._clean(exc.reason) or "no reason given")
        head = f"{self.server}: {what}"
        if 300 <= code < 400:
            where = self._clean(exc.headers.get("Location", "")) or "elsewhere"
            return ServerError(f"{head}: redirected ({code}) to {where}; give the final address "
                               "as --server (a redirect is not followed: it would carry the token)",
                               code)
        if code == 401:
            return ServerError(f"{head}: the token was refused (401: {said}); check "
                               f"{TOKEN_ENV} or the token file, or ask the organiser for a new one",
                               code)
        if code == 403:
            return ServerError(f"{head}: not allowed (403: {said})", code)
        if code == 404:
            hint = ("; is this an `arena server` (the read-only `arena serve` takes no uploads)?"
                    if route_of(what) == "/api/submissions" else "")
            return ServerError(f"{head}: not found (404: {said}){hint}", code)
        if code == 413:
            return ServerError(f"{head}: too large for the server (413: {said})", code)
        if code == 429:
            after = self._clean(exc.headers.get("Retry-After", ""))
            later = f"; try again in {after} s" if after.isdigit() else "; try again later"
            return ServerError(f"{head}: a limit was reached (429: {said}){later}", code)
        if code == 400:
            return ServerError(f"{head}: refused (400: {said})", code)
        return ServerError(f"{head}: the server answered {code} ({said})", code,
                           transient=code >= 500)

    def _clean(self, text: object) -> str:
        """Server-sent text for a one-line message: one line, no control characters, short,
        and never the token (a server that echoes it does not get it printed)."""
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        text = str(text or "").replace(self._token, "<token>")
        return shown_text(text.strip(), SERVER_TEXT_MAX, quote=False)


def route_of(what: str) -> str:
    """The route of a `METHOD /route` label."""
    return what.partition(" ")[2]


def shown_text(value: object, limit: int = 120, quote: bool = True) -> str:
    """Untrusted text for one line: control characters as \\xNN, cut to `limit` characters."""
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(value))
    if len(text) > limit:
        text = text[:limit] + "…"
    return repr(text) if quote else text


# -- the commands' work -------------------------------------------------------------------------------


def follow(client: Client, submission_id: int | str, timeout: float = DEFAULT_WAIT_S,
           on_change: Callable[[dict], None] | None = None,
           on_retry: Callable[[ServerError], None] | None = None,
           sleep: Callable[[float], None] = time.sleep,
           clock: Callable[[], float] = time.monotonic) -> dict:
    """Poll a submission until its check is `clean` or `failed` (backing off from
    POLL_FIRST_S to POLL_MAX_S); `on_change` sees each new status. FollowTimeout after `timeout` s.

    A server that cannot be reached for a moment (a restart: it redoes a check in progress) or
    answers 5xx is asked again until the time is up; `on_retry` sees the first error of each run.
    """
    deadline = clock() + timeout
    delay, last, failing = POLL_FIRST_S, None, False
    while True:
        try:
            sub = client.submission(submission_id)
        except ServerError as exc:
            if not exc.transient or clock() >= deadline:
                raise
            if not failing and on_retry is not None:
                on_retry(exc)
            failing = True
        else:
            failing = False
            status = sub.get("status")
            if status != last:
                last = status
                if on_change is not None:
                    on_change(sub)
            if status in FINAL:
                return sub
            if status not in PENDING:
                raise ServerError(f"{client.server}: submission {submission_id} has the status "
                                  f"{shown_text(status)}, neither pending nor final")
        now = clock()
        if now >= deadline:
            raise FollowTimeout(f"submission {submission_id} is still {last or 'unknown'} after "
                                f"{timeout:g} s; `arena submissions` shows its verdict when the "
                                "check ends")
        sleep(min(delay, deadline - now))
        delay = min(delay * POLL_GROWTH, POLL_MAX_S)


def submit_bot(path: str | Path, server: str | None = None, token_file: Path | None = None,
               wait: bool = True, timeout: float = DEFAULT_WAIT_S,
               say: Callable[[str], None] = print,
               warn: Callable[[str], None] = print) -> dict:
    """Pack, upload and (with `wait`) follow a bot's check: the submission as last seen.

    `say` gets the progress lines, `warn` the warnings (plain text; untrusted parts already made
    one-line). Raises ConfigError for bad input here, ServerError for what the server said.
    """
    url = find_server(server)
    token = find_token(token_file)
    packed = pack_bot(path)
    say(f"packed {packed.name} {packed.version or '(no version)'}: {packed.files} files and "
        f"folders, {size_text(packed.unpacked_bytes)}, archive {size_text(len(packed.data))}")
    if sends_token_in_clear(url):
        warn(f"{url} is plain http to another machine: the token crosses the network readable; "
             "ask the organiser for an https:// address")
    client = Client(url, token)
    sub = client.upload(packed.data)
    shown_id = shown_text(sub["id"], quote=False)
    link = sub.get("url")
    page = (f" ({shown_text(urllib.parse.urljoin(url + '/', link), 200, quote=False)})"
            if isinstance(link, str) and link else "")
    say(f"submitted {shown_text(sub.get('bot', packed.name), quote=False)} "
        f"{shown_text(sub.get('version', packed.version), quote=False)} as submission "
        f"{shown_id}{page}")
    if not wait:
        say(f"not waiting for its check: `arena submissions` shows it "
            f"(now {shown_text(sub.get('status', 'received'), quote=False)})")
        return sub

    def changed(s: dict) -> None:
        if s.get("status") in PENDING:
            say(f"{shown_text(s['status'], quote=False)}…")

    def retrying(exc: ServerError) -> None:
        warn(f"{exc} (asking again until the --timeout)")

    return follow(client, sub["id"], timeout, on_change=changed, on_retry=retrying)


def list_submissions(server: str | None = None, token_file: Path | None = None
                     ) -> tuple[str, dict, list[dict]]:
    """The server's URL, who the token is ({name, role}) and their submissions, newest first."""
    url = find_server(server)
    client = Client(url, find_token(token_file))
    who = client.me()
    rows = client.submissions()
    return url, who, sorted(rows, key=_newest_first)


def _newest_first(row: dict) -> tuple:
    ident = row.get("id")
    return (0, -ident) if isinstance(ident, int) else (1, str(ident))


def verdict_lines(sub: dict) -> list[str]:
    """A finished submission's verdict and its report's problems, as lines of plain text."""
    status = sub.get("status")
    who = " ".join(shown_text(sub.get(k) or "", quote=False) for k in ("bot", "version")).strip()
    report = sub.get("report")
    if isinstance(report, str):  # a server may keep the report as JSON text
        try:
            report = json.loads(report)
        except ValueError:
            report = {"problems": [report]}
    report = report if isinstance(report, dict) else {}
    if status == "clean":
        return [f"clean: {who} passed its check; a running ladder picks it up"]
    problems = report.get("problems") or []
    problems = problems if isinstance(problems, list) else [problems]
    if problems:  # the server's reason is the first of them, in short: each is said in full
        count = f"{len(problems)} problem" + ("s" if len(problems) > 1 else "")
        lines = [f"failed: {who}: its check found {count}"]
    else:
        reason = sub.get("reason") or report.get("reason") or report.get("error")
        lines = [f"failed: {who}" + (f": {shown_text(reason, 400, quote=False)}" if reason else "")]
    for p in problems:
        lines += problem_lines(p)
    return lines


def problem_lines(problem: object) -> list[str]:
    """One problem of a check report (`arena bot check --json`'s shape, or plain text)."""
    if not isinstance(problem, dict):
        return [f"problem: {shown_text(problem, 400, quote=False)}"]
    where = [f"{problem['seats']} seats"] if problem.get("seats") else []
    options = problem.get("options")
    if isinstance(options, dict) and options:
        where.append(", ".join(f"{k}={json.dumps(v)}" for k, v in options.items()))
    if problem.get("game_id"):
        where.append(f"game {problem['game_id']}")
    place = shown_text(problem.get("game", "?"), quote=False) + (
        f" ({shown_text(', '.join(map(str, where)), quote=False)})" if where else "")
    words = problem.get("words") or problem.get("reason") or "a problem"
    lines = [f"problem in {place}: {shown_text(words, 400, quote=False)}"]
    for key, label in (("detail", "what happened"), ("evidence", "evidence"), ("hint", "hint")):
        if problem.get(key):
            lines.append(f"  {label}: {shown_text(problem[key], 400, quote=False)}")
    return lines


def size_text(n: int) -> str:
    """A byte count for people: `812 bytes`, `14.2 KiB`, `3.1 MiB`."""
    if n < 1024:
        return f"{n:,} bytes"
    if n < 1 << 20:
        return f"{n / 1024:.1f} KiB"
    return f"{n / (1 << 20):.1f} MiB"

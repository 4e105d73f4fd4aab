"""The Starlette app: routes (each page in HTML and as JSON), errors, security headers, static files.

Database work runs in Starlette's thread pool; each build opens its own read-only connection
(`Store.open_readonly`), so no connection is shared across threads. Pages are built once per
database state and served from memory between changes (arena.web.page_cache); finished games'
replays are cached for good (arena.web.replay_cache).
"""

from __future__ import annotations

import itertools
import logging
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import jinja2
import orjson
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from arena.errors import BadRequest, ConfigError, NotFound, StoreError
from arena.store import Store
from arena.store.queries import check_schema, game_exists, game_recording
from arena.web import data
from arena.web.page_cache import PageCache, max_age_from_env
from arena.web.replay_cache import Encoded, ReplayCache, budget_from_env, encode

HERE = Path(__file__).resolve().parent
log = logging.getLogger("arena.web")

# Only our own files: no inline script or style, no framing, no plugins.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
       "form-action 'self'")
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
]


class SecurityHeaders:
    """ASGI middleware adding the security headers to every HTTP response."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        """Pass the request on; add the headers as the response starts."""
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []),
                                      *(h for h in SECURITY_HEADERS if h[0] not in names)]
            await send(message)

        await self.app(scope, receive, send_with_headers)


class ORJSONResponse(JSONResponse):
    """JSON via orjson: fast on big leaderboards; NaN becomes null, unknown types become strings."""

    def render(self, content) -> bytes:
        """The body as UTF-8 JSON."""
        return json_bytes(content)


def json_bytes(content) -> bytes:
    """`content` as the API's UTF-8 JSON (orjson: NaN becomes null, unknown types strings)."""
    return orjson.dumps(content, default=str, option=orjson.OPT_NON_STR_KEYS)


def _number(value, digits: int | None = None) -> str:
    """A number for a table cell: points as the CLI shows them (24.5, not 24; 7/3 as 2.333), or
    `digits` decimals when given (ratings: `num(0)`); blank for None."""
    if value is None or value == "":
        return ""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return str(value)
    if digits is not None:
        return f"{x:.{digits}f}"
    # As `arena tournament show` prints points: a half or a third is a result, never rounded away
    # (24.5, 2.333), while float noise is (3 decimals).
    x = round(x, 3)
    return str(int(x)) if x.is_integer() else f"{x:g}"


def _bar(row: dict, scale: list[float]) -> dict | None:
    """Where a rating and its interval fall on the board's scale, in percent (for the SVG bar)."""
    lo, hi = scale
    span = hi - lo
    r = row.get("rating")
    if r is None:
        return None
    pos = lambda v: round(100 * (v - lo) / span, 2)  # noqa: E731
    out = {"p": max(0.0, round(pos(r) - 0.6, 2)), "lo": None, "w": None}  # p: the marker's left
    # An open end (arena.ratings.bounds) runs to the edge of the scale.
    low = lo if row.get("lo_open") else row.get("lo")
    high = hi if row.get("hi_open") else row.get("hi")
    if low is not None and high is not None:
        out["lo"] = pos(low)
        out["w"] = max(0.5, round(pos(high) - pos(low), 2))
    return out


@jinja2.pass_context
def _url(context, path: str) -> str:
    """`path` under the root path the app is served at (`--root-path`, behind a reverse proxy)."""
    request = context.get("request")
    return (root_path(request) if request is not None else "") + path


def root_path(request: Request) -> str:
    """The root path the app is served at, without its trailing '/' ('' at the root)."""
    return request.scope.get("root_path", "").rstrip("/")


def _templates() -> Jinja2Templates:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True)
    env.filters["q"] = lambda s: quote(str(s), safe="")  # a path segment: '/' too is encoded
    env.filters["num"] = _number
    env.globals["bar"] = _bar
    env.globals["url"] = _url  # every link goes through it: macros are imported with context
    env.globals["METHOD_LABELS"] = data.METHOD_LABELS
    return Jinja2Templates(env=env)


def _is_api(request: Request) -> bool:
    path = request.url.path.removeprefix(root_path(request))  # under --root-path too
    return path == "/api" or path.startswith("/api/")  # a bare /api too answers in JSON


# SQLite's codes for a file it cannot read as a database (damaged, replaced, unreadable, locked):
# the page says so instead of a 500, whatever page met the bad part of the file.
UNREADABLE = ("SQLITE_CORRUPT", "SQLITE_NOTADB", "SQLITE_IOERR", "SQLITE_CANTOPEN", "SQLITE_BUSY")


@contextmanager
def reading(request: Request) -> Iterator[Store]:
    """A read-only store for one request, closed after it; 503 when the file cannot be read."""
    try:
        store = Store.open_readonly(request.app.state.db_path)
    except StoreError as exc:
        raise HTTPException(503, str(exc)) from None
    try:
        yield store
    except sqlite3.DatabaseError as exc:
        if not str(getattr(exc, "sqlite_errorname", "")).startswith(UNREADABLE):
            raise  # e.g. a query this Arena got wrong: a 500 with its traceback in the log
        raise HTTPException(503, f"the database {request.app.state.db_path} cannot be read: "
                                 f"{exc}") from None
    finally:
        store.db.conn.close()


def render(request: Request, template: str, context: dict, api: str | None = None,
           status: int = 200) -> Response:
    """A page from `template`; its JSON (for app.js) goes in a `page-data` script element."""
    page_data = {"api": api and root_path(request) + api, "root": root_path(request),
                 "live": bool(context.get("live")), "stamp": context.get("stamp"),
                 **context.pop("page_data", {})}
    return request.app.state.templates.TemplateResponse(
        request, template, {"d": context, "page_data": page_data}, status_code=status)


@dataclass(frozen=True)
class SharedPage:
    """A page's data as its data function built it, before any viewer's rules are applied."""

    data: dict
    # Each build's own: bytes are keyed by it, so they are always the bytes of this very data
    # (a request that read the data before the database changed never files them as newer).
    serial: int = field(default_factory=itertools.count().__next__)


def _page(fn: Callable, template: str, api_path: Callable[[Request], str], args: tuple,
          query: bool = False, extra: Callable[[dict], dict] | None = None):
    """An HTML endpoint and its JSON twin over one data function.

    The data is built once per database state (arena.web.page_cache) and shared; the server's
    rules for the viewer (visibility, logs) are applied to it per request. The bytes of a
    reader who is not signed in are the same for every such reader, so they are kept and
    shared; a signed-in viewer's page (their name, their own bots' logs, games and versions)
    is filtered and rendered for that request only.
    """
    def build(request: Request) -> SharedPage:
        params = [request.path_params[a] for a in args]
        with reading(request) as store:
            return SharedPage(fn(store, *params, *([request.query_params] if query else [])))

    async def shared(request: Request) -> SharedPage:
        key = ("data", template, tuple(request.path_params[a] for a in args),
               request.url.query if query else None)
        return await request.app.state.page_cache.fetch(key, lambda: build(request))

    def for_viewer(request: Request, page: dict) -> dict:
        """The page as the request's viewer may see it (a copy when anything is left out)."""
        visibility = request.app.state.visibility
        if visibility is None and request.app.state.can_see_logs is None:
            return page  # `arena serve`: everything is public
        with reading(request) as store:
            if visibility is not None:
                page = visibility.filter_page(request, store, fn.__name__, page)
            visible = log_gate(request, store)
            return page if visible is None else data.hide_logs(page, visible)

    def shareable(request: Request) -> bool:
        # Every rule (visibility, logs) reads the viewer only: the same for all who are not
        # signed in. Their view may be up to the cache's age late, never early.
        return request.app.state.page_cache.enabled and request.scope.get("arena.viewer") is None

    def rendered(request: Request, page: dict) -> Response:
        context = dict(page)  # the shared dict stays whole: render() takes page_data out
        if extra is not None:
            context["page_data"] = extra(context)
        return render(request, template, context, api_path(request))

    def vary(request: Request) -> str:
        server = request.app.state.visibility is not None or request.app.state.can_see_logs is not None
        return "Accept-Encoding, Cookie" if server else "Accept-Encoding"

    async def html(request: Request) -> Response:
        page = await shared(request)
        if shareable(request):
            # The URL (scheme, host, root path, query) is all of the request the page reads.
            encoded = await request.app.state.page_cache.fetch(
                ("html", page.serial, str(request.url), root_path(request)),
                lambda: encode(rendered(request, for_viewer(request, page.data)).body), pinned=True)
            return _send_encoded(request, encoded, False, "text/html; charset=utf-8", vary(request))
        response = await run_in_threadpool(
            lambda: rendered(request, for_viewer(request, page.data)))
        response.headers["Vary"] = vary(request)
        return response

    async def api(request: Request) -> Response:
        page = await shared(request)
        if shareable(request):
            encoded = await request.app.state.page_cache.fetch(
                ("json", page.serial), lambda: encode(json_bytes(for_viewer(request, page.data))),
                pinned=True)
            return _send_encoded(request, encoded, False, vary=vary(request))
        return ORJSONResponse(await run_in_threadpool(for_viewer, request, page.data),
                              headers={"Vary": vary(request)})

    return html, api


def log_gate(request: Request, store: Store) -> Callable[[str], bool] | None:
    """Which bots' logs (stderr) this request may see, by bot name; None: every bot's (the app's
    `can_see_logs` is None, as in `arena serve`)."""
    can_see_logs = request.app.state.can_see_logs
    return None if can_see_logs is None else can_see_logs(request, store)


def _charts(context: dict) -> dict:
    """The bot page's rating series, for app.js to draw."""
    return {"charts": [v["history"] for v in context["versions"]]}


def _api_of(prefix: str, key: str | None = None) -> Callable[[Request], str]:
    def path(request: Request) -> str:
        tail = "" if key is None else "/" + quote(request.path_params[key], safe="")
        query = f"?{request.url.query}" if request.url.query else ""
        return f"/api{prefix}{tail}{query}"
    return path


def _replay_module():
    try:
        from arena.web import replay
    except ImportError:
        raise HTTPException(404, "the replay viewer is not installed") from None
    return replay


def _replay_call(request: Request, fn_name: str, *args):
    game_id = data.check_game_id(request.path_params["game_id"])
    replay = _replay_module()
    with reading(request) as store:
        if not game_exists(store, game_id):
            raise HTTPException(404, f"no game with id {game_id!r}")
        try:
            return game_id, getattr(replay, fn_name)(store, game_id, *args)
        except StoreError as exc:
            raise HTTPException(404, str(exc)) from None
        except ConfigError as exc:
            raise HTTPException(400, str(exc)) from None


def _recording(request: Request, game_id: str) -> dict:
    """The game's `recorded_at` and whether its recording is complete; 404 when there is none,
    or when the app's visibility rules hide the game from the request (not yet public)."""
    with reading(request) as store:
        recording = game_recording(store, game_id)
        if recording is not None and request.app.state.visibility is not None:
            # shown before it is public: to this viewer only, never kept by a shared cache
            request.scope["arena.early"] = request.app.state.visibility.check_game(
                request, store, game_id, recording["recorded_at"])
    if recording is None:
        raise HTTPException(404, f"no game with id {game_id!r}")
    return recording


async def _computed(request: Request, kind: str, compute: Callable[[], object],
                    size_of: Callable[[object], int], *args) -> tuple[object, bool]:
    """`compute()` for the request's game, from the replay cache when the game's recording is
    complete (a recorded game never changes); the work runs in a worker thread, never on the
    event loop. Returns the value and whether it came through the cache (and so is immutable)."""
    game_id = data.check_game_id(request.path_params["game_id"])
    recording = await run_in_threadpool(_recording, request, game_id)
    cache: ReplayCache = request.app.state.replay_cache
    if not (recording["complete"] and cache.enabled):
        return await run_in_threadpool(compute), False
    key = (str(request.app.state.db_path), game_id, recording["recorded_at"], kind, args)
    return await cache.fetch(key, compute, size_of), True


# A finished game's JSON may be kept by browsers and proxies; an ETag lets them revalidate.
IMMUTABLE = "public, max-age=3600, immutable"


def _send_encoded(request: Request, encoded: Encoded, cached: bool,
                  media_type: str = "application/json", vary: str = "Accept-Encoding") -> Response:
    """A cached body (JSON unless `media_type` says otherwise): 304 when the client holds it
    (If-None-Match), gzipped when accepted."""
    policy = ("private, no-store" if request.scope.get("arena.early")
              else IMMUTABLE if cached else "no-cache")
    headers = {"ETag": encoded.etag, "Vary": vary, "Cache-Control": policy}
    held = request.headers.get("if-none-match", "")
    tags = {t.strip().removeprefix("W/") for t in held.split(",")}
    if "*" in tags or encoded.etag.removeprefix("W/") in tags:
        return Response(status_code=304, headers=headers)
    if "gzip" in request.headers.get("accept-encoding", ""):
        # Compressed once when cached: the gzip middleware leaves an encoded body alone.
        return Response(encoded.gzipped, media_type=media_type,
                        headers={**headers, "Content-Encoding": "gzip"})
    return Response(encoded.body, media_type=media_type, headers=headers)


async def _cached_json(request: Request, fn_name: str, *args) -> Response:
    """The JSON of `arena.web.replay.<fn_name>` for the request's game, cached once finished."""
    _replay_module()

    def compute() -> Encoded:
        value = _replay_call(request, fn_name, *args)[1]
        return encode(orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS))

    encoded, cached = await _computed(request, fn_name, compute, lambda e: e.size, *args)
    return _send_encoded(request, encoded, cached)


async def game_page(request: Request) -> Response:
    """The replay viewer of one game (the template and its data come from arena.web.replay)."""
    _replay_module()

    def compute() -> tuple:
        game_id, meta = _replay_call(request, "game_meta")
        # The final position and every move with the bots' log lines, drawn on the server: the
        # page reads without JavaScript, which then steps through it.
        return game_id, meta, _replay_call(request, "move_list")[1]

    # Cached as data, rendered per request: the page around it may differ per visitor.
    (game_id, meta, moves), _ = await _computed(
        request, "page", compute, lambda v: len(orjson.dumps(v, default=str)))
    if request.app.state.can_see_logs is not None:

        def gated(moves: dict) -> dict:
            # the viewer's predicate reads the store as it goes: filter while it is open
            with reading(request) as store:
                visible = log_gate(request, store)
                # a copy: the cached list stays whole
                return moves if visible is None else data.hide_move_logs(moves, visible)

        moves = await run_in_threadpool(gated, moves)
    try:
        request.app.state.templates.get_template("replay.html")
    except jinja2.TemplateNotFound:
        raise HTTPException(404, "the replay viewer is not installed") from None
    return await run_in_threadpool(
        request.app.state.templates.TemplateResponse,
        request, "replay.html", {"game_id": game_id, "meta": meta, "moves": moves,
                                 "page_data": {"api": f"{root_path(request)}/api/games/{game_id}",
                                               "root": root_path(request), "live": False}})


async def game_api(request: Request) -> Response:
    """A game's metadata as JSON."""
    return await _cached_json(request, "game_meta")


async def replay_api(request: Request) -> Response:
    """A game's replay (full, or as one seat saw it) as JSON."""
    view = data.one(request.query_params, "view")
    view = "full" if view is None else view
    # check=1 adds each frame's hidden cards (what a seat must not see), for tests of the viewer.
    check = data.one(request.query_params, "check") == "1"
    return await _cached_json(request, "replay_data", view, check)


async def http_error(request: Request, exc: HTTPException) -> Response:
    """A 4xx/5xx as JSON under /api, else as an HTML page with the one-line reason."""
    detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
    if _is_api(request):
        return ORJSONResponse({"error": detail, "status": exc.status_code}, exc.status_code,
                              headers=getattr(exc, "headers", None))
    return render(request, "error.html", {"status": exc.status_code, "message": detail},
                  status=exc.status_code)


# The data layer raises domain errors; HTTP is this module's business.
HTTP_STATUS = ((NotFound, 404), (BadRequest, 400))


async def domain_error(request: Request, exc: Exception) -> Response:
    """A NotFound or BadRequest from the data layer, answered like the 404 or 400 it stands for."""
    status = next(code for kind, code in HTTP_STATUS if isinstance(exc, kind))
    return await http_error(request, HTTPException(status, str(exc)))


async def server_error(request: Request, exc: Exception) -> Response:
    """An unexpected failure: logged with its traceback, answered with one line, never the trace."""
    log.exception("error serving %s", request.url.path)
    message = "internal error: the page could not be built (see the server log)"
    headers = {k.decode(): v.decode() for k, v in SECURITY_HEADERS}
    if _is_api(request):
        return ORJSONResponse({"error": message, "status": 500}, 500, headers=headers)
    return HTMLResponse(f"<!doctype html><title>500</title><h1>Error</h1><p>{message}</p>", 500,
                        headers=headers)


def create_app(db_path: str | Path,
               can_see_logs: Callable[[Request, Store], Callable[[str], bool]] | None = None,
               visibility=None) -> Starlette:
    """The web app over the database at `db_path`; StoreError at once if it cannot be read.
    `can_see_logs(request, store)` gives which bots' logs a request may see (by bot name);
    None (`arena serve`) shows every bot's. `visibility` (arena.server.visibility.Visibility)
    hides young games and unchecked versions from the public; None (`arena serve`) hides none."""
    store = Store.open_readonly(db_path)  # missing, foreign, old or incomplete: refuse at once
    try:
        check_schema(store)
    finally:
        store.db.conn.close()
    pages = [
        ("/", "/leaderboards", data.leaderboards, "index.html", _api_of("/leaderboards"), ()),
        ("/leaderboard/{game}", "/leaderboard/{game}", data.leaderboard, "leaderboard.html",
         _api_of("/leaderboard", "game"), ("game",), True),
        ("/tournaments", "/tournaments", data.tournaments, "tournaments.html",
         _api_of("/tournaments"), ()),
        ("/tournaments/{tid}", "/tournaments/{tid}", data.tournament, "tournament.html",
         _api_of("/tournaments", "tid"), ("tid",)),
        ("/ladders", "/ladders", data.ladders, "ladders.html", _api_of("/ladders"), ()),
        ("/ladders/{lid}", "/ladders/{lid}", data.ladder, "ladder.html",
         _api_of("/ladders", "lid"), ("lid",)),
        ("/bots", "/bots", data.bots, "bots.html", _api_of("/bots"), ()),
        # :path, because a bot's name may hold a '/' (its link encodes it as %2F).
        ("/bots/{name:path}", "/bots/{name:path}", data.bot, "bot.html",
         _api_of("/bots", "name"), ("name",), True, _charts),
    ]
    routes = []
    for path, api_path, fn, template, api_of, args, *more in pages:
        html, api = _page(fn, template, api_of, args, *more)
        routes += [Route(path, html), Route("/api" + api_path, api)]
    routes += [
        Route("/games/{game_id}", game_page),
        Route("/api/games/{game_id}", game_api),
        Route("/api/games/{game_id}/replay", replay_api),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    # A long game's replay JSON is megabytes of repetitive frames: gzip shrinks it ~10x.
    app = Starlette(routes=routes, middleware=[Middleware(SecurityHeaders),
                                               Middleware(GZipMiddleware, minimum_size=2048)],
                    exception_handlers={HTTPException: http_error, NotFound: domain_error,
                                        BadRequest: domain_error, Exception: server_error})
    app.state.db_path = Path(db_path)
    app.state.templates = _templates()
    app.state.replay_cache = ReplayCache(budget_from_env())
    app.state.page_cache = PageCache(db_path, max_age_from_env())
    app.state.can_see_logs = can_see_logs
    app.state.visibility = visibility
    return app

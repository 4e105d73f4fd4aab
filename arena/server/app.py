"""The server's Starlette app: the JSON write API (bearer tokens) in front of the read-only web
app of `arena serve`, which is mounted unchanged under everything the API does not answer.

Every write route checks the token before it reads the request body: 401 without a valid token,
403 for a token that may not act there, and nothing is changed in either case.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Mount, Route

from arena.errors import ArenaError, NotFound, StoreError
from arena.server import pages
from arena.server.authors import Author, add_author, authenticate
from arena.server.checks import CheckPool
from arena.server.sessions import SessionStore
from arena.server.submissions import (
    AuthorLimits,
    Forbidden,
    LimitReached,
    TooLarge,
    accept_submission,
    open_store,
    read_body,
    upload_limits,
)
from arena.server.visibility import Visibility
from arena.store import Store
from arena.store.database import stored_json
from arena.web.app import ORJSONResponse, SecurityHeaders, create_app

log = logging.getLogger("arena.server")
ARCHIVE_TYPES = ("application/zip", "application/gzip", "application/x-gzip", "application/x-tar",
                 "application/octet-stream")
REGISTRATION_BYTES = 8192  # {"name", "email"}: a few hundred bytes
LIST_FIELDS = ("id", "bot", "version", "status", "reason", "created_at", "checked_at")


class Unauthorized(ArenaError):
    """No token, or not a live one (401)."""


class BadRequest(ArenaError):
    """A request the API cannot take (400)."""


# Domain errors to HTTP statuses, most specific first; any other ArenaError is bad input (400).
STATUS_OF = ((Unauthorized, 401), (Forbidden, 403), (NotFound, 404), (TooLarge, 413),
             (LimitReached, 429), (StoreError, 503), (ArenaError, 400))


@dataclass
class ServerConfig:
    """What `arena server` is given beyond the database."""

    limits: AuthorLimits = field(default_factory=AuthorLimits)
    archive_limits: Any = None  # arena.uploads.UploadLimits; its defaults when None
    registration: bool = False  # self-registration (POST /api/authors) is off unless asked for
    replay_delay: float = 0.0  # seconds before a game is public (its authors see it at once)


def error(status: int, message: str) -> Response:
    """The API's error answer: `{"error": "<one line>"}`."""
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return ORJSONResponse({"error": " ".join(message.split())}, status, headers=headers)


def api(endpoint: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """An API endpoint whose domain errors are answered as `{"error": ...}` with their status."""
    async def call(request: Request) -> Response:
        try:
            return await endpoint(request)
        except ArenaError as exc:
            status = next(code for kind, code in STATUS_OF if isinstance(exc, kind))
            return error(status, str(exc))
    call.__name__ = endpoint.__name__
    call.__doc__ = endpoint.__doc__
    return call


def bearer_token(request: Request) -> str | None:
    """The token of the request's `Authorization: Bearer …` header (never from the URL)."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def _authenticate(db_path: Path, token: str | None) -> Author:
    if token is None:
        raise Unauthorized("no token: send the header 'Authorization: Bearer <token>'")
    with open_store(db_path) as store:
        author = authenticate(store, token)
    if author is None:
        raise Unauthorized("the token is not valid (unknown, revoked or rotated out)")
    return author


async def caller(request: Request) -> Author:
    """The author of the request's token; Unauthorized (401) without a live one."""
    return await run_in_threadpool(_authenticate, request.app.state.db_path, bearer_token(request))


def _listed(row: dict) -> dict:
    return {"id": row["id"], "bot": row["bot_name"], "version": row["version"],
            "status": row["status"], "reason": row["reason"], "created_at": row["created_at"],
            "checked_at": row["checked_at"], "author": row["author"]}


def submission_url(request: Request, submission_id: int) -> str:
    """The submission's API path, under the root path the server is mounted at."""
    return f"{request.scope.get('root_path', '').rstrip('/')}/api/submissions/{submission_id}"


@api
async def me(request: Request) -> Response:
    """GET /api/me: the token's author and role."""
    author = await caller(request)
    return ORJSONResponse({"name": author.name, "role": author.role})


@api
async def submissions(request: Request) -> Response:
    """GET /api/submissions: the caller's submissions (an organiser's: all); POST: submit a bot."""
    author = await caller(request)
    db_path = request.app.state.db_path
    if request.method == "GET":
        def read() -> list[dict]:
            with open_store(db_path) as store:
                return store.submissions(None if author.organiser else author.id)
        rows = await run_in_threadpool(read)
        return ORJSONResponse({"submissions": [_listed(r) for r in rows]})
    config: ServerConfig = request.app.state.config
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind not in ARCHIVE_TYPES:
        raise BadRequest(f"Content-Type {kind or '(none)'!r}: send the archive as "
                         f"application/zip, application/gzip or application/x-tar")
    archive_limits = config.archive_limits or upload_limits()
    data = await read_body(request, archive_limits.archive_bytes)
    row = await run_in_threadpool(accept_submission, db_path, author, data, config.limits,
                                  archive_limits)
    pool: CheckPool | None = request.app.state.pool
    if pool is not None:
        pool.enqueue(row["id"])
    log.info("submission %s: %s@%s by %s", row["id"], row["bot_name"], row["version"],
             author.name)
    return ORJSONResponse({"id": row["id"], "bot": row["bot_name"], "version": row["version"],
                           "status": row["status"], "url": submission_url(request, row["id"])},
                          201, headers={"Location": submission_url(request, row["id"])})


@api
async def submission(request: Request) -> Response:
    """GET /api/submissions/{id}: one submission with its check report (own, or organiser)."""
    author = await caller(request)
    sid = request.path_params["sid"]

    def read() -> dict | None:
        with open_store(request.app.state.db_path) as store:
            return store.submission(sid)
    row = await run_in_threadpool(read)
    if row is None:
        raise NotFound(f"no submission {sid}")
    if not author.organiser and row["author_id"] != author.id:
        raise Forbidden(f"submission {sid} is another author's")
    report = stored_json(row["report"], f"submissions.report of {sid}") if row["report"] else None
    return ORJSONResponse({**_listed(row), "content_hash": row["content_hash"],
                           "archive_bytes": row["archive_bytes"],
                           "unpacked_bytes": row["unpacked_bytes"], "report": report})


@api
async def register(request: Request) -> Response:
    """POST /api/authors {"name", "email"}: self-registration, when the server allows it."""
    config: ServerConfig = request.app.state.config
    if not config.registration:
        raise Forbidden("self-registration is off on this server (ask the organiser for a token)")
    try:
        body = json.loads(await read_body(request, REGISTRATION_BYTES, "the request"))
    except ValueError:
        raise BadRequest("send JSON: {\"name\": …, \"email\": …}") from None
    if not isinstance(body, dict) or not isinstance(body.get("name"), str):
        raise BadRequest("send JSON: {\"name\": …, \"email\": …}")
    email = body.get("email") if isinstance(body.get("email"), str) else None

    def add() -> str:
        with open_store(request.app.state.db_path) as store:
            return add_author(store, body["name"], email)
    token = await run_in_threadpool(add)
    return ORJSONResponse({"name": body["name"], "role": "author", "token": token}, 201)


class ClientGone:
    """ASGI middleware: a request whose client left (or was cut off by the body timeout of
    arena/web/serving.py) mid-body ends quietly; there is nobody to answer and nothing was
    written, so it is no server error to log with a traceback."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        """Run the request; a ClientDisconnect from reading its body ends it."""
        try:
            await self.app(scope, receive, send)
        except ClientDisconnect:
            log.info("%s %s: the client left before its request body was read",
                     scope.get("method"), scope.get("path"))


def create_server_app(db_path: str | Path, config: ServerConfig | None = None,
                      pool: CheckPool | None = None) -> Starlette:
    """The server app over `db_path` (created or migrated first): the API, then the read-only
    web app of `arena serve` for every other path. `pool` is started and stopped with the app."""
    db_path = Path(db_path)
    Store(db_path).db.conn.close()  # create or migrate: the read-only app refuses an old schema
    config = config or ServerConfig()
    web = create_app(db_path, can_see_logs=pages.can_see_logs,
                     visibility=Visibility(config.replay_delay, pages.viewer_of))
    sessions = SessionStore(db_path)  # in the database: a restart signs nobody out
    sessions.prune()

    @asynccontextmanager
    async def lifespan(app: Starlette):
        if pool is not None:
            requeued = await run_in_threadpool(pool.start)
            if requeued:
                log.info("checking again %d submission(s) left by the last run", len(requeued))
        try:
            yield
        finally:
            if pool is not None:
                await run_in_threadpool(pool.stop, 5.0)

    routes = [
        Route("/api/me", me, methods=["GET"]),
        Route("/api/submissions", submissions, methods=["GET", "POST"]),
        Route("/api/submissions/{sid:int}", submission, methods=["GET"]),
        Route("/api/authors", register, methods=["POST"]),
        Route("/signin", pages.signin, methods=["GET", "POST"]),
        Route("/signout", pages.signout, methods=["POST"]),
        Route("/me", pages.me, methods=["GET"]),
        Route("/me/upload", pages.upload, methods=["POST"]),
        Mount("", app=web),
    ]
    app = Starlette(routes=routes, lifespan=lifespan,
                    middleware=[Middleware(ClientGone), Middleware(SecurityHeaders),
                                Middleware(pages.Viewers, sessions=sessions)])
    app.state.db_path = db_path
    app.state.config = config
    app.state.pool = pool
    app.state.sessions = sessions
    app.state.templates = web.state.templates  # the author's pages share the web app's look
    return app

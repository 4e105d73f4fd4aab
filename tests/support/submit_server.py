"""A stand-in for `arena server`'s JSON API (the four routes of the issue 26 contract), served by
uvicorn in a thread on 127.0.0.1, for the client's tests (`arena submit`, `arena submissions`).

It keeps what it was sent (`requests`: method, path, query, headers, body) and answers as
scripted: `statuses` is the sequence of statuses a new submission shows to each poll (the last
one stays), `report` the check report a failed one carries, `refuse[route] = (status, body)` an
error answer for a route (`"POST /api/submissions"`, `"GET /api/submissions/{id}"`,
`"GET /api/submissions"`, `"GET /api/me"`; body a dict sent as JSON, or bytes as they are; a
third element, headers to add).
"""

from __future__ import annotations

import io
import socket
import tarfile
import threading
import time
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

AUTHOR_TOKEN = "arena_" + "a" * 43
ORGANISER_TOKEN = "arena_" + "o" * 43
FAILED_REPORT = {
    "bot": "rb", "clean": False,
    "problems": [{"game": "xeri", "seats": 2, "reason": "crash",
                  "words": "crash: the bot exited or closed its stdout during the game",
                  "detail": "exit code 1", "evidence": "Traceback: ZeroDivisionError",
                  "game_id": "7", "options": {}, "hint": "read the traceback in its stderr"}],
}


@dataclass
class FakeServer:
    """The scripted state of the stand-in server."""

    statuses: list[str] = field(default_factory=lambda: ["checking", "clean"])
    report: dict = field(default_factory=lambda: dict(FAILED_REPORT))
    refuse: dict[str, tuple] = field(default_factory=dict)
    requests: list[dict] = field(default_factory=list)
    submissions: dict[int, dict] = field(default_factory=dict)
    url: str = ""
    archive_limit: int | None = None  # over it, 413 at once, the rest of the upload unread
    tokens: dict[str, tuple[str, str]] = field(default_factory=lambda: {
        AUTHOR_TOKEN: ("ada", "author"), ORGANISER_TOKEN: ("org", "organiser")})

    def reset(self) -> None:
        """Back to no submissions, no requests, the default script."""
        fresh = FakeServer()
        self.statuses, self.report, self.refuse = fresh.statuses, fresh.report, {}
        self.archive_limit = None
        self.requests.clear()
        self.submissions.clear()

    def add(self, bot: str, version: str, status: str, reason: str | None = None,
            author: str = "ada") -> dict:
        """A submission already on the server."""
        ident = len(self.submissions) + 1
        row = {"id": ident, "bot": bot, "version": version, "status": status, "reason": reason,
               "created_at": f"2026-12-03T21:{ident % 60:02d}:05+00:00",
               "checked_at": None if status in ("received", "checking") else
               f"2026-12-03T22:{ident % 60:02d}:41+00:00",
               "author": author, "polls": [], "archive": b""}
        self.submissions[ident] = row
        return row

    # -- the routes ---------------------------------------------------------------------------
    def app(self) -> Starlette:
        """The Starlette app of the four routes."""
        return Starlette(routes=[
            Route("/api/submissions", self._upload, methods=["POST"]),
            Route("/api/submissions", self._list, methods=["GET"]),
            Route("/api/submissions/{ident}", self._one, methods=["GET"]),
            Route("/api/me", self._me, methods=["GET"]),
        ])

    async def _seen(self, request: Request, route: str) -> Response | tuple[str, str]:
        body = await request.body()
        self.requests.append({"method": request.method, "path": request.url.path,
                              "query": request.url.query, "headers": dict(request.headers),
                              "body": body})
        if route in self.refuse:
            status, answer, *headers = self.refuse[route]
            headers = headers[0] if headers else None
            if isinstance(answer, bytes):
                return Response(answer, status_code=status, media_type="text/html",
                                headers=headers)
            return JSONResponse(answer, status_code=status, headers=headers)
        auth = request.headers.get("authorization", "")
        if not auth.startswith("Bearer "):
            return JSONResponse({"error": "no token: send Authorization: Bearer <token>"}, 401)
        who = self.tokens.get(auth[len("Bearer "):])
        if who is None:
            return JSONResponse({"error": "unknown or revoked token"}, 401)
        return who

    async def _upload(self, request: Request) -> Response:
        if self.archive_limit is not None:  # as the real server: never read past the limit
            seen = 0
            async for chunk in request.stream():
                seen += len(chunk)
                if seen > self.archive_limit:
                    return JSONResponse({"error": f"archive over the limit of "
                                                  f"{self.archive_limit:,} bytes"}, 413)
        who = await self._seen(request, "POST /api/submissions")
        if isinstance(who, Response):
            return who
        body = self.requests[-1]["body"]
        try:
            with tarfile.open(fileobj=io.BytesIO(body), mode="r:gz") as tar:
                manifest = tomllib.loads(tar.extractfile("bot.toml").read().decode())
        except (tarfile.TarError, KeyError, AttributeError, tomllib.TOMLDecodeError) as exc:
            return JSONResponse({"error": f"not a bot archive: {exc}"}, 400)
        row = self.add(manifest["name"], manifest.get("version", ""), "received", author=who[0])
        row["polls"] = list(self.statuses)
        row["archive"] = body
        return JSONResponse({"id": row["id"], "bot": row["bot"], "version": row["version"],
                             "status": "received", "url": f"/api/submissions/{row['id']}"}, 201)

    async def _one(self, request: Request) -> Response:
        ident = request.path_params["ident"]
        who = await self._seen(request, "GET /api/submissions/{id}")
        if isinstance(who, Response):
            return who
        row = self.submissions.get(int(ident)) if ident.isdigit() else None
        if row is None or (who[1] != "organiser" and row["author"] != who[0]):
            return JSONResponse({"error": f"no submission {ident} of yours"}, 404)
        if row["polls"]:
            row["status"] = row["polls"].pop(0) if len(row["polls"]) > 1 else row["polls"][0]
        if row["status"] == "failed" and not row["reason"]:
            row["reason"] = "its check found 1 problem"
        return JSONResponse({**self.public(row), "report": self.report
                             if row["status"] == "failed" else
                             {"clean": row["status"] == "clean", "problems": []}})

    async def _list(self, request: Request) -> Response:
        who = await self._seen(request, "GET /api/submissions")
        if isinstance(who, Response):
            return who
        rows = [self.public(r) for r in self.submissions.values()
                if who[1] == "organiser" or r["author"] == who[0]]
        return JSONResponse({"submissions": rows})

    async def _me(self, request: Request) -> Response:
        who = await self._seen(request, "GET /api/me")
        if isinstance(who, Response):
            return who
        return JSONResponse({"name": who[0], "role": who[1]})

    @staticmethod
    def public(row: dict) -> dict:
        """A submission as the API shows it."""
        return {k: row[k] for k in ("id", "bot", "version", "status", "reason", "created_at",
                                    "checked_at", "author")}


@contextmanager
def serving(fake: FakeServer) -> Iterator[FakeServer]:
    """Serve `fake` with uvicorn in a thread on a free port of 127.0.0.1 (its `url` set)."""
    for _ in serve_forever(fake):
        yield fake


def serve_forever(fake: FakeServer) -> Iterator[FakeServer]:
    """The serving generator: suspended, the server runs; resumed, it stops."""
    for url in serve_app(fake.app()):
        fake.url = url
        yield fake


def serve_app(app) -> Iterator[str]:
    """Serve an ASGI app with uvicorn in a thread on a free port of 127.0.0.1 while the
    generator is suspended (its lifespan run): its base URL."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


_shared: list[FakeServer] = []


def shared_server() -> FakeServer:
    """One stand-in server for the whole test process (started on first use, never stopped),
    holding submissions with long names: what the table-width test lists."""
    if not _shared:
        fake = FakeServer()
        fake.add("xeri_heuristic_deluxe", "1.0.0-rc.12", "clean")
        fake.add("random_walker_supreme", "2026.12.03", "failed",
                 "its check found 2 problems: crash in xeri (2 seats), timeout in crossfire")
        fake.add("xeri_heuristic_deluxe", "1.0.1", "checking")
        gen = serve_forever(fake)
        next(gen)
        _shared.append(fake)
        _shared_generators.append(gen)  # kept alive: a collected generator would stop it
    return _shared[0]


_shared_generators: list = []

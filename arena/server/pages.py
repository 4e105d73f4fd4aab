"""The author's pages of `arena server`: sign in with the API token, the author's own page (`/me`:
bots, versions, check reports, standing, games, logs), the upload form, sign out; and who may see
which bot's logs.

Every form carries a CSRF token in a hidden field (the session's; before signing in, the sign-in
form's own cookie) and a POST whose Origin or Referer names another site is refused: 403, nothing
changed. Session cookies are HttpOnly, SameSite=Strict, scoped to the root path, and Secure when
the request came over TLS (after the proxy's forwarded headers).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from email.parser import BytesParser
from email.policy import HTTP
from urllib.parse import parse_qs

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from arena.errors import ArenaError
from arena.server.authors import Author, authenticate, hash_token
from arena.server.sessions import SESSION_COOKIE, SIGNIN_COOKIE, Session, SessionStore, same
from arena.server.submissions import (
    TooLarge,
    accept_submission,
    open_store,
    read_body,
    upload_limits,
)
from arena.store import Store
from arena.store.database import stored_json
from arena.store.public import author_ladder_standings, author_rating_snapshots, ladder_names
from arena.web import data
from arena.web.app import reading, render
from arena.web.charts import time_chart

FORM_BYTES = 8192  # a sign-in or sign-out form is a few hundred bytes
FORM_OVERHEAD = 64 * 1024  # a multipart upload's headers and fields beside the archive
RECENT_SUBMISSIONS = 30
PROBLEMS_SHOWN = 10


class Refused(ArenaError):
    """A form POST that fails its CSRF or origin check (403, nothing changed)."""


# -- who is asking ---------------------------------------------------------------------------------
class Viewers:
    """ASGI middleware: the request's signed-in author in `scope["arena.viewer"]` (None when not
    signed in) and its session in `scope["arena.session"]`, for the pages and the log filter."""

    def __init__(self, app, sessions: SessionStore):
        self.app = app
        self.sessions = sessions

    async def __call__(self, scope, receive, send):
        """Find the session of the request's cookie, if it is live; pass the request on."""
        if scope["type"] == "http":
            scope["arena.server"] = True
            scope["arena.viewer"] = scope["arena.session"] = None
            session_id = Request(scope).cookies.get(SESSION_COOKIE)
            # One read: the session, whether its token and author are still live (a dead one
            # is deleted there), and the author's name and role.
            session = await run_in_threadpool(self.sessions.get, session_id) if session_id else None
            if session is not None:
                viewer = Author(session.author_id, session.author_name, session.author_role)
                scope["arena.viewer"], scope["arena.session"] = viewer, (session_id, session)
        await self.app(scope, receive, send)


def viewer_of(request: Request) -> Author | None:
    """The signed-in author of the request, if any."""
    return request.scope.get("arena.viewer")


def can_see_logs(request: Request, store: Store) -> Callable[[str], bool] | None:
    """Which bots' logs the request may see: an organiser every bot's (None); anyone else the bots
    without an author (organiser-registered) and, signed in, their own."""
    viewer = viewer_of(request)
    if viewer is not None and viewer.organiser:
        return None
    seen: dict[str, bool] = {}

    def visible(bot: str) -> bool:
        if bot not in seen:
            owners = store.bot_authors(bot)
            base, at, _ = bot.rpartition("@")  # a culprit may be named NAME@VERSION
            if not owners and at and base:
                owners = store.bot_authors(base)
            seen[bot] = all(a is None or (viewer is not None and a == viewer.id) for a in owners)
        return seen[bot]
    return visible


# -- helpers ---------------------------------------------------------------------------------------
def root(request: Request) -> str:
    """The root path the server is mounted at, without its trailing '/'."""
    return request.scope.get("root_path", "").rstrip("/")


def see_other(request: Request, path: str) -> RedirectResponse:
    """303 to `path` under the root path (after a form POST, or to the sign-in page)."""
    return RedirectResponse(root(request) + path, 303)


def _cookie(response: Response, request: Request, name: str, value: str, max_age: int | None) -> None:
    response.set_cookie(name, value, max_age=max_age, path=root(request) or "/",
                        secure=request.url.scheme == "https", httponly=True, samesite="strict")


def _forget(response: Response, request: Request, name: str) -> None:
    response.delete_cookie(name, path=root(request) or "/", secure=request.url.scheme == "https",
                           httponly=True, samesite="strict")


def check_origin(request: Request) -> None:
    """Refused unless the Origin (or, without one, the Referer) header, when sent, is this site."""
    own = f"{request.url.scheme}://{request.url.netloc}"
    origin = request.headers.get("origin")
    if origin is not None:
        if origin != own:
            raise Refused(f"the form came from another site ({origin[:100]!r})")
        return
    referer = request.headers.get("referer")
    if referer is not None and referer != own and not referer.startswith(own + "/"):
        raise Refused("the form came from another site (its Referer)")


def _url_form(body: bytes) -> dict[str, str]:
    fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True, max_num_fields=10)
    return {k: v[0] for k, v in fields.items()}


def multipart_form(content_type: str, body: bytes) -> tuple[dict[str, str], dict[str, tuple[str, bytes]]]:
    """A multipart/form-data body's text fields and files (field: (file name, bytes))."""
    if not content_type.lower().startswith("multipart/form-data"):
        return {}, {}
    message = BytesParser(policy=HTTP).parsebytes(
        b"Content-Type: " + content_type.encode("latin-1", "replace") + b"\r\n\r\n" + body)
    fields: dict[str, str] = {}
    files: dict[str, tuple[str, bytes]] = {}
    if not message.is_multipart():
        return fields, files
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not name or name in fields or name in files:
            continue
        payload = part.get_payload(decode=True) or b""
        filename = part.get_filename()
        if filename is not None:
            files[name] = (filename, payload)
        else:
            fields[name] = payload.decode("utf-8", "replace")
    return fields, files


# -- sign in and out -------------------------------------------------------------------------------
def _signin_page(request: Request, message: str | None = None, status: int = 200) -> Response:
    csrf = secrets.token_urlsafe(32)
    response = render(request, "signin.html", {"csrf": csrf, "message": message}, status=status)
    _cookie(response, request, SIGNIN_COOKIE, csrf, 3600)
    return response


def _refused(request: Request, message: str) -> Response:
    return render(request, "error.html", {"status": 403, "message": message}, status=403)


async def signin(request: Request) -> Response:
    """GET: the sign-in form; POST: sign in with the API token (a new session, 303 to /me)."""
    if request.method == "GET":
        if viewer_of(request) is not None:
            return see_other(request, "/me")
        return _signin_page(request)
    try:
        check_origin(request)
    except Refused as exc:
        return _refused(request, str(exc))
    try:
        body = await read_body(request, FORM_BYTES, "the form")
    except TooLarge as exc:
        return render(request, "error.html", {"status": 413, "message": str(exc)}, status=413)
    form = _url_form(body)
    if not same(form.get("csrf"), request.cookies.get(SIGNIN_COOKIE)):
        return _refused(request, "the sign-in form has expired or did not come from this site: "
                                 "reload it and sign in again")
    token = form.get("token", "").strip()

    def check() -> Author | None:
        with open_store(request.app.state.db_path) as store:
            return authenticate(store, token)
    author = await run_in_threadpool(check)
    if author is None:
        return _signin_page(request, "the token is not valid (unknown, revoked or rotated out)",
                            401)
    session_id, _ = await run_in_threadpool(request.app.state.sessions.open, author.id,
                                            hash_token(token))
    response = see_other(request, "/me")
    _cookie(response, request, SESSION_COOKIE, session_id, None)
    _forget(response, request, SIGNIN_COOKIE)
    return response


async def _session_form(request: Request, limit: int) -> tuple[Session, str, bytes]:
    """The signed-in session of a form POST and its body; Refused without a session or from
    another site, TooLarge over `limit` bytes."""
    held = request.scope.get("arena.session")
    if held is None:
        raise Refused("not signed in (or the session has ended): sign in again")
    check_origin(request)
    return held[1], held[0], await read_body(request, limit, "the form")


async def signout(request: Request) -> Response:
    """POST: end the session (with the session's CSRF token); 303 to the front page."""
    try:
        session, session_id, body = await _session_form(request, FORM_BYTES)
        if not same(_url_form(body).get("csrf"), session.csrf):
            raise Refused("the form's CSRF token is missing or wrong: reload the page")
    except Refused as exc:
        return _refused(request, str(exc))
    except TooLarge as exc:
        return render(request, "error.html", {"status": 413, "message": str(exc)}, status=413)
    await run_in_threadpool(request.app.state.sessions.close, session_id)
    response = see_other(request, "/")
    _forget(response, request, SESSION_COOKIE)
    return response


# -- the author's page -----------------------------------------------------------------------------
def _report_summary(report: dict | None) -> dict | None:
    if not report:
        return None
    problems = [{"label": f"{p.get('game')} with {p.get('seats')} seats", "words": p.get("words"),
                 "detail": p.get("detail"), "hint": p.get("hint"), "game_id": p.get("game_id")}
                for p in report.get("problems", [])[:PROBLEMS_SHOWN]]
    return {"clean": report.get("clean"), "problems": problems,
            "more_problems": max(0, len(report.get("problems", [])) - PROBLEMS_SHOWN),
            "games": sum(c.get("games", 0) for c in report.get("combos", [])),
            "median_ms": report.get("median_ms"), "worst_ms": report.get("worst_ms"),
            "timeouts": report.get("timeouts"), "stderr_tail": report.get("stderr_tail") or "",
            "stderr_bytes": report.get("stderr_bytes") or 0,
            "warnings": report.get("warnings") or []}


def ladder_standing(store: Store, author_id: int) -> list[dict]:
    """Each ladder leaderboard (ladder, game, method) holding one of the author's bots: its
    current standing (rank among how many, rating, interval, games) and its trajectory, the
    rating each published table gave it (rating_snapshots), drawn as an SVG chart."""
    boards: dict[tuple[str, str], dict] = {}
    names = ladder_names(store)

    def board(scope_id: str, method: str) -> dict:
        if (scope_id, method) not in boards:
            lid, _, game = scope_id.partition(":")
            boards[scope_id, method] = {
                "scope_id": scope_id, "ladder_id": int(lid) if lid.isdigit() else None,
                "ladder": names.get(int(lid)) if lid.isdigit() else None, "game": game,
                "method": method, "method_label": data.METHOD_LABELS.get(method, method),
                "standing": [], "trajectory": {}}
        return boards[scope_id, method]

    for r in author_ladder_standings(store, author_id):
        board(r["scope_id"], r["method"])["standing"].append(
            {k: r[k] for k in ("name", "version", "rank", "entrants", "rating", "lo", "hi",
                               "games")})
    for r in author_rating_snapshots(store, author_id):
        series = board(r["scope_id"], r["method"])["trajectory"].setdefault(
            data.version_key(r["name"], r["version"]), [])
        series.append({"at": r["computed_at"], "tables": r["tables"], "games": r["games"],
                       "rating": r["rating"], "lo": r["lo"], "hi": r["hi"]})
    out = []
    for b in boards.values():
        trajectory = [{"label": label, "points": points}
                      for label, points in b["trajectory"].items()]
        out.append({**b, "trajectory": trajectory, "chart": time_chart(trajectory)})
    return out


def author_page(store: Store, author: Author) -> dict:
    """What /me shows: the author's submissions with their check reports, the standing and
    trajectory of their bots in each ladder and, per bot, its versions, ratings, recent games
    and failures with their stderr (data.bot's page)."""
    rows = store.submissions(author.id)
    submissions = []
    for row in rows[:RECENT_SUBMISSIONS]:
        full = store.submission(row["id"]) or row
        report = stored_json(full["report"], f"submissions.report of {row['id']}") \
            if full.get("report") else None
        submissions.append({**{k: row[k] for k in ("id", "bot_name", "version", "status",
                                                   "reason", "created_at", "checked_at")},
                            "report": _report_summary(report)})
    bots = []
    for name in dict.fromkeys(r["bot_name"] for r in rows):
        try:
            bots.append(data.bot(store, name, QueryParams()))
        except ArenaError:
            continue  # e.g. a bot removed since: its submissions still show
    return {"author": {"name": author.name, "role": author.role}, "submissions": submissions,
            "bots": bots, "total_submissions": len(rows), "ladders": ladder_standing(store, author.id)}


def _me_page(request: Request, viewer: Author, session: Session, message: str | None = None,
             status: int = 200) -> Response:
    with reading(request) as store:
        page = author_page(store, viewer)
    submitted = request.query_params.get("submitted")
    page.update(csrf=session.csrf, message=message,
                submitted=submitted if submitted and submitted.isdigit() else None,
                archive_limit=(request.app.state.config.archive_limits or upload_limits()).archive_bytes)
    return render(request, "me.html", page, status=status)


async def me(request: Request) -> Response:
    """GET /me: the signed-in author's page; 303 to /signin when not signed in."""
    viewer, held = viewer_of(request), request.scope.get("arena.session")
    if viewer is None or held is None:
        return see_other(request, "/signin")
    return await run_in_threadpool(_me_page, request, viewer, held[1])


async def upload(request: Request) -> Response:
    """POST /me/upload: the upload form (multipart, field `archive`), through the same checks,
    limits and code as POST /api/submissions; 303 to /me, or /me with the one-line error."""
    from arena.server.app import STATUS_OF  # the API's statuses for the same domain errors
    config = request.app.state.config
    archive_limits = config.archive_limits or upload_limits()
    try:
        session, _, body = await _session_form(request, archive_limits.archive_bytes + FORM_OVERHEAD)
    except Refused as exc:
        return _refused(request, str(exc))
    except TooLarge:
        viewer, session = viewer_of(request), request.scope["arena.session"][1]
        return await run_in_threadpool(
            _me_page, request, viewer, session,
            f"the archive is over the limit of {archive_limits.archive_bytes:,} bytes", 413)
    fields, files = multipart_form(request.headers.get("content-type", ""), body)
    if not same(fields.get("csrf"), session.csrf):
        return _refused(request, "the form's CSRF token is missing or wrong: reload the page")
    viewer = viewer_of(request)
    filename, archive = files.get("archive", ("", b""))
    if not archive:
        return await run_in_threadpool(_me_page, request, viewer, session,
                                       "choose an archive (.tar.gz, .tar or .zip) to upload", 400)
    try:
        row = await run_in_threadpool(accept_submission, request.app.state.db_path, viewer,
                                      archive, config.limits, archive_limits)
    except ArenaError as exc:
        status = next(code for kind, code in STATUS_OF if isinstance(exc, kind))
        line = " ".join(str(exc).split())
        return await run_in_threadpool(_me_page, request, viewer, session,
                                       f"{filename[:100]}: {line}" if filename else line, status)
    pool = request.app.state.pool
    if pool is not None:
        pool.enqueue(row["id"])
    return see_other(request, f"/me?submitted={row['id']}")

"""`arena server`: the competition server — the web interface of `arena serve` plus the JSON write
API authors submit bots through (docs/server.md), and the pool that checks their submissions."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from arena.cli._app import DB_OPTION, app, console, err_console, fail, printable
from arena.cli.serve import check_listen, is_loopback, url_of
from arena.errors import ArenaError, ConfigError


@app.command()
def server(
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
    host: Annotated[str, typer.Option("--host", help="Address to bind (default: this machine only).")]
    = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="TCP port.")] = 8000,
    root_path: Annotated[str, typer.Option(
        "--root-path", help="The path prefix a reverse proxy serves this under (e.g. /arena).")]
    = "",
    forwarded_allow_ips: Annotated[str, typer.Option(
        "--forwarded-allow-ips", help="Proxies whose X-Forwarded-For/-Proto are trusted "
        "(comma-separated addresses, or '*').")] = "127.0.0.1",
    checkers: Annotated[int, typer.Option(
        "--checkers", min=1, max=64, help="Submissions checked at once.")] = 2,
    sandbox: Annotated[str, typer.Option(
        help="auto (bwrap when it works here), none or bwrap: how checks run bots.")] = "auto",
    per_hour: Annotated[int, typer.Option(
        "--per-hour", min=1, help="Submissions per author per hour.")] = 10,
    active_versions: Annotated[int, typer.Option(
        "--active-versions", min=1, help="Versions per author active or being checked.")] = 5,
    storage_mib: Annotated[int, typer.Option(
        "--storage-mib", min=1, help="Unpacked MiB stored per author.")] = 256,
    registration: Annotated[bool, typer.Option(
        "--registration/--no-registration", help="Let anyone create an author token "
        "(POST /api/authors).")] = False,
    replay_delay: Annotated[str, typer.Option(
        "--replay-delay", help="How long after a game its replay becomes public, e.g. 0, 10m, "
        "1h (its bots' authors and organisers see it at once).")] = "0",
) -> None:
    """Serve the web interface and the submission API; check submissions in the background."""
    from arena.players.launch import SANDBOXES
    from arena.server.app import ServerConfig, create_server_app
    from arena.server.checks import CheckPool
    from arena.server.submissions import AuthorLimits
    from arena.server.visibility import parse_duration

    if sandbox not in SANDBOXES:
        fail(ConfigError(f"unknown sandbox {sandbox!r} (choose {', '.join(SANDBOXES)})"))
    if root_path and (not root_path.startswith("/") or root_path.endswith("/")):
        fail(ConfigError(f"--root-path {root_path!r}: a path like /arena (leading '/', no "
                         f"trailing '/')"))
    try:
        delay = parse_duration(replay_delay)
    except ConfigError as exc:
        fail(ConfigError(f"--replay-delay: {exc}"))
    config = ServerConfig(limits=AuthorLimits(per_hour, active_versions, storage_mib * 1024 * 1024),
                          registration=registration, replay_delay=delay)
    try:
        web_app = create_server_app(db, config, CheckPool(db, checkers, sandbox=sandbox))
        check_listen(host, port)
    except ArenaError as exc:
        fail(exc)
    import uvicorn

    if not is_loopback(host):
        err_console.print(f"warning: binding {printable(host)}: put it behind a TLS proxy; tokens "
                          "travel in every request", highlight=False, soft_wrap=True)
    console.print(f"serving {printable(db)} with the submission API at "
                  f"{url_of(host, port).rstrip('/')}{printable(root_path)}/  — Ctrl-C stops",
                  highlight=False, soft_wrap=True)
    # Access logs stay off: they hold no token (tokens travel in a header) but are noise here.
    from arena.web.serving import uvicorn_options

    uvicorn.run(web_app, host=host, port=port, log_level="warning", root_path=root_path,
                proxy_headers=True, forwarded_allow_ips=forwarded_allow_ips, **uvicorn_options())

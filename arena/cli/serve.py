"""`arena serve`: the read-only web interface over a database (leaderboards, tournaments, ladders,
bots, replays) and its JSON API."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Annotated

import typer

from arena.cli._app import DB_OPTION, app, console, err_console, fail, printable
from arena.errors import ConfigError, StoreError

LOOPBACK_NAMES = {"localhost", "ip6-localhost"}


def is_loopback(host: str) -> bool:
    """True when `host` only listens on this machine (127.0.0.0/8, ::1, localhost)."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_listen(host: str, port: int) -> None:
    """ConfigError unless `host:port` can be listened on now (a name that does not resolve, a port in use)."""
    import socket

    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
        with socket.socket(family, kind, proto) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
            sock.bind(address)
    except OSError as exc:  # socket.gaierror too
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def url_of(host: str, port: int) -> str:
    """The URL to open for a bound host (an IPv6 address goes in brackets)."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"
    return f"http://{shown}:{port}/"


@app.command()
def serve(
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
    host: Annotated[str, typer.Option("--host", help="Address to bind (default: this machine only).")]
    = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="TCP port.")] = 8000,
) -> None:
    """Serve a read-only web interface over the database, with a JSON API under /api."""
    # Imported here: the web stack is needed only by this command.
    from arena.web import create_app

    try:
        web_app = create_app(db)
    except StoreError as exc:
        err_console.print(f"[red]error:[/red] {printable(exc)}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    import uvicorn

    # Checked before saying "serving": uvicorn's own bind error comes after that line, exit 3.
    try:
        check_listen(host, port)
    except ConfigError as exc:
        fail(exc)
    if not is_loopback(host):
        err_console.print(f"warning: binding {printable(host)}: anyone who can reach this address "
                          "can read the database", highlight=False, soft_wrap=True)
    console.print(f"serving {printable(db)} (read-only) at {url_of(host, port)}  — Ctrl-C stops",
                  highlight=False, soft_wrap=True)
    from arena.web.serving import uvicorn_options

    # Timeouts and limits: a client that never finishes a request cannot hold the server.
    uvicorn.run(web_app, host=host, port=port, log_level="warning", **uvicorn_options())

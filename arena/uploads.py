"""A submitted bot archive: validated whole, then unpacked into a fresh folder, or refused in one line.

`unpack_submission(data, dest, limits)` takes the bytes an author uploaded (a zip, a tar.gz or a
plain tar: the format is sniffed from the magic bytes, never from a name) and either unpacks the
bot into `dest` or raises UploadError, whose message is one line naming the problem and the bad
value (through `shown()`: ASCII, cut to 80 characters), safe to show to the author.

Everything is checked before anything is written, from the archive's headers:

- the archive's size; the unpacked size and the file count (folders count as files);
- the compression ratio (unpacked bytes over archive bytes, once past `ratio_floor`);
- every member name: no absolute path, no `..`, no empty component (`a//b`), no backslash, no
  slash look-alike, no NUL, control, invisible or unassigned character, none of the HTML
  specials `<>&"'` (refused rather than escaped: a file name is shown on pages and in terminals),
  each component at most `name_chars` characters (and 255 UTF-8 bytes), the path at most
  `path_chars`, at most MAX_DEPTH folders deep; no path twice, no path both a file and a folder;
- member types: regular files and folders only. Every symbolic link and hard link is refused,
  even one that points inside the bot (the registry refuses links in a bot folder too); devices,
  FIFOs, sockets, sparse files and encrypted zip members are refused;
- the manifest: found as the registry finds it (`bot.toml`, `arena.toml`, `manifest.toml`, else
  the one `*.toml`) at the top of the archive or of its single top folder (which is stripped),
  at most `manifest_bytes`, parsed by `arena.config.load_manifest` (as `Registry.add` does),
  every game it names registered, its workdir a folder of the archive.

Declared sizes are not trusted while unpacking: each member is streamed and counted, and one that
yields more than its header said, or a running total past the unpacked or ratio limit, stops the
unpacking. A gzip layer is inflated lazily with a bound (the unpacked limit plus tar overhead, and
the ratio), so a decompression bomb is refused after at most that many bytes, not after 10 GB;
its tar stream is kept in memory for the second pass (peak memory: the archive plus that bound).

Nothing is written to `dest` unless everything passes: the bot is unpacked into a temporary
folder beside `dest`, which is renamed to `dest` at the end and removed on any failure. Files are
created by this process (so owned by the runner), 0o600, or 0o700 when the member had its user
execute bit; folders 0o700; no setuid, setgid or sticky bit ever.
"""

from __future__ import annotations

import io
import os
import posixpath
import shutil
import stat
import tarfile
import tempfile
import unicodedata
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from arena.config import load_manifest, shown
from arena.errors import ConfigError, UploadError
from arena.games import get_game
from arena.registry import MANIFEST_NAMES, MAX_DEPTH

KIB, MIB = 1 << 10, 1 << 20
OS_NAME_BYTES = 255  # a file name component on Linux file systems
TAR_MEMBER_OVERHEAD = 4 * KIB  # a header, a PAX header for a long name, and block padding
TAR_SLACK = 64 * KIB  # the end-of-archive blocks and record padding of a small tar
CHUNK = 256 * KIB
MESSAGE_MAX = 300  # characters of another library's exception text quoted in a message
SKIPPED_TOPS = frozenset({"__MACOSX"})  # resource forks a macOS Finder zip adds beside the bot
# Characters that render as a slash but are not one: a name that looks like a path but is not.
SLASH_LOOKALIKES = frozenset("\u2044\u2215\u2216\u2571\u2572\u29f5\u29f8\u29f9\ufe68\uff0f\uff3c")
HTML_SPECIALS = frozenset("<>&\"'")
# Control, format (invisible), surrogate (undecodable bytes), private-use, unassigned, separators.
BAD_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
ZIP_METHODS = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2,
                         zipfile.ZIP_LZMA})


@dataclass(frozen=True)
class UploadLimits:
    """What a submitted archive may hold; each limit exceeded is refused in one line."""

    archive_bytes: int = 10 * MIB
    unpacked_bytes: int = 64 * MIB
    files: int = 2_000  # files and folders
    ratio: float = 100  # unpacked bytes over archive bytes
    manifest_bytes: int = 64 * KIB
    name_chars: int = 255  # per path component
    path_chars: int = 1_024  # per path
    ratio_floor: int = 1 * MIB  # unpacked bytes up to this are never refused by the ratio


@dataclass(frozen=True)
class UnpackedBot:
    """A bot unpacked from an archive: its folder, its parsed manifest and what it holds."""

    root: Path  # the folder holding the manifest (dest: a single top folder is stripped)
    manifest: dict  # the validated manifest's fields (arena.config.Manifest, as JSON values)
    files: int  # regular files written
    unpacked_bytes: int  # bytes written
    manifest_file: str = "bot.toml"  # the manifest's path relative to root


@dataclass(frozen=True)
class _Member:
    """One member of the archive as its header declares it, its name already checked."""

    name: str  # as stored, for messages
    parts: tuple[str, ...]  # the checked path components, `.` dropped
    is_dir: bool
    size: int
    executable: bool
    ref: object  # a ZipInfo, or the offset of a tar member's data in the tar stream


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _reason(exc: BaseException) -> str:
    """An exception's text for a message: it may quote a name no check has seen (a zip's local
    header), so it is made ASCII and cut, like any untrusted value."""
    text = ascii(_one_line(str(exc)))[1:-1]
    return text if len(text) <= MESSAGE_MAX else text[:MESSAGE_MAX] + "..."


def _refuse(message: str) -> UploadError:
    return UploadError(_one_line(message))


def _bytes(n: float) -> str:
    n = int(n)
    if n >= 1 << 30:
        return f"{n / (1 << 30):,.1f} GiB ({n:,} bytes)"
    return f"{n / MIB:,.1f} MiB ({n:,} bytes)" if n >= MIB else f"{n:,} bytes"


def _limit(n: float) -> str:
    n = int(n)
    if n >= MIB and n % MIB == 0:
        return f"{n // MIB:,} MiB"
    if n >= KIB and n % KIB == 0:
        return f"{n // KIB:,} KiB"
    return f"{n:,} bytes"


def check_member_name(name: str, is_dir: bool, limits: UploadLimits) -> tuple[str, ...]:
    """The path components of an archive member's name (`.` dropped), or UploadError naming why not."""
    def bad(why: str) -> UploadError:
        return _refuse(f"archive member {shown(name)}: {why}")

    if "\0" in name:
        raise bad("a NUL character in the name")
    if len(name) > limits.path_chars + 1:  # + 1: a folder's trailing slash
        raise bad(f"a path of {len(name):,} characters, over the {limits.path_chars:,} allowed")
    if is_dir and name.endswith("/"):
        name_ = name[:-1]
    elif name.endswith("/"):
        raise bad("a file whose name ends in '/'")
    else:
        name_ = name
    if name_.startswith("/"):
        raise bad("an absolute path; names must be relative to the bot's folder")
    if "\\" in name_:
        raise bad("a backslash in the name (a Windows path separator); use '/'")
    parts = []
    components = name_.split("/")
    for part in components:
        if part == "..":
            raise bad("a '..' component, which would leave the bot's folder")
    for part in components:
        if part == "":
            raise bad("an empty path component ('//' or a trailing '/')")
        if part == ".":
            continue
        size = len(part.encode("utf-8", "surrogatepass"))
        if len(part) > limits.name_chars or size > OS_NAME_BYTES:
            raise bad(f"a component of {len(part):,} characters ({size:,} bytes in UTF-8), over "
                      f"the {limits.name_chars:,} characters or {OS_NAME_BYTES} bytes allowed")
        for c in part:
            if c in HTML_SPECIALS:
                raise bad(f"the character {c!r} (HTML-special characters <>&\"' are not allowed "
                          f"in file names)")
            if c in SLASH_LOOKALIKES:
                raise bad(f"the character {ascii(c)}, which looks like a slash")
            if unicodedata.category(c) in BAD_CATEGORIES:
                what = ("a byte that is not UTF-8" if unicodedata.category(c) == "Cs"
                        else "a control or invisible character")
                raise bad(f"{what} ({ascii(c)}) in the name")
        parts.append(part)
    if not parts and not is_dir:
        raise bad("a file with no name")
    if len(parts) > MAX_DEPTH:
        raise bad(f"nested {len(parts) - 1} folders deep, over the {MAX_DEPTH} allowed")
    return tuple(parts)


class _Tally:
    """The running count of members and declared bytes, refused at the first limit passed."""

    def __init__(self, limits: UploadLimits, archive_bytes: int):
        self.limits = limits
        self.archive_bytes = archive_bytes
        self.members = 0
        self.total = 0

    def ratio_cap(self) -> float:
        return max(self.limits.ratio * self.archive_bytes, self.limits.ratio_floor)

    def count(self, name: str) -> None:
        self.members += 1
        if self.members > self.limits.files:
            raise _refuse(f"archive: more than {self.limits.files:,} files and folders (at "
                          f"{shown(name)}); a bot should hold only the bot")

    def add(self, name: str, size: int, what: str = "declares") -> None:
        self.total += size
        self.check(name, what)

    def check(self, name: str, what: str) -> None:
        limits = self.limits
        if self.total > limits.unpacked_bytes:
            raise _refuse(f"archive: {what} more than {_limit(limits.unpacked_bytes)} unpacked "
                          f"(at {shown(name)}: {_bytes(self.total)} so far)")
        if self.total > self.ratio_cap():
            raise _refuse(f"archive: {what} {_bytes(self.total)} unpacked (at {shown(name)}) "
                          f"from {_bytes(self.archive_bytes)}, over {limits.ratio:g} times its "
                          f"size; refused as a decompression bomb")


def _check_type(name: str, mode: int) -> None:
    """Refuse a member whose file type is not a regular file or a folder."""
    kinds = {stat.S_IFLNK: "a symbolic link", stat.S_IFCHR: "a character device",
             stat.S_IFBLK: "a block device", stat.S_IFIFO: "a FIFO (named pipe)",
             stat.S_IFSOCK: "a socket"}
    kind = kinds.get(stat.S_IFMT(mode))
    if kind:
        raise _refuse(f"archive member {shown(name)}: {kind}; a bot archive may hold only "
                      f"regular files and folders")


# -- zip ------------------------------------------------------------------------------------------
def _zip_members(zf: zipfile.ZipFile, tally: _Tally) -> Iterator[_Member]:
    for info in zf.infolist():
        name = info.orig_filename  # zipfile cuts `filename` at a NUL; the stored name is this
        tally.count(name)
        mode = info.external_attr >> 16 if info.create_system == 3 else 0
        _check_type(name, mode)
        is_dir = name.endswith("/") or stat.S_ISDIR(mode)
        parts = check_member_name(name, is_dir, tally.limits)
        if info.flag_bits & 0x1:
            raise _refuse(f"archive member {shown(name)}: encrypted; upload it unencrypted")
        if info.compress_type not in ZIP_METHODS:
            raise _refuse(f"archive member {shown(name)}: compression method "
                          f"{info.compress_type} is not supported (use deflate)")
        size = 0 if is_dir else info.file_size
        tally.add(name, size)
        yield _Member(name, parts, is_dir, size, bool(mode & stat.S_IXUSR), info)


# -- tar ------------------------------------------------------------------------------------------
class _Inflater:
    """A gzip stream inflated on demand, at most `bound` bytes, everything read kept in `seen`."""

    def __init__(self, data: bytes, bound: float, tally: _Tally):
        self.z = zlib.decompressobj(16 + zlib.MAX_WBITS)
        # Fed a chunk at a time: zlib copies its unconsumed input on every call.
        self.data = memoryview(data)
        self.fed = 0
        self.tail = b""
        self.bound = bound
        self.tally = tally
        self.seen = io.BytesIO()
        self.size = 0

    def read(self, n: int | None = -1) -> bytes:
        """Up to `n` bytes of the tar stream (all of it for n < 0), refused past the bound."""
        n = -1 if n is None else n
        out = bytearray()
        while (n < 0 or len(out) < n) and not self.z.eof:
            if not self.tail:
                self.tail = self.data[self.fed:self.fed + CHUNK]
                self.fed += len(self.tail)
            try:
                piece = self.z.decompress(self.tail, CHUNK if n < 0 else n - len(out))
            except zlib.error as exc:
                raise _refuse(f"archive: a corrupt gzip stream ({_reason(exc)})") from None
            self.tail = self.z.unconsumed_tail
            if (not piece and not self.tail and self.fed >= len(self.data)
                    and not self.z.eof):
                raise _refuse("archive: the gzip stream ends early (a truncated upload?)")
            out += piece
            if self.size + len(out) > self.bound:
                raise _refuse(
                    f"archive: its gzip stream inflates past {_bytes(self.bound)} (from "
                    f"{_bytes(self.tally.archive_bytes)}: over {self.tally.limits.ratio:g} times "
                    f"its size, or past the {_limit(self.tally.limits.unpacked_bytes)} unpacked "
                    f"limit); refused as a decompression bomb")
        if self.z.eof and (self.z.unused_data or self.fed < len(self.data)):
            raise _refuse("archive: data after the end of its gzip stream")
        self.size += len(out)
        self.seen.write(out)
        return bytes(out)

    def drain(self) -> None:
        """Inflate the rest (the tar's padding): the bound holds and the gzip checksum is checked."""
        while not self.z.eof:
            self.read(CHUNK)


def _tar_members(tf: tarfile.TarFile, tally: _Tally) -> Iterator[_Member]:
    while True:
        try:
            info = tf.next()
        except (tarfile.TarError, EOFError) as exc:
            raise _refuse(f"archive: not a valid tar archive ({_reason(exc)})") from None
        if info is None:
            return
        name = info.name
        tally.count(name)
        if info.issym() or info.islnk():
            kind = "a symbolic link" if info.issym() else "a hard link"
            raise _refuse(f"archive member {shown(name)}: {kind} (to {shown(info.linkname)}); "
                          f"a bot archive may hold no links, even ones that point inside it")
        if info.ischr() or info.isblk() or info.isfifo():
            kind = ("a character device" if info.ischr() else "a block device" if info.isblk()
                    else "a FIFO (named pipe)")
            raise _refuse(f"archive member {shown(name)}: {kind}; a bot archive may hold only "
                          f"regular files and folders")
        if info.issparse():
            raise _refuse(f"archive member {shown(name)}: a sparse file; archive it as a regular "
                          f"file")
        if not (info.isdir() or info.type in (tarfile.REGTYPE, tarfile.AREGTYPE,
                                              tarfile.CONTTYPE)):
            raise _refuse(f"archive member {shown(name)}: an unsupported member type "
                          f"{info.type!r}; a bot archive may hold only regular files and folders")
        is_dir = info.isdir()
        parts = check_member_name(name + "/" if is_dir else name, is_dir, tally.limits)
        size = 0 if is_dir else info.size
        tally.add(name, size)
        yield _Member(name, parts, is_dir, size, bool(info.mode & stat.S_IXUSR), info.offset_data)


# -- the plan -------------------------------------------------------------------------------------
@dataclass
class _Plan:
    """What will be written, relative to dest: folders, then files in archive order."""

    dirs: list[tuple[str, ...]]
    files: list[_Member]  # parts already stripped of the top folder
    manifest: _Member


def _plan(members: list[_Member]) -> _Plan:
    """Strip a single top folder, refuse duplicates and file/folder clashes, find the manifest."""
    members = [m for m in members if m.parts and m.parts[0] not in SKIPPED_TOPS]
    if not any(not m.is_dir for m in members):
        raise _refuse("archive: holds no files")
    tops = {m.parts[0] for m in members}
    if len(tops) == 1 and all(len(m.parts) > 1 or m.is_dir for m in members):
        members = [_Member(m.name, m.parts[1:], m.is_dir, m.size, m.executable, m.ref)
                   for m in members if len(m.parts) > 1]
    files: dict[tuple[str, ...], _Member] = {}
    dirs: dict[tuple[str, ...], str] = {}
    for m in members:
        if m.is_dir:
            dirs.setdefault(m.parts, m.name)
        elif m.parts in files:
            raise _refuse(f"archive member {shown(m.name)}: appears twice in the archive")
        else:
            files[m.parts] = m
        for i in range(1, len(m.parts)):
            dirs.setdefault(m.parts[:i], m.name)
    for parts, name in dirs.items():
        if parts in files:
            raise _refuse(f"archive member {shown(files[parts].name)}: is both a file and a "
                          f"folder (see {shown(name)})")
    top_files = {m.parts[0]: m for m in files.values() if len(m.parts) == 1}
    manifest = next((top_files[n] for n in MANIFEST_NAMES if n in top_files), None)
    if manifest is None:
        tomls = sorted(n for n in top_files if n.endswith(".toml"))
        if not tomls:
            raise _refuse("archive: no bot manifest (bot.toml) at its top or in its one top "
                          "folder")
        if len(tomls) > 1:
            listed = ", ".join(shown(t, 40) for t in tomls[:5])
            raise _refuse(f"archive: several manifests ({listed}{', ...' if len(tomls) > 5 else ''}"
                          f"); name the bot's one bot.toml")
        manifest = top_files[tomls[0]]
    return _Plan(sorted(dirs, key=lambda p: (len(p), p)), list(files.values()), manifest)


def _parse_manifest(plan: _Plan, text: bytes, limits: UploadLimits) -> dict:
    """The manifest validated as the registry validates one: schema, games, workdir."""
    rel = "/".join(plan.manifest.parts)
    try:
        manifest = load_manifest(Path(rel), text)
    except ConfigError as exc:
        raise _refuse(str(exc)) from None
    for game in manifest.games:
        try:
            get_game(game)
        except ConfigError as exc:
            raise _refuse(f"{rel}: games: {exc}") from None
    workdir = posixpath.normpath(manifest.workdir)
    inside = workdir == "." or tuple(workdir.split("/")) in set(plan.dirs)
    if workdir.startswith("/") or workdir.split("/")[0] == ".." or not inside:
        raise _refuse(f"{rel}: workdir {shown(manifest.workdir)} is not a folder of the archive")
    return manifest.model_dump(mode="json")


# -- unpacking ------------------------------------------------------------------------------------
def _sniff(data: bytes) -> str:
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "zip"
    if data[:2] == b"\x1f\x8b":
        return "gzip"
    if data[257:262] == b"ustar":
        return "tar"
    raise _refuse(f"archive: not a zip, tar.gz or tar archive (it starts with {shown(data[:8])})")


def _prepare_dest(dest: Path) -> None:
    """`dest` must be absent or an empty folder: a caller's mistake otherwise, not the author's."""
    if dest.is_symlink() or (dest.exists() and (not dest.is_dir() or any(dest.iterdir()))):
        raise FileExistsError(f"{dest}: not an empty folder; unpack a submission into a fresh one")
    dest.parent.mkdir(parents=True, exist_ok=True)


def _target(tmp: str, parts: tuple[str, ...]) -> str:
    path = os.path.join(tmp, *parts)
    # Checked already part by part; this states the invariant the whole design rests on.
    if os.path.commonpath([tmp, os.path.normpath(path)]) != tmp:
        raise _refuse(f"archive member {shown('/'.join(parts))}: outside the bot's folder")
    return path


def _write(tmp: str, plan: _Plan, chunks, tally: _Tally) -> tuple[int, int]:
    """Write the plan under `tmp`, each member's bytes counted as they come; (files, bytes)."""
    for parts in plan.dirs:
        os.mkdir(_target(tmp, parts), 0o700)
    written_total = 0
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for m in plan.files:
        fd = os.open(_target(tmp, m.parts), flags, 0o600)
        try:
            written = 0
            for chunk in chunks(m):
                written += len(chunk)
                if written > m.size:
                    raise _refuse(f"archive member {shown(m.name)}: holds more than the "
                                  f"{m.size:,} bytes its header declares")
                tally.add(m.name, len(chunk), "unpacks to")
                os.write(fd, chunk)
            if written != m.size:
                raise _refuse(f"archive member {shown(m.name)}: holds {written:,} bytes, not the "
                              f"{m.size:,} its header declares (a truncated archive?)")
            os.fchmod(fd, 0o700 if m.executable else 0o600)
        finally:
            os.close(fd)
        written_total += m.size
    return len(plan.files), written_total


def unpack_submission(data: bytes, dest: Path, limits: UploadLimits = UploadLimits()
                      ) -> UnpackedBot:
    """Validate a bot archive (zip, tar.gz, tar) whole, then unpack it into `dest`, or UploadError."""
    data = bytes(data)
    dest = Path(dest)
    if not data:
        raise _refuse("archive: the upload is empty")
    if len(data) > limits.archive_bytes:
        raise _refuse(f"archive: {_bytes(len(data))}, over the {_limit(limits.archive_bytes)} "
                      f"an upload may be")
    kind = _sniff(data)
    tally = _Tally(limits, len(data))
    zf = None
    try:
        if kind == "zip":
            try:
                zf = zipfile.ZipFile(io.BytesIO(data))
            except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
                raise _refuse(f"archive: not a valid zip archive ({_reason(exc)})") from None
            members = list(_zip_members(zf, tally))

            def read(m: _Member, limit: int = -1) -> Iterator[bytes]:
                with zf.open(m.ref) as f:
                    left = m.size + 1 if limit < 0 else limit
                    while left > 0 and (chunk := f.read(min(CHUNK, left))):
                        left -= len(chunk)
                        yield chunk
        else:
            if kind == "gzip":
                bound = min(limits.unpacked_bytes + (limits.files + 1) * TAR_MEMBER_OVERHEAD,
                            tally.ratio_cap()) + TAR_SLACK
                stream = _Inflater(data, bound, tally)
            else:
                stream = io.BytesIO(data)
            try:
                tf = tarfile.open(fileobj=stream, mode="r|")
            except (tarfile.TarError, EOFError) as exc:
                raise _refuse(f"archive: not a valid tar archive ({_reason(exc)})") from None
            members = list(_tar_members(tf, tally))
            if isinstance(stream, _Inflater):
                stream.drain()
                tar = stream.seen.getbuffer()
            else:
                tar = memoryview(data)

            def read(m: _Member, limit: int = -1) -> Iterator[bytes]:
                start = m.ref
                end = start + (m.size if limit < 0 else min(m.size, limit))
                for at in range(start, min(end, len(tar)), CHUNK):
                    yield bytes(tar[at:min(at + CHUNK, end, len(tar))])

        plan = _plan(members)
        if plan.manifest.size > limits.manifest_bytes:
            raise _refuse(f"archive member {shown(plan.manifest.name)}: a manifest of "
                          f"{_bytes(plan.manifest.size)}, over the {_limit(limits.manifest_bytes)} "
                          f"a manifest may hold")
        text = b"".join(read(plan.manifest, limits.manifest_bytes + 1))
        if len(text) != plan.manifest.size:
            raise _refuse(f"archive member {shown(plan.manifest.name)}: holds {len(text):,} "
                          f"bytes, not the {plan.manifest.size:,} its header declares")
        manifest = _parse_manifest(plan, text, limits)

        # Everything is checked: only now is anything written.
        _prepare_dest(dest)
        tmp = tempfile.mkdtemp(prefix=f".{dest.name}.upload-", dir=dest.parent.absolute())
        try:
            tally.total = 0
            files, unpacked = _write(tmp, plan, read, tally)
            os.chmod(tmp, 0o700)
            os.replace(tmp, dest)  # over an empty folder, or where none was
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    except (zipfile.BadZipFile, zlib.error, EOFError, tarfile.TarError, NotImplementedError,
            RuntimeError) as exc:
        raise _refuse(f"archive: corrupt ({type(exc).__name__}: {_reason(exc)})") from None
    finally:
        if zf is not None:
            zf.close()
    return UnpackedBot(dest, manifest, files, unpacked, "/".join(plan.manifest.parts))

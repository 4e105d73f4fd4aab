"""A submitted bot archive: hostile ones refused in one line with nothing written, good ones unpacked.

Every archive is built in memory (zipfile, tarfile); the hostile ones carry a valid bot beside the
hostile member, so the refusal is the hostile member's.
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
import tempfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from arena.errors import ArenaError, UploadError
from arena.registry import find_manifest
from arena.uploads import UnpackedBot, UploadLimits, unpack_submission

BOTS = Path(__file__).resolve().parents[2] / "bots"
MIB, GIB = 1 << 20, 1 << 30


def random_bot() -> dict[str, bytes]:
    """bots/random's files as a bot folder holds them: its manifest as bot.toml, its script, the kit."""
    return {"bot.toml": (BOTS / "random.toml").read_bytes(),
            "random_bot.py": (BOTS / "random_bot.py").read_bytes(),
            "arenabot.py": (BOTS / "arenabot.py").read_bytes()}


def make_zip(files: dict[str, bytes], extra: list[tuple[zipfile.ZipInfo | str, bytes]] = (),
             method: int = zipfile.ZIP_DEFLATED, prefix: str = "") -> bytes:
    """A zip of `files` (under `prefix`) and then the `extra` members, as given."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        for name, data in files.items():
            zf.writestr(prefix + name, data)
        for info, data in extra:
            zf.writestr(info, data)
    return buf.getvalue()


def entry(name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE, linkname: str = "",
          mode: int = 0o644) -> tuple[tarfile.TarInfo, bytes]:
    """One tar member: its header and its bytes."""
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, linkname, mode
    info.size = len(data) if kind in (tarfile.REGTYPE, tarfile.AREGTYPE) else 0
    return info, data


def make_tar(files: dict[str, bytes], extra: list[tuple[tarfile.TarInfo, bytes]] = (),
             gz: bool = True, prefix: str = "") -> bytes:
    """A tar (gzipped unless `gz` is False) of `files` (under `prefix`) and then `extra`."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz" if gz else "w", format=tarfile.PAX_FORMAT) as tf:
        for name, data in files.items():
            info, data = entry(prefix + name, data)
            tf.addfile(info, io.BytesIO(data))
        for info, data in extra:
            tf.addfile(info, io.BytesIO(data) if info.size else None)
    return buf.getvalue()


def refused(tmp_path: Path, data: bytes, *needles: str, limits: UploadLimits = UploadLimits()
            ) -> str:
    """The one-line UploadError `data` gets; nothing written anywhere under tmp_path."""
    dest = tmp_path / "box" / "dest"
    with pytest.raises(UploadError) as info:
        unpack_submission(data, dest, limits)
    message = str(info.value)
    assert "\n" not in message and "\r" not in message and len(message) < 400, message
    for needle in needles:
        assert needle in message, message
    assert not dest.exists()
    assert [p for p in tmp_path.rglob("*") if p != tmp_path / "box"] == []
    return message


# -- the good cases ------------------------------------------------------------------------------
@pytest.mark.parametrize("build", [
    lambda: make_zip(random_bot(), prefix="random/"),
    lambda: make_tar(random_bot(), prefix="random/"),
    lambda: make_tar(random_bot(), prefix="./"),
    lambda: make_tar(random_bot(), gz=False),
    lambda: make_zip(random_bot(), method=zipfile.ZIP_STORED),
], ids=["zip-top-folder", "tgz-top-folder", "tgz-dot", "tar", "zip-stored"])
def test_a_good_archive_unpacks_with_its_manifest_parsed(tmp_path: Path, build):
    dest = tmp_path / "dest"
    bot = unpack_submission(build(), dest, UploadLimits())
    assert isinstance(bot, UnpackedBot)
    assert bot.root == dest  # a single top folder is stripped
    assert bot.manifest["name"] == "random" and "xeri" in bot.manifest["games"]
    assert bot.files == 3 and bot.unpacked_bytes == sum(map(len, random_bot().values()))
    assert {p.name: p.read_bytes() for p in dest.iterdir()} == random_bot()
    assert find_manifest(dest) == dest / bot.manifest_file == dest / "bot.toml"
    assert [p.name for p in tmp_path.iterdir()] == ["dest"]  # no temporary folder left


@pytest.mark.parametrize("build", [make_zip, make_tar], ids=["zip", "tgz"])
def test_a_large_incompressible_member_unpacks_byte_for_byte(tmp_path: Path, build):
    model = os.urandom(3 * MIB)  # several input chunks of the gzip stream
    bot = unpack_submission(build(random_bot() | {"model.bin": model}), tmp_path / "d",
                            UploadLimits())
    assert (tmp_path / "d" / "model.bin").read_bytes() == model
    assert bot.unpacked_bytes == len(model) + sum(map(len, random_bot().values()))


def test_a_folder_of_the_bot_and_an_existing_empty_dest(tmp_path: Path):
    files = random_bot() | {"lib/util.py": b"X = 1\n", "data/": b""}
    data = make_zip({k: v for k, v in files.items() if not k.endswith("/")},
                    extra=[("data/", b"")])
    dest = tmp_path / "dest"
    dest.mkdir()
    bot = unpack_submission(data, dest, UploadLimits())
    assert (dest / "lib" / "util.py").read_bytes() == b"X = 1\n"
    assert (dest / "data").is_dir() and bot.files == 4


def test_permissions_are_safe_and_the_user_execute_bit_is_kept(tmp_path: Path):
    extra = [entry("run.sh", b"#!/bin/sh\n", mode=0o6777), entry("setuid.bin", b"x", mode=0o4644),
             entry("sub", kind=tarfile.DIRTYPE, mode=0o1777)]
    dest = tmp_path / "dest"
    unpack_submission(make_tar(random_bot(), extra), dest, UploadLimits())
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in dest.iterdir()}
    assert modes["run.sh"] == 0o700 and modes["setuid.bin"] == 0o600
    assert modes["bot.toml"] == 0o600 and modes["sub"] == 0o700
    assert all(p.stat().st_uid == os.getuid() for p in dest.iterdir())


def test_a_macos_resource_folder_is_left_out(tmp_path: Path):
    data = make_zip(random_bot(), prefix="random/",
                    extra=[("__MACOSX/random/._bot.toml", b"\0\5\26\7")])
    bot = unpack_submission(data, tmp_path / "dest", UploadLimits())
    assert sorted(p.name for p in (tmp_path / "dest").iterdir()) == sorted(random_bot())
    assert bot.files == 3


def test_a_non_empty_dest_is_the_callers_mistake(tmp_path: Path):
    (tmp_path / "dest").mkdir()
    (tmp_path / "dest" / "old").write_text("x")
    with pytest.raises(FileExistsError):
        unpack_submission(make_zip(random_bot()), tmp_path / "dest", UploadLimits())
    assert issubclass(UploadError, ArenaError)


# -- paths ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, needle", [
    ("../evil.py", "'..'"),
    ("random/../../evil.py", "'..'"),
    ("/etc/cron.d/evil", "absolute path"),
    ("//etc/passwd", "absolute path"),
    ("a//b.py", "empty path component"),
    ("..\\..\\evil.py", "backslash"),
    ("lib\\evil.py", "backslash"),
    ("evil\u2215..\u2215x.py", "looks like a slash"),
    ("evil\uff0fx.py", "looks like a slash"),
    ("evil\n.py", "control"),
    ("evil\x1b[31m.py", "control"),
    ("evil\x7f.py", "control"),
    ("\u202eyp.exe", "invisible"),
    ("<script>alert(1)</script>.py", "HTML-special"),
    ("a&b.py", "HTML-special"),
    ('say"hi".py', "HTML-special"),
    ("it's.py", "HTML-special"),
    ("x" * 300 + ".py", "over the 255"),
    ("é" * 200, "over the 255"),  # 200 characters, 400 bytes
    ("a/" * 600 + "x.py", "over the 1,024"),
    ("a/" * 40 + "x.py", "folders deep"),
    ("x" * 60_000, "over the 1,024"),  # a zip name holds at most 65,535 bytes
])
@pytest.mark.parametrize("fmt", ["zip", "tgz"])
def test_a_hostile_name_is_refused_in_one_line(tmp_path: Path, name: str, needle: str, fmt: str):
    if fmt == "zip":
        data = make_zip(random_bot(), extra=[(name, b"print('pwned')\n")])
    else:
        data = make_tar(random_bot(), extra=[entry(name, b"print('pwned')\n")])
    message = refused(tmp_path, data, needle, "archive member")
    assert "\n" not in message and "\x1b" not in message and "\u202e" not in message
    assert message.isascii()  # the name is shown by ascii(): no look-alike reaches a terminal


def test_nul_in_a_zip_name_is_refused_not_cut(tmp_path: Path):
    # zipfile cuts a name at NUL ("evil"); the stored name is what an extractor may see.
    data = make_zip(random_bot(), extra=[("evilXname.py", b"x")])
    data = data.replace(b"evilXname.py", b"evil\0name.py")
    refused(tmp_path, data, "NUL", "evil\\x00name.py")


def test_nul_in_a_tar_pax_name_is_refused(tmp_path: Path):
    info, data = entry("evil.py", b"x")
    info.pax_headers = {"path": "evil\0.py"}
    archive = make_tar(random_bot(), extra=[(info, data)])
    names = [m.name for m in tarfile.open(fileobj=io.BytesIO(archive))]
    if "evil\0.py" not in names:
        pytest.skip("this tarfile cuts a PAX path at NUL itself")
    refused(tmp_path, archive, "NUL")


def test_a_tar_name_that_is_not_utf8_is_refused(tmp_path: Path):
    data = make_tar(random_bot(), extra=[entry("evilXX.py", b"x")], gz=False)
    data = data.replace(b"evilXX.py", b"evil\xff\xfe.py")
    # The header checksum covers the name: recompute it as tar does.
    at = data.index(b"evil\xff\xfe.py") // 512 * 512
    header = bytearray(data[at:at + 512])
    header[148:156] = b" " * 8
    header[148:156] = b"%06o\0 " % sum(header)
    data = data[:at] + bytes(header) + data[at + 512:]
    refused(tmp_path, data, "not UTF-8")


def test_a_regular_file_whose_name_ends_in_a_slash_is_refused(tmp_path: Path):
    refused(tmp_path, make_tar(random_bot(), extra=[entry("lib/", b"x")]), "ends in '/'")


def test_a_path_twice_or_both_a_file_and_a_folder_is_refused(tmp_path: Path):
    refused(tmp_path, make_tar(random_bot(), extra=[entry("random_bot.py", b"evil")]),
            "appears twice")
    refused(tmp_path, make_zip(random_bot(), extra=[("random_bot.py/x", b"")]),
            "both a file and a folder")


# -- links, devices ------------------------------------------------------------------------------
@pytest.mark.parametrize("kind, target, needle", [
    (tarfile.SYMTYPE, "/etc/passwd", "symbolic link"),
    (tarfile.SYMTYPE, "../../../etc/passwd", "symbolic link"),
    (tarfile.SYMTYPE, "bot.toml", "symbolic link"),  # inside: refused too (documented policy)
    (tarfile.LNKTYPE, "/etc/shadow", "hard link"),
    (tarfile.LNKTYPE, "../../etc/shadow", "hard link"),
    (tarfile.CHRTYPE, "", "character device"),
    (tarfile.BLKTYPE, "", "block device"),
    (tarfile.FIFOTYPE, "", "FIFO"),
])
def test_a_link_or_a_device_in_a_tar_is_refused(tmp_path: Path, kind, target, needle):
    info, data = entry("thing", kind=kind, linkname=target)
    if kind == tarfile.CHRTYPE:
        info.devmajor, info.devminor = 1, 3  # /dev/null
    refused(tmp_path, make_tar(random_bot(), extra=[(info, data)]), needle, "'thing'")


@pytest.mark.parametrize("mode, needle", [
    (stat.S_IFLNK | 0o777, "symbolic link"),
    (stat.S_IFCHR | 0o666, "character device"),
    (stat.S_IFIFO | 0o644, "FIFO"),
])
def test_a_link_or_a_device_in_a_zip_is_refused(tmp_path: Path, mode: int, needle: str):
    info = zipfile.ZipInfo("thing")
    info.create_system, info.external_attr = 3, mode << 16
    refused(tmp_path, make_zip(random_bot(), extra=[(info, b"/etc/passwd")]), needle)


# -- sizes, counts, bombs ------------------------------------------------------------------------
def test_a_zip_claiming_10_gb_is_refused_from_its_header(tmp_path: Path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in random_bot().items():
            zf.writestr(name, data)
        zf.writestr("zeros.bin", bytes(MIB))
        zf.filelist[-1].file_size = 10 * GIB  # the central directory claims 10 GB
    assert zipfile.ZipFile(io.BytesIO(buf.getvalue())).getinfo("zeros.bin").file_size == 10 * GIB
    refused(tmp_path, buf.getvalue(), "more than 64 MiB unpacked", "'zeros.bin'")


def test_a_tar_gz_claiming_10_gb_is_refused_from_its_header(tmp_path: Path):
    info = tarfile.TarInfo("zeros.bin")
    info.size = 10 * GIB  # no data follows: refused at the header, nothing else read
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        tf.addfile(info)
    refused(tmp_path, buf.getvalue(), "more than 64 MiB unpacked")


def test_real_zeros_past_the_ratio_are_refused(tmp_path: Path):
    data = make_zip(random_bot(), extra=[("zeros.bin", bytes(20 * MIB))])
    assert len(data) < MIB  # 20 MiB of zeros deflate to about 20 KiB
    refused(tmp_path, data, "over 100 times", "decompression bomb")


def test_a_highly_compressible_gzip_stream_is_refused_while_streaming(tmp_path: Path):
    # 40 MB of a PAX record: bytes of the tar stream that are no member's content, so only the
    # bound on the inflated stream (the ratio) can stop them; refused long before the end.
    info, data = entry("note.txt", b"x")
    info.pax_headers = {"comment": "a" * 40_000_000}
    archive = make_tar(random_bot(), extra=[(info, data)])
    assert len(archive) < 100_000
    refused(tmp_path, archive, "inflates past", "decompression bomb")


def test_a_zip_whose_header_understates_a_member_writes_nothing(tmp_path: Path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in random_bot().items():
            zf.writestr(name, data)
        zf.writestr("z_big.bin", os.urandom(MIB))
        zf.filelist[-1].file_size = 100  # the stream holds 1 MiB: never more than 100 is taken
    refused(tmp_path, buf.getvalue(), "z_big.bin")


def test_a_zip_whose_local_header_names_another_file_writes_nothing(tmp_path: Path):
    data = make_zip(random_bot(), extra=[("zzzz.py", b"x")])
    at = data.index(b"zzzz.py")  # the local header's name; the central directory's comes later
    data = data[:at] + "z\u202e.py".encode() + data[at + 7:]
    message = refused(tmp_path, data, "corrupt")
    assert message.isascii() and "\u202e" not in message


def test_an_archive_or_unpacked_size_over_its_limit_is_refused(tmp_path: Path):
    big = make_zip(random_bot(), extra=[("model.bin", os.urandom(2 * MIB))],
                   method=zipfile.ZIP_STORED)
    refused(tmp_path, big, "over the 1 MiB an upload may be",
            limits=UploadLimits(archive_bytes=MIB))
    refused(tmp_path, big, "more than 1 MiB unpacked", "'model.bin'",
            limits=UploadLimits(unpacked_bytes=MIB))


def test_100000_files_are_refused_at_the_limit(tmp_path: Path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=1) as tf:
        for name, data in random_bot().items():
            info, data = entry(name, data)
            tf.addfile(info, io.BytesIO(data))
        for i in range(100_000):
            tf.addfile(tarfile.TarInfo(f"f{i:06d}"))
    refused(tmp_path, buf.getvalue(), "more than 2,000 files and folders")


# -- the manifest --------------------------------------------------------------------------------
def test_a_manifest_of_10_mb_is_refused(tmp_path: Path):
    manifest = random_bot()["bot.toml"] + b'author = "' + b"x" * 10_000_000 + b'"\n'
    data = make_zip(random_bot() | {"bot.toml": manifest}, method=zipfile.ZIP_STORED)
    refused(tmp_path, data, "'bot.toml'", "over the 64 KiB a manifest may hold")


@pytest.mark.parametrize("manifest, needle", [
    (b'name = "random"\ncommand = ["python3", "x.py"]\ngames = ["no_such_game"]\n',
     "unknown game"),
    (b'name = "<b>bad</b>"\ncommand = ["python3", "x.py"]\n', "bot.toml: name"),
    (b'name = "random"\ncommand = [\n', "invalid TOML"),
    (b'name = "random"\ncommand = ["python3", "x.py"]\nworkdir = "../.."\n', "workdir"),
    (b'name = "random"\ncommand = ["python3", "x.py"]\nworkdir = "nowhere"\n', "workdir"),
])
def test_an_invalid_manifest_is_refused_in_one_line(tmp_path: Path, manifest: bytes, needle: str):
    refused(tmp_path, make_tar(random_bot() | {"bot.toml": manifest}), needle)


def test_an_archive_without_one_manifest_is_refused(tmp_path: Path):
    files = random_bot()
    no_manifest = {k: v for k, v in files.items() if k != "bot.toml"}
    refused(tmp_path, make_zip(no_manifest), "no bot manifest")
    two = no_manifest | {"a.toml": files["bot.toml"], "b.toml": files["bot.toml"]}
    refused(tmp_path, make_zip(two), "several manifests")
    # The manifest deeper than the one top folder is not the bot's.
    refused(tmp_path, make_zip(files, prefix="a/b/"), "no bot manifest")


# -- formats -------------------------------------------------------------------------------------
def test_what_is_not_a_zip_or_a_tar_is_refused(tmp_path: Path):
    import bz2
    refused(tmp_path, b"", "empty")
    refused(tmp_path, b"hello, world" * 100, "not a zip, tar.gz or tar")
    refused(tmp_path, bz2.compress(make_tar(random_bot(), gz=False)), "not a zip, tar.gz or tar")
    good = make_tar(random_bot())
    refused(tmp_path, good[: len(good) // 2], "gzip stream ends early")
    refused(tmp_path, good + good, "data after the end of its gzip stream")
    refused(tmp_path, b"\x1f\x8b" + b"\0" * 100, "corrupt gzip")
    zipped = make_zip(random_bot())
    refused(tmp_path, zipped[:100], "not a valid zip")


# -- property: no member name escapes dest -------------------------------------------------------
_pieces = st.one_of(
    st.sampled_from(["..", ".", "", "/", "\\", "..\\..", "bot.toml", "a", "~", "\0", "\u2215"]),
    st.text(max_size=12),
)
_names = st.lists(_pieces, min_size=1, max_size=6).map("/".join)


@pytest.mark.filterwarnings("ignore:Duplicate name")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names=st.lists(_names, min_size=1, max_size=3), fmt=st.sampled_from(["zip", "tar"]))
def test_no_member_name_ever_writes_outside_dest(names: list[str], fmt: str):
    files = {"bot.toml": random_bot()["bot.toml"], "random_bot.py": b"pass\n"}
    try:
        if fmt == "zip":
            data = make_zip(files, extra=[(n, b"x") for n in names])
        else:
            data = make_tar(files, extra=[entry(n, b"x") for n in names], gz=False)
    except (ValueError, UnicodeEncodeError, IndexError):
        assume(False)  # a name the writer itself cannot store
    with tempfile.TemporaryDirectory() as top:
        dest = Path(top) / "box" / "dest"
        try:
            unpack_submission(data, dest, UploadLimits())
        except UploadError as exc:
            assert "\n" not in str(exc)
            assert not dest.exists()
        for path in Path(top).rglob("*"):
            assert not path.is_symlink()
            assert path in (dest.parent, dest) or path.is_relative_to(dest), path

"""Unpacking uploads: every path trick, link, device and bomb refuses the archive."""

from __future__ import annotations

import io
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

from referee.competition.errors import Refusal, Refused
from referee.competition.unpack import UnpackLimits, unpack

LIMITS = UnpackLimits(max_bytes=1 << 20, max_files=50)


def tar_with(path: Path, *members: tuple[tarfile.TarInfo, bytes | None], mode: str = "w:gz",
             ) -> Path:
    with tarfile.open(path, mode) as archive:
        for info, data in members:
            archive.addfile(info, None if data is None else io.BytesIO(data))
    return path


def file_info(name: str, data: bytes, mode: int = 0o644) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    return info, data


def special(name: str, kind: bytes, target: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info, None


def refusal(archive: Path, target: Path, limits: UnpackLimits = LIMITS) -> Refused:
    with pytest.raises(Refused) as caught:
        unpack(archive, target, limits)
    return caught.value


def test_a_tar_unpacks_its_files_with_plain_modes(tmp_path: Path) -> None:
    archive = tar_with(tmp_path / "a.tgz", file_info("bot.toml", b"name='x'\n"),
                       file_info("bin/run", b"#!/bin/sh\n", 0o4755),
                       file_info("./deep/er/data.txt", b"hello"))
    count = unpack(archive, tmp_path / "out", LIMITS)
    assert count == 3
    assert (tmp_path / "out" / "deep" / "er" / "data.txt").read_bytes() == b"hello"
    assert (tmp_path / "out" / "bin" / "run").stat().st_mode & 0o7777 == 0o755  # no set-uid
    assert (tmp_path / "out" / "bot.toml").stat().st_mode & 0o7777 == 0o644


@pytest.mark.parametrize("name", ["/etc/evil", "../evil", "a/../../evil", "a/b/../../../x",
                                  "a\\..\\evil"])
def test_paths_out_of_the_folder_refuse_the_archive(tmp_path: Path, name: str) -> None:
    archive = tar_with(tmp_path / "a.tar", file_info(name, b"x"), mode="w")
    refused = refusal(archive, tmp_path / "out")
    assert refused.refusal is Refusal.BAD_UPLOAD
    assert not (tmp_path / "evil").exists()
    assert "\n" not in refused.message


@pytest.mark.parametrize(("kind", "word"), [
    (tarfile.SYMTYPE, "link"), (tarfile.LNKTYPE, "link"), (tarfile.CHRTYPE, "device"),
    (tarfile.BLKTYPE, "device"), (tarfile.FIFOTYPE, "FIFO"),
])
def test_links_devices_and_fifos_refuse_the_archive(tmp_path: Path, kind: bytes,
                                                    word: str) -> None:
    archive = tar_with(tmp_path / "a.tgz", file_info("ok.txt", b"x"),
                       special("sneaky", kind, "/etc/passwd"))
    refused = refusal(archive, tmp_path / "out")
    assert refused.refusal is Refusal.BAD_UPLOAD
    assert word in refused.message


def test_a_symlink_then_a_file_through_it_never_writes_outside(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    archive = tar_with(tmp_path / "a.tgz", special("dir", tarfile.SYMTYPE, str(tmp_path)),
                       file_info("dir/outside/pwned", b"x"))
    refusal(archive, tmp_path / "out")
    assert not (tmp_path / "outside" / "pwned").exists()


def test_a_compression_bomb_stops_at_the_size_limit(tmp_path: Path) -> None:
    big = b"\0" * (4 << 20)  # 4 MiB of zeros: a few KiB compressed
    archive = tar_with(tmp_path / "bomb.tgz", file_info("zeros", big))
    assert archive.stat().st_size < 64 << 10
    refused = refusal(archive, tmp_path / "out")
    assert refused.refusal is Refusal.TOO_LARGE


def test_too_many_files_refuse_the_archive(tmp_path: Path) -> None:
    archive = tar_with(tmp_path / "many.tgz",
                       *(file_info(f"f{i}", b"") for i in range(LIMITS.max_files + 1)))
    refused = refusal(archive, tmp_path / "out")
    assert refused.refusal is Refusal.TOO_LARGE
    assert "more than 50 files" in refused.message


def test_a_name_twice_refuses_the_archive(tmp_path: Path) -> None:
    archive = tar_with(tmp_path / "twice.tgz", file_info("a", b"1"), file_info("a", b"2"))
    assert "twice" in refusal(archive, tmp_path / "out").message


def test_a_zip_unpacks_and_its_tricks_are_refused(tmp_path: Path) -> None:
    good = tmp_path / "good.zip"
    with zipfile.ZipFile(good, "w") as z:
        z.writestr("bot.toml", "name = 'x'\n")
        z.writestr("src/main.py", "print(1)\n")
    assert unpack(good, tmp_path / "good", LIMITS) == 2
    assert (tmp_path / "good" / "src" / "main.py").read_text() == "print(1)\n"

    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as z:
        z.writestr("../../evil.txt", "x")
    assert refusal(evil, tmp_path / "evil").refusal is Refusal.BAD_UPLOAD
    assert not (tmp_path / "evil.txt").exists()

    link = tmp_path / "link.zip"
    with zipfile.ZipFile(link, "w") as z:
        info = zipfile.ZipInfo("passwd")
        info.external_attr = (0o120777 << 16)  # a symbolic link
        z.writestr(info, "/etc/passwd")
    assert "link" in refusal(link, tmp_path / "link").message


def test_something_that_is_no_archive_is_refused_in_one_line(tmp_path: Path) -> None:
    junk = tmp_path / "junk.tgz"
    junk.write_bytes(b"this is not an archive at all" * 10)
    refused = refusal(junk, tmp_path / "out")
    assert refused.refusal is Refusal.BAD_UPLOAD
    assert "not a readable tar or zip archive" in refused.message
    assert "\n" not in refused.message


def test_the_archives_file_times_are_kept(tmp_path: Path) -> None:
    """A build's "is it built already?" test compares file times: unpacking keeps them."""
    old, new = file_info("src/main.go", b"package main"), file_info("build/bot", b"\x7fELF")
    old[0].mtime, new[0].mtime = 1_600_000_000, 1_700_000_000
    bad = file_info("odd", b"x")
    bad[0].mtime = -5  # out of range: the time now
    src = tarfile.TarInfo("src")
    src.type, src.mode, src.mtime = tarfile.DIRTYPE, 0o755, 1_500_000_000
    unpack(tar_with(tmp_path / "a.tar.gz", (src, None), old, new, bad), tmp_path / "t",
           LIMITS)
    assert (tmp_path / "t" / "src").stat().st_mtime == 1_500_000_000  # after its file
    assert (tmp_path / "t" / "src" / "main.go").stat().st_mtime == 1_600_000_000
    assert (tmp_path / "t" / "build" / "bot").stat().st_mtime == 1_700_000_000
    assert (tmp_path / "t" / "odd").stat().st_mtime > 1_700_000_000
    zipped = tmp_path / "a.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr(zipfile.ZipInfo("bot.py", (2021, 3, 4, 5, 6, 8)), b"print()")
    unpack(zipped, tmp_path / "z", LIMITS)
    assert time.localtime((tmp_path / "z" / "bot.py").stat().st_mtime)[:6] == (
        2021, 3, 4, 5, 6, 8)


def test_a_tar_that_holds_a_jar_is_unpacked_as_a_tar(tmp_path: Path) -> None:
    """A built Java bot: its tar ends with a jar, a zip whose end record a zip reader
    finds near the end of the tar."""
    jar = io.BytesIO()
    with zipfile.ZipFile(jar, "w") as archive:
        archive.writestr("taki/Bot.class", b"\xca\xfe\xba\xbe")
    tarred = tar_with(tmp_path / "built.tar", file_info("bot", b"#!/bin/sh\n", 0o755),
                      file_info("build/bot.jar", jar.getvalue()), mode="w")
    unpack(tarred, tmp_path / "t", LIMITS)
    assert sorted(p.relative_to(tmp_path / "t").as_posix()
                  for p in (tmp_path / "t").rglob("*")) == ["bot", "build", "build/bot.jar"]


def test_a_bomb_that_announces_its_size_is_refused_before_a_byte_is_written(
        tmp_path: Path) -> None:
    class Zeros(io.RawIOBase):
        left = 64 << 20

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
            n = min(len(buffer), self.left)
            buffer[:n] = bytes(n)
            self.left -= n
            return n

    info = tarfile.TarInfo("zeros")
    info.size = 64 << 20
    with tarfile.open(tmp_path / "bomb.tgz", "w:gz", compresslevel=1) as archive:
        manifest, text = file_info("bot.toml", b"name='x'\n")
        archive.addfile(manifest, io.BytesIO(text))
        archive.addfile(info, io.BufferedReader(Zeros()))
    assert refusal(tmp_path / "bomb.tgz", tmp_path / "out").refusal is Refusal.TOO_LARGE
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["bot.toml"]

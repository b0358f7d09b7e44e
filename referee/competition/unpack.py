"""Unpacking an upload (a tar archive, compressed or not, or a zip archive) without
trusting it.

Only regular files and directories are unpacked, each under the target folder: an
absolute path, a ``..``, a name longer than 255 bytes, a link (symbolic or hard), a
device, a FIFO or an encrypted entry refuses the whole archive, as do more than
``max_files`` entries or more than ``max_bytes`` of content: as the archive announces
it (a bomb that says so is refused before a byte is written) and as it is written (a
bomb that lies stops at the limit). Files are
created new (never through an existing path) with modes 0644 or 0755 (executable when
the archive says so) and keep the file times the archive gives (a build's "is it built
already?" test compares them); nothing else of the archive's metadata (owners, set-uid
bits) is kept.

Blocking (file I/O and decompression): the server calls it in a thread.
"""

from __future__ import annotations

import lzma
import os
import stat
import tarfile
import time
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import IO, Final, TypeGuard

import attrs

from referee.competition.errors import Refusal, Refused

__all__ = ["UnpackLimits", "unpack"]

_CHUNK: Final = 1 << 16
_MAX_PATH: Final = 1024
#: The longest name of one file or folder (in bytes, as most file systems count).
_MAX_NAME: Final = 255
_MAX_DEPTH: Final = 32


@attrs.frozen
class UnpackLimits:
    max_bytes: int
    max_files: int


@attrs.frozen
class _Entry:
    name: str
    is_dir: bool
    executable: bool
    open: object  # a callable returning a binary stream, for files
    #: The file's modification time from the archive (seconds since the epoch), if any.
    mtime: float | None = None
    #: The file's size as the archive announces it (0 for a folder).
    size: int = 0


def _bad(message: str) -> Refused:
    return Refused(Refusal.BAD_UPLOAD, f"unsafe or unreadable archive: {message}")


def safe_parts(name: str) -> tuple[str, ...]:
    """The parts of an archive member's path, checked; Refused for an unsafe one."""
    if "\0" in name or "\\" in name:
        raise _bad(f"{name!r}: a NUL character or a backslash in a path")
    if len(name) > _MAX_PATH:
        raise _bad(f"a path longer than {_MAX_PATH} characters")
    path = PurePosixPath(name)
    if path.is_absolute():
        raise _bad(f"{name!r} is an absolute path")
    parts = tuple(p for p in path.parts if p != ".")
    if ".." in parts:
        raise _bad(f"{name!r} goes up with '..'")
    if any(len(part.encode("utf-8", "surrogateescape")) > _MAX_NAME for part in parts):
        raise _bad(f"a file or folder name longer than {_MAX_NAME} bytes")
    if len(parts) > _MAX_DEPTH:
        raise _bad(f"{name!r} is more than {_MAX_DEPTH} folders deep")
    return parts


def _tar_entries(archive: tarfile.TarFile) -> Iterator[_Entry]:
    for member in archive:
        if member.isdir():
            yield _Entry(member.name, True, False, None, float(member.mtime))
        elif member.isreg():
            yield _Entry(member.name, False, bool(member.mode & 0o111),
                         lambda m=member: archive.extractfile(m), float(member.mtime),
                         member.size)
        else:
            kind = ("a link" if member.issym() or member.islnk() else
                    "a FIFO" if member.isfifo() else "a device" if member.isdev() else
                    "a special entry")
            raise _bad(f"{member.name!r} is {kind} (only files and folders are allowed)")


def _zip_entries(archive: zipfile.ZipFile) -> Iterator[_Entry]:
    for info in archive.infolist():
        mode = info.external_attr >> 16
        if info.flag_bits & 0x1:
            raise _bad(f"{info.filename!r} is encrypted")
        if info.is_dir():
            yield _Entry(info.filename, True, False, None, _zip_time(info))
        elif stat.S_IFMT(mode) not in (0, stat.S_IFREG):  # 0: a zip without Unix modes
            raise _bad(f"{info.filename!r} is a link or a special file"
                       " (only files and folders are allowed)")
        else:
            yield _Entry(info.filename, False, bool(mode & 0o111),
                         lambda i=info: archive.open(i), _zip_time(info), info.file_size)


def _zip_time(info: zipfile.ZipInfo) -> float | None:
    """A zip entry's time (local time, as zip keeps it), or None when it is not one."""
    try:
        return time.mktime((*info.date_time, 0, 0, -1))
    except (OverflowError, ValueError):
        return None


#: The file times kept: from the epoch to 2106 (beyond them a file gets the time now).
_TIMES: Final = (0.0, float(2**32))


def _write(entry: _Entry, target: Path, budget: list[int]) -> None:
    opener = entry.open
    assert callable(opener)
    source: IO[bytes] | None = opener()
    if source is None:
        raise _bad(f"{entry.name!r} cannot be read")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(target, flags, 0o755 if entry.executable else 0o644)
    with os.fdopen(fd, "wb") as out, source:
        while chunk := source.read(_CHUNK):
            budget[0] -= len(chunk)
            if budget[0] < 0:
                raise Refused(Refusal.TOO_LARGE,
                              "the archive unpacks to more than the size limit")
            out.write(chunk)
        out.flush()
        if _kept(entry.mtime):
            os.utime(out.fileno(), (entry.mtime, entry.mtime))


def _kept(mtime: float | None) -> TypeGuard[float]:
    return mtime is not None and _TIMES[0] <= mtime < _TIMES[1]


#: How a zip archive starts: a local file header, or the end record of an empty one.
_ZIP_MAGIC: Final = (b"PK\x03\x04", b"PK\x05\x06")


def _starts_as_zip(path: Path) -> bool:
    """Whether the archive is a zip, by its first bytes. (``zipfile.is_zipfile`` looks
    for a zip's end record near the end of the file, and finds it in a tar whose last
    member is a zip, a Java jar say.)"""
    with path.open("rb") as file:
        return file.read(4) in _ZIP_MAGIC


def unpack(archive_path: Path, target: Path, limits: UnpackLimits) -> int:
    """Unpack the archive into the new folder ``target``; the number of files.
    Refused (BAD_UPLOAD or TOO_LARGE) for an unsafe or oversized archive; the caller
    removes ``target`` then."""
    target.mkdir(mode=0o755)
    try:
        if _starts_as_zip(archive_path):
            with zipfile.ZipFile(archive_path) as zipped:
                return _unpack(_zip_entries(zipped), target, limits)
        with tarfile.open(archive_path, "r:*") as tarred:
            return _unpack(_tar_entries(tarred), target, limits)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError, ValueError, zlib.error,
            lzma.LZMAError, NotImplementedError) as exc:
        if isinstance(exc, OSError) and exc.errno is not None and not isinstance(
                exc, FileExistsError):
            raise  # a problem of the server's disk, not of the archive
        raise _bad(f"not a readable tar or zip archive ({type(exc).__name__}:"
                   f" {str(exc).splitlines()[0] if str(exc) else 'no detail'})") from None


def _unpack(entries: Iterator[_Entry], target: Path, limits: UnpackLimits) -> int:
    budget = [limits.max_bytes]
    announced = 0
    count = 0
    seen: set[tuple[str, ...]] = set()
    folder_times: list[tuple[Path, float]] = []
    for entry in entries:
        count += 1
        if count > limits.max_files:
            raise Refused(Refusal.TOO_LARGE,
                          f"the archive holds more than {limits.max_files} files")
        parts = safe_parts(entry.name)
        announced += entry.size
        if announced > limits.max_bytes:  # a bomb that says so: nothing more is written
            raise Refused(Refusal.TOO_LARGE, "the archive unpacks to more than the size limit")
        if not parts:
            continue
        if parts in seen:
            raise _bad(f"{entry.name!r} appears twice")
        seen.add(parts)
        for depth in range(1, len(parts)):  # folders the archive did not list
            folder = target.joinpath(*parts[:depth])
            if not folder.is_dir():
                if folder.exists() or folder.is_symlink():
                    raise _bad(f"{entry.name!r} is inside a file")
                folder.mkdir(mode=0o755)
        place = target.joinpath(*parts)
        if entry.is_dir:
            if place.is_symlink() or (place.exists() and not place.is_dir()):
                raise _bad(f"{entry.name!r} is a file and a folder")
            place.mkdir(mode=0o755, exist_ok=True)
            if _kept(entry.mtime):
                folder_times.append((place, entry.mtime))
        else:
            _write(entry, place, budget)
    # Last, and the deepest first: writing into a folder changes its time.
    for folder, mtime in sorted(folder_times, key=lambda item: -len(item[0].parts)):
        os.utime(folder, (mtime, mtime), follow_symlinks=False)
    return count

"""The one atomic file write: whole or not at all, and a clear error."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.core.files import FileWriteError, write_atomically


@contextlib.contextmanager
def small_disk(path: Path, size: str = "64k") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``path``: a disk that fills up. Needs root, which
    ``./tasks test`` has in CI (a user without it gets the skip reason)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    path.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                   check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=True)


def test_a_write_replaces_the_file_whole(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "er" / "page.html"
    with pytest.raises(FileWriteError, match="No such file or directory"):
        write_atomically(target, "one")
    write_atomically(target, "one", make_parents=True)
    write_atomically(target, b"two")
    assert target.read_text() == "two"
    assert sorted(p.name for p in target.parent.iterdir()) == ["page.html"]


def test_a_secret_file_never_exists_with_other_permissions(tmp_path: Path) -> None:
    target = tmp_path / "tokens"
    write_atomically(target, "a 1\n", mode=0o600)
    assert target.stat().st_mode & 0o777 == 0o600


def test_a_full_disk_is_one_clear_line_and_leaves_nothing(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk") as disk:
        (disk / "old.json").write_text("kept")
        with pytest.raises(FileWriteError) as caught:
            write_atomically(disk / "big.json", "x" * 200_000, what="replay")
        assert str(caught.value) == (
            f"cannot write the replay {disk / 'big.json'}: No space left on device"
        )
        # No temporary file is left behind, and what was there is untouched.
        assert sorted(p.name for p in disk.iterdir()) == ["old.json"]
        assert (disk / "old.json").read_text() == "kept"

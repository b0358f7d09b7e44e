"""``participants`` and ``submit`` on the command line, without a server."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from served import bot_folder

from referee.cli.main import main
from referee.core import UsageError


def test_participants_add_list_and_disable(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "c.sqlite")
    assert main(["participants", "add", "alice", "--db", db]) == 0
    out = capsys.readouterr().out
    token = out.strip().splitlines()[-1]
    assert re.fullmatch(r"[0-9a-f]{64}", token)
    assert main(["participants", "add", "alice", "--db", db]) == 2
    assert "participant 'alice' exists already" in capsys.readouterr().err
    assert main(["participants", "list", "--db", db]) == 0
    listed = capsys.readouterr().out
    assert listed.startswith("alice\tactive\t")
    assert token not in listed
    assert main(["participants", "disable", "alice", "--db", db]) == 0
    assert "alice disabled" in capsys.readouterr().out
    assert main(["participants", "list", "--db", db]) == 0
    assert "\tdisabled\t" in capsys.readouterr().out
    assert main(["participants", "disable", "nobody", "--db", db]) == 2
    assert "no participant named 'nobody'" in capsys.readouterr().err


def test_participants_enable_gives_back_the_token(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from referee.competition import CompetitionStore

    db = str(tmp_path / "c.sqlite")
    assert main(["participants", "add", "alice", "--db", db]) == 0
    token = capsys.readouterr().out.strip().splitlines()[-1]
    assert main(["participants", "enable", "alice", "--db", db]) == 2
    assert "participant 'alice' is not disabled" in capsys.readouterr().err
    assert main(["participants", "disable", "alice", "--db", db]) == 0
    assert main(["participants", "enable", "alice", "--db", db]) == 0
    assert "participant alice enabled: their token works again" in capsys.readouterr().out
    assert main(["participants", "list", "--db", db]) == 0
    assert capsys.readouterr().out.startswith("alice\tactive\t")
    with CompetitionStore(db) as store:
        assert store.authenticate(token).name == "alice"
    assert main(["participants", "enable", "nobody", "--db", db]) == 2
    assert "no participant named 'nobody'" in capsys.readouterr().err


def test_participants_refuse_another_programs_database(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import sqlite3

    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE mine (x)").connection.commit()
    assert main(["participants", "add", "alice", "--db", str(other)]) == 2
    assert "not a taki-referee results database" in capsys.readouterr().err


def test_submit_refuses_a_folder_it_cannot_send(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    folder = bot_folder(tmp_path / "bot")
    os.symlink("/etc/passwd", folder / "passwd")
    token = "0" * 64
    assert main(["submit", "http://127.0.0.1:9", str(folder), "--token", token]) == 2
    assert "links and special files cannot be uploaded" in capsys.readouterr().err
    (folder / "passwd").unlink()
    (folder / "bot.toml").unlink()
    assert main(["submit", "http://127.0.0.1:9", str(folder), "--token", token]) == 2
    assert "no bot.toml" in capsys.readouterr().err


@pytest.mark.slow
def test_submit_needs_a_token_and_a_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("TAKI_REFEREE_TOKEN", raising=False)
    folder = bot_folder(tmp_path / "bot")
    assert main(["submit", "http://127.0.0.1:9", str(folder)]) == 2
    assert "submit needs your token" in capsys.readouterr().err
    monkeypatch.setenv("TAKI_REFEREE_TOKEN", "0" * 64)
    assert main(["submit", "http://127.0.0.1:9", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "cannot reach http://127.0.0.1:9/api/submissions" in err
    assert "0" * 64 not in err


def test_submit_leaves_out_what_submitignore_names(tmp_path: Path) -> None:
    import io
    import tarfile

    from referee.cli.submit import pack

    folder = tmp_path / "kit"
    (folder / ".venv" / "bin").mkdir(parents=True)
    (folder / ".venv" / "bin" / "python").symlink_to("/usr/bin/python3")
    (folder / "node_modules" / ".bin").mkdir(parents=True)
    (folder / "node_modules" / ".bin" / "tsc").symlink_to("../typescript/bin/tsc")
    (folder / "node_modules" / "lib.js").write_text("//")
    (folder / "bot.toml").write_text('name = "b"\ncommand = "python bot.py"\n')
    (folder / "bot.py").write_text("")
    (folder / ".build-tmp.x1").write_text("")
    (folder / ".submitignore").write_text(
        "# made by the build\n.venv\nnode_modules/.bin/  \n.build-tmp.*\n")
    with tarfile.open(fileobj=io.BytesIO(pack(folder))) as archive:
        names = sorted(archive.getnames())
        times = {m.name: m.mtime for m in archive.getmembers()}
    assert names == [".submitignore", "bot.py", "bot.toml", "node_modules",
                     "node_modules/lib.js"]
    assert times["bot.py"] == pytest.approx((folder / "bot.py").stat().st_mtime, abs=1)
    (folder / ".submitignore").write_text(".venv\n")
    with pytest.raises(UsageError, match=r"name it in \.submitignore"):
        pack(folder)


def test_finals_with_too_few_finalists_are_refused_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``taki-referee finals`` closes submissions, then refuses finals that a table
    cannot be made of (no participant has a bot in the ladder)."""
    (tmp_path / "competition.toml").write_text('[competition]\nname = "few"\n')
    db = str(tmp_path / "c.sqlite")
    assert main(["participants", "add", "alice", "--db", db]) == 0
    capsys.readouterr()
    assert main(["finals", str(tmp_path / "competition.toml"), "--db", db,
                 "--output", str(tmp_path / "finals.html")]) == 2
    out, err = capsys.readouterr()
    assert "submissions are closed; the finalists: none" in out
    assert err.strip().splitlines() == [
        "taki-referee: the finals need at least 2 participants with a bot in the ladder,"
        " found 0"]

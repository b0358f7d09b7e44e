"""The HTTP API in process: uploads that pass, and every way a request is refused. The
uploads are checked by the check's stand-in (tests/served.py), but for the two tests
that say the check is real."""

from __future__ import annotations

from pathlib import Path

import pytest
from served import Factory, Served, bot_folder, targz


@pytest.mark.slow  # the real build and check
async def test_an_upload_is_built_checked_and_enters_as_name_at_1(make_server: Factory
                                                                    ) -> None:
    served: Served = await make_server(real_check=True)
    body = targz(bot_folder(served.tmp / "bot", "rnd"))
    answer = await served.upload("alice", body)
    assert answer.status_code == 202, answer.text
    sub = answer.json()["submission"]
    assert sub["status"] == "queued"
    assert answer.headers["location"] == f"/api/submissions/{sub['id']}"
    done = await served.settled("alice", sub["id"])
    assert done["status"] == "active", done["output"]
    assert done["entrant"] == "rnd@1"
    assert "scenarios passed" in done["output"]
    listed = (await served.client.get("/api/bots")).json()
    assert listed["active"] == [{"bot": "rnd@1", "participant": "alice"}]
    mine = (await served.client.get("/api/submissions", headers=served.auth("alice"))).json()
    assert [s["id"] for s in mine["submissions"]] == [sub["id"]]
    assert (await served.client.get("/api/submissions", headers=served.auth("bob"))).json() == {
        "submissions": []}


async def test_a_form_upload_works_as_the_body_does(served: Served) -> None:
    body = targz(bot_folder(served.tmp / "bot", "formbot"))
    answer = await served.client.post("/api/submissions", headers=served.auth("alice"),
                                      files={"archive": ("bot.tar.gz", body)})
    assert answer.status_code == 202, answer.text
    assert answer.json()["submission"]["bot"] == "formbot"


async def test_missing_and_wrong_tokens_are_refused_with_401(served: Served) -> None:
    body = targz(bot_folder(served.tmp / "bot"))
    for headers in ({}, {"Authorization": "Bearer " + "0" * 64},
                    {"Authorization": "Basic YWxpY2U6eA=="}, {"Authorization": "Bearer x"}):
        answer = await served.client.post("/api/submissions", content=body, headers=headers)
        assert answer.status_code == 401
        assert answer.headers["www-authenticate"] == "Bearer"
        assert set(answer.json()) == {"error"}
        assert "\n" not in answer.json()["error"]
    assert served.state.store.submissions() == []


async def test_another_participants_bot_and_submission_are_refused(served: Served) -> None:
    answer = await served.upload("alice", targz(bot_folder(served.tmp / "a", "shared")))
    assert answer.status_code == 202
    alices = answer.json()["submission"]["id"]
    answer = await served.upload("bob", targz(bot_folder(served.tmp / "b", "shared")))
    assert answer.status_code == 403
    assert answer.json() == {"error": "bot name 'shared' belongs to another participant"}
    answer = await served.client.get(f"/api/submissions/{alices}", headers=served.auth("bob"))
    assert answer.status_code == 403
    answer = await served.client.get("/api/submissions/999", headers=served.auth("bob"))
    assert answer.status_code == 404
    assert answer.json() == {"error": "no submission 999"}


async def test_oversized_uploads_are_refused_with_413(make_server: object) -> None:
    from referee.competition.config import SubmissionSection

    served: Served = await make_server(submissions=SubmissionSection(  # type: ignore[operator]
        max_upload_mb=1, max_unpacked_mb=1))
    big = b"\x1f\x8b" + b"x" * (2 << 20)
    answer = await served.upload("alice", big)
    assert answer.status_code == 413
    assert answer.json() == {"error": "the upload is larger than 1 MiB"}

    async def chunks():  # no Content-Length: counted as it comes
        for _ in range(40):
            yield b"y" * (64 << 10)

    answer = await served.client.post("/api/submissions", content=chunks(),
                                      headers=served.auth("alice"))
    assert answer.status_code == 413
    folder = bot_folder(served.tmp / "bomb", "bomb", extra={"zeros": "\0" * (3 << 20)})
    answer = await served.upload("alice", targz(folder))  # small packed, large unpacked
    assert answer.status_code == 413
    assert "size limit" in answer.json()["error"]
    assert list(served.state.workspace.incoming.iterdir()) == []
    assert list(served.state.workspace.uploads.iterdir()) == []


async def test_path_tricks_and_bad_manifests_are_refused_with_400(served: Served) -> None:
    import io
    import tarfile

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        info = tarfile.TarInfo("../../escape.txt")
        info.size = 1
        archive.addfile(info, io.BytesIO(b"x"))
    answer = await served.upload("alice", buffer.getvalue())
    assert answer.status_code == 400
    assert "goes up with '..'" in answer.json()["error"]
    assert not (served.tmp / "escape.txt").exists()

    folder = bot_folder(served.tmp / "nomanifest")
    (folder / "bot.toml").unlink()
    answer = await served.upload("alice", targz(folder))
    assert answer.status_code == 400
    assert answer.json()["error"].startswith("bot.toml: missing")

    folder = bot_folder(served.tmp / "badname", "bad name")
    answer = await served.upload("alice", targz(folder))
    assert answer.status_code == 400
    assert "not a usable name" in answer.json()["error"]

    answer = await served.upload("alice", b"")
    assert answer.status_code == 400
    assert list(served.state.workspace.uploads.iterdir()) == []


async def test_a_flood_of_submissions_is_refused_with_429(make_server: object) -> None:
    from referee.competition.config import SubmissionSection

    served: Served = await make_server(submissions=SubmissionSection(  # type: ignore[operator]
        per_day=3, max_pending=2))
    assert served.checks is not None
    served.checks.hold()
    body = targz(bot_folder(served.tmp / "bot", "flood"))
    codes = [(await served.upload("alice", body)).status_code for _ in range(6)]
    assert codes[:2] == [202, 202]
    assert set(codes[2:]) == {429}
    answer = await served.upload("alice", body)
    assert "waiting for their check" in answer.json()["error"]
    served.checks.release()
    for sub in served.state.store.submissions("alice"):
        await served.settled("alice", sub.id)
    assert (await served.upload("alice", body)).status_code == 202  # the third of the day
    answer = await served.upload("alice", body)
    assert answer.status_code == 429
    assert answer.json() == {"error": "limit reached: 3 submissions in 24 hours"}
    # bob is not affected
    assert (await served.upload("bob", targz(bot_folder(served.tmp / "b", "bobs")))
            ).status_code == 202


@pytest.mark.slow
async def test_a_bot_that_fails_its_check_is_rejected_with_the_output(make_server: Factory
                                                                      ) -> None:
    served: Served = await make_server(real_check=True)
    folder = bot_folder(served.tmp / "bot", "silent", command="python silent.py",
                        extra={"silent.py": "import sys\nsys.stdin.read()\n"})
    sub = (await served.upload("alice", targz(folder))).json()["submission"]
    done = await served.settled("alice", sub["id"])
    assert done["status"] == "rejected"
    assert done["step"] == "check"
    assert "FAIL handshake" in done["output"]
    assert done["entrant"] is None
    assert served.state.store.active() == []


async def test_unknown_routes_and_methods_answer_json(served: Served) -> None:
    answer = await served.client.get("/api/nothing")
    assert answer.status_code == 404
    assert set(answer.json()) == {"error"}
    answer = await served.client.delete("/api/submissions")
    assert answer.status_code == 405
    assert set(answer.json()) == {"error"}


async def test_organizer_requests_need_the_organizers_token(served: Served) -> None:
    answer = await served.client.get("/api/participants", headers=served.auth("alice"))
    assert answer.status_code == 403
    answer = await served.client.get(
        "/api/participants", headers={"Authorization": f"Bearer {served.organizer}"})
    assert answer.status_code == 200
    assert [p["name"] for p in answer.json()["participants"]] == ["alice", "bob"]
    organizer = {"Authorization": f"Bearer {served.organizer}"}
    answer = await served.client.post("/api/ladder/pause", headers=served.auth("alice"))
    assert answer.status_code == 403
    answer = await served.client.post("/api/ladder/pause", headers=organizer)
    assert answer.json() == {"paused": True}
    assert served.state.store.paused()  # kept for the next start
    answer = await served.client.post("/api/ladder/resume", headers=organizer)
    assert answer.json() == {"paused": False}
    assert not served.state.store.paused()


async def test_a_disabled_participant_is_refused_with_403(served: Served) -> None:
    served.state.store.disable_participant("bob")
    answer = await served.upload("bob", targz(bot_folder(served.tmp / "bot")))
    assert answer.status_code == 403
    assert answer.json() == {"error": "participant bob is disabled"}


def test_nothing_here_puts_a_token_in_a_url() -> None:
    from referee.server.app import build_app

    source = Path(build_app.__code__.co_filename).read_text()
    assert "query_params" not in source


async def test_a_retried_upload_returns_the_first_submission_and_is_not_counted(
        make_server: object) -> None:
    from referee.competition.config import SubmissionSection

    served: Served = await make_server(submissions=SubmissionSection(  # type: ignore[operator]
        per_day=1))
    body = targz(bot_folder(served.tmp / "bot", "again"))
    key = {"Idempotency-Key": "k" * 32}
    keyed = {**served.auth("alice"), **key}
    first = await served.client.post("/api/submissions", content=body, headers=keyed)
    assert first.status_code == 202, first.text
    sub = first.json()["submission"]
    for _ in range(2):  # the reply was lost: the same upload, the same key
        again = await served.client.post("/api/submissions", content=body, headers=keyed)
        assert again.status_code == 200, again.text
        assert again.json()["submission"]["id"] == sub["id"]
        assert again.headers["location"] == f"/api/submissions/{sub['id']}"
    assert [s.id for s in served.state.store.submissions("alice")] == [sub["id"]]
    assert len(list(served.state.workspace.uploads.iterdir())) == 1
    assert list(served.state.workspace.incoming.iterdir()) == []
    # a key is the participant's own: bob's upload with it is bob's first
    bobs = await served.client.post("/api/submissions", headers={**served.auth("bob"), **key},
                                    content=targz(bot_folder(served.tmp / "b", "bobs")))
    assert bobs.status_code == 202
    assert bobs.json()["submission"]["id"] != sub["id"]
    # another upload (another key) counts: one a day
    other = await served.client.post("/api/submissions", content=body, headers={
        **served.auth("alice"), "Idempotency-Key": "m" * 32})
    assert other.status_code == 429
    assert other.json() == {"error": "limit reached: 1 submissions in 24 hours"}
    done = await served.settled("alice", sub["id"])
    assert done["status"] == "active", done["output"]
    again = await served.client.post("/api/submissions", content=body, headers=keyed)
    assert again.status_code == 200
    assert again.json()["submission"]["status"] == "active"
    bad = await served.client.post("/api/submissions", content=body, headers={
        **served.auth("alice"), "Idempotency-Key": "short"})
    assert bad.status_code == 400
    assert "Idempotency-Key" in bad.json()["error"]


async def test_an_oversized_chunked_form_gets_413_and_is_not_read_to_its_end(
        make_server: object) -> None:
    from referee.competition.config import SubmissionSection

    served: Served = await make_server(submissions=SubmissionSection(  # type: ignore[operator]
        max_upload_mb=1, max_unpacked_mb=1))
    boundary = "taki-boundary"
    sent = 0

    async def form():  # multipart/form-data without Content-Length, far over the limit
        nonlocal sent
        yield (f"--{boundary}\r\nContent-Disposition: form-data; name=\"archive\";"
               f" filename=\"bot.tar.gz\"\r\nContent-Type: application/gzip\r\n\r\n").encode()
        for _ in range(1024):  # 64 MiB
            sent += 1
            yield b"z" * (64 << 10)
        yield f"\r\n--{boundary}--\r\n".encode()

    answer = await served.client.post(
        "/api/submissions", content=form(),
        headers={**served.auth("alice"),
                 "Content-Type": f"multipart/form-data; boundary={boundary}"})
    assert answer.status_code == 413, answer.text
    assert answer.json() == {"error": "the upload is larger than 1 MiB"}
    assert sent <= 20  # reading stopped at the limit
    assert list(served.state.workspace.incoming.iterdir()) == []
    assert served.state.store.submissions() == []

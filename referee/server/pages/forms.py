"""Reading the pages' forms: bounded, and refused without the right CSRF token."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Final

import trio
from starlette.datastructures import FormData, UploadFile
from starlette.requests import Request

from referee.server.pages.sessions import csrf_matches
from referee.server.pages.site import PageError

__all__ = ["ARCHIVE_FIELD", "CSRF_FIELD", "checked_form", "save_archive"]

CSRF_FIELD: Final = "csrf"
#: The upload form's file field.
ARCHIVE_FIELD: Final = "archive"
#: The largest form without a file.
FORM_BYTES: Final = 16 * 1024
_CHUNK: Final = 1 << 16


async def checked_form(request: Request, csrf: str, *, upload_limit: int = 0) -> FormData:
    """The request's form, once its CSRF field matches ``csrf``; a form with a file only
    when ``upload_limit`` (bytes) allows one."""
    declared = request.headers.get("content-length", "")
    limit = upload_limit + FORM_BYTES if upload_limit else FORM_BYTES
    if not declared.isdigit():
        raise PageError(411, "a form must say its length")
    if int(declared) > limit:
        raise PageError(413, f"the form is larger than {limit >> 20 or 1} MiB"
                        if upload_limit else "the form is too large")
    form = await request.form(max_files=1 if upload_limit else 0, max_fields=8,
                              max_part_size=max(upload_limit, FORM_BYTES))
    if not csrf_matches(csrf, form.get(CSRF_FIELD)):
        await form.close()
        raise PageError(403, "the form is out of date or from another site: reload the page"
                        " and send it again")
    return form


async def save_archive(form: FormData, incoming: Path, limit: int) -> Path:
    """The form's archive, written to a new file of ``incoming``."""
    part = form.get(ARCHIVE_FIELD)
    if not isinstance(part, UploadFile) or not part.filename:
        raise PageError(400, "choose the archive of your bot (.tar.gz, .tgz or .zip)")
    path = trio.Path(incoming / f"{secrets.token_hex(16)}.upload")
    received = 0
    try:
        async with await trio.open_file(path, "xb") as out:
            while chunk := await part.read(_CHUNK):
                received += len(chunk)
                if received > limit:
                    raise PageError(413, f"the upload is larger than {limit >> 20} MiB")
                await out.write(chunk)
        if received == 0:
            raise PageError(400, "the upload is empty")
    except BaseException:
        await path.unlink(missing_ok=True)
        raise
    return Path(path)

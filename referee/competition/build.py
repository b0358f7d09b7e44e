"""A submission's ``build`` step, in the sandbox.

The upload's folder is bound read-only; the build copies it into the sandbox's private
``/tmp`` (a tmpfs of ``build_disk_mb``: a build that fills it fills only its own
memory-backed disk, never the host's), runs the participant's command there with its
output on stderr, and writes the result as a tar stream on stdout, which the server
unpacks under the same limits as an upload. The build has no network, its own pid
namespace, a memory and process limit (cgroups where the host has them) and a time
limit, after which it is killed with everything it started. It runs at a lower CPU
priority than the ladder's games, whose bots are on the clock, so the time limit is of
its own time (``referee.shell.owntime``): the time the machine kept it off the CPU does
not count, up to :data:`BUILD_WALL_CAP` times the limit of wall time.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Final

import attrs
import trio

from referee.competition.config import SandboxSection
from referee.core import BotCommand, ResourceLimits, Sandbox
from referee.shell import OwnTime, keep_own_time, open_bot_process

__all__ = ["BUILD_FOLDER", "BuildResult", "run_build"]

#: Where the build runs, inside the sandbox.
BUILD_FOLDER: Final = "/tmp/build"
#: A build, and the bots of a check, yield the CPUs to the ladder's games, whose bots are
#: on the clock: they run this many nice levels below the server (everything they
#: start included; ResourceLimits.niceness).
NICENESS: Final = 10
#: A build's wall time is capped at this many times its limit (``build_seconds``).
BUILD_WALL_CAP: Final = 10
#: The build's own lines kept for the participant.
OUTPUT_LINES: Final = 60

#: Copies the upload in with its file times (a build's "is it built already?" test
#: compares them), runs the build (``$1``) with its output on stderr, then writes what
#: the build folder holds as a tar stream on stdout (times included: unpack keeps them).
_SCRIPT: Final = f"""set -e
mkdir {BUILD_FOLDER}
cp -R --preserve=mode,timestamps ./. {BUILD_FOLDER}/
cd {BUILD_FOLDER}
HOME={BUILD_FOLDER}
export HOME
/bin/sh -c "${{1#:}}" 1>&2 || {{
    code=$?; echo "build: exit status $code" >&2; exit $code; }}
exec tar --create --file=- --format=gnu .
"""


@attrs.frozen
class BuildResult:
    ok: bool
    #: The build's output (its last lines) and, when it failed, why.
    output: str


def build_command(source: Path, build: str, sandbox: SandboxSection) -> BotCommand:
    """The sandboxed command that builds the upload in ``source``."""
    limits = ResourceLimits(memory_mb=sandbox.build_memory_mb, pids=sandbox.build_pids,
                            file_size_mb=sandbox.build_disk_mb, niceness=NICENESS)
    # ":" keeps the build's words from being read as a file of the upload to bind.
    return BotCommand(("/bin/sh", "-c", _SCRIPT, "build", f":{build}"), cwd=source,
                      limits=limits, sandbox=Sandbox(tmp_mb=sandbox.build_disk_mb))


async def run_build(source: Path, build: str, sandbox: SandboxSection, tar_path: Path,
                    *, max_bytes: int) -> BuildResult:
    """Run ``build`` on the upload in ``source``; its result goes to ``tar_path``."""
    command = build_command(source, build, sandbox)
    written = 0
    too_large = False
    code: int | None = None
    own = OwnTime(sandbox.build_seconds, sandbox.build_seconds * BUILD_WALL_CAP)
    async with open_bot_process(command) as process, trio.open_nursery() as nursery:
        await process.close_input()
        with trio.CancelScope() as timer:
            nursery.start_soon(functools.partial(keep_own_time, process, own, timer,
                                                 niceness=NICENESS))
            async with await trio.open_file(tar_path, "wb") as out:
                while chunk := await process.receive_some(1 << 16, deadline=math.inf):
                    written += len(chunk)
                    if written > max_bytes:
                        too_large = True
                        break
                    await out.write(chunk)
            if not too_large:
                code = await process.wait()
        nursery.cancel_scope.cancel()
        tail = process.stderr_tail(OUTPUT_LINES)
        ended = trio.current_time()
    if timer.cancelled_caught:
        return BuildResult(False, _join(tail, f"build: stopped after {own.describe(ended)}"
                                        " (the time limit of a build)"))
    if too_large:
        return BuildResult(False, _join(tail, "build: the built folder is larger than"
                                        f" {max_bytes >> 20} MiB"))
    if code != 0:
        return BuildResult(False, _join(tail, f"build: failed (exit status {code}; the"
                                        f" build has {sandbox.build_disk_mb} MiB of disk,"
                                        f" {sandbox.build_memory_mb} MiB of memory and"
                                        " no network)"))
    return BuildResult(True, tail)


def _join(*parts: str) -> str:
    return "\n".join(p for p in parts if p)


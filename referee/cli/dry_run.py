"""``taki-referee submit --dry-run PATH``: what a competition server would make of an
upload, found by the server's own steps on this machine.

The folder is packed as ``submit`` packs it, and the archive then goes through the
server's pipeline (:mod:`referee.competition.pipeline`) in a throwaway competition: the
same unpacking and its limits, the same manifest, the same build in the sandbox with
the build's limits, and the same check, in the sandbox, under the competition's time
control and bot limits (the defaults of ``serve``, or those of ``--config``). It prints
what ``submit`` would print for that submission, and the build's and check's output.
"""

from __future__ import annotations

import argparse
import functools
import tempfile
from pathlib import Path

import trio

from referee.cli.submit import EXIT_REFUSED, upload_body
from referee.cli.toolchains import describe_toolchains, sandbox_toolchains
from referee.competition import (
    CompetitionConfig,
    CompetitionStore,
    Refused,
    Submission,
    Workspace,
    accept_upload,
    load_competition,
)
from referee.competition import process as process_submission
from referee.shell import require_sandbox

__all__ = ["dry_run_command", "run_dry_run"]

#: The participant of the throwaway competition.
PARTICIPANT = "dry-run"


def _config(path: Path | None, root: Path) -> CompetitionConfig:
    if path is not None:
        return load_competition(path)
    return CompetitionConfig(path=root / "competition.toml")


def _setup(root: Path, archive: Path, body: bytes, config: CompetitionConfig,
           ) -> tuple[CompetitionStore, Workspace, Submission]:
    """The throwaway competition, its one participant, and the upload accepted (Refused
    as the server refuses it). Blocking."""
    workspace = Workspace(root / "files")
    workspace.create()
    store = CompetitionStore(root / "competition.sqlite")
    store.add_participant(PARTICIPANT)
    archive.write_bytes(body)
    try:
        accepted = accept_upload(store, config, workspace, PARTICIPANT, archive)
    except BaseException:
        store.close()
        raise
    return store, workspace, accepted.submission


async def run_dry_run(path: Path, config_path: Path | None) -> int:
    body = upload_body(path)
    require_sandbox()  # the build and the check run in it, as on the server
    with tempfile.TemporaryDirectory(prefix="taki-dry-run-") as tmp:
        root = Path(tmp)
        root.chmod(0o755)  # the sandbox's user reads the upload's folder below
        config = _config(config_path, root)
        print(f"dry run: {path} ({len(body)} bytes), under {_describe(config)}", flush=True)
        print(describe_toolchains(await sandbox_toolchains()), flush=True)
        try:
            store, workspace, sub = await trio.to_thread.run_sync(
                _setup, root, root / "upload", body, config)
        except Refused as exc:
            print(f"the server would refuse the upload: {exc}")
            return EXIT_REFUSED
        try:
            print(f"{sub.bot}: {'building and checking' if sub.build else 'checking'}"
                  " in the sandbox...", flush=True)
            sub = await process_submission(sub, store, config, workspace)
        finally:
            await trio.to_thread.run_sync(store.close)
    return _verdict(sub)


def _describe(config: CompetitionConfig) -> str:
    box = config.sandbox
    return (f"the time control {config.time.describe()}, a build of at most"
            f" {box.build_seconds} s, {box.build_memory_mb} MiB and no network, bots of"
            f" {box.memory_mb} MiB")


def _verdict(sub: Submission) -> int:
    output = sub.output.strip()
    if sub.step is None:
        print(f"the server would accept it: {sub.bot} would play in the ladder")
        if output:
            print(output)
        return 0
    print(f"the server would reject it at the step {sub.step}:")
    print(output or "(no output)")
    return EXIT_REFUSED


def dry_run_command(args: argparse.Namespace) -> int:
    """``submit --dry-run PATH``, or ``submit --dry-run URL PATH`` (the URL unused: the
    same command line as the upload's, tried here)."""
    path = args.path if args.path is not None else Path(args.url)
    return trio.run(functools.partial(run_dry_run, path, args.config))

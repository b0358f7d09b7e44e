"""``taki-referee kit LANG DIR``: copy a starter kit out of ``starter_kits/`` for a
participant, without anything a kit builds on first use."""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path

from referee.core import UsageError

__all__ = ["KITS_DIR", "copy_kit", "kit_command", "kit_names"]

#: The starter kits: one directory per language, beside the referee package.
KITS_DIR = Path(__file__).resolve().parents[2] / "starter_kits"

#: What a kit's ``./bot`` and its tools make: never copied out.
BUILT = ("build", "dist", "node_modules", ".venv", "target", ".gocache", ".build.lock",
         ".build-tmp.*", "Cargo.lock", "logs", "__pycache__")


def kit_names() -> list[str]:
    """The languages there is a kit for (the directories of ``starter_kits/``)."""
    if not KITS_DIR.is_dir():
        raise UsageError(f"no starter kits in {KITS_DIR}: they come with the referee's"
                         " source tree (starter_kits/), which this installation lacks")
    return sorted(p.name for p in KITS_DIR.iterdir() if (p / "bot").is_file())


def copy_kit(language: str, target: Path) -> Path:
    """Copy the kit of ``language`` to ``target`` (a new or empty directory)."""
    names = kit_names()
    if language not in names:
        raise UsageError(f"no starter kit for {language!r} (there are: {', '.join(names)})")
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise UsageError(f"{target}: exists and is not an empty directory;"
                         " give a new directory for the kit")
    shutil.copytree(KITS_DIR / language, target, ignore=shutil.ignore_patterns(*BUILT),
                    dirs_exist_ok=True)
    return target


def kit_command(args: argparse.Namespace) -> int:
    if args.list or args.language is None:
        for name in kit_names():
            print(name)
        return 0
    if args.directory is None:
        raise UsageError("kit needs a DIR to copy the kit to (taki-referee kit LANG DIR)")
    target = copy_kit(args.language, args.directory)
    bot = os.path.join(args.directory, "bot")  # as given: "./bot" stays a path
    print(f"the {args.language} starter kit is in {target}; next:\n"
          f"  {bot} --build                   # build it (its README says what it needs)\n"
          f'  taki-referee check "{bot}"      # every situation of the protocol\n'
          f'  taki-referee match "{bot}" "python sample_bots/random_bot.py"'
          "   # games against the random bot")
    return 0

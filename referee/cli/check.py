"""``taki-referee check``: the compliance run of one or more bots (exit 0 when every
scenario passes, 1 otherwise)."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from taki_protocol import Decide, Message, React

from referee.cli.match import require_directories
from referee.cli.output import print_json
from referee.cli.sandboxing import sandboxed_bots
from referee.compliance import (
    BotReport,
    CheckSettings,
    ScenarioOutcome,
    check_bot,
    scenario_catalogue,
)
from referee.config import parse_bot_arg, unique_names
from referee.core import BotSpec, TimeControl, UsageError, check_slack

EXIT_FAILED = 1


def describe_request(message: Message) -> str:
    """A request in one line: its type, id, phase, hand and legal actions."""
    if not isinstance(message, Decide | React):
        return message.TYPE
    view = message.view
    legal = ", ".join(" ".join(str(v) for v in entry.values()) for entry in message.legal)
    return (f"{message.TYPE} id {message.id}: phase {view['phase']}, hand"
            f" [{', '.join(view['hand'])}], legal [{legal}]")


def failure_lines(outcome: ScenarioOutcome) -> list[str]:
    """The problem, the request that was sent, what the bot did, its last stderr lines
    and its log file."""
    lines = [outcome.problem or ""]
    if outcome.request is not None:
        lines.append(f"request: {describe_request(outcome.request)}")
    did = outcome.what_the_bot_did()
    if did:
        lines.append(f"the bot: {did}")
    stderr = outcome.stderr.splitlines()
    if stderr:
        lines.append("its last stderr lines:")
        lines += [f"  | {line}" for line in stderr]
    elif outcome.log is not None:
        lines.append("its stderr: nothing")
    if outcome.log is not None:
        lines.append(f"its log: {outcome.log}")
    return lines


def verdict(report: BotReport) -> str:
    failed = len(report.failures)
    passed = len(report.outcomes) - failed
    return (f"{report.bot}: {passed} of {len(report.outcomes)} scenarios passed"
            f" in {report.seconds:.1f} s" + (f", {failed} failed" if failed else ""))


def print_table(console: Console, report: BotReport) -> None:
    table = Table(title=f"{report.bot} ({report.command})", title_justify="left")
    for column in ("scenario", "group", "result", "what the bot faced, or what went wrong"):
        table.add_column(column)
    for outcome in report.outcomes:
        if outcome.passed:
            table.add_row(outcome.name, outcome.group, "[green]pass[/]", escape(outcome.summary))
        else:
            table.add_row(outcome.name, outcome.group, "[bold red]FAIL[/]",
                          escape("\n".join(failure_lines(outcome))))
    console.print(table)
    style = "green" if report.passed else "bold red"
    console.print(f"[{style}]{escape(verdict(report))}[/]", highlight=False)


def print_lines(report: BotReport) -> None:
    print(f"bot {report.bot} ({report.command})")
    for outcome in report.outcomes:
        if outcome.passed:
            print(f"pass {outcome.name}: {outcome.summary}")
            continue
        lines = failure_lines(outcome)
        print(f"FAIL {outcome.name}: {lines[0]}")
        for line in lines[1:]:
            print(f"     {line}")
    print(verdict(report))


def _scenarios(args: argparse.Namespace) -> frozenset[str]:
    known = [name for name, _, _ in scenario_catalogue()]
    for name in args.scenario:
        if name not in known:
            raise UsageError(f"--scenario {name}: no such scenario (known: {', '.join(known)})")
    return frozenset(args.scenario)


async def run_check_command(args: argparse.Namespace, time: TimeControl) -> int:
    if args.list:
        print_scenarios()
        return 0
    if not args.bots:
        raise UsageError("check needs at least one BOT (or --list)")
    bots: list[BotSpec] = unique_names([parse_bot_arg(b, i) for i, b in enumerate(args.bots)])
    for bot in bots:
        if bot.remote:
            raise UsageError(f"bot {bot.name}: check starts the bot itself; give its command")
    bots = sandboxed_bots(args, bots)
    require_directories(("--log-dir", args.log_dir))
    try:
        slack = check_slack(args.slack)
    except ValueError as exc:
        raise UsageError(f"--slack: {exc}") from None
    settings = CheckSettings(time=time, log_dir=args.log_dir, only=_scenarios(args),
                             slack=slack)
    console = Console()
    reports: list[BotReport] = []
    for bot in bots:
        report = await check_bot(bot, settings)
        reports.append(report)
        if args.json:
            continue
        if console.is_terminal:
            print_table(console, report)
        else:
            print_lines(report)
    if args.json:
        print_json({"passed": all(r.passed for r in reports),
                    "bots": [r.to_json() for r in reports]})
    return 0 if all(r.passed for r in reports) else EXIT_FAILED


def print_scenarios() -> None:
    """``--list``: every scenario's name, group and what it puts the bot through."""
    for name, group, summary in scenario_catalogue():
        print(f"{name:28} {group:10} {summary}")

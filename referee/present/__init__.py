"""What people read: the replay viewer page and the league report. May import
referee.core, referee.rules, referee.ratings and the league store, never the match stack."""

from .render import page_targets, render_html, render_replay
from .report import render_linked_replays, write_report
from .report_tables import locate_replay

__all__ = [
    "locate_replay",
    "page_targets",
    "render_html",
    "render_linked_replays",
    "render_replay",
    "write_report",
]

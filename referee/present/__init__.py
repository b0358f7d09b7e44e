"""What people read: the replay viewer page and the league report. May import
referee.core, referee.rules, referee.ratings, the league store and a competition's season
aggregates, never the match stack."""

from .bot_pages import page_name
from .render import page_targets, render_html, render_replay
from .report import bots_folder, load_report, render_linked_replays, write_report
from .report_tables import locate_replay

__all__ = [
    "bots_folder",
    "load_report",
    "locate_replay",
    "page_name",
    "page_targets",
    "render_html",
    "render_linked_replays",
    "render_replay",
    "write_report",
]

"""One-line summaries of a forfeit's detail, shared by the terminal and the pages."""

from __future__ import annotations

from referee.core.faults import SHORT_DETAIL, short_detail


def test_a_short_single_line_is_kept_whole() -> None:
    assert short_detail("  no answer within 1005 ms \n") == "no answer within 1005 ms"
    assert short_detail("") == ""


def test_more_lines_or_a_long_line_are_cut_with_an_ellipsis() -> None:
    assert short_detail("exited with code 1\nTraceback ...\nKeyError: 'x'") == (
        "exited with code 1\u2026"
    )
    long = "x" * (SHORT_DETAIL + 20)
    assert short_detail(long) == "x" * SHORT_DETAIL + "\u2026"

"""The tables of a results database (``referee.league.store``), layout by layout."""

from __future__ import annotations

#: The tables (and their columns) of a results database of the first layout, which
#: set no mark: how one is recognised.
TABLES = {
    "meta": ("key", "value"),
    "bots": ("name", "command"),
    "games": ("game_id", "block", "seed", "actions", "reason", "replay", "finished_at"),
    "seats": ("game_id", "seat", "bot", "place", "points", "forfeit_reason", "forfeit_detail"),
}

#: The tables of layout 1.
FIRST_LAYOUT = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS bots (
    name TEXT PRIMARY KEY,
    command TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    game_id TEXT PRIMARY KEY,
    block TEXT NOT NULL,
    seed INTEGER NOT NULL,
    actions INTEGER NOT NULL,
    reason TEXT,
    replay TEXT,
    finished_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE TABLE IF NOT EXISTS seats (
    game_id TEXT NOT NULL REFERENCES games(game_id),
    seat INTEGER NOT NULL,
    bot TEXT NOT NULL,
    place INTEGER NOT NULL,
    points INTEGER NOT NULL,
    forfeit_reason TEXT,
    forfeit_detail TEXT,
    PRIMARY KEY (game_id, seat)
);
CREATE INDEX IF NOT EXISTS seats_by_bot ON seats(bot);
"""
#: Every table of the current layout.
SCHEMA = FIRST_LAYOUT + """
CREATE TABLE IF NOT EXISTS seat_times (
    game_id TEXT NOT NULL,
    seat INTEGER NOT NULL,
    times_ms TEXT NOT NULL,
    near_misses INTEGER NOT NULL,
    PRIMARY KEY (game_id, seat),
    FOREIGN KEY (game_id, seat) REFERENCES seats(game_id, seat)
);
CREATE TABLE IF NOT EXISTS meetings (
    name TEXT PRIMARY KEY,
    bots TEXT NOT NULL,
    first_deal INTEGER NOT NULL,
    deals INTEGER NOT NULL,
    finished INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS voided_games (
    game_id TEXT PRIMARY KEY,
    block TEXT NOT NULL,
    seed INTEGER NOT NULL,
    finished_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE TABLE IF NOT EXISTS infra_events (
    game_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    bot TEXT NOT NULL,
    blame TEXT NOT NULL,
    detail TEXT NOT NULL,
    figures TEXT NOT NULL,
    PRIMARY KEY (game_id, attempt)
);
"""

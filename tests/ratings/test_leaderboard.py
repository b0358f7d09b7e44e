"""Tests for referee.ratings.leaderboard's choice of rating model (the leaderboard itself is
tested with the fits, in test_elo.py and test_plackett_luce.py)."""

from __future__ import annotations

import pytest

from referee.ratings.elo import RatedGame, fit_elo
from referee.ratings.leaderboard import MULTIPLAYER_MODEL, RATING_MODELS, default_model, rate
from referee.ratings.plackett_luce import fit_plackett_luce

HEADS_UP = [RatedGame({"a": 1, "b": 2}), RatedGame({"b": 1, "c": 2}),
            RatedGame({"c": 1, "a": 2}), RatedGame({"a": 1, "c": 1})] * 3
TABLES = [RatedGame({"a": 1, "b": 2, "c": 3}), RatedGame({"c": 1, "a": 2, "b": 3}),
          RatedGame({"b": 1, "a": 2, "c": 2})] * 3


def test_the_default_model_follows_the_table_size() -> None:
    assert RATING_MODELS == ("bradley-terry", "plackett-luce")
    assert default_model(HEADS_UP) == "bradley-terry"
    assert rate(HEADS_UP, resamples=0).model == "bradley-terry"
    mixed = [*HEADS_UP, *TABLES]
    assert default_model(mixed) == MULTIPLAYER_MODEL
    assert rate(mixed, resamples=0).model == MULTIPLAYER_MODEL


def test_rate_fits_the_model_it_is_given() -> None:
    fits = {"bradley-terry": fit_elo, "plackett-luce": fit_plackett_luce}
    assert fit_elo(TABLES) != pytest.approx(fit_plackett_luce(TABLES), abs=1.0)
    for model, fit in fits.items():
        report = rate(TABLES, resamples=10, model=model)
        assert report.model == model
        assert {b.name: b.elo for b in report.bots} == pytest.approx(fit(TABLES))
    with pytest.raises(ValueError, match="unknown rating model 'elo'"):
        rate(TABLES, model="elo")  # type: ignore[arg-type]

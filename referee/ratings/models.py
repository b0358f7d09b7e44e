"""The names of the rating models (``referee.ratings.leaderboard`` fits them). Standard
library only: the command line's parser lists them without loading the fits."""

from __future__ import annotations

from typing import Literal, TypeAlias, get_args

RatingModel: TypeAlias = Literal["bradley-terry", "plackett-luce"]
#: The names of the rating models, as the command line and the league file spell them.
RATING_MODELS: tuple[RatingModel, ...] = get_args(RatingModel)
#: The default model of a league with a table of 3 or more players: the one that
#: recovers known strengths better in ``benchmarks/ratings.py`` (docs/ratings.md, "Which
#: model": Plackett-Luce gains a little when the rankings follow it and loses more when
#: they do not).
MULTIPLAYER_MODEL: RatingModel = "bradley-terry"


def model_named(name: str | None) -> RatingModel | None:
    """The model ``name`` names (as a league's results database keeps it), else None:
    the default of the table sizes."""
    for model in RATING_MODELS:
        if name == model:
            return model
    return None

"""Leagues: the runner, the result store, the bot check, the SPRT runner and the
executors (local, Dask). May import referee.match, referee.config and referee.ratings."""

"""One game between bots, and a unit of games: the referee loop that asks, checks and
applies. May import referee.shell, referee.core and referee.rules."""

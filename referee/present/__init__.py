"""What people read: the replay viewer page and the league report. May import
referee.core, referee.rules, referee.ratings and the league store, never the match stack."""

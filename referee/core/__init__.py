"""Pure values shared by every layer above the rules: the clock, the schedule, fault
types and the replay format. No I/O. May import referee.rules and taki_protocol."""

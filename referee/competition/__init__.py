"""Hosting a competition: participants, their submissions (unpacked, built and checked
in the sandbox), the continuous ladder among the bots that passed, its matchmaking and
the finals."""

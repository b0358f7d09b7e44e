"""Hosting a competition: participants, their submissions (unpacked, built and checked
in the sandbox), and the continuous ladder among the bots that passed."""

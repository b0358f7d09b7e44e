"""Exits with status 3 before reading anything."""

import sys

sys.stderr.write("exit_at_start: not today\n")
sys.exit(3)

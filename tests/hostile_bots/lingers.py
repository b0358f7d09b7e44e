"""Plays like a random bot but never exits by itself: after shutdown, error or the end
of its input it sleeps until it is killed.

Usage: lingers.py
"""

import time

from _common import play

play("lingers")
while True:
    time.sleep(3600)

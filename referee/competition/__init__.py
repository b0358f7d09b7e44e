"""Hosting a competition: a continuous ladder, its matchmaking and the finals."""

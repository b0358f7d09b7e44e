"""A referee for Super Taki bots: pure rules, a sans-I/O protocol and a trio shell."""

__version__ = "0.1.0"

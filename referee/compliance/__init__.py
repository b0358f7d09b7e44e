"""``taki-referee check``: scripted scenarios that put a bot through every situation of
the protocol, through the match runner's own referee and connection."""

"""The taki-referee command line: one module per command. Imported by nothing."""

__all__: list[str] = []

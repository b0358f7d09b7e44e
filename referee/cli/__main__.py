"""``python -m referee.cli``: the same as the ``taki-referee`` command."""

from referee.cli.main import main

raise SystemExit(main())

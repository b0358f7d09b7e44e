"""The competition's HTTP server: the ASGI application and ``serve``, which runs it with
the submission pipeline and the ladder in one trio run."""

from typing import TYPE_CHECKING

from referee import lazy_face

if TYPE_CHECKING:
    from .serve import require_sandbox, serve_competition
    from .state import ServerState
else:
    __getattr__ = lazy_face(__name__, {
        "serve": ("require_sandbox", "serve_competition"),
        "state": ("ServerState",),
    })

__all__ = [
    "ServerState",
    "require_sandbox",
    "serve_competition",
]

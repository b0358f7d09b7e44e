"""The competition's HTTP server: the ASGI application and ``serve``, which runs it with
the submission pipeline and the ladder in one trio run."""

from typing import TYPE_CHECKING

from referee import lazy_face

if TYPE_CHECKING:
    from .finals_link import finals_db, finals_folder, play_planned_finals, played_games
    from .serve import require_sandbox, serve_competition
    from .state import ServerState
else:
    __getattr__, __dir__, __all__ = lazy_face(__name__, __file__)

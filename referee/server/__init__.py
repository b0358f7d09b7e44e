"""The competition's HTTP server: the ASGI application and ``serve``, which runs it with
the submission pipeline and the ladder in one trio run."""

from typing import TYPE_CHECKING

from referee import lazy_face

if TYPE_CHECKING:
    from .finals_link import play_and_report, run_finals_link
    from .serve import serve_competition
else:
    __getattr__, __dir__, __all__ = lazy_face(__name__, __file__)

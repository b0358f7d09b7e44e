"""The competition's HTTP server: the ASGI application and ``serve``, which runs it with
the submission pipeline and the ladder in one trio run."""

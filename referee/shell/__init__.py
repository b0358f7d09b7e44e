"""The trio shell: bot processes (spawn, process, guard), their sandbox and limits,
transports (a pipe, a socket), the remote-seat server and the connect client.
Owns processes, sockets and clocks. May import referee.core and taki_protocol."""

from typing import TYPE_CHECKING

from referee import lazy_face

if TYPE_CHECKING:
    from .bots import REFEREE_ID, BotConnection, BotTransport, bot_session, open_bot
    from .connect import ConnectError, client_tls_context, connect_bot
    from .limits import LimitError, limit_backend
    from .network import RemoteSetupError, format_address, parse_address
    from .owntime import OwnTime, keep_own_time
    from .process import RECEIVE_CHUNK_BYTES, describe_exit_status
    from .remote import RemoteSeats
    from .sandbox import SandboxError, bwrap_path, containment, require_sandbox
    from .seat_setup import open_remote_seats, server_tls_context
    from .services import service_nursery
    from .spawn import open_bot_process
    from .waits import WaitWatch
else:
    __getattr__, __dir__, __all__ = lazy_face(__name__, __file__)

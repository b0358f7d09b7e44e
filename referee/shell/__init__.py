"""The trio shell: bot processes, their guard, transports, the remote-seat server and
the connect client. Owns processes, sockets and clocks. May import referee.core and
taki_protocol."""

"""The trio shell: bot processes (spawn, process, guard), their sandbox and limits,
transports (a pipe, a socket, memory), the remote-seat server and the connect client.
Owns processes, sockets and clocks. May import referee.core and taki_protocol."""

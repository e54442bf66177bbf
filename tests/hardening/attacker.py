"""Another process holding sockets open on a server: `python attacker.py PORT COUNT idle|trickle`.

Idle sockets send nothing; trickling ones send a request line and then a header byte every half
second. A socket the server closes is opened again at once (a determined attacker). Prints
"ready" once all are connected, then runs until killed. Used by tests/hardening/
test_held_connections.py and bench/speed/held_sockets.py.
"""

from __future__ import annotations

import socket
import sys
import time


def opened(port: int, mode: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setblocking(False)
    if mode == "trickle":
        sock.send(b"GET /v1/engine/health/ HTTP/1.1\r\nX-Slow: ")
    return sock


def main() -> None:
    port, count, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    held = [opened(port, mode) for _ in range(count)]
    print("ready", flush=True)
    while True:
        time.sleep(0.5)
        for n, sock in enumerate(held):
            try:
                if mode == "trickle":
                    sock.send(b"a")
                if sock.recv(65536) == b"":
                    raise ConnectionError
            except BlockingIOError:
                pass
            except OSError:
                sock.close()
                held[n] = opened(port, mode)


if __name__ == "__main__":
    main()

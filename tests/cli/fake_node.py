#!/usr/bin/env python3
"""A hostile Redis node for the CLI tests: listens on 127.0.0.1 on a free
port, prints the port on its first line, and answers every connection in
the way MODE says. It stops by itself after LIFETIME seconds (default 60),
so a test that dies cannot leave it running for long.

Modes:
  slow          one byte of a reply every quarter second, never a whole
                reply: each read returns well inside any per-read timeout
  endless-line  an error line that never ends (no CRLF), as fast as it goes
  endless-bulk  a bulk string announced as 1e12 bytes, streamed endlessly
  error TEXT    every command answered with the error reply -TEXT (the
                text may hold newlines and escapes: \\n, \\x1b, ... are
                decoded), a simple reply to nothing else
"""
import socket
import sys
import threading
import time


def serve(connection, mode, text):
    connection.settimeout(None)
    try:
        if mode == "slow":
            connection.recv(4096)
            for byte in b"+" + b"x" * 1000:
                connection.sendall(bytes([byte]))
                time.sleep(0.25)
        elif mode == "endless-line":
            connection.recv(4096)
            connection.sendall(b"-ERR ")
            chunk = b"x" * 65536
            while True:
                connection.sendall(chunk)
        elif mode == "endless-bulk":
            connection.recv(4096)
            connection.sendall(b"$1000000000000\r\n")
            chunk = b"x" * 65536
            while True:
                connection.sendall(chunk)
        elif mode == "error":
            reply = b"-" + text + b"\r\n"
            pending = b""
            while True:
                data = connection.recv(4096)
                if not data:
                    return
                pending += data
                # One reply per command: count the commands that arrived
                # whole (each starts with '*' at a line start).
                while True:
                    count = commands_in(pending)
                    if count is None:
                        break
                    pending = pending[count:]
                    connection.sendall(reply)
    except OSError:
        pass
    finally:
        connection.close()


def commands_in(data):
    """The length of the first whole RESP command in data, or None."""
    if not data.startswith(b"*"):
        return None
    end = data.find(b"\r\n")
    if end < 0:
        return None
    arguments = int(data[1:end])
    position = end + 2
    for _ in range(arguments):
        end = data.find(b"\r\n", position)
        if end < 0 or data[position:position + 1] != b"$":
            return None
        length = int(data[position + 1:end])
        position = end + 2 + length + 2
        if position > len(data):
            return None
    return position


def main():
    mode = sys.argv[1]
    text = b""
    if mode == "error":
        text = sys.argv[2].encode("latin-1").decode("unicode_escape").encode("latin-1")
    lifetime = 60.0
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    print(listener.getsockname()[1], flush=True)
    listener.settimeout(0.5)
    stop_at = time.monotonic() + lifetime
    while time.monotonic() < stop_at:
        try:
            connection, _ = listener.accept()
        except socket.timeout:
            continue
        threading.Thread(target=serve, args=(connection, mode, text), daemon=True).start()


if __name__ == "__main__":
    main()

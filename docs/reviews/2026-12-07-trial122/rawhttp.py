"""One raw exchange: `data` written on a new connection to 127.0.0.1:`port`, and every byte
the peer sends back until it closes or is silent for `timeout` seconds."""
import socket


def exchange(port, data, timeout=2.0):
    chunks = []
    with socket.create_connection(('127.0.0.1', port), timeout=timeout) as s:
        s.sendall(data)
        try:
            for d in iter(lambda: s.recv(65536), b''):
                chunks.append(d)
        except socket.timeout:
            pass
    return b''.join(chunks)

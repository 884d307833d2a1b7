"""A TLS front for the test authorization server, for peers that accept only https (MSAL for Python
requires an https `oidc_authority`, token endpoint included).

    tls_front.py LISTEN_PORT BACKEND_PORT CERT_PEM KEY_PEM

Listens on 127.0.0.1:LISTEN_PORT, terminates TLS with CERT/KEY and forwards the bytes unchanged to
127.0.0.1:BACKEND_PORT (the Django server of a bench instance whose base URL is https://127.0.0.1:LISTEN_PORT,
so issuer, endpoints and ID tokens all say https). Loopback only; one thread per connection; stops on SIGTERM."""
import signal
import socket
import ssl
import sys
import threading


def pump(source, target):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    finally:
        for sock, how in ((target, socket.SHUT_WR), (source, socket.SHUT_RD)):
            try:
                sock.shutdown(how)
            except OSError:
                pass


def serve(client, context, backend_port):
    try:
        client.settimeout(30)
        tls = context.wrap_socket(client, server_side=True)
        tls.settimeout(None)
        backend = socket.create_connection(("127.0.0.1", backend_port), timeout=30)
        backend.settimeout(None)
    except (OSError, ssl.SSLError):
        client.close()
        return
    upstream = threading.Thread(target=pump, args=(tls, backend), daemon=True)
    upstream.start()
    pump(backend, tls)
    upstream.join(timeout=30)
    tls.close()
    backend.close()


def main():
    listen_port, backend_port, cert, key = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", listen_port))
    listener.listen(64)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        client, _ = listener.accept()
        threading.Thread(target=serve, args=(client, context, backend_port), daemon=True).start()


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""An engine that answers the Docker Engine API as the test tells it to, on a Unix socket of its
own: what no real engine would say (a name holding quotes, a newline, <script> and a formula
prefix; a reply that is not JSON) and what a real one does only when in trouble (an event
stream that stalls). It serves GET /containers/json and GET /events; each request is noted."""

import contextlib
import http.server
import json
import os
import socketserver
import tempfile
import threading


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class Engine:
    def __init__(self, folder):
        self.sock = os.path.join(folder, "docker.sock")
        self.containers = []     # what /containers/json lists
        self.list_body = None    # bytes to send instead of the list (a reply that is not JSON)
        self.events = []         # event objects /events sends, then it stalls
        self.requests = []
        self.stop = threading.Event()

    def container(self, cid, name, labels=None, image="fake:1"):
        self.containers.append({"Id": cid, "Names": ["/" + name], "Image": image,
                                "Labels": labels or {}})

    def handler(self):
        engine = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def address_string(self):
                return "unix"

            def do_GET(self):
                engine.requests.append(self.path)
                if self.path.startswith("/containers/json"):
                    body = engine.list_body
                    if body is None:
                        body = json.dumps(engine.containers).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                elif self.path.startswith("/events"):
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for event in engine.events:
                        data = (json.dumps(event) + "\n").encode()
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                    self.wfile.flush()
                    # a stream that stalls: nothing more, and no end
                    engine.stop.wait(600)
                else:
                    self.send_error(404)

        return Handler


@contextlib.contextmanager
def engine():
    """A fake engine serving on its socket; gone afterwards."""
    folder = tempfile.mkdtemp(prefix="cgstat-fake-engine-")
    # cgstat connects as nobody once it dropped root: the folder may be passed through
    os.chmod(folder, 0o711)
    e = Engine(folder)
    server = _Server(e.sock, e.handler())
    os.chmod(e.sock, 0o666)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield e
    finally:
        e.stop.set()
        server.shutdown()
        server.server_close()
        with contextlib.suppress(OSError):
            os.unlink(e.sock)
        with contextlib.suppress(OSError):
            os.rmdir(folder)

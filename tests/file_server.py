"""A file server on 127.0.0.1 for the download tests (never the network): HTTP Range
requests, dropped connections on demand, every request recorded."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FileServer:
    """Serves ``files`` (path → bytes) on 127.0.0.1 with HTTP Range support.

    ``cut[path] = n``: the next response for ``path`` stops after ``n`` bytes (a dropped
    connection). ``ignore_range``: answer 200 with the whole file even to a Range request.
    """

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.cut: dict[str, int] = {}
        self.ignore_range = False
        self.no_length: set[str] = set()  # paths answered without Content-Length (to the close)
        self.requests: list[tuple[str, str | None]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                server.requests.append((self.path, self.headers.get("Range")))
                data = server.files.get(self.path)
                if data is None:
                    self.send_error(404, "Not Found")
                    return
                start = 0
                byte_range = self.headers.get("Range")
                if byte_range and not server.ignore_range:
                    start = int(byte_range.removeprefix("bytes=").split("-")[0])
                    if start >= len(data):
                        self.send_error(416, "Range Not Satisfiable")
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                else:
                    self.send_response(200)
                body = data[start:]
                if self.path not in server.no_length:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                limit = server.cut.pop(self.path, None)
                self.wfile.write(body if limit is None else body[:limit])
                if limit is not None:
                    self.wfile.flush()
                    self.close_connection = True

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, name: str) -> str:
        return f"{self.base}/{name}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

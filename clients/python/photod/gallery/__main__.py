"""``python3 -m photod.gallery``: serves the gallery until interrupted."""
from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import threading
from typing import List, Optional

from .. import Library, PhotodError, __version__
from .server import Gallery, GalleryServer


def notify(state: str) -> None:
    """sd_notify(3) for a systemd unit of Type=notify: a datagram to $NOTIFY_SOCKET (none outside systemd)."""
    path = os.environ.get("NOTIFY_SOCKET")
    if not path:
        return
    if path.startswith("@"):
        path = "\0" + path[1:]
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
        try:
            s.sendto(state.encode(), path)
        except OSError as e:
            print(f"gallery: cannot notify systemd: {e}", file=sys.stderr)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m photod.gallery",
        description="A web gallery of photod's library: moments, albums, an asset view, live as files come and go.")
    parser.add_argument("--port", type=int, default=8080, help="the port to listen on (default 8080; 0: any free one)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="the address to listen on (default 127.0.0.1: this machine only; 0.0.0.0 for the network)")
    parser.add_argument("--socket", help="photod's socket (default: as photoctl finds it)")
    parser.add_argument("--allow-writes", action="store_true",
                        help="let the page set favorites, delete to Recently Deleted, restore and delete for "
                             "good (photod must count this user as a writer; deleting needs photod's --trash-root)")
    parser.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                        help="a host name the page is reached by (repeatable): on a loopback address only loopback "
                             "names are answered, elsewhere only addresses and these names (against DNS rebinding)")
    parser.add_argument("--verbose", action="store_true", help="log every request")
    args = parser.parse_args(argv)

    library = Library(args.socket, max_connections=8)
    gallery = Gallery(library, allow_writes=args.allow_writes, log=lambda text: print(f"gallery: {text}", file=sys.stderr,
                                                                                       flush=True))
    try:
        server = GalleryServer((args.host, args.port), gallery, args.allowed_host, args.verbose, __version__)
    except OSError as e:
        print(f"python3 -m photod.gallery: cannot listen on {args.host}:{args.port}: {e.strerror}", file=sys.stderr)
        return 69
    reachable = True
    try:
        library.status()
    except PhotodError as e:
        reachable = False
        print(f"gallery: photod is not reachable yet ({e}); the page says so until it is", file=sys.stderr, flush=True)
    gallery.start(wait_for_feed=10 if reachable else 0)
    mode = "read and write" if args.allow_writes else "read-only"
    print(f"photod gallery on {server.url} ({mode})", flush=True)
    notify(f"READY=1\nSTATUS=Serving {server.url} ({mode})")

    def stop(*_: object) -> None:
        gallery.stop()
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        library.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

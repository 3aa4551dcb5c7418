"""``python3 -m photod``: a look at photod's library from Python (and the gallery's entry)."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, List, Optional

from . import Library, PhotodError, __version__


def _print(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=None))


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m photod",
        description="photod's library from Python: status, assets, moments, albums, change sets and images, "
                    "one JSON object per line. The library for programs is `import photod` (docs/PYTHON.md); "
                    "the web gallery is `python3 -m photod.gallery`.")
    parser.add_argument("--socket", help="photod's socket (default: $PHOTOD_SOCKET, the per-user socket, "
                                         "then /run/photod/photod.sock, as photoctl)")
    parser.add_argument("--version", action="version", version=f"photod (Python client) {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser("status", help="photod's state and counts")
    a = commands.add_parser("assets", help="assets, one record a line")
    a.add_argument("--predicate", help='e.g. \'mediaType == "video" AND duration > 60\' (docs/PREDICATES.md)')
    a.add_argument("--sort", help="e.g. -localDateTime")
    a.add_argument("--in", dest="collection", metavar="ID", help="a collection's assets (m_…, f_…, s_…, u_…)")
    a.add_argument("--limit", type=int, default=100)
    a.add_argument("--include-hidden", action="store_true")
    m = commands.add_parser("moments", help="moments, newest first")
    m.add_argument("--year", type=int)
    m.add_argument("--limit", type=int)
    commands.add_parser("albums", help="folder albums")
    commands.add_parser("smart-albums", help="smart albums with their counts")
    c = commands.add_parser("changes", help="follow change sets (Ctrl-C to stop)")
    c.add_argument("--since", type=int, help="resume after this token (default: from now)")
    i = commands.add_parser("image", help="render an asset; prints the cached image's record")
    i.add_argument("id")
    i.add_argument("width", type=int)
    i.add_argument("height", type=int)
    i.add_argument("--mode", choices=["fit", "fill"], default="fit")
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 64
    lib = Library(args.socket)
    try:
        if args.command == "status":
            _print(lib.status().raw)
        elif args.command == "assets":
            fetch = (lib.collection_assets(args.collection, args.predicate, args.sort, args.limit,
                                           include_hidden=args.include_hidden) if args.collection else
                     lib.assets(args.predicate, args.sort, args.limit, include_hidden=args.include_hidden))
            for asset in fetch:
                _print(asset.raw)
        elif args.command == "moments":
            for moment in lib.moments(year=args.year, limit=args.limit):
                _print(moment.raw)
        elif args.command == "albums":
            for album in lib.albums():
                _print(album.raw)
        elif args.command == "smart-albums":
            for album in lib.smart_albums():
                _print(album.raw)
        elif args.command == "changes":
            try:
                for change in lib.changes(since=args.since):
                    _print(change.raw)
                    sys.stdout.flush()
            except KeyboardInterrupt:
                return 0
        elif args.command == "image":
            _print(lib.request_image(args.id, args.width, args.height, mode=args.mode).raw)
    except PhotodError as e:
        print(f"python3 -m photod: {e}", file=sys.stderr)
        return 69 if e.code is None else 1
    except BrokenPipeError:
        return 0
    finally:
        lib.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

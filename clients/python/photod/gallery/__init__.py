"""A web gallery on photod: ``python3 -m photod.gallery --port 8080`` (127.0.0.1 by default).

A timeline of moments, albums and smart albums, an asset view, favorites (with
``--allow-writes``), kept live by photod's change sets. See docs/PYTHON.md.
"""
from .server import Gallery, GalleryServer

__all__ = ["Gallery", "GalleryServer"]

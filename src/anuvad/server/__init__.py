"""The HTTP server and web page: ``create_app(translator)`` in :mod:`anuvad.server.app`."""

"""The scoreboard's ASGI application (Starlette): read-only pages and feeds of a ``TableSource``.

``create_app(source, lang="en")`` returns the app. Routes (GET and HEAD only: any other method is
405, and nothing is ever written or accepted as a command):

- ``/``: the floor page (every table of the source: big road thumbnail, state, last result);
  ``/floor.json`` its data, ``/events`` its Server-Sent Events;
- ``/tables/<id>``: the one-table page (1920x1080 kiosk); ``/tables/<id>/state.json``: exactly
  ``TableView.to_json(lang)``, the object that page renders; ``/tables/<id>/events``: SSE, the
  whole state on connect (and on every reconnect), then each new state (``sse.event_stream``);
- ``/healthz``: ``{"ok", "tables", "following", "not_running"}`` (``not_running``: the tables whose
  program is known not to run: the board shows their last state, marked); 503 with ``reason`` when
  the source does not follow (a journal whose chain broke; the floor's broker not connected);
- ``/static/...``: the page's HTML, JS and CSS, shipped in the package (no CDN, no build step).

``?lang=en|zh`` picks the language of a state's labels; without it, the app's ``lang``.
An unknown table is 404; a state not read yet is 503 (the source is starting).
"""
from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from controller.scoreboard.sources import LANGS, TableSource
from controller.scoreboard.sse import Channel, event_stream
from shoectl_config.text import quoted

__all__ = ["STATIC", "create_app"]

STATIC = Path(__file__).with_name("static")
_READ_ONLY = ["GET", "HEAD"]
# The page loads only its own files: a kiosk on a casino network runs nothing from elsewhere.
_HEADERS = {"Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; "
                                       "connect-src 'self'; frame-ancestors 'none'",
            "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-cache"}
_HTML_LANG = {"en": "en", "zh": "zh-Hans"}
_SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


class _StaticFiles(StaticFiles):
    """The pages' scripts, styles and images, each sent with ``nosniff``: a browser then uses a
    file only as the type the server gives it (the pages send their own headers, ``_HEADERS``)."""

    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response


def create_app(source: TableSource, lang: str = "en") -> Starlette:
    """The app serving ``source`` (see the module docstring); it starts the source on startup."""

    def language(request: Request) -> str:
        asked = request.query_params.get("lang")
        return asked if asked in LANGS else lang

    def channel_of(request: Request) -> Channel | None:
        return source.table(request.path_params["table_id"])

    def on_channel(respond, channel_for=channel_of):
        """An endpoint answering with ``respond(request, channel)``; 404 for an unknown table."""
        async def endpoint(request: Request) -> Response:
            channel = channel_for(request)
            if channel is None:
                return _not_found(request.path_params.get("table_id", ""))
            return respond(request, channel)
        return endpoint

    def page(name: str):
        def respond(request: Request, channel: Channel) -> Response:
            # the document's language, so that the browser picks the right CJK glyphs
            html = (STATIC / name).read_text(encoding="utf-8").replace("<html>", f'<html lang="{_HTML_LANG[language(request)]}">', 1)
            return HTMLResponse(html, headers=_HEADERS)
        return respond

    def state(request: Request, channel: Channel) -> Response:
        if channel.latest is None:
            return JSONResponse({"error": "starting: no state read yet"}, status_code=503)
        return Response(channel.latest.document(language(request)), media_type="application/json; charset=utf-8",
                        headers={"Cache-Control": "no-cache", "ETag": f'"{channel.latest.version}"'})

    def events(request: Request, channel: Channel) -> Response:
        if request.method == "HEAD":  # the stream's headers alone: a stream would never end
            return Response(media_type="text/event-stream; charset=utf-8", headers=_SSE_HEADERS)
        return StreamingResponse(event_stream(channel, language(request)),
                                 media_type="text/event-stream; charset=utf-8", headers=_SSE_HEADERS)

    async def healthz(request: Request) -> Response:
        failure = getattr(source, "failure", None)
        body: dict[str, Any] = {"ok": failure is None, "tables": source.table_ids(),
                                "following": failure is None,
                                "not_running": [t for t in source.table_ids() if source.table(t).running is False]}
        if failure:
            body["reason"] = failure
        return JSONResponse(body, status_code=200 if failure is None else 503)

    @asynccontextmanager
    async def lifespan(app: Starlette):
        source.start(asyncio.get_running_loop())
        try:
            yield
        finally:
            source.close()

    floor = lambda request: source.floor  # noqa: E731 - the floor's channel, as a table's
    routes = [
        Route("/", on_channel(page("floor.html"), floor), methods=_READ_ONLY),
        Route("/floor.json", on_channel(state, floor), methods=_READ_ONLY),
        Route("/events", on_channel(events, floor), methods=_READ_ONLY),
        Route("/healthz", healthz, methods=_READ_ONLY),
        Route("/tables/{table_id}", on_channel(page("table.html")), methods=_READ_ONLY),
        Route("/tables/{table_id}/state.json", on_channel(state), methods=_READ_ONLY),
        Route("/tables/{table_id}/events", on_channel(events), methods=_READ_ONLY),
        Mount("/static", _StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    # No redirect of "/tables/T1/" to "/tables/T1": Starlette builds it from the client's Host
    # header, an address of the client's choosing (a review of the scoreboard); a 404 instead.
    app.router.redirect_slashes = False
    return app


def _not_found(table_id: str) -> Response:
    return JSONResponse({"error": f"no table {quoted(table_id[:40])} here"}, status_code=404)

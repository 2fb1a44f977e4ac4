"""The web page (``GET /``, ``static/``: plain HTML, JS and CSS) and the API docs (``/docs``),
everything served from local files: no CDN, so both work on a machine without internet.

The docs are Swagger UI 5 from the ``swagger-ui-py`` package (its ``static/`` folder, Apache-2.0,
licence file beside it): FastAPI publishes OpenAPI 3.1, which Swagger UI 4 (``swagger-ui-bundle``
1.1.0, 4.15.5) could not read ("Unable to render this definition", issue 34, item 1)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from fastapi import APIRouter, FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.staticfiles import StaticFiles

STATIC_DIR = Path(__file__).resolve().parents[1] / "static"


def swagger_ui_folder() -> Path:
    """Swagger UI's files as the ``swagger-ui-py`` package ships them (found, not imported: the
    package's own code is for other frameworks)."""
    spec = importlib.util.find_spec("swagger_ui")
    if spec is None or spec.origin is None:
        raise RuntimeError("swagger-ui-py is not installed: pip install swagger-ui-py")
    return Path(spec.origin).parent / "static"


router = APIRouter(include_in_schema=False)


@router.get("/")
async def index() -> FileResponse:
    """The web page."""
    return FileResponse(STATIC_DIR / "index.html", media_type="text/html")


@router.get("/docs")
async def docs(request: Request) -> HTMLResponse:
    """The API docs (Swagger UI 5, which reads OpenAPI 3.1) from local files; FastAPI's default
    loads them from a CDN, which leaves the page blank on a machine without internet."""
    app: FastAPI = request.app
    return get_swagger_ui_html(
        openapi_url=app.openapi_url or "/openapi.json",
        title=f"{app.title} API",
        swagger_js_url="/docs-assets/swagger-ui-bundle.js",
        swagger_css_url="/docs-assets/swagger-ui.css",
        swagger_favicon_url="/static/favicon.svg",
    )


@router.get("/favicon.ico")
async def favicon() -> FileResponse:
    """Browsers ask for it: no 404 in the console."""
    return FileResponse(STATIC_DIR / "favicon.svg", media_type="image/svg+xml")


def add_page(app: FastAPI) -> None:
    """Serve the page, the docs and their assets from ``app``."""
    app.include_router(router)
    app.mount("/docs-assets", StaticFiles(directory=swagger_ui_folder()), name="docs-assets")
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")

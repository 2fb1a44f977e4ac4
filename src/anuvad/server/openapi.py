"""The published schema (``/openapi.json``) made to say exactly what the server answers: the
served model ids as the values of every request's ``model`` field, and the streamed answer's
lines as their own schema (FastAPI types a streamed body as a string besides)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

# The request bodies with a `model` field (POST /translate/stream takes TranslateRequest too).
MODEL_FIELDS = ("TranslateRequest", "AttentionRequest")


def publish_schema(app: FastAPI, model_ids: list[str]) -> None:
    """Make ``app``'s ``/openapi.json`` list ``model_ids`` as the values of every request's
    ``model`` field, and give streamed answers their lines' schema only."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            spec = build()
            for name in MODEL_FIELDS:
                field = spec["components"]["schemas"][name]["properties"]["model"]
                field["anyOf"] = [{"type": "string", "enum": model_ids}, {"type": "null"}]
            for operations in spec["paths"].values():
                for operation in operations.values():
                    for answer in operation.get("responses", {}).values():
                        for content in answer.get("content", {}).values():
                            schema = content.get("schema", {})
                            if "$ref" in schema:  # a $ref beside {"type": "string"}: the ref
                                content["schema"] = {"$ref": schema["$ref"]}
            app.openapi_schema = spec
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]

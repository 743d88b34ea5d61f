"""The HTTP layer: `create_app(daemon)` builds the FastAPI app over the plain-Python core."""

from memoryd.api.app import create_app

__all__ = ["create_app"]

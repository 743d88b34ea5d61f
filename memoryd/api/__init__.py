"""The HTTP layer: `create_app(services)` builds the FastAPI app over the plain-Python core."""

from memoryd.api.app import create_app
from memoryd.api.services import Services

__all__ = ["Services", "create_app"]

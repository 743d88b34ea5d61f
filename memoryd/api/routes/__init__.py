"""One router per resource; `api.app` includes them all."""

"""Review before write: extracted memories wait in a queue until a person approves them."""

from memoryd.review.queue import ReviewQueue, fingerprint

__all__ = ["ReviewQueue", "fingerprint"]

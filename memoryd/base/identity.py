"""How a client knows it speaks to this user's memoryd before it sends the token (issue #41).

The client sends a fresh random challenge; only a process holding this home's token can answer it with
`proof(token, challenge, host, port)`, an HMAC bound to the address the client connected to, so a
program on memoryd's port (or one relaying to the real daemon from another port) cannot. Standard
library C parts only: the hook forwarder imports this on every tool call."""

from __future__ import annotations

import _hashlib
import os

CHALLENGE_HEADER = "X-Memoryd-Challenge"
PROOF_HEADER = "X-Memoryd-Proof"
PROOF_LABEL = "memoryd-proof-v1"
CHALLENGE_BYTES = 16
# what a daemon accepts as a challenge: hex, long enough to be fresh, short enough to be cheap
CHALLENGE_HEX_CHARS = range(2 * CHALLENGE_BYTES, 129)
PROOF_HEX_CHARS = 64  # an HMAC-SHA256 in hex


def new_challenge() -> str:
    return os.urandom(CHALLENGE_BYTES).hex()


def is_challenge(text: str) -> bool:
    return len(text) in CHALLENGE_HEX_CHARS and all(c in "0123456789abcdef" for c in text)


def is_proof(text: str) -> bool:
    """Is `text` shaped like a proof (what a client without a token can check: it cannot verify one)?"""
    return len(text) == PROOF_HEX_CHARS and all(c in "0123456789abcdef" for c in text)


def proof(token: str, challenge: str, host: str, port: int) -> str:
    """The daemon's answer to `challenge` on the socket `host:port` (the daemon's own address)."""
    message = f"{PROOF_LABEL}\n{challenge}\n{host}\n{port}".encode()
    return _hashlib.hmac_digest(token.encode(), message, "sha256").hex()


def proves(token: str, challenge: str, host: str, port: int, presented: str) -> bool:
    """Did the answer on `host:port` prove it holds `token`? (constant-time compare)"""
    return _hashlib.compare_digest(proof(token, challenge, host, port).encode(), presented.encode())

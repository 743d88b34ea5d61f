"""Per-turn extraction: turn-end jobs that turn session transcripts into memories."""

from memoryd.base.errors import QueueFull
from memoryd.extract.offline import Candidate, extract_explicit
from memoryd.extract.service import ExtractionService

__all__ = ["Candidate", "ExtractionService", "QueueFull", "extract_explicit"]

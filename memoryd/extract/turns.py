"""`TurnEnds`: what a finished agent turn sets off. Everything is validated before any side
effect (no job is queued for a request that answers 4xx); then extraction is queued and the
session's notes are brought up to date, both in the background."""

from __future__ import annotations

from dataclasses import dataclass

from memoryd.base.validation import check_session_id
from memoryd.extract import ExtractionService
from memoryd.session_memory import SessionMemory
from memoryd.store import StoreRegistry
from memoryd.transcripts import TranscriptService


@dataclass(kw_only=True, eq=False)
class TurnEnds:
    transcripts: TranscriptService
    stores: StoreRegistry
    extraction: ExtractionService
    session_memory: SessionMemory
    notes_enabled: bool

    def turn_end(
        self, session_id: str, transcript_path: str, cwd: str, last_assistant_message: str | None = None
    ) -> str:
        """Validate, then queue extraction and the notes update; returns the extraction job id."""
        check_session_id(session_id)
        transcript = self.transcripts.check_under_root(transcript_path)
        memory_dir = self.stores.memory_dir_for(cwd)
        job_id = self.extraction.enqueue_turn_end(session_id, transcript, cwd, memory_dir, last_assistant_message)
        if self.notes_enabled:
            self.session_memory.enqueue(session_id, transcript, cwd)
        return job_id

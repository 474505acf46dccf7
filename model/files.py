"""Reading untrusted files with bounds: the one place where state and replay files come off the disk.

* Only regular files are read (``/dev/zero``, a FIFO or a directory is refused before it is opened).
* Gzip (detected by the magic bytes ``1f 8b``, not by the name) is decompressed as a stream, with a
  bound on the unpacked size: a gzip bomb stops with :class:`FileTooLarge` after at most that many
  bytes, whatever it would unpack to. Damaged or cut-off gzip data yields what could be decompressed
  and a warning.
* :func:`file_chunks` hands the content on in pieces, so a reader that streams (the replay reader)
  holds no more than one piece; :func:`read_bounded` returns it whole (state files).

Every error is a :class:`FileReadError` with a one-line message (``OSError`` for a missing or unreadable
file is passed through unchanged).
"""

from __future__ import annotations

import itertools
import os
import stat
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO, Final

GZIP_MAGIC: Final = b"\x1f\x8b"
DEFAULT_MAX_UNPACKED: Final = 64 << 20  # a replay of a whole game is under 1 MB unpacked
READ_CHUNK: Final = 64 * 1024
DAMAGED_GZIP: Final = "gzip data damaged or cut off"


class FileReadError(ValueError):
    """The file cannot be read (not a regular file, too large unpacked)."""


class NotARegularFile(FileReadError):
    pass


class FileTooLarge(FileReadError):
    pass


def _mib(size: int) -> str:
    return f"{size / (1 << 20):g} MiB"


class Unpacker:
    """Bounded unpacking of raw chunks (gzip if they start with the magic bytes): ``unpack(raw)``.

    After iterating: ``gzipped``, ``unpacked`` (bytes handed on) and ``warnings``.
    """

    def __init__(self, *, max_unpacked: int = DEFAULT_MAX_UNPACKED) -> None:
        self.max_unpacked = max_unpacked
        self.gzipped = False
        self.unpacked = 0
        self.warnings: list[str] = []

    def unpack(self, raw: Iterable[bytes]) -> Iterator[bytes]:
        raw = self._bounded_raw(raw)
        first = next(raw, b"")
        chunks: Iterator[bytes] = itertools.chain((first,), raw)
        if first[:2] == GZIP_MAGIC:
            self.gzipped = True
            chunks = self._gunzip(chunks)
        for chunk in chunks:
            self.unpacked += len(chunk)
            if self.unpacked > self.max_unpacked:
                what = "unpacks to" if self.gzipped else "is"
                raise FileTooLarge(
                    f"{what} more than {_mib(self.max_unpacked)}: too large for a Blokus state or replay file"
                )
            if chunk:
                yield chunk

    def unpack_bytes(self, data: bytes) -> Iterator[bytes]:
        return self.unpack(data[i : i + READ_CHUNK] for i in range(0, len(data), READ_CHUNK))

    def _bounded_raw(self, raw: Iterable[bytes]) -> Iterator[bytes]:
        read = 0
        for chunk in raw:
            read += len(chunk)
            if read > self.max_unpacked:  # e.g. endless empty gzip members
                raise FileTooLarge(
                    f"is more than {_mib(self.max_unpacked)}: too large for a Blokus state or replay file"
                )
            yield chunk

    def _gunzip(self, raw: Iterator[bytes]) -> Iterator[bytes]:
        """Decompress every gzip member, never more than ``READ_CHUNK`` bytes per step."""
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        started = False
        for data in raw:
            while True:
                try:
                    out = inflate.decompress(data, READ_CHUNK)
                except zlib.error as exc:
                    self.warnings.append(f"{DAMAGED_GZIP} ({exc}): using what could be decompressed")
                    return
                started = True
                if out:
                    yield out
                if inflate.eof:  # the next member, or trailing bytes
                    data = inflate.unused_data
                    if data and data[:2] != GZIP_MAGIC[: len(data)]:
                        if data.strip(b"\0"):
                            self.warnings.append(f"{DAMAGED_GZIP}: {len(data)} bytes of other data after it")
                        return
                    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
                    started = False
                    if not data:
                        break
                    continue
                data = inflate.unconsumed_tail
                if not data and len(out) < READ_CHUNK:  # all input used and no output held back
                    break
        if started and not inflate.eof:
            try:
                rest = inflate.flush()
            except zlib.error:
                rest = b""
            if rest:
                yield rest
            self.warnings.append(f"{DAMAGED_GZIP} (the compressed data ends early): using what could be decompressed")


def _file_chunks(handle: BinaryIO) -> Iterator[bytes]:
    while chunk := handle.read(READ_CHUNK):
        yield chunk


def file_chunks(path: str | Path, unpacker: Unpacker) -> Iterator[bytes]:
    """The unpacked content of the regular file ``path`` in chunks of at most 64 KiB."""
    mode = os.stat(path).st_mode  # follows symlinks; refused before open (opening a FIFO blocks)
    if not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "a device, pipe or socket"
        raise NotARegularFile(f"not a regular file ({kind})")
    with open(path, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise NotARegularFile("not a regular file")
        yield from unpacker.unpack(_file_chunks(handle))


def read_bounded(path: str | Path, *, max_unpacked: int = DEFAULT_MAX_UNPACKED) -> tuple[bytes, list[str]]:
    """The whole unpacked content of the regular file ``path`` and the warnings (damaged gzip data)."""
    unpacker = Unpacker(max_unpacked=max_unpacked)
    return b"".join(file_chunks(path, unpacker)), unpacker.warnings


def read_text_bounded(path: str | Path, max_bytes: int) -> str:
    """A UTF-8 text file of at most ``max_bytes`` (``read_bounded``); ValueError with one line naming the file."""
    try:
        data, _ = read_bounded(path, max_unpacked=max_bytes)
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a text file (UTF-8)") from None
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: {getattr(exc, 'strerror', None) or exc}") from None

"""Response bodies as the cluster sends them: compressed on the wire, capped when decoded.

ktop's sessions do not decompress by themselves (``auto_decompress=False``): ktop
asks for gzip (:data:`ACCEPT_ENCODING`), counts the bytes as they arrive (what the
apiserver and the network pay for) and inflates them here, refusing a body that
inflates past its limit (a gzip bomb costs a few MiB of memory, not all of it).
Bodies a server sends uncompressed pass through unchanged.
"""

from __future__ import annotations

import zlib

import aiohttp

ACCEPT_ENCODING = "gzip"
"""What ktop accepts: gzip only (never brotli or zstd, which it would have to decode)."""

MAX_BODY_BYTES = 256 << 20
"""A response body larger than this, decoded, is refused (the largest real ones, a big
apiserver's /metrics, are tens of MiB)."""

_INFLATE_WBITS = zlib.MAX_WBITS | 32
"""zlib's automatic header detection: gzip, or deflate in its zlib wrapper."""


class ResponseTooLargeError(ValueError):
    """A response body exceeded its limit (decoded); the message names the limit."""


class BodyEncodingError(ValueError):
    """A compressed body that does not decode, or an encoding ktop did not ask for."""


def too_large(what: str, limit: int) -> ResponseTooLargeError:
    """The error for a body over ``limit`` bytes."""
    return ResponseTooLargeError(
        f"{what}: response larger than {limit >> 20} MiB (size limit); not read"
    )


class BodyDecoder:
    """Inflates one response body chunk by chunk, at most ``limit`` bytes in all.

    ``encoding`` is the response's ``Content-Encoding`` ("" or ``identity`` when the
    body is sent as is). Raises :class:`ResponseTooLargeError` once the decoded body
    passes ``limit`` and :class:`BodyEncodingError` for a corrupt or unasked encoding.
    """

    def __init__(self, encoding: str, what: str, limit: int = MAX_BODY_BYTES) -> None:
        enc = encoding.strip().lower()
        self.what = what
        self.limit = limit
        self.decoded = 0
        """Decoded bytes so far."""
        self.wire = 0
        """Bytes received so far, as sent."""
        if enc in ("", "identity"):
            self._inflate: zlib._Decompress | None = None
        elif enc in ("gzip", "x-gzip", "deflate"):
            self._inflate = zlib.decompressobj(_INFLATE_WBITS)
        else:
            raise BodyEncodingError(f"{what}: body sent as {enc!r}, which ktop did not ask for")

    @property
    def compressed(self) -> bool:
        """The body is sent compressed (its size on the wire says nothing of its size)."""
        return self._inflate is not None

    def feed(self, chunk: bytes) -> bytes:
        """The decoded bytes of the next chunk received."""
        self.wire += len(chunk)
        if self._inflate is None:
            out = chunk
        else:
            room = self.limit - self.decoded
            try:
                out = self._inflate.decompress(chunk, room + 1)
            except zlib.error as exc:
                raise self._corrupt(exc) from None
            if self._inflate.unconsumed_tail:
                raise too_large(self.what, self.limit)
        self.decoded += len(out)
        if self.decoded > self.limit:
            raise too_large(self.what, self.limit)
        return out

    def _corrupt(self, exc: zlib.error) -> BodyEncodingError:
        return BodyEncodingError(f"{self.what}: compressed body is corrupt ({exc})")

    def finish(self) -> bytes:
        """What is left once the body has ended (a cut compressed body is an error)."""
        if self._inflate is None:
            return b""
        try:
            out = self._inflate.flush()
        except zlib.error as exc:
            raise self._corrupt(exc) from None
        if not self._inflate.eof:
            raise BodyEncodingError(f"{self.what}: compressed body ends early")
        self.decoded += len(out)
        if self.decoded > self.limit:
            raise too_large(self.what, self.limit)
        return out


def encoding_of(resp: aiohttp.ClientResponse, decodes_itself: bool) -> str:
    """The encoding ktop must undo: the response's ``Content-Encoding``, or "" when
    the session already decoded the body (``auto_decompress``).
    """
    return resp.headers.get("Content-Encoding", "") if decodes_itself else ""


def session_decodes(session: aiohttp.ClientSession) -> bool:
    """True when ktop, not the session, must decode bodies (``auto_decompress=False``)."""
    return not session.auto_decompress


async def read_capped(
    resp: aiohttp.ClientResponse,
    what: str,
    limit: int = MAX_BODY_BYTES,
    *,
    decode: bool = False,
) -> tuple[bytes, int]:
    """The whole body decoded, and how many bytes came on the wire; raises
    :class:`ResponseTooLargeError` once the decoded body passes ``limit`` bytes.

    ``decode``: the session does not decompress (see :func:`session_decodes`), so a
    ``Content-Encoding`` of the response is undone here.
    """
    decoder = BodyDecoder(encoding_of(resp, decode), what, limit)
    if not decoder.compressed and (resp.content_length or 0) > limit:
        raise too_large(what, limit)
    chunks: list[bytes] = []
    async for chunk in resp.content.iter_chunked(1 << 20):
        chunks.append(decoder.feed(chunk))
    chunks.append(decoder.finish())
    return b"".join(chunks), decoder.wire

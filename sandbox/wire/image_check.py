"""Images that reach the client: their size in pixels, read from the header and never
decoded. A client renders what it is sent as an image, and a PNG of under 1 MB can
declare 30,000 x 30,000 pixels of zlib-compressed zeros: gigabytes once decoded, in
the client's process on the host. A snippet wrote one into out/ with RestrictedPython
on (measured: 875 KB), and a snippet running real Python can forge a figure. So a
figure larger than the caps is not returned (the child says why), a forged one makes
the frame invalid, and an out/ file whose header is not a small enough PNG or JPEG
(or is an animated PNG, whose frames multiply the size) goes back as
application/octet-stream, which no client renders.
"""

from __future__ import annotations

MAX_SIDE = 10_000            # pixels, either side
MAX_PIXELS = 40_000_000      # width x height (160 MB as RGBA)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_CHUNKS_BEFORE_IMAGE = 256   # a figure has a handful (IHDR, pHYs, tEXt...)
_JPEG_FRAMES = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}  # SOFn


def dimensions(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG's IHDR or a JPEG's frame header; None if it is neither."""
    data = bytes(data[:1 << 16])  # the headers come first; a JPEG's frame header within its first 64 KiB
    if data.startswith(PNG_SIGNATURE):
        if len(data) < 24 or data[12:16] != b"IHDR":
            return None
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if data.startswith(b"\xff\xd8"):
        at = 2
        while at + 9 <= len(data) and data[at] == 0xFF:
            marker, length = data[at + 1], int.from_bytes(data[at + 2:at + 4], "big")
            if marker in _JPEG_FRAMES:
                return int.from_bytes(data[at + 7:at + 9], "big"), int.from_bytes(data[at + 5:at + 7], "big")
            if length < 2:
                return None
            at += 2 + length
    return None


def refusal(data: bytes) -> str | None:
    """Why `data` may not go to a client as an image, or None."""
    size = dimensions(data)
    if size is None:
        return "not a PNG or JPEG whose size can be read from its header"
    if bytes(data[:len(PNG_SIGNATURE)]) == PNG_SIGNATURE:
        why = _png_chunks_refusal(data)
        if why is not None:
            return why
    return size_refusal(*size)


def _png_chunks_refusal(data: bytes) -> str | None:
    """The chunks before a PNG's first IDAT, walked by their lengths: an acTL among them
    makes it an animated PNG, whose every frame is decoded at the IHDR's size (frames
    multiply it); a figure has a handful of them, never hundreds."""
    at = len(PNG_SIGNATURE)
    for _ in range(MAX_CHUNKS_BEFORE_IMAGE):
        if at + 8 > len(data):
            return None
        length, kind = int.from_bytes(data[at:at + 4], "big"), bytes(data[at + 4:at + 8])
        if kind == b"acTL":
            return "an animated PNG: return a still image (each figure is one)"
        if kind == b"IDAT":
            return None
        at += 12 + length
    return f"a PNG with more than {MAX_CHUNKS_BEFORE_IMAGE} chunks before its image data"


def size_refusal(width: int, height: int) -> str | None:
    """Why an image of this many pixels may not go to a client, or None."""
    if 0 < width <= MAX_SIDE and 0 < height <= MAX_SIDE and width * height <= MAX_PIXELS:
        return None
    return (f"{width} x {height} pixels, more than an image may have (at most {MAX_SIDE} a side and "
            f"{MAX_PIXELS // 1_000_000} million in all): make it smaller (figsize, dpi)")

"""Images that reach the client: their size in pixels, read from the header and never
decoded. A client renders what it is sent as an image, and a PNG of under 1 MB can
declare 30,000 x 30,000 pixels of zlib-compressed zeros: gigabytes once decoded, in
the client's process on the host. A snippet wrote one into out/ with RestrictedPython
on (measured: 875 KB), and a snippet running real Python can forge a figure. So a
figure larger than the caps is not returned (the child says why), a forged one makes
the frame invalid, and an out/ file whose header is not a small enough PNG or JPEG
goes back as application/octet-stream, which no client renders.
"""

from __future__ import annotations

MAX_SIDE = 10_000            # pixels, either side
MAX_PIXELS = 40_000_000      # width x height (160 MB as RGBA)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
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
    return size_refusal(*size)


def size_refusal(width: int, height: int) -> str | None:
    """Why an image of this many pixels may not go to a client, or None."""
    if 0 < width <= MAX_SIDE and 0 < height <= MAX_SIDE and width * height <= MAX_PIXELS:
        return None
    return (f"{width} x {height} pixels, more than an image may have (at most {MAX_SIDE} a side and "
            f"{MAX_PIXELS // 1_000_000} million in all): make it smaller (figsize, dpi)")

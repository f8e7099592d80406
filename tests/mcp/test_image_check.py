"""Images that reach the client are measured from their headers (sandbox/wire/image_check.py):
a PNG or JPEG that declares more pixels than a client may decode is never sent as an
image, however small its compressed bytes."""

from __future__ import annotations

import binascii
import zlib

import pytest

from sandbox.wire import image_check


def png(width: int, height: int, rows: bytes = b"") -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return len(data).to_bytes(4, "big") + kind + data + binascii.crc32(kind + data).to_bytes(4, "big")
    ihdr = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([8, 0, 0, 0, 0])
    return image_check.PNG_SIGNATURE + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def jpeg(width: int, height: int) -> bytes:
    """SOI, an APP0 segment, then a baseline frame header (SOF0)."""
    app0 = b"\xff\xe0" + (16).to_bytes(2, "big") + b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0"
    sof0 = b"\xff\xc0" + (11).to_bytes(2, "big") + b"\x08" + height.to_bytes(2, "big") + width.to_bytes(2, "big") \
        + b"\x01\x01\x11\x00"
    return b"\xff\xd8" + app0 + sof0 + b"\xff\xd9"


def test_sizes_are_read_from_the_headers():
    assert image_check.dimensions(png(640, 480)) == (640, 480)
    assert image_check.dimensions(jpeg(800, 600)) == (800, 600)
    for junk in (b"", b"GIF89a", image_check.PNG_SIGNATURE + b"short", b"\xff\xd8\xff\xe0\x00\x01", b"<svg/>"):
        assert image_check.dimensions(junk) is None, junk


def test_a_decompression_bomb_is_refused_whatever_its_bytes():
    rows = (b"\0" + b"\0" * 30000) * 200               # only a little of it: the header decides
    bomb = png(30000, 30000, rows)
    assert len(bomb) < 10_000
    assert "30000 x 30000 pixels" in image_check.refusal(bomb)
    assert "figsize, dpi" in image_check.refusal(jpeg(20000, 20000))
    assert image_check.refusal(png(10_001, 10)) and image_check.refusal(png(8000, 8000))   # a side; the area
    assert image_check.refusal(png(0, 100)) and image_check.refusal(b"not an image")


@pytest.mark.parametrize("width, height", [(1, 1), (640, 480), (2000, 1000), (3600, 2400), (10_000, 4000)])
def test_ordinary_figures_pass(width, height):
    assert image_check.refusal(png(width, height)) is None
    assert image_check.refusal(jpeg(width, height)) is None


def test_an_animated_png_is_not_sent_as_an_image():
    """An APNG's frames are each decoded at the IHDR's size: its acTL chunk (before the
    first IDAT, however much comes before it) makes it no image for a client."""
    still = png(640, 480)
    at = still.index(b"IDAT") - 4
    actl = (8).to_bytes(4, "big") + b"acTL" + (10**6).to_bytes(4, "big") + (0).to_bytes(4, "big") + b"\0" * 4
    padding = (70000).to_bytes(4, "big") + b"tEXt" + b"x" * 70000 + b"\0" * 4   # past any header window
    assert "animated PNG" in image_check.refusal(still[:at] + padding + actl + still[at:])
    assert image_check.refusal(still[:at] + padding + still[at:]) is None
    chatter = (0).to_bytes(4, "big") + b"tEXt" + b"\0" * 4
    assert "more than 256 chunks" in image_check.refusal(still[:at] + chatter * 300 + still[at:])

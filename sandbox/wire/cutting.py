"""Output cut for a context window: what goes back to the model keeps its head and
its tail, with an inline marker at the cut that says how much was left out and
how to get less. Used by the fork server on stdout/stderr (bytes, as they stream
in) and by the child on the result value's repr, the one form of a result too
large for the cap."""

from __future__ import annotations

# What to do instead, naming only what the run has: out/ exists with the filesystem profile.
ADVICE = {True: "print less, or write the data to a file under out/",
          False: "print less, or return a smaller value (a summary or a slice)"}
MARKER_ROOM = 160  # the longest marker, kept free inside the cap: a cut text never exceeds it


def marker(left_out: int, unit: str, out_dir: bool = False) -> str:
    return f"\n[... {left_out:,} {unit} left out here: {ADVICE[out_dir]} ...]\n"


class HeadTail:
    """A byte stream kept as its first and last bytes, with its full size; its text,
    marker included, is at most `cap` bytes."""

    def __init__(self, cap: int, out_dir: bool = False):
        self.out_dir = out_dir   # the run has out/ to write to (the marker may say so)
        self.cap = max(cap - MARKER_ROOM, 2)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.cap // 2 - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            keep = self.cap - self.cap // 2
            self.tail = (self.tail + data)[-keep:] if keep else bytearray()

    @property
    def truncated(self) -> bool:
        return self.total > len(self.head) + len(self.tail)

    def text(self) -> str:
        head = _whole_characters(bytes(self.head), at_end=True)
        if not self.truncated:
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", "backslashreplace")
        tail = _whole_characters(bytes(self.tail), at_end=False)
        left_out = self.total - len(head) - len(tail)
        return (head.decode("utf-8", "backslashreplace") + marker(left_out, "bytes", self.out_dir)
                + tail.decode("utf-8", "backslashreplace"))


def cut_text(text: str, cap: int, out_dir: bool = False) -> tuple[str, bool]:
    """A string of at most `cap` characters: head, marker, tail."""
    if len(text) <= cap:
        return text, False
    half = max(cap - MARKER_ROOM, 2) // 2
    return text[:half] + marker(len(text) - 2 * half, "characters", out_dir) + text[-half:], True


def fit_text(text: str, cap: int, out_dir: bool = False) -> tuple[str, bool]:
    """`text` cut as cut_text does, to at most `cap` bytes of UTF-8."""
    limit = cap
    while True:
        cut, was_cut = cut_text(text, limit, out_dir)
        size = len(cut.encode("utf-8", "surrogatepass"))
        if size <= cap or limit <= MARKER_ROOM:
            return cut, was_cut
        limit = max(limit * cap // size - 1, MARKER_ROOM)  # wide characters: fewer of them


def _whole_characters(data: bytes, *, at_end: bool) -> bytes:
    """Drop the pieces of a UTF-8 character that the cut split (at most 3 bytes)."""
    if at_end:
        for back in range(1, min(4, len(data)) + 1):
            byte = data[-back]
            if byte < 0x80:
                return data
            if byte >= 0xC0:  # the lead byte of the last character
                need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
                return data if back >= need else data[:-back]
        return data
    skip = 0
    while skip < min(3, len(data)) and 0x80 <= data[skip] < 0xC0:
        skip += 1
    return data[skip:]

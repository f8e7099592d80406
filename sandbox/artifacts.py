"""What crosses the sandbox boundary besides the result value: input files put
into the workspace before the run, files the snippet writes under out/, and
matplotlib figures rendered as PNG. Runs inside the hardened child, so the
client's file names and contents are only ever parsed there."""

from __future__ import annotations

import base64
import io
import os
import stat
import struct
import sys

from sandbox.wire import image_check
from sandbox.mounts import WORKSPACE
from sandbox.wire.protocol import (MAX_IMAGE_BYTES, MAX_IMAGES, MAX_IMAGES_BYTES, MAX_OUTPUT_BYTES, MAX_OUTPUT_FILES, MAX_PATH,
                       MAX_REFUSED_FILES, unsafe_name)

OUT_DIR = "out"
MAX_INPUT_FILES = 50


class BadInputFile(ValueError):
    pass


def make_out_dir() -> None:
    """out/ exists when the snippet starts: df.to_csv("out/x.csv") just works."""
    os.makedirs(os.path.join(WORKSPACE, OUT_DIR), exist_ok=True)


def write_input_files(files: dict) -> None:
    """Create each file under the workspace. Names are relative paths without
    '..'; contents are text, or base64 when the value is {"base64": "..."}."""
    if len(files) > MAX_INPUT_FILES:
        raise BadInputFile(f"at most {MAX_INPUT_FILES} input files")
    for name, value in files.items():
        path = _safe_path(name)
        data = _content(name, value)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(data)


def _safe_path(name) -> str:
    if not isinstance(name, str) or not name or "\x00" in name or len(name) > 255:
        raise BadInputFile(f"invalid file name {name!r:.80}")
    parts = name.split("/")
    if name.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise BadInputFile(f"file name must be a relative path without '.' or '..': {name!r:.80}")
    return os.path.join(WORKSPACE, *parts)


def _content(name: str, value) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    if isinstance(value, dict) and isinstance(value.get("base64"), str):
        try:
            return base64.b64decode(value["base64"], validate=True)
        except ValueError:
            raise BadInputFile(f"{name}: invalid base64") from None
    raise BadInputFile(f"{name}: content must be text or {{\"base64\": ...}}")


def collect_output_files(*, remove: bool = False) -> tuple[list, bool, list]:
    """Regular files under workspace/out as (relative path, bytes) pairs, capped in
    number and total size, and the entries refused with the reason: a symbolic link, a
    FIFO, device or socket, a hard link, or a name with control or format characters is
    never followed or read. With `remove` (a session) each file returned is deleted."""
    root = os.path.join(WORKSPACE, OUT_DIR)
    found, refused, total = [], [], 0
    if not os.path.isdir(root):
        return found, False, refused
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            refused.append((os.path.relpath(os.path.join(dirpath, name), WORKSPACE), "symbolic link"))
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            relative = os.path.relpath(path, WORKSPACE)
            why = _refusal(path, relative)
            if why is not None:
                refused.append((relative, why))
                continue
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as f:
                info = os.fstat(f.fileno())
                if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
                    refused.append((relative, "not a regular file of its own"))
                    continue
                if len(found) >= MAX_OUTPUT_FILES:
                    return found, True, refused[:MAX_REFUSED_FILES]
                data = f.read(MAX_OUTPUT_BYTES - total + 1)
            if total + len(data) > MAX_OUTPUT_BYTES:
                return found, True, refused[:MAX_REFUSED_FILES]
            total += len(data)
            found.append((relative, data))
            if remove:
                os.unlink(path)
    return found, False, refused[:MAX_REFUSED_FILES]


def _refusal(path: str, relative: str) -> str | None:
    """Why an entry under out/ is not returned (checked before it is opened)."""
    try:
        info = os.lstat(path)
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    if stat.S_ISLNK(info.st_mode):
        return "symbolic link"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file (a FIFO, device or socket)"
    if info.st_nlink != 1:
        return "hard link"
    if unsafe_name(relative):
        return "name with control or format characters"
    if len(relative) > MAX_PATH:
        return f"name longer than {MAX_PATH} characters"
    return None


FIGURE_DPI = 100


def render_figures() -> tuple[list, bool, list]:
    """Every open matplotlib figure as PNG bytes, if the snippet used pyplot; whether
    some were left out for the caps; and why each figure too large was not rendered."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return [], False, []
    images, truncated, total, refused = [], False, 0, []
    for number in pyplot.get_fignums():
        if len(images) >= MAX_IMAGES:
            truncated = True
            break
        figure = pyplot.figure(number)
        width, height = (round(inches * FIGURE_DPI) for inches in figure.get_size_inches())
        why = image_check.size_refusal(width, height)  # (checked before it costs a render)
        if why is None:
            buf = io.BytesIO()
            figure.savefig(buf, format="png", dpi=FIGURE_DPI)
            data = buf.getvalue()
            why = image_check.refusal(data)
        if why is not None:
            refused.append(f"figure {number} not returned: {why}")
            continue
        if len(data) > MAX_IMAGE_BYTES or total + len(data) > MAX_IMAGES_BYTES:
            truncated = True
            continue
        total += len(data)
        images.append(data)
    pyplot.close("all")
    return images, truncated, refused


def figures_saved_as(files: list) -> list[str]:
    """The out/ PNGs that are an open figure saved at some dpi: the figure comes back
    once, as its image. A PNG matplotlib writes says its dpi (the pHYs chunk); the
    figure rendered at that dpi is then the file, byte for byte. Call it before
    render_figures, which closes the figures."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    pngs = [(path, data, _png_dpi(data)) for path, data in files if path.lower().endswith(".png")]
    if pyplot is None:
        return []
    found, renders = [], {}
    for number in pyplot.get_fignums():
        figure = pyplot.figure(number)
        for path, data, dpi in pngs:
            if dpi is None or path in found:
                continue
            if (number, dpi) not in renders:
                width, height = (round(inches * dpi) for inches in figure.get_size_inches())
                renders[number, dpi] = None
                if image_check.size_refusal(width, height) is None:  # (no larger than the file itself)
                    buf = io.BytesIO()
                    figure.savefig(buf, format="png", dpi=dpi)
                    renders[number, dpi] = buf.getvalue()
            if renders[number, dpi] == data:
                found.append(path)
    return found


def _png_dpi(data: bytes) -> int | None:
    """The dots per inch a PNG's pHYs chunk gives (it comes before the image data)."""
    at = len(image_check.PNG_SIGNATURE)
    if data[:at] != image_check.PNG_SIGNATURE:
        return None
    while at + 8 <= len(data):
        size, kind = struct.unpack_from(">I4s", data, at)
        if kind == b"pHYs" and size == 9 and at + 17 <= len(data):
            per_metre, _, unit = struct.unpack_from(">IIB", data, at + 8)
            return (round(per_metre * 0.0254) or None) if unit == 1 else None
        if kind == b"IDAT":
            return None
        at += 12 + size
    return None

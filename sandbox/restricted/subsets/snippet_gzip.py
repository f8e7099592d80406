"""gzip.GzipFile over a file object the snippet gives (io.BytesIO, its own open file),
for the gzip subset: compressed streams in memory. Composed, not derived: the real
GzipFile, which opens any path it is named with the library's own open(), is held
inside and never handed out; the snippet gets the stream methods below."""

from __future__ import annotations

import gzip

from sandbox.restricted.sealed import Sealed, seal
from sandbox.restricted.subsets.subset import Subset


class GzipFile(Sealed):
    """gzip.GzipFile(fileobj=..., mode=...) reading or writing through `fileobj`."""

    __slots__ = ("__real",)

    def __init__(self, filename=None, mode=None, compresslevel=9, fileobj=None, mtime=None):
        if fileobj is None:
            raise TypeError("gzip.GzipFile here works over a file object: GzipFile(fileobj=io.BytesIO(data)); "
                            "for bytes use gzip.compress / gzip.decompress (files by name need the filesystem "
                            "profile)")
        # (a name given with fileobj only goes into the header)
        name = filename if isinstance(filename, (str, bytes)) else None
        object.__setattr__(self, "_GzipFile__real", gzip.GzipFile(name, mode, compresslevel, fileobj, mtime))

    def _real(self) -> gzip.GzipFile:
        return object.__getattribute__(self, "_GzipFile__real")

    def read(self, size=-1):
        return self._real().read(size)

    def read1(self, size=-1):
        return self._real().read1(size)

    def peek(self, n):
        return self._real().peek(n)

    def readline(self, size=-1):
        return self._real().readline(size)

    def readlines(self, hint=-1):
        return self._real().readlines(hint)

    def write(self, data):
        return self._real().write(data)

    def writelines(self, lines):
        return self._real().writelines(lines)

    def flush(self):
        self._real().flush()

    def close(self):
        self._real().close()

    def seek(self, offset, whence=0):
        return self._real().seek(offset, whence)

    def tell(self):
        return self._real().tell()

    def readable(self):
        return self._real().readable()

    def writable(self):
        return self._real().writable()

    def seekable(self):
        return self._real().seekable()

    @property
    def closed(self):
        return self._real().closed

    @property
    def mode(self):
        return self._real().mode

    @property
    def mtime(self):
        return self._real().mtime

    def __iter__(self):
        return iter(self.readline, b"")   # (the real file's own iterator is the real file)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def __repr__(self):
        return f"<gzip on {type(self._real().fileobj).__name__} {id(self):#x}>"


GzipFile.__module__ = "gzip"
seal(GzipFile, advice="wrap it in a class of your own")


SUBSET = Subset(
    # compression of bytes in memory (the filesystem profile has the whole module, files included)
    "gzip", ("compress", "decompress", "BadGzipFile", "GzipFile"),
    "the rest of it opens files: compress and decompress bytes, or switch on the filesystem profile "
    "(SANDBOX_ENABLE_FILESYSTEM) for files",
    lambda execution: dict(vars(gzip), GzipFile=GzipFile))

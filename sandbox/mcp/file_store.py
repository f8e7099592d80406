"""Files a run left under out/, kept outside the sandbox for a bounded time so that
`resources/read` can serve the ones too large to inline. Held in the server's
memory, capped in total size (the oldest go first) and in age; names are random
tokens the server mints, never paths, so a read can reach nothing but these bytes.
The same URIs pass a stored file back to execute_code as an input: what they reach is
what resources/read reaches on this server (the store is the server's, one for all its
clients; a token is 128 random bits, known only to whoever was sent the answer)."""

from __future__ import annotations

import re
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass

URI_PREFIX = "sandbox://files/"
TOKEN = re.compile(r"[A-Za-z0-9_-]{22}")   # secrets.token_urlsafe(16)


@dataclass
class StoredFile:
    path: str          # as the run named it, under out/
    mime_type: str
    data: bytes
    expires: float


class FileExpired(LookupError):
    """An unknown token, or a file whose time is up."""


class NotStoreURI(ValueError):
    """A URI this store could never have issued: another scheme, a path, a malformed token."""


class FileStore:
    def __init__(self, max_bytes: int, ttl: float):
        self.max_bytes = max_bytes
        self.ttl = ttl
        self.files: OrderedDict[str, StoredFile] = OrderedDict()
        self.size = 0

    def put(self, path: str, mime_type: str, data: bytes) -> str | None:
        """The URI of the stored file; None when it is larger than the whole store."""
        if len(data) > self.max_bytes:
            return None
        self._expire(time.monotonic())
        while self.size + len(data) > self.max_bytes:
            _, oldest = self.files.popitem(last=False)
            self.size -= len(oldest.data)
        token = secrets.token_urlsafe(16)
        self.files[token] = StoredFile(path, mime_type, data, time.monotonic() + self.ttl)
        self.size += len(data)
        return URI_PREFIX + token

    def get(self, token: str) -> StoredFile:
        self._expire(time.monotonic())
        found = self.files.get(token)
        if found is None:
            raise FileExpired(f"{URI_PREFIX}{token[:40]} is unknown or expired (files are kept {self.ttl:g} s); "
                              "run the code again to get the file anew")
        return found

    def resolve(self, uri: str) -> StoredFile:
        """The file behind a URI put() returned; only the exact shape it issues is looked up."""
        token = uri[len(URI_PREFIX):] if isinstance(uri, str) and uri.startswith(URI_PREFIX) else None
        if token is None or not TOKEN.fullmatch(token):
            raise NotStoreURI(f"{str(uri)[:80]!r} is not a file URI this server issued: pass the uri of a file an "
                              f"earlier execute_code returned ({URI_PREFIX}<token>), or the file's content")
        return self.get(token)

    def _expire(self, now: float) -> None:
        for token in [t for t, f in self.files.items() if f.expires <= now]:
            self.size -= len(self.files.pop(token).data)

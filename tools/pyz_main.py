"""Entry point of mcp-server-python-sandbox.pyz (copied in by tools/build_pyz.py). Standard library only.

The archive carries the `sandbox` package and its dependencies under
`_bundle/site/`. Compiled extensions cannot be imported from a zip, so the bundle
is extracted once into a private per-user cache directory named after the
archive's SHA-256:

    $XDG_CACHE_HOME/mcp-server-python-sandbox/<sha256>   (or ~/.cache/mcp-server-python-sandbox/<sha256>)

(or, without a writable home, $TMPDIR/mcp-server-python-sandbox-<uid>). The
cache root is created 0700 and must belong to the user. Each file is checked
against the manifest's SHA-256 while it is extracted into a temporary directory,
which is then renamed into place in one step, so a half-written bundle is never
used and concurrent first starts are harmless.
"""

import hashlib
import json
import os
import shutil
import stat
import sys
import tempfile
import zipfile

PREFIX = "_bundle/site/"
MARKER = ".mcp-server-python-sandbox-complete"  # sandbox/install_source.py knows a .pyz by it


def main() -> None:
    archive = os.path.dirname(os.path.abspath(__file__))
    if sys.version_info < (3, 10):
        sys.exit("mcp-server-python-sandbox needs Python 3.10 or newer")
    with zipfile.ZipFile(archive) as bundle:
        manifest = json.loads(bundle.read("_bundle/manifest.json"))
        check_interpreter(manifest)
        site = ensure_extracted(archive, bundle, manifest)
    sys.path.insert(0, site)
    # Python processes started from here (the runner's helpers) find the same packages.
    os.environ["PYTHONPATH"] = site + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else "")
    from sandbox.cli import main as cli_main

    sys.exit(cli_main())


def check_interpreter(manifest: dict) -> None:
    target = manifest["target"]
    if not manifest.get("compiled"):
        return
    here = [sys.implementation.name, list(sys.version_info[:2])]
    if here != [target["implementation"], target["version"]]:
        sys.exit(
            f"mcp-server-python-sandbox.pyz was built for {target['description']} and carries compiled modules "
            f"({', '.join(sorted({p.split('/')[0].split('.')[0] for p in manifest['compiled']}))}) that only load there; "
            f"this is {sys.implementation.name} {sys.version_info[0]}.{sys.version_info[1]}. Run it with "
            f"python{target['version'][0]}.{target['version'][1]}, or rebuild with "
            "'python3 tools/build_pyz.py --python <your python3>'."
        )


def cache_root() -> str:
    """$XDG_CACHE_HOME, else ~/.cache, else (no home, or one we cannot write: a service
    account) a private directory of our own under the temporary directory."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if _creatable(base):
        return os.path.join(base, "mcp-server-python-sandbox")
    return os.path.join(tempfile.gettempdir(), f"mcp-server-python-sandbox-{os.getuid()}")


def _creatable(path: str) -> bool:
    """Can this user create or write `path` (or its nearest existing parent)?"""
    probe = path
    while not os.path.exists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            return False
        probe = parent
    return os.path.isdir(probe) and os.access(probe, os.W_OK | os.X_OK)


def private_directory(path: str) -> None:
    """Create path 0700, or make sure an existing one is ours and private."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        sys.exit(f"mcp-server-python-sandbox: {path} must be a directory owned by uid {os.getuid()}")
    if info.st_mode & 0o077:
        os.chmod(path, 0o700)


def archive_digest(archive: str) -> str:
    digest = hashlib.sha256()
    with open(archive, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def is_complete(directory: str, digest: str) -> bool:
    try:
        info = os.lstat(directory)
        with open(os.path.join(directory, MARKER), encoding="ascii") as handle:
            marker = handle.read().strip()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o022 and marker == digest


def ensure_extracted(archive: str, bundle: zipfile.ZipFile, manifest: dict) -> str:
    root = cache_root()
    try:
        os.makedirs(os.path.dirname(root), mode=0o700, exist_ok=True)
    except OSError as exc:
        sys.exit(f"mcp-server-python-sandbox: cannot create {os.path.dirname(root)} ({exc.strerror}); "
                 "set XDG_CACHE_HOME to a directory you can write")
    private_directory(root)
    digest = archive_digest(archive)
    final = os.path.join(root, digest)
    if is_complete(final, digest):
        return final
    staging = tempfile.mkdtemp(prefix=f".{digest[:16]}-", dir=root)
    try:
        for entry in manifest["files"]:
            extract_one(bundle, entry, staging)
        with open(os.path.join(staging, MARKER), "w", encoding="ascii") as handle:
            handle.write(digest)
        os.chmod(staging, 0o700)
        try:
            os.rename(staging, final)
        except OSError:
            # Another start won the race (or a broken leftover sits there): use or replace it.
            if not is_complete(final, digest):
                shutil.rmtree(final, ignore_errors=True)
                os.rename(staging, final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if not is_complete(final, digest):
        sys.exit(f"mcp-server-python-sandbox: could not prepare {final}")
    return final


def extract_one(bundle: zipfile.ZipFile, entry: dict, staging: str) -> None:
    relative = entry["path"]
    parts = relative.split("/")
    if relative.startswith("/") or ".." in parts or "" in parts:
        sys.exit(f"mcp-server-python-sandbox: refusing a bundle entry with an unsafe path: {relative!r}")
    data = bundle.read(PREFIX + relative)
    if hashlib.sha256(data).hexdigest() != entry["sha256"]:
        sys.exit(f"mcp-server-python-sandbox: the archive is damaged: {relative} does not match its manifest")
    destination = os.path.join(staging, *parts)
    os.makedirs(os.path.dirname(destination), mode=0o700, exist_ok=True)
    with open(destination, "xb") as handle:
        handle.write(data)
    os.chmod(destination, 0o700 if entry.get("executable") else 0o600)


if __name__ == "__main__":
    main()

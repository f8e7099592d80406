"""What the child says about its figures and out/ files (child._artifacts): a failure
while collecting them is reported alongside, never instead of, what was already said."""

from __future__ import annotations

from types import SimpleNamespace

from sandbox import artifacts, child


def test_a_collection_failure_keeps_the_refused_figures(monkeypatch):
    """A figure too big to render, then out/ that cannot be read: the answer said only the
    second (the first was overwritten), and the model never learned why its figure was missing."""
    monkeypatch.setattr(artifacts, "render_figures", lambda: ([b"png"], False, ["figure 1 is 20000 px wide"]))

    def unreadable(remove):
        raise PermissionError("out/ cannot be listed")

    monkeypatch.setattr(artifacts, "collect_output_files", unreadable)
    spec = SimpleNamespace(filesystem=True, layers=frozenset({"namespaces"}))
    images, files, extra = child._artifacts(spec, remove_files=False)
    assert images == [b"png"] and files == []
    assert extra["artifacts_error"] == "figure 1 is 20000 px wide; PermissionError: out/ cannot be listed"

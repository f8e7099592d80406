"""get_sandbox_info's text block: the sandbox in a few lines a model reads at once.

The whole answer (every module, subset, layer detail, tool stub) stays in structured
content, and in the text with detail=true. Each line here is bounded, so the summary
stays short whatever the configuration: a long list ends with how many were left out.
"""

from __future__ import annotations

LINE = 300           # characters of one line at most
MAX_SUMMARY = 1500   # the whole summary
MODULES_ROOM = 300   # the importable modules' line at least (the one a model reads the most)
REASON = 60          # characters of an inactive layer's reason


def summary(info: dict) -> str:
    """The first lines always; the importable modules in the room they leave beside the
    subsets (at least MODULES_ROOM); the other lines while they fit; the pointer to
    detail last."""
    first = _first_lines(info)
    subsets = [_listed("sandbox subsets (parts of the module)", list(info["module_subsets"]))
               if info.get("module_subsets") else ""]
    room = MAX_SUMMARY - _size(first + subsets + [POINTER]) - 2
    modules = _listed("importable", info["allowed_modules"], max(MODULES_ROOM, room))
    lines = first + [modules]
    optional = [line for line in subsets if line] + _optional_lines(info)
    for line in optional:
        if _size(lines + [line, POINTER]) <= MAX_SUMMARY:
            lines.append(line)
    return "\n".join(lines + [POINTER])


POINTER = ("get_sandbox_info(detail=true) gives every field as JSON (every module and subset, layer details, "
           "the rules in full, tool signatures).")


def _first_lines(info: dict) -> list[str]:
    limits, sessions = info["limits"], info["sessions"]
    on = [name for name, profile in info["profiles"].items() if profile["enabled"]]
    off = [f"{name} ({profile['switch']}=true)" for name, profile in info["profiles"].items()
           if not profile["enabled"] and profile.get("switch")]
    layers = info["layers"]
    inactive = [f"{name} ({_cut(layer.get('detail') or 'no reason given', REASON)})"
                for name, layer in layers.items() if not layer["active"]]
    return [
        _cut(f"{info['server']['name']} {info['server']['version']}; profiles on: {', '.join(on)}"
             + (f"; off: {', '.join(off)}" if off else ""), LINE),
        _cut("isolation layers active: " + (", ".join(n for n, layer in layers.items() if layer["active"]) or "none")
             + (f"; inactive: {'; '.join(inactive)}" if inactive else ""), LINE),
        "RestrictedPython: " + ("on" if info["restricted_python"] else "off"),
        f"limits: timeout {limits['timeout']['default']:g} s (up to {limits['timeout']['max']:g}), memory "
        f"{limits['memory_limit']['default']} (up to {limits['memory_limit']['max']}), output "
        f"{limits['max_output_size']:,} bytes per stream and result, code {limits['max_code_size']:,} bytes, "
        f"{limits['max_concurrency']} at once; sessions {sessions['open']} open of {sessions['max_sessions']}",
    ]


def _optional_lines(info: dict) -> list[str]:
    lines = []
    network = info["profiles"].get("network", {})
    if network.get("enabled") and network.get("detail"):
        lines.append(_cut(network["detail"], LINE))
    if info.get("mounts"):
        lines.append(_listed("mounted host directories", [f"{m['path']} ({m['mode']})" for m in info["mounts"]]))
    if info.get("weakened_by"):
        lines.append(_listed("weakened by", [f"{w['setting']}={w['value']}" for w in info["weakened_by"]]))
    if info.get("tool_stubs"):
        lines.append(_listed("code mode tools", [stub.split("(")[0] for stub in info["tool_stubs"]]))
    return lines


def _size(lines: list[str]) -> int:
    return len("\n".join(lines))


def _listed(label: str, names: list[str], limit: int = LINE) -> str:
    """`label: a, b, c`, cut at a name so the line fits `limit`, saying how many were left out."""
    whole = f"{label}: {', '.join(names)}"
    if len(whole) <= limit:
        return whole
    shown: list[str] = []
    for name in names:
        more = f" and {len(names) - len(shown) - 1} more"
        if len(f"{label}: {', '.join(shown + [name])}{more}") > limit:
            break
        shown.append(name)
    return _cut(f"{label}: {', '.join(shown)} and {len(names) - len(shown)} more", limit)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."

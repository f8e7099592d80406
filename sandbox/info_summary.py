"""get_sandbox_info's text block: the sandbox in a few lines a model reads at once.

The whole answer (every module, subset, layer detail, tool stub) stays in structured
content, and in the text with detail=true. Each line here is bounded, so the summary
stays short whatever the configuration: a long list ends with how many were left out.
"""

from __future__ import annotations

LINE = 300           # characters of one line at most
MODULES_LINE = 600   # the importable modules' line, the one a model reads the most
REASON = 60          # characters of an inactive layer's reason


def summary(info: dict) -> str:
    limits, sessions = info["limits"], info["sessions"]
    on = [name for name, profile in info["profiles"].items() if profile["enabled"]]
    off = [f"{name} ({profile['switch']}=true)" for name, profile in info["profiles"].items()
           if not profile["enabled"] and profile.get("switch")]
    layers = info["layers"]
    inactive = [f"{name} ({_cut(layer.get('detail') or 'no reason given', REASON)})"
                for name, layer in layers.items() if not layer["active"]]
    lines = [
        f"{info['server']['name']} {info['server']['version']}; profiles on: {', '.join(on)}"
        + (f"; off: {', '.join(off)}" if off else ""),
        _cut("isolation layers active: " + (", ".join(n for n, layer in layers.items() if layer["active"]) or "none")
             + (f"; inactive: {'; '.join(inactive)}" if inactive else ""), LINE),
        "RestrictedPython: " + ("on" if info["restricted_python"] else "off"),
        f"limits: timeout {limits['timeout']['default']:g} s (up to {limits['timeout']['max']:g}), memory "
        f"{limits['memory_limit']['default']} (up to {limits['memory_limit']['max']}), output "
        f"{limits['max_output_size']:,} bytes per stream and result, code {limits['max_code_size']:,} bytes, "
        f"{limits['max_concurrency']} at once; sessions {sessions['open']} open of {sessions['max_sessions']}",
        _listed("importable", info["allowed_modules"], MODULES_LINE),
    ]
    if info.get("module_subsets"):
        lines.append(_listed("sandbox subsets (parts of the module)", list(info["module_subsets"])))
    network = info["profiles"].get("network", {})
    if network.get("enabled") and network.get("detail"):
        lines.append(_cut(network["detail"], LINE))
    if info.get("weakened_by"):
        lines.append(_listed("weakened by", [f"{w['setting']}={w['value']}" for w in info["weakened_by"]]))
    if info.get("tool_stubs"):
        lines.append(_listed("code mode tools", [stub.split("(")[0] for stub in info["tool_stubs"]]))
    lines.append("get_sandbox_info(detail=true) gives every field as JSON (module subsets' names, layer details, "
                 "tool signatures).")
    return "\n".join(lines)


def _listed(label: str, names: list[str], limit: int = LINE) -> str:
    """`label: a, b, c`, cut at a name so the line fits `limit`, saying how many were left out."""
    shown: list[str] = []
    size = len(label) + 2
    for index, name in enumerate(names):
        rest = len(names) - index
        if size + len(name) + 2 > limit - 20 and rest > 1:
            return f"{label}: {', '.join(shown)} and {rest} more"
        shown.append(name)
        size += len(name) + 2
    return f"{label}: {', '.join(shown)}"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."

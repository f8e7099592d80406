"""README.md's settings table and .env.example are written from the one list of settings
(sandbox.config.VARIABLES) by tools/readme_settings.py, and the README leads with what a
newcomer needs."""

import re
import sys

from mcp_client import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "tools"))

import readme_settings  # noqa: E402

from sandbox.config import VARIABLES  # noqa: E402

README = REPO_ROOT / "README.md"


def test_settings_table_is_current():
    text = README.read_text()
    assert readme_settings.rewritten(text) == text, "the settings table is stale: python tools/readme_settings.py"
    for name in VARIABLES:
        assert f"| `{name}` |" in text


def test_env_example_is_current():
    committed = readme_settings.ENV_EXAMPLE.read_text()
    assert readme_settings.env_example() == committed, "the .env.example is stale: python tools/readme_settings.py"
    for name, variable in VARIABLES.items():
        assert f"{name}=" in committed and (variable.doc[1:] in committed.replace("\n# ", " "))


def test_the_script_rewrites_only_the_table(tmp_path):
    stale = README.read_text().replace("| `SANDBOX_TIMEOUT` | `30` |", "| `SANDBOX_TIMEOUT` | `31` |")
    assert stale != README.read_text()
    assert readme_settings.rewritten(stale) == README.read_text()


def test_the_first_screen_has_the_two_commands_and_a_client_config():
    first_screen = "\n".join(README.read_text().splitlines()[:30])
    assert "make install && bin/mcp-server-python-sandbox" in first_screen
    assert "make test" in first_screen
    assert '"mcpServers"' in first_screen and "/path/to/checkout/bin/mcp-server-python-sandbox" in first_screen
    assert "not yet on the public package index" in first_screen


def test_the_index_form_is_named_in_one_place_only():
    text = README.read_text()
    assert text.count("uvx mcp-server-python-sandbox") == 2  # the command line, and Claude Code's
    section = text.split("### Once the package is on the public index", 1)[1].split("\n### ", 1)[0]
    assert section.count("uvx mcp-server-python-sandbox") == 2



def test_the_section_the_server_points_to_exists():
    from sandbox.mcp.stdio import HUMAN_HINT

    section = re.search(r"the README: '([^']+)'", HUMAN_HINT).group(1)
    assert f"\n## {section}\n" in README.read_text()


def test_the_layout_tree_names_what_is_in_sandbox():
    tree = README.read_text().split("### Layout", 1)[1].split("```", 2)[1]
    named = set(re.findall(r"[\w.]+(?:\.py|/)", tree))
    package = REPO_ROOT / "sandbox"
    modules = {p.name for p in package.glob("*.py")} - {"__init__.py"}
    packages = {p.name + "/" for p in [*package.glob("*"), *package.glob("*/*")] if (p / "__init__.py").exists()}
    assert (modules | packages) - named == set(), "add these to the README's layout tree"
    assert {name for name in named if name.endswith(".py")} - modules == set(), "the tree names what is not there"

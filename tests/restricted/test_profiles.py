"""Module profiles: the sets, the refusals of dangerous extras, and the import checks."""

from __future__ import annotations

import sys

import pytest

from sandbox import profiles

NEVER = ["os", "sys", "subprocess", "ctypes", "importlib", "builtins", "posix", "pickle",
         "marshal", "inspect", "gc", "threading", "_thread", "multiprocessing", "signal",
         "importlib.util", "ctypes.util", "multiprocessing.pool", "_posixsubprocess", "pty",
         "code", "runpy", "asyncio", "patsy", "formulaic"]


def test_profiles_table():
    assert set(profiles.PROFILES) == {"basic", "data_science", "network", "filesystem"}
    assert profiles.PROFILES["basic"] is profiles.BASIC
    assert "socket" in profiles.NETWORK and "socket" not in profiles.BASIC
    assert "io" in profiles.FILESYSTEM and "io" not in profiles.BASIC
    assert "configparser" in profiles.BASIC   # (its read(path) is refused: library_policy.refused_attributes)
    for left_out in ("mimetypes", "shlex", "codecs", "timeit", "traceback", "os", "sys", "io", "socket"):
        assert left_out not in profiles.BASIC


def test_allowed_modules_unions_profiles():
    assert profiles.allowed_modules(["basic"]) == profiles.BASIC
    both = profiles.allowed_modules(["basic", "network"])
    assert both == profiles.BASIC | profiles.NETWORK
    assert profiles.allowed_modules([]) == frozenset()


def test_allowed_modules_drops_dangerous_extras():
    allowed = profiles.allowed_modules(["basic"], extra=NEVER + ["socket", "io", "wave"])
    for name in NEVER + ["socket", "io"]:
        assert name not in allowed
    assert "wave" in allowed  # a harmless extra is added
    with_network = profiles.allowed_modules(["basic", "network"], extra=["socket"])
    assert "socket" in with_network


def test_allowed_modules_rejects_unknown_profile():
    with pytest.raises(ValueError, match="unknown profile"):
        profiles.allowed_modules(["basic", "everything"])


@pytest.mark.parametrize("name", NEVER)
def test_check_extra_imports_refuses_dangerous_modules(name):
    [(refused, reason)] = profiles.check_extra_imports([name])
    assert refused == name and reason
    [(refused, _)] = profiles.check_extra_imports([name], network=True, filesystem=True)
    assert refused == name  # no profile makes these acceptable


def test_socket_only_with_network_profile():
    [(name, reason)] = profiles.check_extra_imports(["socket"])
    assert name == "socket" and "network profile" in reason
    assert profiles.check_extra_imports(["socket"], network=True) == []
    [(name, reason)] = profiles.check_extra_imports(["io"])
    assert "filesystem profile" in reason
    assert profiles.check_extra_imports(["io", "os.path"], filesystem=True) == []


@pytest.mark.parametrize("name,flag", [("pathlib", "filesystem"), ("shutil", "filesystem"),
                                       ("tempfile", "filesystem"), ("requests", "network"),
                                       ("urllib.request", "network"), ("http.client", "network")])
def test_profile_members_are_extras_only_with_their_profile(name, flag):
    [(refused, reason)] = profiles.check_extra_imports([name])
    assert refused == name and f"{flag} profile" in reason
    assert profiles.check_extra_imports([name], **{flag: True}) == []
    assert name not in profiles.allowed_modules(["basic"], extra=[name])


def test_check_extra_imports_accepts_harmless_and_rejects_malformed():
    assert profiles.check_extra_imports(["json", "wave", "colorsys", "xml.dom.minidom"]) == []
    refused = dict(profiles.check_extra_imports(["", "a..b", "1x", "os ", 3]))
    assert set(refused) == {"", "a..b", "1x", "os ", 3}


def test_danger_covers_submodules_and_private_modules():
    assert profiles.danger("os") and profiles.danger("os.path")
    assert profiles.danger("importlib.metadata")
    assert "private" in profiles.danger("_socket")
    assert profiles.danger("json.__init__")
    assert profiles.danger("json") is None and profiles.danger("xml.etree.ElementTree") is None


def test_is_allowed_whole_packages():
    allowed = profiles.allowed_modules(["basic", "data_science", "network"])
    assert profiles.is_allowed("numpy.linalg", allowed)
    assert profiles.is_allowed("email.mime.text", allowed)
    assert not profiles.is_allowed("numpy.ctypeslib", allowed)
    assert not profiles.is_allowed("numpy._core", allowed)
    assert not profiles.is_allowed("json.tool", allowed)  # json is not a whole package
    assert not profiles.is_allowed("numpy.linalg", profiles.BASIC)


def test_a_wildcard_admits_the_submodules_no_rule_refuses():
    allowed = profiles.allowed_modules(["basic"], ["xml.*", "json.*", "numpy.*", "urllib.*"])
    assert {"xml", "xml.*", "json", "json.*"} <= allowed          # pkg.* is pkg and its submodules
    assert profiles.permits("xml.dom.minidom", allowed) and profiles.permits("json.decoder", allowed)
    assert not profiles.permits("json._private", allowed)          # private
    assert not profiles.permits("numpy.ctypeslib", allowed)         # refused by name
    assert not profiles.permits("numpy.core.multiarray", allowed)   # under a name refused
    assert not profiles.permits("urllib.request", allowed)          # a member of the network profile, off
    assert not profiles.permits("jsonschema.validators", allowed)   # json.* is not a prefix of jsonschema


@pytest.mark.parametrize("slipped", ["os.*", "sys.*", "importlib.*", "subprocess.*", "*", ".*", "builtins.*"])
def test_a_wildcard_that_slipped_into_allowed_admits_nothing_refused_by_name(slipped):
    """What the import hook decides even if configuration were bypassed."""
    allowed = profiles.BASIC | {slipped}
    for name in ("os", "os.path", "sys", "importlib.util", "importlib.machinery", "subprocess", "builtins",
                 "ctypes", "socket"):
        assert not profiles.permits(name, allowed), (slipped, name)


def test_permits_refuses_dangerous_names_that_slipped_into_allowed():
    allowed = profiles.BASIC | {"os", "ctypes", "socket"}
    assert not profiles.permits("os", allowed)
    assert not profiles.permits("ctypes", allowed)
    assert profiles.permits("socket", allowed)  # a profile member, listed: the network profile
    assert not profiles.permits("socket", profiles.BASIC)
    assert profiles.permits("os.path", profiles.allowed_modules(["filesystem"]))


def test_leads_to_allowed():
    assert profiles.leads_to_allowed("xml", profiles.BASIC)
    assert profiles.leads_to_allowed("xml.etree", profiles.BASIC)
    assert not profiles.leads_to_allowed("xml.dom", profiles.BASIC)
    assert profiles.leads_to_allowed("urllib", profiles.BASIC)
    assert not profiles.leads_to_allowed("os", profiles.BASIC)
    assert profiles.leads_to_allowed("os", profiles.allowed_modules(["filesystem"]))


@pytest.mark.parametrize("name", sorted(profiles.BASIC))
def test_every_basic_module_is_importable(name):
    assert profiles.importable(name)


def test_importable_edge_cases():
    assert not profiles.importable("no_such_module_xyz")
    assert not profiles.importable("json.no_such_submodule")
    assert not profiles.importable("uuid.os")  # an attribute, not a submodule
    assert not profiles.importable("a..b")
    assert not profiles.importable("")
    assert not profiles.importable(None)
    assert profiles.importable("os.path")


def test_importable_does_not_import_dangerous_parents():
    name = "multiprocessing"
    had = name in sys.modules
    profiles.importable("multiprocessing.pool")
    assert (name in sys.modules) == had


def test_profile_modules_available():
    assert profiles.profile_modules_available("basic") == sorted(profiles.BASIC)
    available = profiles.profile_modules_available("data_science")
    assert set(available) <= profiles.DATA_SCIENCE
    assert all(profiles.importable(name) for name in available)
    with pytest.raises(ValueError):
        profiles.profile_modules_available("nope")


def test_every_dangerous_reason_is_text():
    for name, reason in profiles.DANGEROUS.items():
        assert isinstance(reason, str) and reason, name


@pytest.mark.parametrize("name, allowed, advice", [
    # a profile that is off: its switch
    ("numpy", profiles.BASIC, "in the data_science profile, which is off on this server: the operator switches "
                              "it on with SANDBOX_ENABLE_DATA_SCIENCE=true"),
    ("numpy.linalg", profiles.BASIC, "SANDBOX_ENABLE_DATA_SCIENCE=true"),
    ("socket", profiles.BASIC, "in the network profile, which is off on this server: the operator switches it on "
                               "with SANDBOX_ENABLE_NETWORK=true"),
    ("pathlib", profiles.BASIC, "SANDBOX_ENABLE_FILESYSTEM=true"),
    # the profile is on, but this call's allowed_imports narrowed it
    ("json", frozenset({"math"}), "this call's allowed_imports leaves it out"),
    ("requests", profiles.BASIC | frozenset({"socket"}), "this call's allowed_imports leaves it out"),
    # never: no switch is named
    ("threading", profiles.BASIC, "no setting allows it in the sandbox (threads)"),
    ("numpy.ctypeslib", profiles.allowed_modules(["basic", "data_science"]),
     "no setting allows it in the sandbox (loads shared libraries)"),
    # an ordinary module: the operator's extra imports; one that is not there: says so
    ("locale", profiles.BASIC, "the operator can add it with SANDBOX_ALLOWED_IMPORTS"),
    # and what to write instead, where there is an everyday answer
    ("argparse", profiles.BASIC, "instead: a snippet gets no command line (sys.argv == []): put the values"),
    ("concurrent.futures", profiles.BASIC, "instead: run the work in a plain loop, or wait on several things"),
    ("pickle", profiles.BASIC, "instead: serialise with json"),
    ("unittest", profiles.BASIC, "instead: check results with plain assert statements"),
    ("no_such_module_here", profiles.BASIC, "no_such_module_here is not installed on this server"),
    ("no_such_module_here.sub", profiles.BASIC, "no_such_module_here is not installed on this server"),
])
def test_an_import_refusal_says_what_would_change_it(name, allowed, advice):
    """What the snippet reads when an import is refused: not only "not allowed"."""
    assert not profiles.permits(name, allowed)
    assert advice in profiles.import_advice(name, allowed)


def test_the_data_science_profile_is_the_audited_libraries_only():
    """Each library of the profile has its table of doors (restricted/libraries/); plotly has
    none and stays the operator's call, unaudited; patsy and formulaic evaluate formula strings
    as Python with the real builtins, and only statsmodels' checked formulas reach them."""
    assert profiles.DATA_SCIENCE == {"numpy", "pandas", "scipy", "matplotlib", "matplotlib.pyplot", "sympy",
                                     "sklearn", "seaborn", "statsmodels"}
    data = profiles.allowed_modules(["basic", "data_science"])
    for name in ("statsmodels", "statsmodels.formula.api", "statsmodels.api", "seaborn", "sklearn",
                 "sklearn.linear_model"):
        assert profiles.permits(name, data), name
    everything = profiles.allowed_modules(["basic", "data_science", "network", "filesystem"])
    for name in ("patsy", "formulaic", "plotly"):
        assert not profiles.permits(name, everything), name
    assert profiles.check_extra_imports(["plotly"]) == []   # the operator's call, unaudited
    assert profiles.check_extra_imports(["patsy"]) != []


def test_the_import_advice_never_names_a_switch_for_what_no_switch_allows():
    for name in NEVER:
        advice = profiles.import_advice(name, profiles.allowed_modules(["basic", "data_science", "network"]))
        assert "SANDBOX_" not in advice and "no setting allows it" in advice, (name, advice)


@pytest.mark.parametrize("requested", [["*"], ["os.*"], ["packaging.*"], ["json.*"], ["math", "*"]])
def test_a_call_cannot_widen_the_modules_with_a_wildcard(requested):
    """allowed_imports of one call narrows: a wildcard is taken only when the server has it."""
    from sandbox.config import load_settings
    from sandbox.mcp.request_checks import RequestRefused, narrow_imports
    settings = load_settings({})
    with pytest.raises(RequestRefused):
        narrow_imports(requested, settings.allowed_modules(), settings)


def test_a_call_may_name_a_configured_wildcard_or_a_module_under_it():
    from sandbox.config import load_settings
    from sandbox.mcp.request_checks import narrow_imports
    settings = load_settings({"SANDBOX_ALLOWED_IMPORTS": "packaging.*"})
    allowed = settings.allowed_modules()
    assert narrow_imports(["packaging.*"], allowed, settings) == {"packaging.*"}
    assert narrow_imports(["packaging.version"], allowed, settings) == {"packaging.version"}


@pytest.mark.parametrize("enabled", [["basic"], ["basic", "filesystem", "network"], ["basic", "data_science"]])
def test_the_python_layer_claim_leaves_out_the_extra_imports(enabled):
    claim = profiles.python_layer_claim(enabled, True, ["seaborn"])
    assert claim.startswith(profiles.python_layer_claim(enabled, True)), claim
    assert claim.endswith("(seaborn): they are not audited, and what they reach the kernel layers alone confine")
    assert profiles.python_layer_claim(enabled, False, ["seaborn"]) == profiles.python_layer_claim(enabled, False)

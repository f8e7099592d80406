"""SANDBOX_NETWORK_ALLOW: what the egress proxy may connect to, decided on the
name asked for and again on the address it resolved (egress_policy.py)."""

from __future__ import annotations

import ipaddress

import pytest

from sandbox import network_allow as egress_policy
from sandbox.network_allow import PolicyError, parse, parse_address

DEFAULT = parse("")


@pytest.mark.parametrize("address, kind", [
    ("127.0.0.1", "loopback"), ("127.8.9.10", "loopback"), ("::1", "loopback"),
    ("10.1.2.3", "private"), ("172.16.0.1", "private"), ("192.168.1.1", "private"), ("fd00::2", "private"),
    ("169.254.169.254", "link-local"),       # the cloud metadata service
    ("fe80::1", "link-local"), ("224.0.0.251", "multicast"), ("ff02::1", "multicast"),
    ("0.0.0.0", "unspecified"), ("::", "unspecified"),
    ("100.64.0.1", None),                    # carrier-grade NAT (its kind differs across Pythons)
    ("::ffff:127.0.0.1", "loopback"), ("::ffff:169.254.169.254", "link-local"),   # IPv4-mapped
    ("240.0.0.1", None), ("192.0.2.2", None),  # reserved, documentation
    # Python releases disagree on these: the policy must not
    ("2002:7f00:1::1", "tunnelled"), ("2002:808:808::1", "tunnelled"),   # 6to4, even of a public address
    ("fec0::1", "private"), ("3fff::1", "reserved"), ("192.0.0.8", "reserved"), ("192.0.0.9", "reserved"),
    ("64:ff9b::7f00:1", None), ("64:ff9b::808:808", None),           # NAT64
])
def test_non_public_addresses_are_refused_by_default(address, kind):
    why = DEFAULT.refuse_address(parse_address(address), 80)
    assert why is not None and why.startswith(kind or ""), why
    assert "SANDBOX_NETWORK_ALLOW" in why      # says what would open it
    assert DEFAULT.refuse_name(address, 80) == why   # asked for as a literal: the same answer


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "93.184.216.34"])
def test_public_addresses_and_any_name_pass_by_default(address):
    assert DEFAULT.refuse_address(parse_address(address), 443) is None
    assert DEFAULT.refuse_name(address, 443) is None
    assert DEFAULT.refuse_name("example.com", 443) is None


def test_own_addresses_of_this_host_count_as_its_own():
    assert egress_policy.is_own_address(ipaddress.ip_address("127.0.0.1"))
    assert not egress_policy.is_own_address(ipaddress.ip_address("8.8.8.8"))


POLICY = parse("127.0.0.1:8080, .example.com, api.test.org:443, 10.0.0.0/8:5432, [::1]:9000")


@pytest.mark.parametrize("host, port, allowed", [
    ("example.com", 1, True), ("a.b.example.com", 443, True),
    ("badexample.com", 443, False), ("example.com.evil.net", 443, False),
    ("api.test.org", 443, True), ("api.test.org", 80, False), ("x.api.test.org", 443, False),
    ("127.0.0.1", 8080, True), ("127.0.0.1", 8081, False), ("::1", 9000, True), ("::1", 9001, False),
    ("10.9.8.7", 5432, True), ("10.9.8.7", 22, False),
    ("8.8.8.8", 80, False),                  # a public literal not on the list
    ("localhost", 8080, False),              # a name is not the address it resolves to
])
def test_an_allow_list_opens_exactly_its_entries(host, port, allowed):
    why = POLICY.refuse_name(host, port)
    address = parse_address(host)
    if address is not None and why is None:
        why = POLICY.refuse_address(address, port)
    assert (why is None) is allowed, why


def test_a_name_entry_never_opens_a_private_address_its_dns_returns():
    """DNS rebinding and internal names: the check is on the resolved address."""
    policy = parse("localhost, .internal.example")
    assert policy.refuse_name("localhost", 80) is None
    assert policy.refuse_address(parse_address("127.0.0.1"), 80).startswith("loopback")
    assert policy.refuse_address(parse_address("10.0.0.5"), 80).startswith("private")
    assert policy.refuse_address(parse_address("93.184.216.34"), 80) is None
    # the same addresses, named, are open
    assert parse("localhost, 127.0.0.1").refuse_address(parse_address("127.0.0.1"), 80) is None


def test_names_are_matched_case_and_trailing_dot_insensitive():
    policy = parse("Example.COM.")
    assert policy.refuse_name(egress_policy.normalise_host("EXAMPLE.com."), 80) is None


@pytest.mark.parametrize("text", ["exa$mple.com", "example.com:0", "example.com:99999", "example.com:http",
                                  "[::1", "[::1]x", "10.0.0.0/40", "a..b", "-", "*.", "1.2.3.4.5/8"])
def test_bad_entries_are_refused(text):
    with pytest.raises(PolicyError):
        parse(text)


def test_describe_and_opens_private():
    assert DEFAULT.describe() == "any public address" and not DEFAULT.opens_private
    assert POLICY.describe() == "only 127.0.0.1:8080, .example.com, api.test.org:443, 10.0.0.0/8:5432, [::1]:9000"
    assert POLICY.opens_private
    assert not parse("example.com, 93.184.216.34").opens_private

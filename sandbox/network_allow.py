"""SANDBOX_NETWORK_ALLOW: which destinations the network profile's egress proxy may connect to.

SANDBOX_NETWORK_ALLOW is a comma list of entries, each with an optional port:
  example.com            that host exactly
  .example.com           example.com and every name under it (also *.example.com)
  203.0.113.7, [2001:db8::1]:443, 10.1.0.0/16:5432
                         an address or network, named explicitly
Empty (the default): any host name, at a public address.

The check is made twice: on the name the snippet asked for, then on each
address the proxy's own resolver returned, which is the address it then
connects to (no second lookup, so no rebinding in between). An address that is
not public (loopback, private, link-local such as the cloud metadata service,
shared, multicast, reserved, 6to4, unspecified) or that belongs to this host (its
own services, this server's ports) is refused unless an address entry names
it: a host-name entry never opens one, whatever its DNS says.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class PolicyError(ValueError):
    """An entry of SANDBOX_NETWORK_ALLOW that cannot be read."""


@dataclass(frozen=True)
class Entry:
    host: str | None = None                 # a host name, lower case
    suffix: bool = False                    # host and every name under it
    network: ipaddress.IPv4Network | ipaddress.IPv6Network | None = None
    port: int | None = None                 # None: any port

    def matches_name(self, host: str, port: int) -> bool:
        if self.host is None or self.port not in (None, port):
            return False
        return host == self.host or (self.suffix and host.endswith("." + self.host))

    def names_address(self, address: Address, port: int) -> bool:
        return self.network is not None and self.port in (None, port) and address in self.network


@dataclass(frozen=True)
class Policy:
    entries: tuple[Entry, ...] = ()

    @property
    def any_public_host(self) -> bool:
        return not self.entries

    @property
    def opens_private(self) -> bool:
        """An address entry names loopback, a private range or another non-public address."""
        return any(entry.network is not None and address_kind(entry.network.network_address) is not None
                   for entry in self.entries)

    def describe(self) -> str:
        return ("any public address" if self.any_public_host
                else "only " + ", ".join(_show(entry) for entry in self.entries))

    def refuse_name(self, host: str, port: int) -> str | None:
        """Why this host name or address literal may not be asked for, else None."""
        literal = parse_address(host)
        if literal is not None:
            if self.entries and not any(entry.names_address(_unmapped(literal), port) for entry in self.entries):
                return f"address not in SANDBOX_NETWORK_ALLOW ({host}:{port})"
            return self.refuse_address(literal, port)
        if self.any_public_host or any(entry.matches_name(host, port) for entry in self.entries):
            return None
        return f"host not in SANDBOX_NETWORK_ALLOW ({host}:{port})"

    def refuse_address(self, address: Address, port: int) -> str | None:
        """Why the proxy may not connect to this address (the one it resolved
        or was given), else None."""
        address = _unmapped(address)
        if any(entry.names_address(address, port) for entry in self.entries):
            return None
        kind = address_kind(address)
        if kind is not None:
            return (f"{kind} address {address} refused: only an address entry in SANDBOX_NETWORK_ALLOW "
                    "opens it")
        return None


def parse(text: str) -> Policy:
    entries = []
    for raw in text.replace(" ", ",").split(","):
        if raw.strip():
            entries.append(_entry(raw.strip()))
    return Policy(tuple(entries))


def _entry(raw: str) -> Entry:
    host, port = _split_port(raw)
    if "/" in host or parse_address(host) is not None:
        try:
            network = ipaddress.ip_network(host.strip("[]"), strict=False)
        except ValueError:
            raise PolicyError(f"{raw!r}: not an address or network") from None
        return Entry(network=network, port=port)
    suffix = host.startswith(("*.", "."))
    name = normalise_host(host.lstrip("*").lstrip("."))
    if not name or not all(label and len(label) <= 63 and label.replace("-", "").replace("_", "").isalnum()
                           for label in name.split(".")):
        raise PolicyError(f"{raw!r}: not a host name")
    return Entry(host=name, suffix=suffix, port=port)


def _split_port(raw: str) -> tuple[str, int | None]:
    if raw.startswith("["):                      # [v6]:port or [v6]
        host, bracket, rest = raw[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else None
        if not bracket or rest and port is None:
            raise PolicyError(f"{raw!r}: expected [address]:port")
    elif raw.count(":") == 1:
        host, port = raw.split(":")
    else:
        host, port = raw, None                   # a bare IPv6 address has several colons
    if port is None:
        return host, None
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise PolicyError(f"{raw!r}: the port must be a number from 1 to 65535")
    return host, int(port)


def _show(entry: Entry) -> str:
    if entry.network is not None:
        single = entry.network.prefixlen == entry.network.max_prefixlen
        where = str(entry.network.network_address) if single else str(entry.network)
        if entry.port and entry.network.version == 6:
            where = f"[{where}]"
    else:
        where = ("." if entry.suffix else "") + entry.host
    return where + (f":{entry.port}" if entry.port else "")


def normalise_host(host: str) -> str:
    return host.strip().rstrip(".").lower()


def parse_address(text: str) -> Address | None:
    try:
        return ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return None


def _unmapped(address: Address) -> Address:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped           # ::ffff:127.0.0.1 is 127.0.0.1
    return address


# Ranges that Python's ipaddress tables call public in some releases and not in
# others (3.13 updated them from IANA's registry): decided here, so that the
# policy does not change with the Python the server runs on.
_NOT_PUBLIC_IN_EVERY_PYTHON = tuple((ipaddress.ip_network(network), kind) for network, kind in (
    ("192.0.0.0/24", "reserved"),            # IETF protocol assignments
    ("2002::/16", "tunnelled"),              # 6to4: relays reach the IPv4 address inside it
    ("fec0::/10", "private"),                # deprecated site-local
    ("3fff::/20", "reserved"),               # documentation (RFC 9637)
))


def address_kind(address: Address) -> str | None:
    """What makes an address private to this host or its networks, or None
    when it is a public one."""
    address = _unmapped(address)
    for network, kind in _NOT_PUBLIC_IN_EVERY_PYTHON:
        if address in network:
            return kind
    for kind, test in (("unspecified", "is_unspecified"), ("loopback", "is_loopback"),
                       ("link-local", "is_link_local"), ("multicast", "is_multicast"),
                       ("private", "is_private"), ("reserved", "is_reserved")):
        if getattr(address, test):
            return kind
    if not address.is_global:
        return "non-public"
    if is_own_address(address):
        return "this host's own"
    return None


def is_own_address(address: Address) -> bool:
    """True for an address of one of this host's interfaces: binding to it works
    only then, and a service listening on all addresses is reachable there."""
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.bind((str(address), 0))
        return True
    except OSError:
        return False

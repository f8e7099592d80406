"""The network profile: the sandbox keeps its own network namespace and goes
out only through the server's egress proxy, to what SANDBOX_NETWORK_ALLOW
opens. Every success here is against a server on this machine's 127.0.0.1,
allowed explicitly; nothing reaches outside the machine.

Run with RestrictedPython on and off; the namespace and Landlock tests switch
Landlock off to show that the network namespace alone holds."""

from __future__ import annotations

import asyncio
import fcntl
import importlib.util
import os
import socket
import threading
import time

import pytest
from local_http import serving, serving_tls

from runner_harness import MiB, SyncRunner
from slowness import scaled

from sandbox import profiles
from sandbox import network_allow as egress_policy
from sandbox.egress import proxy as egress_proxy
from sandbox.forkserver.runner import ExecRequest

NETWORK = profiles.allowed_modules(["basic", "network"])
BODY = b"hello through the proxy"


@pytest.fixture(scope="module")
def http_port():
    with serving(BODY) as port:
        yield port


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    with serving_tls(b"hello over tls", tmp_path_factory.mktemp("tls")) as served:
        yield served


def make_runner(allow: str = "", **config) -> SyncRunner:
    return SyncRunner(network=True, network_policy=egress_policy.parse(allow), **config)


@pytest.fixture(scope="module")
def allowing():
    runner = make_runner("127.0.0.1")
    yield runner
    runner.close()


@pytest.fixture(scope="module")
def default_policy():
    runner = make_runner("")
    yield runner
    runner.close()


@pytest.fixture(scope="module")
def no_landlock():
    """Only the namespace stands between the snippet and the host's network."""
    runner = make_runner("127.0.0.1", disabled_layers=frozenset({"landlock"}))
    yield runner
    runner.close()


def run(runner, code, restricted=True, timeout=15):
    return runner.run(code, restricted=restricted, allowed=NETWORK, timeout=timeout)


GET = ("import urllib.request\n"
       "result = urllib.request.urlopen('{url}', timeout=5).read().decode()")


# ----------------------------------------------------------------------------- what works


@pytest.mark.parametrize("restricted", [True, False])
def test_http_get_through_the_proxy(allowing, http_port, restricted):
    r = run(allowing, GET.format(url=f"http://127.0.0.1:{http_port}/path?q=1"), restricted)
    assert r["success"] and r["result"] == BODY.decode(), r
    [connection] = r["network"]
    assert connection["allowed"] and connection["method"] == "GET", connection
    assert (connection["host"], connection["port"], connection["address"]) == ("127.0.0.1", http_port, "127.0.0.1")
    assert connection["bytes_received"] > len(BODY) and connection["bytes_sent"] > 0
    assert not r["security_events"]


def test_https_through_a_connect_tunnel(allowing, tls):
    port, pem = tls
    code = ("import ssl, urllib.request\n"
            f"context = ssl.create_default_context(cadata={pem!r})\n"
            f"result = urllib.request.urlopen('https://127.0.0.1:{port}/', context=context, timeout=5).read().decode()")
    r = run(allowing, code, restricted=False)
    assert r["success"] and r["result"] == "hello over tls", r
    [connection] = r["network"]
    assert connection["method"] == "CONNECT" and connection["allowed"] and connection["port"] == port


def test_a_connect_tunnel_with_restricted_python(allowing, http_port):
    code = ("import http.client\n"
            "c = http.client.HTTPConnection('127.0.0.1', 3128, timeout=5)\n"
            f"c.set_tunnel('127.0.0.1', {http_port})\n"
            "c.request('GET', '/')\n"
            "result = c.getresponse().read().decode()")
    r = run(allowing, code)
    assert r["success"] and r["result"] == BODY.decode(), r
    assert r["network"][0]["method"] == "CONNECT"


@pytest.mark.skipif(importlib.util.find_spec("requests") is None, reason="requests is not installed")
@pytest.mark.parametrize("restricted", [True, False])
def test_requests_works_unchanged(allowing, http_port, restricted):
    r = run(allowing, f"import requests\nresult = requests.get('http://127.0.0.1:{http_port}/', timeout=5).text",
            restricted)
    assert r["success"] and r["result"] == BODY.decode(), r


def test_urlretrieve_writes_into_the_snippets_directory(allowing, http_port):
    r = run(allowing, "import urllib.request\n"
                      f"name, headers = urllib.request.urlretrieve('http://127.0.0.1:{http_port}/', 'page.txt')\n"
                      "result = [name, open('page.txt').read()]")
    assert r["success"] and r["result"] == ["/tmp/work/page.txt", BODY.decode()], r
    r = run(allowing, "import urllib.request\n"  # (no name: a file of its own in the same directory)
                      f"name, headers = urllib.request.urlretrieve('http://127.0.0.1:{http_port}/')\n"
                      "result = [name.startswith('/tmp/work/urlretrieve-'), open(name).read()]")
    assert r["success"] and r["result"] == [True, BODY.decode()], r


@pytest.mark.parametrize("code", [
    # the file urlretrieve writes is opened with the snippet's open(): the scratch directory only
    "import urllib.request\nurllib.request.urlretrieve('http://127.0.0.1:{port}/', '/etc/cron.d/x')",
    "import urllib.request\nurllib.request.urlretrieve('http://127.0.0.1:{port}/', filename='../../etc/x')",
    "import urllib.request\nurllib.request.URLopener().retrieve('http://127.0.0.1:{port}/', 'x')",
])
def test_the_network_profile_writes_no_file_outside_the_scratch_directory(allowing, http_port, code):
    """With the kernel layers on, these paths are not there anyway: the Python layer must
    refuse them on its own (the network profile's door is the network)."""
    r = run(allowing, code.format(port=http_port))
    assert not r["success"] and r["error_type"] == "security_violation", r


def test_requests_reads_no_netrc(http_port):
    """requests sends the ~/.netrc credentials it finds for a host; while a restricted
    snippet runs it finds none. Kernel layers off, so that the child's home (HOME=/tmp)
    is the host's /tmp, where the test plants one."""
    from sandbox.layer_names import KERNEL_LAYERS
    netrc = "/tmp/.netrc"
    # The child's home is the one /tmp of the machine: another run of this test waits
    # for this one (a lock on the directory itself, which leaves nothing behind).
    tmp = os.open("/tmp", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    fcntl.flock(tmp, fcntl.LOCK_EX)
    try:
        fd = os.open(netrc, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        os.close(tmp)
        pytest.skip("/tmp/.netrc exists already: not overwritten by a test")
    with os.fdopen(fd, "w") as f:
        f.write("machine example.com login alice password s3cret\n")
    runner = make_runner("127.0.0.1", disabled_layers=frozenset(KERNEL_LAYERS))
    try:
        code = ("import requests\nresult = [str(requests.utils.get_netrc_auth('https://example.com/')), "
                "requests.utils.extract_zipped_paths('/x.zip/y')]")
        r = run(runner, code)
        assert r["success"] and r["result"] == ["None", "/x.zip/y"], r
        r = run(runner, code, restricted=False)  # (the file is readable: the test can fail)
        assert r["success"] and "s3cret" in r["result"][0], r
    finally:
        os.remove(netrc)
        runner.close()
        os.close(tmp)   # releases the lock


# ----------------------------------------------------------------------------- what the policy refuses


def test_a_server_not_on_the_list_is_refused(http_port):
    runner = make_runner(f"127.0.0.1:{http_port + 1}, example.com")
    try:
        r = run(runner, GET.format(url=f"http://127.0.0.1:{http_port}/"))
        assert not r["success"] and "not in SANDBOX_NETWORK_ALLOW" in r["error"], r
        [connection] = r["network"]
        assert not connection["allowed"] and "not in SANDBOX_NETWORK_ALLOW" in connection["reason"]
        [event] = r["security_events"]
        assert event["kind"] == "network_refused" and event["source"] == "server", event
        assert BODY.decode() not in str(r)
    finally:
        runner.close()


REFUSED_BY_DEFAULT = [
    ("http://127.0.0.1:{port}/", "loopback"),
    ("http://[::1]:{port}/", "loopback"),
    ("http://0.0.0.0:{port}/", "unspecified"),
    ("http://localhost:{port}/", "resolves to a refused address: loopback"),   # DNS answer on loopback
    ("http://169.254.169.254/latest/meta-data/", "link-local"),                # cloud metadata
    ("http://10.0.0.1/", "private"),
    ("http://192.168.0.1/", "private"),
    ("http://[::ffff:127.0.0.1]:{port}/", "loopback"),
    ("https://127.0.0.1:{port}/", "loopback"),                                 # CONNECT
]


@pytest.mark.parametrize("restricted", [True, False])
def test_loopback_private_and_link_local_are_refused_by_default(default_policy, http_port, restricted):
    urls = [url.format(port=http_port) for url, _ in REFUSED_BY_DEFAULT]
    code = ("import urllib.request\nresult = []\n"
            f"for url in {urls!r}:\n"
            "    try:\n"
            "        result.append('GOT ' + urllib.request.urlopen(url, timeout=5).read().decode())\n"
            "    except Exception as e:\n"
            "        result.append(str(e))")
    r = run(default_policy, code, restricted)
    assert r["success"], r
    for (url, reason), answer in zip(REFUSED_BY_DEFAULT, r["result"]):
        assert reason in answer and "GOT" not in answer, (url, answer)
    assert len(r["network"]) == len(REFUSED_BY_DEFAULT) and not any(c["allowed"] for c in r["network"])
    assert len(r["security_events"]) == len(REFUSED_BY_DEFAULT)


def test_a_name_allowed_is_still_refused_when_it_resolves_to_loopback(http_port):
    runner = make_runner("localhost")
    try:
        r = run(runner, GET.format(url=f"http://localhost:{http_port}/"))
        assert not r["success"] and "resolves to a refused address: loopback" in r["error"], r
    finally:
        runner.close()


# ----------------------------------------------------------------------------- the namespace holds alone


def test_raw_sockets_reach_nothing_without_landlock(no_landlock, http_port):
    code = ("import socket\nresult = {}\n"
            f"for name, family, kind, address in [('tcp host server', socket.AF_INET, socket.SOCK_STREAM, ('127.0.0.1', {http_port})),\n"
            "        ('tcp outside', socket.AF_INET, socket.SOCK_STREAM, ('192.0.2.1', 80)),\n"
            "        ('tcp6 outside', socket.AF_INET6, socket.SOCK_STREAM, ('2001:db8::1', 80)),\n"
            "        ('udp outside', socket.AF_INET, socket.SOCK_DGRAM, ('192.0.2.1', 53))]:\n"
            "    s = socket.socket(family, kind)\n"
            "    s.settimeout(3)\n"
            "    try:\n"
            "        s.connect(address)\n"
            "        s.send(b'x')\n"
            "        result[name] = 'reached'\n"
            "    except OSError as e:\n"
            "        result[name] = e.strerror\n"
            "    s.close()")
    r = run(no_landlock, code, restricted=False)
    assert r["success"], r
    assert r["result"]["tcp host server"] == "Connection refused", r   # its own, empty loopback
    for name in ("tcp outside", "tcp6 outside", "udp outside"):
        assert r["result"][name] in ("Network is unreachable", "Cannot assign requested address"), r


def test_landlock_alone_allows_tcp_only_to_the_proxy_port(allowing, http_port):
    code = ("import socket\nresult = {}\n"
            f"for port in (3128, {http_port}):\n"
            "    s = socket.socket()\n"
            "    try:\n"
            "        s.connect(('127.0.0.1', port))\n"
            "        result[port] = 'connected'\n"
            "    except OSError as e:\n"
            "        result[port] = e.strerror\n"
            "    s.close()\n"
            "try:\n"
            "    socket.socket().bind(('127.0.0.1', 0))\n"
            "    result['bind'] = 'bound'\n"
            "except OSError as e:\n"
            "    result['bind'] = e.strerror")
    r = run(allowing, code, restricted=False)
    assert r["result"] == {"3128": "connected", str(http_port): "Permission denied", "bind": "Permission denied"}, r


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


LISTEN = """import select, socket, time
result = {{}}
listeners = []
for name, family, kind, address in [('abstract', socket.AF_UNIX, socket.SOCK_STREAM, '\\0{abstract}'),
        ('path', socket.AF_UNIX, socket.SOCK_STREAM, '/tmp/listen.sock'),
        ('tcp', socket.AF_INET, socket.SOCK_STREAM, ('127.0.0.1', {tcp})),
        ('tcp any', socket.AF_INET, socket.SOCK_STREAM, ('0.0.0.0', {tcp2})),
        ('udp', socket.AF_INET, socket.SOCK_DGRAM, ('127.0.0.1', {udp}))]:
    s = socket.socket(family, kind)
    s.bind(address)
    if kind == socket.SOCK_STREAM:
        s.listen(8)
    listeners.append((name, s))
    result[name] = 'bound'
end = time.time() + {wait}
while time.time() < end:
    ready, _, _ = select.select([s for _, s in listeners], [], [], 0.1)
    for s in ready:
        result[[n for n, l in listeners if l is s][0]] = 'CONTACTED'
        try:
            s.accept()[0].close()
        except OSError:
            s.recv(100)
"""


def test_nothing_the_sandbox_binds_is_reachable_from_the_host(no_landlock):
    names = dict(abstract=f"sbx-egress-{time.time_ns()}", tcp=_free_port(), tcp2=_free_port(), udp=_free_port())
    got: dict = {}
    worker = threading.Thread(target=lambda: got.update(
        r=run(no_landlock, LISTEN.format(wait=3, **names), restricted=False)))
    worker.start()
    attempts = []
    while worker.is_alive():   # for as long as the snippet listens
        for family, kind, address in ((socket.AF_UNIX, socket.SOCK_STREAM, "\0" + names["abstract"]),
                                      (socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", names["tcp"])),
                                      (socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", names["tcp2"]))):
            with socket.socket(family, kind) as s:
                s.settimeout(0.5)
                try:
                    s.connect(address)
                    attempts.append(f"reached {address!r}")
                except OSError:
                    pass
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(b"ping", ("127.0.0.1", names["udp"]))
        time.sleep(0.1)
    worker.join()
    r = got["r"]
    assert r["success"], r
    assert r["result"] == {"abstract": "bound", "path": "bound", "tcp": "bound", "tcp any": "bound",
                           "udp": "bound"}, r
    assert attempts == []


def test_two_sandboxes_cannot_reach_each_other(no_landlock):
    names = dict(abstract=f"sbx-peer-{time.time_ns()}", tcp=_free_port(), tcp2=_free_port(), udp=_free_port())
    probe = ("import socket, time\nresult = []\ntime.sleep(0.5)\n"
             f"for family, address in [(socket.AF_UNIX, '\\0{names['abstract']}'), (socket.AF_UNIX, '/tmp/listen.sock'),\n"
             f"        (socket.AF_INET, ('127.0.0.1', {names['tcp']})), (socket.AF_INET, ('127.0.0.1', {names['tcp2']}))]:\n"
             "    s = socket.socket(family, socket.SOCK_STREAM)\n"
             "    s.settimeout(1)\n"
             "    try:\n"
             "        s.connect(address)\n"
             "        result.append('reached')\n"
             "    except OSError as e:\n"
             "        result.append(e.strerror)\n"
             f"socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', {names['udp']}))")
    requests = [ExecRequest(code=code, timeout=15, memory_limit=128 * MiB, allowed_modules=frozenset(NETWORK),
                            restricted=False) for code in (LISTEN.format(wait=3, **names), probe)]

    async def both():
        return await asyncio.gather(*(no_landlock.runner.execute(request) for request in requests))

    listener, prober = no_landlock.loop.run_until_complete(both())
    assert listener["success"] and "CONTACTED" not in str(listener["result"]), listener
    assert prober["success"] and "reached" not in prober["result"], prober


def test_the_proxy_port_is_the_proxys(no_landlock):
    """The child handed its listener over and kept no copy: it can neither
    accept on it nor bind the port again."""
    code = ("import os, socket\n"
            "kinds = []\n"
            "for fd in map(int, os.listdir('/proc/self/fd')):\n"
            "    try:\n"
            "        kinds.append(socket.socket(fileno=os.dup(fd)).getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN))\n"
            "    except OSError:\n"
            "        pass\n"
            "s = socket.socket()\n"
            "try:\n"
            "    s.bind(('127.0.0.1', 3128))\n"
            "    bound = 'bound'\n"
            "except OSError as e:\n"
            "    bound = e.strerror\n"
            "result = [kinds, bound]")
    r = run(no_landlock, code, restricted=False)
    assert r["success"], r
    assert 1 not in r["result"][0] and r["result"][1] == "Address already in use", r


# ----------------------------------------------------------------------------- limits and hostile clients


def test_connection_and_byte_limits(http_port):
    runner = make_runner("127.0.0.1", network_limits=egress_proxy.Limits(max_connections=2, max_bytes=1 << 20))
    try:
        code = ("import urllib.request\nresult = []\n"
                "for _ in range(4):\n"
                "    try:\n"
                f"        result.append(urllib.request.urlopen('http://127.0.0.1:{http_port}/', timeout=2).read().decode())\n"
                "    except Exception as e:\n"
                "        result.append(str(e))")
        r = run(runner, code)
        assert r["result"][:2] == [BODY.decode()] * 2, r
        assert "connection limit reached" in r["result"][2], r   # told once, then no longer accepted
        assert "timed out" in r["result"][3], r
        # (records are kept as connections end: the refused third can end before the second)
        assert len(r["network"]) == 3, r["network"]
        assert [("connection limit" in c.get("reason", "")) for c in r["network"]].count(True) == 1, r["network"]
    finally:
        runner.close()
    with serving(b"x" * 200_000) as big:
        runner = make_runner("127.0.0.1", network_limits=egress_proxy.Limits(max_bytes=50_000))
        try:
            r = run(runner, GET.format(url=f"http://127.0.0.1:{big}/"))
            assert not r["success"], r
            [connection] = r["network"]
            assert "byte limit reached" in connection["reason"] and connection["bytes_received"] <= 50_000 + 65536
        finally:
            runner.close()


def test_a_connection_flood_costs_the_server_nothing_past_the_limit(allowing):
    """Refusals count against the limit too; past it the proxy stops accepting,
    so a snippet hammering the port cannot keep the server's event loop busy."""
    code = ("import socket, time\nanswered = 0\nend = time.time() + 2\n"
            "while time.time() < end:\n"
            "    s = socket.socket()\n"
            "    s.settimeout(0.05)\n"
            "    try:\n"
            "        s.connect(('127.0.0.1', 3128))\n"
            "        s.sendall(b'CONNECT 10.0.0.1:80 HTTP/1.1\\r\\n\\r\\n')\n"
            "        answered += bool(s.recv(100))\n"
            "    except OSError:\n"
            "        pass\n"
            "    s.close()\n"
            "result = answered")
    server_cpu = time.process_time()
    r = run(allowing, code, restricted=False)
    assert r["success"], r
    limit = egress_proxy.Limits().max_connections
    assert r["result"] <= limit + 1 and len(r["network"]) <= limit + 1, r
    assert all(not c["allowed"] for c in r["network"])
    assert time.process_time() - server_cpu < 1.5   # (a generous bound: the test's own process)


def test_no_fd_or_task_is_left_in_the_server(allowing, http_port):
    import os
    run(allowing, GET.format(url=f"http://127.0.0.1:{http_port}/"))
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(5):
        r = run(allowing, GET.format(url=f"http://127.0.0.1:{http_port}/"))
        assert r["success"], r
        r = run(allowing, "import socket\ns = socket.create_connection(('127.0.0.1', 3128))\n"
                          "s.sendall(b'GET http://127.0.0.1/ HTTP/1.1\\r\\n')", restricted=False)
    assert len(os.listdir("/proc/self/fd")) <= before
    assert not allowing.runner._egress
    pending = [t for t in asyncio.all_tasks(allowing.loop) if "egress" in repr(t.get_coro())]
    assert pending == [], pending


def test_junk_on_the_proxy_port_gets_an_error_and_the_proxy_keeps_serving(allowing, http_port):
    code = ("import socket, urllib.request\nresult = []\n"
            "for junk in [b'A' * 20000, b'garbage\\r\\n\\r\\n', b'GET ftp://127.0.0.1/ HTTP/1.1\\r\\n\\r\\n',\n"
            "             b'CONNECT nohost HTTP/1.1\\r\\n\\r\\n', b'GET http://bad host/ HTTP/1.1\\r\\n\\r\\n',\n"
            "             b'\\xff\\xfe\\x00\\r\\n\\r\\n']:\n"
            "    s = socket.create_connection(('127.0.0.1', 3128), timeout=5)\n"
            "    s.sendall(junk)\n"
            "    result.append(s.recv(200).split(b'\\r\\n')[0].decode('ascii', 'replace'))\n"
            "    s.close()\n"
            f"result.append(urllib.request.urlopen('http://127.0.0.1:{http_port}/', timeout=5).read().decode())")
    r = run(allowing, code, restricted=False)
    assert r["success"], r
    statuses = r["result"][:-1]
    assert statuses[0].startswith("HTTP/1.1 431") and all(s.startswith("HTTP/1.1 400") for s in statuses[1:]), r
    assert r["result"][-1] == BODY.decode()


def _forwarded_head(request: bytes) -> bytes:
    async def read():
        reader = asyncio.StreamReader()
        reader.feed_data(request[1:])
        session = egress_proxy.EgressSession(egress_policy.parse(""), egress_proxy.Limits())
        return await session._read_request(reader, request[:1])
    return asyncio.run(read())[3]


@pytest.mark.parametrize("url, host", [("http://example.com/a?b", b"example.com"),
                                       ("http://user:pw@example.com:8080/", b"example.com:8080"),
                                       ("http://[2001:db8::1]/", b"[2001:db8::1]")])
def test_a_plain_http_request_names_the_host_the_policy_checked(url, host):
    """The Host header goes with the URL the allow-list was checked on: one of the
    snippet's choosing would reach another site behind the same address (a CDN)."""
    head = _forwarded_head(f"GET {url} HTTP/1.1\r\nHost: internal.admin\r\nhOsT: other\r\n"
                           "Accept: */*\r\nProxy-Authorization: x\r\n\r\n".encode())
    lines = head.split(b"\r\n")
    assert [line for line in lines if line.lower().startswith(b"host:")] == [b"Host: " + host], head
    assert b"Accept: */*" in lines and b"Connection: close" in lines and b"internal" not in head
    assert not any(line.lower().startswith(b"proxy-") for line in lines)
    assert lines[0].startswith(b"GET /") and b"pw" not in head


def test_one_executions_name_lookups_hold_at_most_two_threads(monkeypatch):
    """A lookup that timed out still holds its worker thread (a name whose DNS server
    never answers holds it for the resolver's own timeouts): one execution's names
    must not take every worker from the other executions'. Eight lookups that hang:
    two threads at a time, and a slot is free only when its thread is."""
    running, most, release = [], [], threading.Event()

    def hanging_getaddrinfo(host, *args):
        running.append(host)
        most.append(len(running))
        release.wait(10)
        running.remove(host)
        raise socket.gaierror("no answer")

    monkeypatch.setattr(egress_proxy, "RESOLVE_TIMEOUT", 0.2)
    monkeypatch.setattr(egress_proxy.socket, "getaddrinfo", hanging_getaddrinfo)

    async def lookups():
        session = egress_proxy.EgressSession(egress_policy.parse(""), egress_proxy.Limits())
        outcomes = await asyncio.gather(*(session._destination(f"slow{i}.example", 443) for i in range(8)),
                                        return_exceptions=True)
        held = len(running)
        release.set()
        await asyncio.sleep(0.2)
        return outcomes, held

    outcomes, held = asyncio.run(lookups())
    assert all(isinstance(o, egress_proxy.Refused) and o.status == 502 for o in outcomes), outcomes
    assert held == 2 and max(most) == 2, (held, most)


SOCKS = ("import socket\n"
         "def socks(host, port, command=1, kind=None, methods=b'\\x00'):\n"
         "    s = socket.create_connection(('127.0.0.1', 3128), timeout=5)\n"
         "    s.sendall(b'\\x05' + bytes([len(methods)]) + methods)\n"
         "    greeting = s.recv(2)\n"
         "    if greeting != b'\\x05\\x00':\n"
         "        return s, greeting\n"
         "    if kind == 1:\n"
         "        address = b'\\x01' + socket.inet_aton(host)\n"
         "    else:\n"
         "        address = b'\\x03' + bytes([len(host)]) + host.encode()\n"
         "    s.sendall(bytes([5, command, 0]) + address + port.to_bytes(2, 'big'))\n"
         "    return s, s.recv(10)\n")


@pytest.mark.parametrize("restricted", [True, False])
def test_socks5_on_the_same_port(allowing, http_port, restricted):
    code = SOCKS + (f"s, reply = socks('127.0.0.1', {http_port}, kind=1)\n"
                    "s.sendall(b'GET / HTTP/1.0\\r\\nHost: x\\r\\n\\r\\n')\n"
                    "body = b''\n"
                    "while True:\n"
                    "    chunk = s.recv(4096)\n"
                    "    if not chunk:\n"
                    "        break\n"
                    "    body += chunk\n"
                    "result = [reply[1], body.split(b'\\r\\n\\r\\n', 1)[-1].decode()]")
    r = run(allowing, code, restricted)
    assert r["success"] and r["result"] == [0, BODY.decode()], r
    [record] = r["network"]
    assert record["method"] == "SOCKS5" and record["allowed"] and record["bytes_received"] > len(BODY), record


def test_socks5_refusals_use_its_reply_codes(default_policy, http_port):
    """Loopback is refused by default (code 2, not allowed by the ruleset), BIND and UDP
    are not supported (7), a client that offers only authentication gets 0xff."""
    code = SOCKS + (f"result = [socks('127.0.0.1', {http_port}, kind=1)[1][1],\n"
                    f"          socks('localhost', {http_port})[1][1],\n"
                    f"          socks('example.org', 80, command=2)[1][1],\n"
                    f"          socks('example.org', 80, command=3)[1][1],\n"
                    "          socks('example.org', 80, methods=b'\\x02')[1]]")
    r = run(default_policy, code, restricted=False)
    assert r["success"] and r["result"][:4] == [2, 2, 7, 7] and r["result"][4] == "b'\\x05\\xff'", r
    reasons = [n.get("reason", "") for n in r["network"]]
    assert any("loopback" in reason for reason in reasons), r["network"]
    assert r["security_events"] or any(n.get("status") == 403 for n in r["network"]), r


def test_the_executions_timeout_ends_its_connections(allowing, http_port):
    """A tunnel left open and a request head never finished: both end with the run."""
    code = ("import socket\n"
            "a = socket.create_connection(('127.0.0.1', 3128))\n"
            f"a.sendall(b'CONNECT 127.0.0.1:{http_port} HTTP/1.1\\r\\n\\r\\n')\n"
            "a.recv(100)\n"
            "b = socket.create_connection(('127.0.0.1', 3128))\n"
            "b.sendall(b'GET http://127.0.0.1/ HTTP/1.1\\r\\n')\n"
            "while True:\n"
            "    pass")
    started = time.monotonic()
    r = allowing.run(code, restricted=False, allowed=NETWORK, timeout=2)
    assert r["error_type"] == "timeout", r
    assert time.monotonic() - started < 2 + scaled(8)
    assert any(c.get("method") == "CONNECT" and c["allowed"] for c in r["network"]), r
    r = run(allowing, GET.format(url=f"http://127.0.0.1:{http_port}/"))
    assert r["success"], r


# ----------------------------------------------------------------------------- the profile off


def test_without_the_profile_there_is_no_proxy(http_port):
    runner = SyncRunner(network=False, disabled_layers=frozenset({"seccomp", "landlock"}))
    try:
        code = ("import os, socket\nresult = [os.environ.get('HTTP_PROXY')]\n"
                "for address in [('127.0.0.1', 3128), ('127.0.0.1', %d)]:\n"
                "    try:\n"
                "        socket.create_connection(address, timeout=2)\n"
                "        result.append('connected')\n"
                "    except OSError as e:\n"
                "        result.append(e.strerror)" % http_port)
        r = runner.run(code, restricted=False)
        assert r["success"] and r["result"][0] is None, r
        assert "connected" not in r["result"] and "network" not in r, r
    finally:
        runner.close()


# ----------------------------------------------------------------------------- through MCP


CAUGHT_403 = ("import urllib.request, urllib.error\n"
              "try:\n"
              "    result = urllib.request.urlopen('http://169.254.169.254/latest/', timeout=10).status\n"
              "except urllib.error.HTTPError as e:\n"
              "    result = e.code\n")


def test_through_mcp_the_model_is_told_and_the_audit_log_records_each_connection(http_port, tmp_path):
    from mcp_client import blocking_session
    log = tmp_path / "audit.jsonl"
    env = {"SANDBOX_ENABLE_NETWORK": "true", "SANDBOX_NETWORK_ALLOW": f"127.0.0.1:{http_port}",
           "SANDBOX_AUDIT_LOG": str(log)}
    with blocking_session(env) as server:
        description = server.tools["execute_code"].description
        assert "Network: HTTP(S) only" in description and f"127.0.0.1:{http_port}" in description
        info, _ = server.call("get_sandbox_info")
        assert "egress proxy" in info["layers"]["namespaces"]["detail"]
        assert f"127.0.0.1:{http_port}" in info["profiles"]["network"]["detail"]
        assert any(item["setting"] == "SANDBOX_NETWORK_ALLOW" for item in info["weakened_by"])  # loopback named
        data, _ = server.call("execute_code", {"code": GET.format(url=f"http://127.0.0.1:{http_port}/")})
        assert data["success"] and data["result"] == BODY.decode(), data
        data, result = server.call("execute_code", {"code": GET.format(url="http://169.254.169.254/latest/")})
        assert not data["success"] and "not in SANDBOX_NETWORK_ALLOW" in data["error"], data
        assert "not in SANDBOX_NETWORK_ALLOW" in result.content[0].text      # the model reads the reason
        assert data["network"][0]["allowed"] is False
        # a snippet that reads the refusal as an ordinary 403 still tells the model whose it was
        data, result = server.call("execute_code", {"code": CAUGHT_403})
        assert data["success"] and data["result"] == 403 and not result.is_error, data
        text = result.content[0].text
        assert "result: 403" in text and "refused by the sandbox's proxy (HTTP 403)" in text, text
        assert "not in SANDBOX_NETWORK_ALLOW" in text and "169.254.169.254:80" in text, text
    records = [__import__("json").loads(line) for line in log.read_text().splitlines()]
    connections = [r for r in records if r["event"] == "network"]
    assert [(c["host"], c["allowed"]) for c in connections] == [("127.0.0.1", True), ("169.254.169.254", False),
                                                                ("169.254.169.254", False)]
    assert connections[0]["bytes_received"] > 0
    refusals = [r for r in records if r["event"] == "security" and r["kind"] == "network_refused"]
    assert refusals and all("169.254.169.254" in r["detail"] and r["source"] == "server" for r in refusals)


def test_with_the_namespaces_layer_off_the_network_profile_has_no_way_out(http_port):
    runner = make_runner("127.0.0.1", disabled_layers=frozenset({"namespaces"}))
    try:
        assert "AF_UNIX only" in runner.layers()["seccomp"]["detail"]
        r = run(runner, GET.format(url=f"http://127.0.0.1:{http_port}/"), restricted=False)
        assert not r["success"] and BODY.decode() not in str(r), r
        r = run(runner, "import socket\nsocket.socket()", restricted=False)
        assert "Address family not supported" in r["error"], r
    finally:
        runner.close()


@pytest.mark.skipif(importlib.util.find_spec("numpy") is None or importlib.util.find_spec("requests") is None,
                    reason="needs the data-science libraries and requests")
def test_a_tls_socket_cannot_read_into_an_object_array(tmp_path):
    """With the network and data-science profiles, requests hands out its TLS socket
    (resp.raw.connection.sock on a kept-alive connection), and SSLSocket.read(len, buffer)
    filled an object array with what the server sent: object pointers of the server's
    choosing. read() is guarded like readinto() and recv_into()."""
    allowed = profiles.allowed_modules(["basic", "network", "data_science"])
    runner = SyncRunner(network=True, network_policy=egress_policy.parse("127.0.0.1"),
                        preload=tuple(profiles.profile_modules_available("data_science")), max_memory=1024 * MiB)
    try:
        with serving_tls(b"A" * 262144, tmp_path, keep_alive=True) as (port, _):
            code = ("import requests, numpy as np\n"
                    f"resp = requests.get('https://127.0.0.1:{port}/', verify=False, stream=True, timeout=5)\n"
                    "sock = resp.raw.connection.sock\n"
                    "a = np.array([None] * 4, dtype=object)\n"
                    "plain = bytearray(16)\n"
                    "got = sock.read(16, plain)\n"
                    "try:\n    sock.read(16, a)\n    result = [got, 'read into the object array']\n"
                    "except Exception as e:\n    result = [got, str(e)]")
            r = runner.run(code, allowed=allowed, timeout=20, memory=512 * MiB)
    finally:
        runner.close()
    assert r["success"], r
    assert r["result"][0] == 16, r                                  # a bytearray still works
    assert r["result"][1].startswith("read(): an object array's buffer is its object pointers"), r

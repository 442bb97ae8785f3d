"""web_fetch against local and special addresses, in every spelling: the canary server must hear nothing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from desktop.tools.web import WebFetchTool
from tests.security.harness import REFUSED, CanaryServer, Lab

pytestmark = pytest.mark.asyncio(loop_scope="module")

URLS: list[tuple[str, str]] = [
    ("loopback", "http://127.0.0.1:{port}/"),
    ("localhost", "http://localhost:{port}/"),
    ("localhost with a dot", "http://localhost.:{port}/"),
    ("IPv6 loopback", "http://[::1]:{port6}/"),
    ("IPv4-mapped IPv6", "http://[::ffff:127.0.0.1]:{port}/"),
    ("unspecified", "http://0.0.0.0:{port}/"),
    ("cloud metadata", "http://169.254.169.254/latest/meta-data/"),
    ("decimal loopback", "http://2130706433:{port}/"),
    ("hex loopback", "http://0x7f000001:{port}/"),
    ("octal loopback", "http://0177.0.0.1:{port}/"),
    ("short loopback", "http://127.1:{port}/"),
    ("private network", "http://192.168.1.1/"),
    ("credentials before the host", "http://example.com@127.0.0.1:{port}/"),
    ("file scheme", "file:///etc/passwd"),
    ("file scheme to the key", "file://{key}"),
    ("ftp scheme", "ftp://127.0.0.1:{port}/"),
    ("gopher scheme", "gopher://127.0.0.1:{port}/_GET"),
    ("data scheme", "data:text/plain;base64,aGk="),
    ("no scheme", "127.0.0.1:{port}/"),
]


def _url(template: str, lab: Lab) -> str:
    return (template.replace("{port}", str(lab.canary.port)).replace("{port6}", str(lab.canary6.port))
            .replace("{key}", str(lab.planted["key"])))


@pytest.mark.parametrize("template", [u[1] for u in URLS], ids=[u[0] for u in URLS])
async def test_local_and_special_addresses_are_refused(lab: Lab, template: str) -> None:
    assert await lab.attempt("web_fetch", {"url": _url(template, lab)}) == REFUSED


@pytest.fixture(scope="module")
def redirector(lab: Lab) -> Iterator[list[CanaryServer]]:
    """Public-looking servers (127.0.0.2, allowed like an intranet would be) that redirect to the canary."""
    servers = [CanaryServer("127.0.0.2", redirect_to=f"http://127.0.0.1:{lab.canary.port}/"),
               CanaryServer("127.0.0.2", redirect_to=f"http://[::1]:{lab.canary6.port}/"),
               CanaryServer("127.0.0.2", redirect_to="file:///etc/passwd")]
    previous = lab.core.tools.get("web_fetch")
    lab.core.tools.register(WebFetchTool(allow_networks=["127.0.0.2/32"]))
    yield servers
    lab.core.tools.register(previous)  # type: ignore[arg-type]
    for server in servers:
        server.close()


@pytest.mark.parametrize("which", [0, 1, 2], ids=["redirect to loopback", "redirect to [::1]",
                                                  "redirect to file"])
async def test_redirects_to_local_addresses_are_refused(lab: Lab, redirector: list[CanaryServer],
                                                        which: int) -> None:
    server = redirector[which]
    assert await lab.attempt("web_fetch", {"url": f"http://127.0.0.2:{server.port}/start"}) == REFUSED
    assert server.hits == ["/start"]  # the allowed first hop was fetched; its redirect was not followed

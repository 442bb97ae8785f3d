"""Which network a sandboxed command gets (`tools.exec.network`), and the bwrap words that give it.

- `internet` (the default): a network namespace of its own with loopback only, plus a relay on
  127.0.0.1:3128 inside it (socat) to the app's egress proxy (desktop/tools/egress.py), which reaches public
  internet addresses and nothing else. The usual proxy variables name the relay, so curl, pip, git over
  https and most package managers work; a program that ignores them finds no route. There is no DNS and no
  UDP inside: the proxy resolves names. Without socat this falls back to `off` and says so.
- `off`: a network namespace of its own with loopback only.
- `host`: this computer's network namespace, shared: its local services, the local network, and the
  abstract Unix sockets of the X server and of D-Bus buses (abstract sockets belong to the network
  namespace, so only a namespace of its own hides them). An explicit opt-in, shown as a warning.

The relay is started inside the sandbox, before the command, by a few lines of sh that wait until it
listens (the sandbox's own /proc/net/tcp), so a command's first connection never finds nothing there.
"""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

INTERNET, OFF, HOST = "internet", "off", "host"
RELAY = "socat"
PROXY_PORT = 3128
PROXY_URL = f"http://127.0.0.1:{PROXY_PORT}"
# Connections to the sandbox's own loopback (a server the command started itself) go direct.
_DIRECT = "localhost,127.0.0.1,::1"
_PROXY_VARIABLES = {**{name: PROXY_URL for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY",
                                                       "HTTPS_PROXY", "ALL_PROXY")},
                    "no_proxy": _DIRECT, "NO_PROXY": _DIRECT}
_RELAY_WAIT = 1000  # tries, 5 ms apart
_PRELUDE = """{relay} TCP-LISTEN:{port},bind=127.0.0.1,reuseaddr,fork {socket} </dev/null >/dev/null 2>&1 &
relay=$! tries=0
until grep -q ' 0100007F:{port_hex} 00000000:0000 0A ' /proc/net/tcp; do
  tries=$((tries + 1))
  if [ "$tries" -gt {wait} ] || ! kill -0 "$relay" 2>/dev/null; then
    echo "nanobot-tray: the sandbox's network relay ({relay_name}) did not start" >&2
    exit 125
  fi
  sleep 0.005
done
exec "$@"
"""


@dataclass(frozen=True)
class Network:
    """The network in force for sandboxed commands, in words for doctor and Settings."""

    mode: str  # internet, off or host: what commands really get
    description: str
    warning: bool = False  # shown as a warning: more reach than the default, or less than asked for
    relay: str | None = None  # socat's path (internet)


NOT_ENFORCED = Network(HOST, "not enforced: commands are not sandboxed, so they share this computer's network "
                             "(local services, the local network, the desktop's sockets) whatever "
                             "tools.exec.network says", warning=True)


def network_in_force(setting: str) -> Network:
    """What `tools.exec.network: setting` gives here (internet needs socat; without it: off, said so)."""
    if setting == HOST:
        return Network(HOST, "shared with this computer (tools.exec.network: host): commands reach whatever it "
                             "reaches — services on 127.0.0.1, the local network and its router, cloud metadata, "
                             "the X server and D-Bus buses on abstract sockets", warning=True)
    if setting == OFF:
        return Network(OFF, "off (tools.exec.network: off): commands have no network")
    relay = shutil.which(RELAY)
    if relay is None:
        return Network(OFF, "off: tools.exec.network is internet, but socat is not installed (install the `socat` "
                            "package); until then commands have no network", warning=True)
    return Network(INTERNET, "internet (tools.exec.network: internet): public internet addresses only, through "
                             "the app's proxy, for programs that use the proxy settings (curl, pip, git over "
                             "https, package managers); this computer's own services, the local network, "
                             "link-local and cloud metadata addresses are refused, and the desktop's X server "
                             "and D-Bus sockets are out of reach", relay=relay)


def bwrap_words(network: Network, egress: Path | None) -> list[str]:
    """The bwrap options for `network`; `egress` is the proxy's socket (internet), bound at the same path:
    there either its folder is hidden (an empty one where bwrap can make the mount point) or the socket
    itself is the mount point. After the mounts, so it shows through a hidden folder."""
    if network.mode == HOST:
        return []
    if network.mode == OFF:
        return ["--unshare-net"]
    if egress is None:
        raise ValueError("internet mode needs the egress proxy's socket")
    words = ["--unshare-net", "--ro-bind", str(egress), str(egress)]
    for name, value in _PROXY_VARIABLES.items():
        words += ["--setenv", name, value]
    return words


def relayed(argv: Sequence[str], network: Network, egress: Path | None) -> list[str]:
    """`argv` preceded, in internet mode, by the relay to the proxy's socket `egress` (the command replaces
    the sh that waits for the relay)."""
    if network.mode != INTERNET or network.relay is None or egress is None:
        return list(argv)
    script = _PRELUDE.format(relay=shlex.quote(network.relay), relay_name=RELAY, port=PROXY_PORT,
                             port_hex=f"{PROXY_PORT:04X}", socket=shlex.quote(f"UNIX-CONNECT:{egress}"),
                             wait=_RELAY_WAIT)
    return ["/bin/sh", "-c", script, "sh", *argv]

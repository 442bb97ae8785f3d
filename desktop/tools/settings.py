"""The `tools` section of config.yaml: what the file, shell and web tools may do (desktop/config.py says how
a section is declared). desktop/tools/limits.py says how each limit on a command holds."""

from __future__ import annotations

from dataclasses import dataclass

from desktop.config import MB, SECONDS, Unit, section, setting
from desktop.tools.sandbox_network import HOST, INTERNET, OFF

MAX_TIMEOUT = 600  # seconds: the longest a command may run, whatever config.yaml or the model asks


@dataclass
class ExecConfig:
    timeout: int = setting(60, low=1, high=MAX_TIMEOUT, unit=SECONDS, label="Stop a command after",
                           help="Seconds a shell command may run before it is stopped.")
    network: str = setting(INTERNET, label="Network for commands",
                           choices={INTERNET: "Public internet only", OFF: "No network",
                                    HOST: "This computer's network (not recommended)"},
                           former={True: INTERNET, False: OFF},  # before modes, a switch: on or off
                           help="internet: public addresses only, through the app's proxy; off: none; host: "
                           "this computer's network, local services included.")
    # Floors so a slip (2 for 2048) is refused rather than breaking every command: a shell with a pipeline
    # needs several processes, and most programs tens of MB (Java several hundred).
    max_processes: int = setting(256, low=16, unit=Unit("processes"), label="Processes per command",
                                 help="Processes and threads one command may run at once, with everything it "
                                 "starts.")
    max_memory_mb: int = setting(2048, low=64, unit=MB, label="Memory per process",
                                 help="Memory in MB each of a command's processes may use.")
    max_file_mb: int = setting(1024, low=1, unit=MB, label="Largest file it writes",
                               help="The largest file in MB a command may write.")


@dataclass
class WebConfig:
    search_provider: str = setting("duckduckgo", label="Search with",
                                   choices={"duckduckgo": "DuckDuckGo (no key needed)",
                                            "brave": "Brave Search (needs a key)"},
                                   help="The search engine of the web_search tool; Brave needs its API key in "
                                   "the keyring: nanobot-tray keys set brave.")


@dataclass
class ToolsConfig:
    exec: ExecConfig = section(ExecConfig, label="Shell commands",
                               help="How long a command may run, its network and what it may use.")
    web: WebConfig = section(WebConfig, label="Web", help="Searching the web.")
    restrict_to_workspace: bool = setting(True, label="Keep file and shell tools inside the workspace folder",
                                          help="When off, the assistant may read, change and run things "
                                          "anywhere your user account can.")

"""The context budget's token bound (desktop/providers/token_bound.py) against tiktoken: how far above the real
count it is, whether it is ever below, and what each costs.

Run: python tests/bench/bench_tokens.py [--sessions DIR ...] [--json]
Texts: this repository's README, Python sources and git log, the manual pages of every language installed under
/usr/share/man, hex digests, base64 and emoji; with --sessions, the messages of real chats (a nanobot-tray or
nanobot data/sessions folder of .jsonl files). Each text is compared whole and in pieces of about 1,500
characters (the size of a chat message) with cl100k_base and o200k_base. Target (issue 26): never below.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from desktop.providers.token_bound import text_bound  # noqa: E402
from desktop.providers.tokens import encoding_for  # noqa: E402
from tests.bench.figures import Figures  # noqa: E402

MODELS = {"cl100k_base": "openai/test", "o200k_base": "openai/gpt-4o"}
PIECE = 1500
MAN_PAGES = 4  # per language


def man_text(folder: Path) -> str:
    """Prose of a few manual pages, roff requests and font escapes removed."""
    text = ""
    for page in sorted(folder.glob("man1/*.gz"))[:MAN_PAGES]:
        raw = gzip.decompress(page.read_bytes()).decode("utf-8", "replace")
        text += re.sub(r"\\f[BIRP]", "", re.sub(r"(?m)^\.[A-Za-z]+ ?", "", raw))
    return text


def session_texts(folder: Path) -> str:
    text = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                message = json.loads(line)
            except ValueError:
                continue
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, str):
                text.append(content)
            if isinstance(message, dict) and message.get("tool_calls"):
                text.append(json.dumps(message["tool_calls"]))
    return "\n\n".join(text)


def corpus(sessions: list[Path]) -> dict[str, str]:
    texts = {
        "README (markdown)": (REPO / "README.md").read_text(encoding="utf-8"),
        "Python (desktop/agent)": "".join(p.read_text(encoding="utf-8") for p in sorted((REPO / "desktop" / "agent").glob("*.py"))),
        "git log --stat": subprocess.run(["git", "log", "-150", "--stat"], cwd=REPO, capture_output=True,
                                         text=True, check=False).stdout,
        "hex digests": "\n".join(f"commit {hashlib.sha1(str(i).encode()).hexdigest()} "
                                 f"sha256:{hashlib.sha256(str(i).encode()).hexdigest()}" for i in range(300)),
        "base64": base64.b64encode(b"".join(hashlib.sha512(str(i).encode()).digest() for i in range(400))).decode(),
        "emoji": "Done ✅ shipped 🚀 thanks 🙏 party 🎉 see you 👋\n" * 100,
    }
    man = Path("/usr/share/man")
    for folder in sorted(man.iterdir()) if man.is_dir() else []:
        if not folder.name.startswith("man") and (text := man_text(folder)).strip():
            texts[f"man pages ({folder.name})"] = text
    for folder in sessions:
        texts[f"chats ({folder})"] = session_texts(folder)
    return {name: text for name, text in texts.items() if text.strip()}


def pieces(text: str) -> list[str]:
    out, current = [], ""
    for paragraph in text.split("\n\n"):
        current += paragraph + "\n\n"
        if len(current) >= PIECE:
            out.append(current)
            current = ""
    return out + ([current] if current.strip() else [])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=Path, action="append", default=[], help="a folder of chat .jsonl files")
    parser.add_argument("--json", action="store_true", help="end with the figures as one JSON line")
    args = parser.parse_args()
    texts = corpus(args.sessions)
    encodings = {name: encoding_for(model) for name, model in MODELS.items()}
    print("token bound / tiktoken count: whole text, and over its ~1,500-character pieces min / median / max")
    print(f"  {'text':32} {'encoding':12} {'whole':>6} {'min':>6} {'median':>7} {'max':>6}")
    lowest = {name: float("inf") for name in encodings}
    for label, text in texts.items():
        for name, encoding in encodings.items():
            ratios = [text_bound(p) / n for p in pieces(text) if (n := len(encoding.encode(p, disallowed_special=())))]
            whole = text_bound(text) / len(encoding.encode(text, disallowed_special=()))
            lowest[name] = min(lowest[name], *ratios)
            print(f"  {label[:32]:32} {name:12} {whole:6.2f} {min(ratios):6.2f} {statistics.median(ratios):7.2f} "
                  f"{max(ratios):6.2f}")
    everything = "\n\n".join(texts.values())
    began = time.perf_counter()
    text_bound(everything)
    bound_s = time.perf_counter() - began
    began = time.perf_counter()
    encodings["cl100k_base"].encode(everything, disallowed_special=())
    tiktoken_s = time.perf_counter() - began
    megabytes = len(everything.encode()) / 1e6
    print(f"  cost over {megabytes:.1f} MB: bound {bound_s / megabytes * 1000:.0f} ms/MB, "
          f"tiktoken cl100k {tiktoken_s / megabytes * 1000:.0f} ms/MB (its tables loaded already)")
    if args.json:
        figures = Figures()
        for name, value in lowest.items():
            figures.add(f"Token bound / {name}, lowest over every piece", f"{value:.2f}", "≥ 1")
        figures.add("Token bound cost", f"{bound_s / megabytes * 1000:.0f} ms/MB")
        print(figures.line())


if __name__ == "__main__":
    main()

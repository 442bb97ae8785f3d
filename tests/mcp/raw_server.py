"""An MCP server over stdio written line by line, not with the SDK: it sends what the SDK's own server cannot, a
JSON string that escapes half a character (`\\ud83d`, `\\udcff`), as a server in JavaScript does when it cuts text
between an emoji's two halves. One tool, `name_files` (or the name given as its argument), answers with such text."""

from __future__ import annotations

import json
import sys

HALVES = 'the file caf\\udce9.txt and half an emoji \\ud83d, then a whole one \\ud83d\\ude00'
TOOL = {"name": sys.argv[1] if len(sys.argv) > 1 else "name_files", "description": "Names the files.",
        "inputSchema": {"type": "object", "properties": {}}}


def reply(number: object, result: str) -> None:
    sys.stdout.write(f'{{"jsonrpc": "2.0", "id": {json.dumps(number)}, "result": {result}}}\n')
    sys.stdout.flush()


for line in sys.stdin:
    request = json.loads(line)
    method, number = request.get("method"), request.get("id")
    if method == "initialize":
        reply(number, json.dumps({"protocolVersion": request["params"]["protocolVersion"], "capabilities": {"tools": {}},
                                  "serverInfo": {"name": "raw", "version": "1"}}))
    elif method == "tools/list":
        reply(number, json.dumps({"tools": [TOOL]}))
    elif method == "tools/call":
        reply(number, f'{{"content": [{{"type": "text", "text": "{HALVES}"}}]}}')
    elif number is not None:
        reply(number, "{}")

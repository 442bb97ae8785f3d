"""A scripted OpenAI-compatible chat server on 127.0.0.1 so litellm's real HTTP, streaming and
tool-call parsing run in tests. Each request consumes the next step of the script; with the script
exhausted it echoes the last user message.

Step keys: content, reasoning, tool_calls [{name, arguments (dict or raw str), id?}], status (+ body,
headers) for an HTTP error, delay (seconds before answering), hang (seconds to stall mid-stream
after the first chunk), chunk (characters per streamed piece), endless (keep streaming a piece of
text every `endless` seconds until the client leaves), cut (end the stream after that many chunks,
with no finish_reason and no [DONE]; with `reset` the connection is then reset instead, as when the server's
process dies), pace (seconds before each chunk after the first: slow but steady),
empty_chunks / pings (after the step's text, keep the stream open with no content until the client
leaves: a chunk with nothing in it, or an SSE comment line, every that many seconds), together (answer only
once that many requests have arrived in all; a request still waiting after TOGETHER_WITHIN seconds answers
"alone" instead of its content, so a test sees requests that were not in flight at the same time),
after (a threading.Event: answer only once it is set, or after AFTER_WITHIN seconds, so a test can look at a
turn in progress as long as it needs and no longer), usage (the token counts to report, {prompt_tokens, completion_tokens, cached_tokens}; None reports none;
without it, counts made up from the characters).

`require_key`: answer 401 to every request (an upload too) not carrying it as its bearer token.

Speech to text: POST /v1/audio/transcriptions (multipart, as OpenAI's) is kept in `uploads` (each form field, and
the file's name, type and bytes) and answered by the next of `transcripts` (`add_transcripts`): text (the
transcript), usage (what the server reports it used, as OpenAI's: {"type": "tokens", "input_tokens", "output_tokens",
"total_tokens"} or {"type": "duration", "seconds"}; none without it), status (+ body) for an HTTP error, delay
(seconds before answering). With none scripted it says how long the upload was, e.g. "heard 1.5 s of audio", so
a test sees what reached the server.

Text to speech: POST /v1/audio/speech (JSON, as OpenAI's) is kept in `speeches` (the body: model, input, voice,
response_format..., and the authorization header) and answered by the next of `voices` (`add_voices`): seconds (how
long the answer's sound lasts; 1 s unscripted), status (+ body) for an HTTP error, delay (seconds before
answering), body_bytes (raw bytes to answer instead of sound). The sound is a WAV file made here: a 440 Hz tone,
16-bit mono at 24 kHz (what OpenAI's voices give), loud enough to tell from silence on a sound server.

Run standalone (for the app, benchmarks or other processes):
    python tests/fakeserver.py --port 0 [--script steps.json]   # prints "LISTENING port=N"
"""

from __future__ import annotations

import argparse
import email.parser
import email.policy
import io
import itertools
import json
import math
import socket
import struct
import sys
import threading
import time
import wave
from array import array
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Step = dict[str, Any]
TOGETHER_WITHIN = 20.0  # seconds a `together` step waits for the others
AFTER_WITHIN = 60.0  # seconds an `after` step waits for its event at most


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):  # clients drop keep-alives
            super().handle_error(request, client_address)


class FakeOpenAI:
    def __init__(self, script: list[Step] | None = None, default: Callable[[dict[str, Any]], Step] | None = None,
                 port: int = 0) -> None:
        self.script: list[Step] = list(script or [])
        self.default = default or echo_step
        self.requests: list[dict[str, Any]] = []
        self.models = ["test"]  # served at /v1/models (OpenAI style) and /api/tags (Ollama style)
        self.headers: list[dict[str, str]] = []
        self.require_key: str | None = None
        self.streams_open = 0  # streamed answers whose client has not left yet
        self.uploads: list[dict[str, Any]] = []  # what reached /v1/audio/transcriptions
        self.transcripts: list[Step] = []  # the answers to those uploads, in order
        self.speeches: list[dict[str, Any]] = []  # what reached /v1/audio/speech
        self.voices: list[Step] = []  # the answers to those, in order
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = _Server(("127.0.0.1", port), self._handler())
        # serve_forever looks for a shutdown between waits of poll_interval: its default (0.5 s) was the
        # wait of every test's teardown that stopped this server
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # endless streams end too
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def add(self, *steps: Step) -> None:
        with self._lock:
            self.script.extend(steps)

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> Step:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            return self.script.pop(0) if self.script else self.default(body)

    def add_transcripts(self, *steps: Step) -> None:
        with self._lock:
            self.transcripts.extend(steps)

    def _next_transcript(self, upload: dict[str, Any]) -> Step:
        with self._lock:
            self.uploads.append(upload)
            return self.transcripts.pop(0) if self.transcripts else {"text": f"heard {_seconds(upload):.1f} s of audio"}

    def add_voices(self, *steps: Step) -> None:
        with self._lock:
            self.voices.extend(steps)

    def _next_voice(self, request: dict[str, Any]) -> Step:
        with self._lock:
            self.speeches.append(request)
            return self.voices.pop(0) if self.voices else {}

    def _arrived(self, count: int) -> bool:
        """Whether `count` requests have arrived, waiting up to TOGETHER_WITHIN seconds for them."""
        deadline = time.monotonic() + TOGETHER_WITHIN
        while len(self.requests) < count:
            if time.monotonic() > deadline or self._stopping.wait(0.01):
                return False
        return True

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                # Small SSE writes + Nagle + the client's delayed ACK would add ~40 ms stalls per request.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_GET(self) -> None:
                path = self.path.rstrip("/")
                if path == "/v1/models":
                    self._json(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in fake.models]})
                elif path == "/api/tags":
                    self._json(200, {"models": [{"name": m, "model": m} for m in fake.models]})
                else:
                    self._json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                if self.path.rstrip("/") == "/v1/audio/transcriptions":
                    self._transcribe(raw)
                    return
                if self.path.rstrip("/") == "/v1/audio/speech":
                    self._speak(raw)
                    return
                body = json.loads(raw or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                if fake.require_key and headers.get("authorization") != f"Bearer {fake.require_key}":
                    with fake._lock:
                        fake.requests.append(body)
                        fake.headers.append(headers)
                    self._json(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                                               "code": "invalid_api_key"}})
                    return
                step = fake._next(body, headers)
                if "together" in step and not fake._arrived(step["together"]):
                    step = {**step, "content": "alone"}
                time.sleep(step.get("delay", 0))
                if "after" in step:  # held until the test has seen what it waits to see; bounded all the same
                    step["after"].wait(AFTER_WITHIN)
                if "status" in step:
                    payload = step.get("body") or {"error": {"message": f"scripted failure {step['status']}",
                                                             "type": "server_error"}}
                    self._json(step["status"], payload, step.get("headers"))
                elif body.get("stream"):
                    self._stream(step, body)
                else:
                    self._json(200, completion(step, body))

            def _transcribe(self, raw: bytes) -> None:
                upload = form_fields(self.headers.get("content-type") or "", raw)
                upload["authorization"] = self.headers.get("authorization")
                if fake.require_key and upload["authorization"] != f"Bearer {fake.require_key}":
                    with fake._lock:
                        fake.uploads.append(upload)
                    self._json(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                                               "code": "invalid_api_key"}})
                    return
                step = fake._next_transcript(upload)
                time.sleep(step.get("delay", 0))
                if "status" in step:
                    self._json(step["status"], step.get("body") or {"error": {
                        "message": f"scripted failure {step['status']}", "type": "invalid_request_error"}})
                else:
                    reported = {"usage": step["usage"]} if "usage" in step else {}
                    self._json(200, {"text": step.get("text", ""), **reported})

            def _speak(self, raw: bytes) -> None:
                request = json.loads(raw or b"{}")
                request["authorization"] = self.headers.get("authorization")
                if fake.require_key and request["authorization"] != f"Bearer {fake.require_key}":
                    with fake._lock:
                        fake.speeches.append(request)
                    self._json(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                                               "code": "invalid_api_key"}})
                    return
                step = fake._next_voice(request)
                time.sleep(step.get("delay", 0))
                if "status" in step:
                    self._json(step["status"], step.get("body") or {"error": {
                        "message": f"scripted failure {step['status']}", "type": "invalid_request_error"}})
                    return
                data = step["body_bytes"] if "body_bytes" in step else tone_wav(step.get("seconds", 1.0))
                self.send_response(200)
                self.send_header("content-type", "audio/wav")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, step: Step, body: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                with fake._lock:
                    fake.streams_open += 1
                try:
                    chunks = stream_chunks(step, body)
                    if "cut" in step:
                        chunks = chunks[:step["cut"]]
                    if step.get("endless"):
                        chunks = chunks[:2]  # the role, then the first piece of text over and over
                    idle = step.get("empty_chunks") or step.get("pings")
                    if idle:
                        chunks = chunks[:-2]  # no finish, no usage: nothing but keep-alives follows the text
                    for i, chunk in enumerate(chunks):
                        if i and step.get("pace"):
                            time.sleep(step["pace"])
                        self._send(f"data: {json.dumps(chunk)}\n\n")
                        if i == 1 and step.get("hang"):
                            time.sleep(step["hang"])
                    while step.get("endless") and not fake._stopping.is_set():  # until the client hangs up
                        time.sleep(step["endless"])
                        self._send(f"data: {json.dumps(chunks[-1])}\n\n")
                    if step.get("reset"):  # the process died: no end of the stream, the connection torn down
                        self.wfile.flush()
                        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                        self.connection.shutdown(socket.SHUT_RDWR)  # closed at the end of the request: a reset
                        self.close_connection = True
                        return
                    for keep_alive in _keep_alives(step, body):  # endless too
                        if fake._stopping.wait(idle):
                            break
                        self._send(keep_alive)
                    if "cut" not in step:
                        self._send("data: [DONE]\n\n")
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass
                finally:
                    with fake._lock:
                        fake.streams_open -= 1

            def _send(self, text: str) -> None:
                data = text.encode()
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

        return Handler


def form_fields(content_type: str, raw: bytes) -> dict[str, Any]:
    """A multipart/form-data body as {field: text}, a file field as {field: {filename, type, data}}."""
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"content-type: {content_type}\r\n\r\n".encode() + raw)
    found: dict[str, Any] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        data = part.get_payload(decode=True) or b""
        filename = part.get_filename()
        if filename is None:
            found[str(name)] = data.decode("utf-8", "replace")
        else:
            found[str(name)] = {"filename": filename, "type": part.get_content_type(), "data": data}
    return found


def _seconds(upload: dict[str, Any]) -> float:
    """How long the uploaded WAV file lasts (0 for anything else)."""
    audio = upload.get("file")
    try:
        with wave.open(io.BytesIO(audio["data"] if isinstance(audio, dict) else b"")) as sound:
            return sound.getnframes() / sound.getframerate()
    except (wave.Error, EOFError):
        return 0.0


def tone_wav(seconds: float, rate: int = 24_000) -> bytes:
    """A 440 Hz tone at half of full scale, as a 16-bit mono WAV file."""
    frames = int(seconds * rate)
    samples = array("h", (int(16384 * math.sin(2 * math.pi * 440 * i / rate)) for i in range(frames)))
    out = io.BytesIO()
    with wave.open(out, "wb") as sound:
        sound.setnchannels(1)
        sound.setsampwidth(2)
        sound.setframerate(rate)
        sound.writeframes(samples.tobytes())
    return out.getvalue()


def last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
            text = str(content or "")
            return text.split("\n\n", 1)[1] if text.startswith("[Runtime context") and "\n\n" in text else text
    return ""


def echo_step(body: dict[str, Any]) -> Step:
    return {"content": f"echo: {last_user_text(body)}"}


def _calls(step: Step) -> list[dict[str, Any]]:
    calls = []
    for i, call in enumerate(step.get("tool_calls") or []):
        args = call.get("arguments", {})
        calls.append({"id": call.get("id", f"call_{int(time.time() * 1000) % 100000}_{i}"), "name": call["name"],
                      "arguments": args if isinstance(args, str) else json.dumps(args)})
    return calls


def _usage(body: dict[str, Any], step: Step) -> dict[str, Any] | None:
    if "usage" in step:
        scripted = step["usage"]
        if scripted is None:
            return None
        prompt, completion_tokens = scripted["prompt_tokens"], scripted["completion_tokens"]
        return {"prompt_tokens": prompt, "completion_tokens": completion_tokens,
                "total_tokens": prompt + completion_tokens,
                "prompt_tokens_details": {"cached_tokens": scripted.get("cached_tokens", 0)}}
    prompt = sum(len(str(m.get("content") or "")) for m in body.get("messages", [])) // 4
    completion_tokens = len(step.get("content") or "") // 4 + 1
    return {"prompt_tokens": prompt, "completion_tokens": completion_tokens, "total_tokens": prompt + completion_tokens}


def completion(step: Step, body: dict[str, Any]) -> dict[str, Any]:
    calls = _calls(step)
    message: dict[str, Any] = {"role": "assistant", "content": step.get("content")}
    if step.get("reasoning"):
        message["reasoning_content"] = step["reasoning"]
    if calls:
        message["tool_calls"] = [{"id": c["id"], "type": "function",
                                  "function": {"name": c["name"], "arguments": c["arguments"]}} for c in calls]
    return {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "test"),
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            **({"usage": usage} if (usage := _usage(body, step)) else {})}


def stream_chunks(step: Step, body: dict[str, Any]) -> list[dict[str, Any]]:
    size = int(step.get("chunk", 8))
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": body.get("model", "test")}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    out = [chunk({"role": "assistant", "content": ""})]
    reasoning = step.get("reasoning") or ""
    out += [chunk({"reasoning_content": reasoning[i:i + size]}) for i in range(0, len(reasoning), size)]
    content = step.get("content") or ""
    out += [chunk({"content": content[i:i + size]}) for i in range(0, len(content), size)]
    calls = _calls(step)
    for index, call in enumerate(calls):
        out.append(chunk({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                          "function": {"name": call["name"], "arguments": ""}}]}))
        args = call["arguments"]
        out += [chunk({"tool_calls": [{"index": index, "function": {"arguments": args[i:i + size]}}]})
                for i in range(0, len(args), size)]
    out.append(chunk({}, "tool_calls" if calls else "stop"))
    usage = _usage(body, step)
    out.append({**base, "choices": [], "usage": usage} if usage else chunk({}))  # the same count of chunks
    return out


def _keep_alives(step: Step, body: dict[str, Any]) -> Iterator[str]:
    """What a server sends to hold a stream open while no content comes: SSE comment lines, or chunks with
    nothing in them (each shape servers use: no choices, an empty delta, only the role, empty text)."""
    if step.get("pings"):
        yield from itertools.repeat(": ping\n\n")
    elif step.get("empty_chunks"):
        base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()),
                "model": body.get("model", "test")}
        shapes = [[], [{"index": 0, "delta": {}, "finish_reason": None}],
                  [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}],
                  [{"index": 0, "delta": {"content": ""}, "finish_reason": None}]]
        for choices in itertools.cycle(shapes):
            yield f"data: {json.dumps({**base, 'choices': choices})}\n\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", help="JSON file with a list of steps")
    args = parser.parse_args()
    script = json.load(open(args.script)) if args.script else []
    server = FakeOpenAI(script, port=args.port)
    server.start()
    print(f"LISTENING port={server.port}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()

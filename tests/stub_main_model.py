"""A stub OpenAI-compatible main model on 127.0.0.1, for driving Hermes's own session loop.

Run as a script: `python stub_main_model.py REPLY_CHARS` prints `listening on PORT` and serves
until killed. It answers `GET /v1/models` and `POST /v1/chat/completions`, streamed (SSE with a
usage chunk, as Hermes asks for) or not, with a deterministic reply of about REPLY_CHARS
characters that names files, commands and errors of the turn, so a compaction has facts to
keep. `GET /stub/replies` lists when each reply was fully sent (wall clock) and whether it was
a turn's answer ("main") or a short side call ("short"), so a driver can time what follows the
answer. Stdlib only: it runs under any Python, Hermes's venv included.
"""

from __future__ import annotations

import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL_ID = "stub-main"


def reply_for(messages: list, chars: int) -> str:
    """A long, fact-carrying answer to the last user message."""
    users = [m for m in messages if m.get("role") == "user" and isinstance(m.get("content"), str)]
    turn = len(users)
    ask = (users[-1]["content"] if users else "")[:80].replace("\n", " ")
    head = (
        f"Turn {turn}: I looked at `src/module_{turn}.py` for '{ask}'. "
        f"I ran `pytest tests/test_module_{turn}.py -q`, which failed with "
        f"`AssertionError: expected {turn * 7} got {turn * 7 + 1}` at src/module_{turn}.py:{10 + turn}. "
        f"I changed the bound in `src/module_{turn}.py` and the test now passes.\n\n"
    )
    filler = []
    i = 0
    while len(head) + sum(map(len, filler)) < chars:
        i += 1
        filler.append(
            f"Detail {turn}.{i}: the helper `step_{turn}_{i}` reads config/settings_{turn}.yaml, "
            f"checks the retry budget of {turn + i} attempts and logs the outcome to logs/run_{turn}.log. "
        )
    body = (head + "".join(filler))[:chars]
    body = body[: body.rfind(". ") + 1] if ". " in body else body  # whole sentences: no half path
    return body.rstrip() + f"\n\nDone with turn {turn}."


class Handler(BaseHTTPRequestHandler):
    chars = 6000
    protocol_version = "HTTP/1.1"
    replies: list[dict] = []  # {"end": time.time() when the last byte went out, "kind": "main" | "short"}

    def log_message(self, *args) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/stub/replies":
            return self._send(200, json.dumps(list(Handler.replies)).encode())
        if self.path.rstrip("/").endswith("/models"):
            body = {
                "object": "list",
                "data": [{"id": MODEL_ID, "object": "model", "owned_by": "stub", "context_length": 131072}],
            }
            return self._send(200, json.dumps(body).encode())
        self._send(404, b'{"error": {"message": "not found"}}')

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        try:
            req = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            return self._send(400, b'{"error": {"message": "bad json"}}')
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self._send(404, b'{"error": {"message": "not found"}}')
        messages = req.get("messages") or []
        cap = req.get("max_tokens") or req.get("max_completion_tokens")
        kind = "main" if not cap or cap > 400 else "short"
        text = reply_for(messages, self.chars if kind == "main" else min(self.chars, 120))
        prompt_tokens = sum(len(json.dumps(m)) for m in messages) // 4
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": len(text) // 4,
            "total_tokens": prompt_tokens + len(text) // 4,
        }
        created = int(time.time())
        if not req.get("stream"):
            body = {
                "id": "chatcmpl-stub",
                "object": "chat.completion",
                "created": created,
                "model": MODEL_ID,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": usage,
            }
            self._send(200, json.dumps(body).encode())
            Handler.replies.append({"end": time.time(), "kind": kind})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()

        def event(obj: dict) -> None:
            self.wfile.write(b"data: " + json.dumps(obj).encode() + b"\n\n")

        base = {"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": created, "model": MODEL_ID}
        event({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]})
        for i in range(0, len(text), 2000):
            event({**base, "choices": [{"index": 0, "delta": {"content": text[i : i + 2000]}, "finish_reason": None}]})
        event({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        event({**base, "choices": [], "usage": usage})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        Handler.replies.append({"end": time.time(), "kind": kind})
        self.close_connection = True


def main(handler: type[Handler] = Handler) -> None:
    """Serve `handler` (stub_recall_model.py passes its own) until killed."""
    Handler.chars = int(sys.argv[1]) if len(sys.argv) > 1 else 6000
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    print(f"listening on {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()

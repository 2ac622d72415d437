"""The stub main model of stub_main_model.py, taught to call the context engine's recall tool.

Run as a script like it (`python stub_recall_model.py REPLY_CHARS`). A user message starting
`RECALL: words` gets a streamed tool call `hermes_mlx_recall({"query": words})`; `RECALLBAD:`
gets a malformed one (no query); once the tool's result is the last message, the answer quotes
it. Every other request is stub_main_model's long, fact-carrying reply. Stdlib only.
"""

from __future__ import annotations

import io
import json
import time

from stub_main_model import MODEL_ID, Handler, main

TOOL = "hermes_mlx_recall"


class RecallHandler(Handler):
    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            req = json.loads(raw or b"{}")
        except ValueError:
            req = {}
        messages = req.get("messages") or []
        last = messages[-1] if messages else {}
        content = last.get("content") if isinstance(last.get("content"), str) else ""
        if last.get("role") == "user" and content.startswith(("RECALL:", "RECALLBAD:")) and req.get("stream"):
            args = {"query": content.split(":", 1)[1].strip()} if content.startswith("RECALL:") else {"limit": "x"}
            return self._tool_call(args)
        if last.get("role") == "tool" and req.get("stream"):
            return self._text(f"Recall result: {content[:4000]}")
        self.rfile = io.BytesIO(raw)  # the ordinary reply, from the body already read
        super().do_POST()

    def _stream(self, deltas: list[dict], finish: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        base = {
            "id": "chatcmpl-recall",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": MODEL_ID,
        }
        for delta in deltas + [{}]:
            reason = finish if not delta else None
            chunk = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": reason}]}
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
        usage = {"prompt_tokens": 1000, "completion_tokens": 20, "total_tokens": 1020}
        self.wfile.write(b"data: " + json.dumps({**base, "choices": [], "usage": usage}).encode() + b"\n\n")
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        Handler.replies.append({"end": time.time(), "kind": "main"})
        self.close_connection = True

    def _tool_call(self, args: dict) -> None:
        call = {
            "index": 0,
            "id": f"call_recall_{len(Handler.replies)}",
            "type": "function",
            "function": {"name": TOOL, "arguments": json.dumps(args)},
        }
        self._stream([{"role": "assistant", "content": None, "tool_calls": [call]}], "tool_calls")

    def _text(self, text: str) -> None:
        self._stream([{"role": "assistant", "content": text}], "stop")


if __name__ == "__main__":
    main(RecallHandler)

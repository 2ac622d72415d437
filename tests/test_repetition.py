"""The repetition guard (engine/repetition.py): it ends a looping reply with one copy kept, never
touches one that does not loop, and works for each member of a shared batch alone."""

import json
import threading

import hermes_mlx  # noqa: F401  (puts the BLAS in place before MLX loads)
from hermes_mlx.cli import main
from hermes_mlx.engine.generate import generate, stream_generate
from hermes_mlx.engine.repetition import SPAN, RepetitionGuard

PROMPT = "hi"  # the tiny random model answers it with one token over and over


def feed(guard: RepetitionGuard, pieces: list[tuple[int, str]]) -> tuple[str, int | None]:
    """Push (token, text) pieces; the text so far and the index of the token that stopped it."""
    text = ""
    for i, (token, piece) in enumerate(pieces):
        text += piece
        if guard.push(token, len(text)):
            return text, i
    return text, None


def sentence(first: bool) -> list[tuple[int, str]]:
    """'The build failed on test_login.' as 16 tokens; later copies start with ' The'."""
    words = ["The" if first else " The", " build", " failed", " on", " tests", "/", "test", "_", "api", ".py"]
    words += ["::", "test", "_", "log", "in", "."]
    return [(100 + i if i else (1 if first else 2), w) for i, w in enumerate(words)]


def test_a_looping_sentence_stops_with_one_copy_kept():
    guard = RepetitionGuard()
    text, stopped = feed(guard, sentence(True) + sentence(False) * 15)
    assert stopped is not None and stopped < 3 * 16  # not sixteen copies
    assert guard.trim(text) == "The build failed on tests/test_api.py::test_login."


def test_text_already_streamed_is_kept():
    guard = RepetitionGuard()
    text, _ = feed(guard, sentence(True) + sentence(False) * 3)
    assert guard.trim(text, keep_at_least=60) == text[:60]


def test_output_that_does_not_loop_is_never_stopped():
    varied = [(i, f" w{i}") for i in range(400)]
    assert feed(RepetitionGuard(), varied)[1] is None
    # a short repeat (a list of similar lines, one phrase twice) is not a loop
    lines = [(7, "\n-"), (8, " Ran"), (9, " pytest")] * 3 + [(i, f" {i}") for i in range(50)]
    assert feed(RepetitionGuard(), lines)[1] is None


def test_one_token_over_and_over_stops_after_the_span():
    guard = RepetitionGuard()
    text, stopped = feed(guard, [(5, "a.")] + [(6, "/")] * 100)
    assert stopped == SPAN  # the 32 copies of '/' ended it
    assert guard.trim(text) == "a./"


def test_the_engine_guard_is_opt_in_and_reported(tiny_model):
    plain = generate(PROMPT, model=tiny_model, max_tokens=120)
    guarded = generate(PROMPT, model=tiny_model, max_tokens=120, repetition_guard=True)
    assert plain.finish_reason == "length" and plain.generation_tokens == 120
    assert guarded.finish_reason == "repetition" and guarded.generation_tokens < 120
    assert plain.text.startswith(guarded.text) and len(guarded.text) < len(plain.text)
    chunks = list(stream_generate(PROMPT, model=tiny_model, max_tokens=120, repetition_guard=True))
    result = chunks[-1].result
    assert result.finish_reason == "repetition" and "".join(c.text for c in chunks) == result.text


def test_each_member_of_a_shared_batch_keeps_its_own_guard(tiny_model):
    alone = generate(PROMPT, model=tiny_model, max_tokens=150)
    results: dict[str, object] = {}

    def run(name: str, guard: bool) -> None:
        results[name] = generate(PROMPT, model=tiny_model, max_tokens=150, repetition_guard=guard)

    threads = [threading.Thread(target=run, args=(n, g)) for n, g in (("plain", False), ("guarded", True))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert results["plain"].finish_reason == "length" and results["plain"].text == alone.text
    assert results["guarded"].finish_reason == "repetition"


def test_generate_command_guards_by_default_and_can_be_told_not_to(tiny_model, capsys):
    assert main(["generate", "--model", tiny_model, "--max-tokens", "120", "--json", "--raw", PROMPT]) == 0
    assert json.loads(capsys.readouterr().out)["finish_reason"] == "repetition"
    argv = ["generate", "--model", tiny_model, "--max-tokens", "120", "--json", "--raw", "--no-repetition-guard"]
    assert main([*argv, PROMPT]) == 0
    assert json.loads(capsys.readouterr().out)["finish_reason"] == "length"

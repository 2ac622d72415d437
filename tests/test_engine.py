"""The engine's behaviour on tiny random-weight models: warm cache, prefix reuse, one worker,
deadlines, stop strings and clear errors."""

import threading
import time

import pytest
from tiny import HeldDecode, build_tiny_model

import hermes_mlx  # noqa: F401  (puts the BLAS in place before MLX loads)
from hermes_mlx.commands.generate import STATS
from hermes_mlx.engine import cache as cache_mod
from hermes_mlx.engine import errors
from hermes_mlx.engine.generate import (
    count_tokens,
    engine_state,
    generate,
    model_info,
    stream_generate,
    unload,
)

PROMPT = [{"role": "user", "content": "The quick brown fox jumps over the lazy dog."}]


def test_generate_returns_text_and_stats(tiny_model):
    result = generate(PROMPT, model=tiny_model, max_tokens=12)
    assert result.finish_reason in ("stop", "length")
    assert result.prompt_tokens == count_tokens(PROMPT, model=tiny_model)
    assert 0 < result.generation_tokens <= 12
    assert result.peak_memory_mb > 0 and result.total_s >= result.ttft_s > 0
    assert set(result.to_dict()) >= {"text", *STATS}  # every figure `generate --json` reports


def test_greedy_is_deterministic_and_prefix_reuse_changes_nothing(tiny_model):
    long = [{"role": "user", "content": "pytest tests/test_engine.py failed " * 6 + "what now?"}]
    first = generate(long, model=tiny_model, max_tokens=16)
    again = generate(long, model=tiny_model, max_tokens=16)
    assert again.cached_tokens == again.prompt_tokens - 1  # all but the last prompt token reused
    assert again.text == first.text
    unload(tiny_model)
    cold = generate(long, model=tiny_model, max_tokens=16)
    assert cold.cached_tokens == 0 and cold.text == first.text and cold.load_s > 0


def test_shared_instruction_prefix_is_reused(tiny_model):
    instructions = "Summarize the exchange below in one line. " * 8
    a = generate(instructions + "def main(): print('hello')", model=tiny_model, max_tokens=4)
    b = generate(instructions + "0123456789 failed", model=tiny_model, max_tokens=4)
    shared = count_tokens(instructions, model=tiny_model)
    assert b.cached_tokens >= shared - 2  # the boundary token may merge differently
    assert b.cached_tokens < b.prompt_tokens
    assert a.cached_tokens < b.cached_tokens or a.cached_tokens == 0


def test_model_loads_once_for_eight_threads(tmp_path):
    path = str(build_tiny_model(tmp_path / "m8", seed=8))
    models, _ = engine_state()
    before = models.loads
    results, failures = [], []

    def call(i):
        try:
            results.append(generate(f"hello {i}", model=path, max_tokens=4))
        except Exception as exc:  # pragma: no cover - reported below
            failures.append(exc)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures and len(results) == 8
    assert models.loads - before == 1
    assert sum(r.load_s > 0 for r in results) == 1


def test_all_mlx_work_runs_on_the_worker_thread(tmp_path, monkeypatch):
    seen = []
    real = cache_mod.fit_for_device
    monkeypatch.setattr(
        cache_mod, "fit_for_device", lambda *a: (seen.append(threading.current_thread().name), real(*a))[1]
    )
    generate("hello", model=str(build_tiny_model(tmp_path / "w", seed=3)), max_tokens=2)
    assert seen == ["hermes-mlx-worker"]


def test_memory_budget_evicts_least_recently_used(tmp_path, monkeypatch):
    models, _ = engine_state()
    a = str(build_tiny_model(tmp_path / "a", seed=1))
    b = str(build_tiny_model(tmp_path / "b", seed=2))
    generate("x", model=a, max_tokens=1)
    size_mb = models.models[a].nbytes / 1e6
    monkeypatch.setattr(models, "memory_budget_mb", size_mb * 1.5)
    generate("x", model=b, max_tokens=1)
    assert b in models.models and a not in models.models


def test_idle_models_are_unloaded(tmp_path, monkeypatch):
    models, _ = engine_state()
    path = str(build_tiny_model(tmp_path / "idle", seed=4))
    generate("x", model=path, max_tokens=1)
    monkeypatch.setattr(models, "idle_unload_s", 0.0)
    models.evict_idle()
    assert path not in models.models


def test_quantized_weights_become_dense_float32_on_cpu(tmp_path):
    import shutil

    import mlx.core as mx
    from mlx_lm import convert  # noqa: F401  (quantize through mlx-lm's own path)
    from mlx_lm.utils import load_model, quantize_model, save_model

    src = build_tiny_model(tmp_path / "dense", seed=5)
    model, config = load_model(src)
    model, config = quantize_model(model, config, group_size=32, bits=4)
    dst = tmp_path / "q4"
    save_model(dst, model)
    import json

    (dst / "config.json").write_text(json.dumps(config))
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(src / name, dst / name)
    generate("hello", model=str(dst), max_tokens=2)
    loaded = engine_state()[0].models[str(dst)]
    if cache_mod.on_cpu():
        assert loaded.weights.startswith("float32")
        assert loaded.model.model.layers[0].self_attn.q_proj.weight.dtype == mx.float32


def test_stop_strings_cut_the_text(tiny_model):
    full = generate(PROMPT, model=tiny_model, max_tokens=24).text
    if len(full) < 6:
        pytest.skip("the random model stopped too early to pick a stop string")
    stop = full[3:5]
    cut = generate(PROMPT, model=tiny_model, max_tokens=24, stop=[stop])
    assert cut.finish_reason == "stop"
    assert cut.text == full[: full.find(stop)]


def test_streaming_matches_generate_and_closing_frees_the_engine(tiny_model, monkeypatch):
    whole = generate(PROMPT, model=tiny_model, max_tokens=20)
    chunks = list(stream_generate(PROMPT, model=tiny_model, max_tokens=20))
    assert "".join(c.text for c in chunks) == whole.text
    assert chunks[-1].result is not None and chunks[-1].result.text == whole.text
    full = generate(PROMPT, model=tiny_model, max_tokens=400)  # what the stream would decode if never stopped
    held = HeldDecode(monkeypatch)
    stream = stream_generate(PROMPT, model=tiny_model, max_tokens=400)
    next(stream)
    stream.close()  # a client that disconnects mid-stream
    held.closed.set()
    assert generate(PROMPT, model=tiny_model, max_tokens=3).generation_tokens >= 1  # runs after the stream's job
    stopped = held.calls[0]
    assert stopped["before"] + 2 <= full.generation_tokens  # an engine ignoring close() would decode on
    assert stopped["after"] <= 1  # this one stopped at its next token


def test_deadline_before_start_is_a_clear_error_and_the_engine_keeps_serving(tiny_model):
    _, worker = engine_state()
    generate("warm", model=tiny_model, max_tokens=1)
    started, release = threading.Event(), threading.Event()
    busy = worker.submit(lambda job: (started.set(), release.wait(60)))
    assert started.wait(60)

    def release_once_expired():  # the worker starts the request only after its deadline, however slow this thread is
        for _ in range(6000):  # a bound on waiting, not a timing assertion
            queued = [entry[2] for entry in list(worker._queue.queue)]
            if queued and all(job.expired() for job in queued):
                break
            time.sleep(0.01)
        release.set()

    releaser = threading.Thread(target=release_once_expired)
    releaser.start()
    with pytest.raises(errors.DeadlineExceeded, match="before the request could start"):
        generate(PROMPT, model=tiny_model, max_tokens=5, timeout=0.2)
    releaser.join(60)
    busy.future.result()
    assert generate(PROMPT, model=tiny_model, max_tokens=2).generation_tokens >= 1


def test_bad_requests_get_one_clear_error(tiny_model):
    with pytest.raises(errors.InvalidRequest, match="max_tokens"):
        generate("x", model=tiny_model, max_tokens=0)
    with pytest.raises(errors.InvalidRequest, match="message 1"):
        generate([{"role": "user", "content": "a"}, {"content": "no role"}], model=tiny_model)
    with pytest.raises(errors.PromptTooLong, match=r"over the model's 512-token window"):
        generate("the quick brown fox " * 400, model=tiny_model, max_tokens=4)
    with pytest.raises(errors.DeadlineExceeded):
        generate("x", model=tiny_model, timeout=0)
    assert generate("x", model=tiny_model, max_tokens=1).generation_tokens <= 1


def test_a_failing_job_does_not_stop_the_worker(tiny_model):
    _, worker = engine_state()
    job = worker.submit(lambda job: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        job.future.result(timeout=5)
    assert generate("x", model=tiny_model, max_tokens=1) is not None


def test_model_info_reads_the_window(tiny_model):
    info = model_info(tiny_model)
    assert info.context_window == 512 and info.eos_token_ids == [2]


def test_exit_while_generating_does_not_abort_the_process(tiny_model):
    """MLX aborts a process torn down mid-computation; the engine quiesces its worker at exit."""
    import subprocess
    import sys

    script = (
        "import threading, time, hermes_mlx\n"
        "from hermes_mlx.engine.generate import generate, stream_generate\n"
        f"generate('hi', model={tiny_model!r}, max_tokens=2)\n"
        "def run():\n"
        f"    for _ in stream_generate('hi', model={tiny_model!r}, max_tokens=400): time.sleep(0.01)\n"
        "threading.Thread(target=run, daemon=True).start()\n"
        "time.sleep(0.5)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-500:]

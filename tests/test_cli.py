"""The thin CLI over the engine: generate (text and --json) and doctor."""

import json

from hermes_mlx.cli import main


def test_generate_json_names_stats_as_mlx_lm_does(tiny_model, capsys):
    assert main(["generate", "--model", tiny_model, "--max-tokens", "4", "--json", "hello"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("text", "prompt_tokens", "cached_tokens", "generation_tokens", "prompt_tps",
                "generation_tps", "peak_memory_mb", "load_s", "finish_reason"):
        assert key in out
    assert 1 <= out["generation_tokens"] <= 4


def test_generate_streams_text_and_prints_stats(tiny_model, capsys):
    assert main(["generate", "--model", tiny_model, "--max-tokens", "3", "--raw", "def main"]) == 0
    captured = capsys.readouterr()
    assert "prompt tokens" in captured.err and "generated" in captured.err


def test_generate_bad_input_is_one_clear_error(tiny_model, capsys):
    assert main(["generate", "--model", tiny_model, "--max-tokens", "0", "x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hermes-mlx: max_tokens must be a positive integer")
    assert "Traceback" not in err


def test_doctor_reports_the_path_in_use(capsys):
    assert main(["doctor", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["device"] in ("cpu", "gpu (Metal)")
    for key in ("blas", "weights", "cache_folder", "models", "mlx", "mlx_lm", "hermes_integration"):
        assert key in report
    assert isinstance(report["models"], list)
    assert [m["name"] for m in report["models"] if m["default"]] == ["smollm2-135m-instruct"]
    assert report["hermes_integration"]["path"] in ("in-process", "loopback")

"""Where a finding comes from, and what is no finding: a short list read with its lead-in.

Each shape is one that real sessions of two agents or sessions show (named per test); the checks go
through `findings.candidates` and through a whole batch pass of the summarizer, as a user's runs do.
"""

from hermes_mlx.summarizer.findings import candidates
from hermes_mlx.summarizer.sentences import paragraphs
from hermes_mlx.summarizer.text import normalize


def _texts(messages: list[dict]) -> list[str]:
    return [c[0] for c in candidates(normalize(messages))]


# ------------------------------------------------------------------ a short list under its lead-in


TOOLS = (
    "Add three standard Elixir quality tools as dev dependencies:\n"
    "- **Credo** for static code analysis and style checking\n"
    "- **Dialyxir** for gradual type checking via Dialyzer\n"
    "- **mix_audit** for dependency vulnerability scanning\n"
)


def test_a_short_list_is_read_with_its_lead_in_and_no_item_stands_alone():
    # Claude Code's plan in the README's own example: alone, "**mix_audit** for dependency
    # vulnerability scanning" was half a sentence in Progress (its siblings had gone as musings)
    found = _texts([{"role": "assistant", "content": TOOLS}])
    assert found == [
        "Add three standard Elixir quality tools as dev dependencies: **Credo** for static code analysis and "
        "style checking; **Dialyxir** for gradual type checking via Dialyzer; **mix_audit** for dependency "
        "vulnerability scanning"
    ]


def test_a_long_list_a_list_of_results_and_a_list_under_a_heading_stay_a_line_an_item():
    long_items = "The review found these problems:\n" + "".join(
        f"- Problem {i}: `handler_{i}` swallows the error from the retry loop and returns an empty list\n"
        for i in range(4)
    )
    assert len(paragraphs(long_items)) == 5  # too long for one finding: the lead-in, then each item
    results = "Results:\n- 63KB (64,573 bytes): WORKS\n- 64KB (65,594 bytes): FAILS\n"
    assert ["63KB (64,573 bytes): WORKS; 64KB (65,594 bytes): FAILS"] in paragraphs(results)
    heading = "## Acceptance tests\n- GIVEN tools installed WHEN `mix quality` runs THEN all execute\n- GIVEN x\n"
    assert ["- GIVEN tools installed WHEN `mix quality` runs THEN all execute"] in paragraphs(heading)

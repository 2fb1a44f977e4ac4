"""An output much shorter than its source is flagged likely wrong."""

from __future__ import annotations

from anuvad.inference.length_check import much_shorter

LONG = (
    "the farmers of the village planted rice in the fields near the river and the women "
    "carried water from the well while the children played"
)


def test_an_output_under_half_the_pairs_length_is_flagged() -> None:
    assert much_shorter(LONG, "किसानों ने धान लगाया।", "en", "hi")
    assert not much_shorter(LONG, "क" * int(0.55 * 1.05 * len(LONG)), "en", "hi")
    assert much_shorter(LONG, "k" * int(0.45 * len(LONG)), "hi", "en")  # ratio 0.95
    assert not much_shorter("Yes, thank you.", "हाँ।", "en", "hi")  # under 20 characters

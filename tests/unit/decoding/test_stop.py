"""A search stops between two decoding steps when told to (a deadline, a client gone), and no
output runs past the work budget's token cap."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from anuvad.config import ModelConfig
from anuvad.data.batching import collate_source
from anuvad.decode_config import DecodeConfig
from anuvad.decoding.beam import beam_search
from anuvad.decoding.greedy import greedy_search
from anuvad.errors import SearchStoppedError
from anuvad.model.transformer import Transformer, build_model

SOURCES = [[5, 9, 12, 7, 22, 8, 14], [6, 7], [11, 4, 29, 17]]
LIMIT = DecodeConfig(max_len_a=1.0, max_len_b=20)  # greedy's settings; beam adds its own


def looping_model() -> Transformer:
    """A random model that never ends a sentence early (EOS pushed down)."""
    torch.manual_seed(2)
    config = ModelConfig(
        d_model=16, num_heads=2, d_ff=32, num_encoder_layers=1, num_decoder_layers=1,
        dropout=0.0, src_vocab_size=30, tgt_vocab_size=30, max_positions=128,
        tie_output_embedding=False,
    )  # fmt: skip
    model = build_model(config).eval()
    assert model.output_proj is not None
    with torch.no_grad():
        model.output_proj.weight[3].fill_(-1.0)  # EOS (id 3) scores low: outputs run long
    return model


def beam_settings(beam: int, nbest: int = 1) -> DecodeConfig:
    return DecodeConfig(
        beam_size=beam, length_penalty=0.6, max_len_a=1.0, max_len_b=20, nbest=nbest
    )


class Countdown:
    """Says "stop" on its ``after``-th question; counts the questions."""

    def __init__(self, after: int) -> None:
        self.after, self.asked = after, 0

    def __call__(self) -> bool:
        self.asked += 1
        return self.asked >= self.after


@pytest.mark.parametrize("beam", [1, 3])
def test_a_search_stops_at_the_step_it_is_told_to(beam: int) -> None:
    model = looping_model()
    src_ids, pad = collate_source(SOURCES)
    stop = Countdown(after=5)
    with pytest.raises(SearchStoppedError), torch.no_grad():
        if beam == 1:
            greedy_search(model, src_ids, pad, LIMIT, stop=stop)
        else:
            beam_search(model, src_ids, pad, beam_settings(beam), stop=stop)
    assert stop.asked == 5  # asked once per step: the 5th step was never computed


@pytest.mark.slow  # several seconds: left out of make test-fast
@pytest.mark.parametrize("beam", [1, 3])
def test_a_stop_that_never_fires_changes_nothing(beam: int) -> None:
    model = looping_model()
    src_ids, pad = collate_source(SOURCES)
    never = Countdown(after=10**9)
    with torch.no_grad():
        if beam == 1:
            plain = [[h] for h in greedy_search(model, src_ids, pad, LIMIT)]
            watched = [[h] for h in greedy_search(model, src_ids, pad, LIMIT, stop=never)]
        else:
            settings = beam_settings(beam, nbest=beam)
            plain = beam_search(model, src_ids, pad, settings)
            watched = beam_search(model, src_ids, pad, settings, stop=never)
    assert [[h.token_ids for h in hs] for hs in watched] == [
        [h.token_ids for h in hs] for hs in plain
    ]
    assert never.asked > 20  # it was asked at every step (outputs here run to the 20+ limit)


@pytest.mark.slow  # several seconds: left out of make test-fast
def test_outputs_are_capped_at_max_output_tokens() -> None:
    """The server's work budget reaches the search: no output longer than the cap."""
    torch.manual_seed(2)
    config = ModelConfig(
        d_model=16, num_heads=2, d_ff=32, num_encoder_layers=1, num_decoder_layers=1,
        dropout=0.0, src_vocab_size=30, tgt_vocab_size=30, max_positions=128,
    )  # fmt: skip
    model = build_model(config).eval()
    src, pad = collate_source([[5, 6, 7, 8, 9, 10, 11, 12]])
    free_settings = DecodeConfig(beam_size=3, nbest=3, max_len_a=2.0, max_len_b=40)
    settings = dataclasses.replace(free_settings, max_output_tokens=6)
    with torch.no_grad():
        free = greedy_search(model, src, pad, free_settings)[0]
        capped = greedy_search(model, src, pad, settings)[0]
        beams = beam_search(model, src, pad, settings)[0]
    assert len(free.token_ids) > 6  # a random model runs on: the cap has work to do
    assert len(capped.token_ids) <= 6 and capped.token_ids == free.token_ids[:6]
    assert all(len(h.token_ids) <= 6 for h in beams)

"""What one epoch trains on: the training pairs' token ids (re-encoded each epoch with subword
sampling on) and their global batches, identical on every rank and in a resumed run."""

from __future__ import annotations

from anuvad.config import ExperimentConfig
from anuvad.data.batching import group_updates, make_batches, model_lengths
from anuvad.data.encoded import EncodedCorpus
from anuvad.data.prepare import PreparedData
from anuvad.errors import TrainingError


class EpochData:
    """The prepared training set, as each epoch sees it.

    Raises:
        TrainingError: subword sampling is asked of data or vocabularies that cannot do it.
    """

    def __init__(self, config: ExperimentConfig, prepared: PreparedData) -> None:
        self.config = config
        self.prepared = prepared
        if config.train.subword_sampling > 0:
            if not prepared.train_src_text:
                raise TrainingError(
                    "train.subword_sampling re-encodes the training text every epoch, but the "
                    "prepared data has no train.src.txt / train.tgt.txt (prepared by an older "
                    "anuvad); run `anuvad prepare` again"
                )
            if prepared.src_tokenizer.word_level or prepared.tgt_tokenizer.word_level:
                raise TrainingError(
                    "train.subword_sampling needs bpe or unigram vocabularies; a word "
                    "vocabulary has one segmentation only"
                )
        self.ids = prepared.train  # this epoch's encoding (resampled with sampling on)
        self._sampled_epoch = -1
        self._src_lengths = model_lengths(prepared.train.src)
        self._tgt_lengths = model_lengths(prepared.train.tgt)

    def _resample(self, epoch: int) -> None:
        """Subword regularisation: this epoch's sampled encoding of the training text.

        Seeded by (train.seed, epoch), so every rank and a resumed run see the same pieces. A
        sentence whose sampled encoding would not fit the model's positions keeps its fixed one.
        """
        alpha = self.config.train.subword_sampling
        if alpha <= 0 or self._sampled_epoch == epoch:
            return
        fixed, prepared = self.prepared.train, self.prepared
        seed = 1_000_003 * self.config.train.seed + 2 * epoch
        src = prepared.src_tokenizer.encode_sampled(prepared.train_src_text, alpha, seed)
        tgt = prepared.tgt_tokenizer.encode_sampled(prepared.train_tgt_text, alpha, seed + 1)
        limit = self.config.model.max_positions - 1  # room for BOS / EOS
        src = [s if len(s) <= limit else f for s, f in zip(src, fixed.src, strict=True)]
        tgt = [t if len(t) <= limit else f for t, f in zip(tgt, fixed.tgt, strict=True)]
        self.ids = EncodedCorpus(src=src, tgt=tgt)
        self._src_lengths = model_lengths(src)
        self._tgt_lengths = model_lengths(tgt)
        self._sampled_epoch = epoch

    def updates(self, epoch: int, world_size: int) -> list[list[list[int]]]:
        """The epoch's global batches: each a list of ``world_size * accumulate`` batches of
        pair indices (into :attr:`ids`, which this call re-encodes first when sampling)."""
        self._resample(epoch)
        accumulate = self.config.train.accumulate
        plan = make_batches(
            self._src_lengths,
            self._tgt_lengths,
            self.config.data.max_tokens,
            seed=self.config.train.seed,
            epoch=epoch,
        )
        updates = group_updates(plan.batches, world_size, accumulate)
        if not updates:
            raise TrainingError(
                f"an epoch has {len(plan.batches)} batches, fewer than world size x "
                f"train.accumulate = {world_size * accumulate}; lower train.accumulate or "
                f"data.max_tokens"
            )
        return updates

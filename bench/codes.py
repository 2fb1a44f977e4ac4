"""Format placeholders and tags written as text (``inference/codes.py``): kept as written by the
torch engine's default copying policy, against the same policy without them (``codes=False``)::

    .venv/bin/python bench/codes.py --model data/trained_models/enhi_d256_L3_V8000_<time>.pt

The sentences are UI strings and templates of the kinds software sends to translation (20,
written for this bench); per arm: how many outputs hold every code of their source exactly once,
and how many codes in all reach the output.
"""

from __future__ import annotations

import argparse

import torch

from anuvad.inference.codes import CODE
from anuvad.inference.translator import Translator
from anuvad.inference.verbatim import Verbatim

STRINGS = [
    "Hello {name}, you have {count} new messages.",
    "Delete %s files?",
    "Welcome back, {{user}}!",
    "Use the <div> element for the layout.",
    "Your order {0} will arrive on {1}.",
    "You have %d unread messages from %s.",
    "{count} items were added to your cart.",
    "Download failed after %(tries)d attempts.",
    "The file {filename} could not be opened.",
    "Saving {{ progress }} percent of the video.",
    "Hi %s, your password was changed.",
    "Click {button} to continue.",
    "We sent a code to {phone}.",
    "Page {page} of {total}",
    "Battery at %d percent.",
    "{user} liked your photo.",
    "Add a <br/> tag between the lines.",
    "The price is {price} for {days} days.",
    "Error: {message}",
    "Thank you, {{ name }}, for your feedback.",
]


def arm(translator: Translator, policy: Verbatim) -> tuple[int, int, int]:
    """(outputs holding every code once, codes there, codes in all)."""
    whole = found = total = 0
    for source, result in zip(
        STRINGS, translator.translate(STRINGS, translator.settings(), verbatim=policy), strict=True
    ):
        codes = [m.group() for m in CODE.finditer(source)]
        there = [c for c in codes if result.text.count(c) == codes.count(c)]
        whole += len(there) == len(codes)
        found, total = found + len(there), total + len(codes)
    return whole, found, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="an English->Hindi model file")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    translator = Translator.from_file(args.model, device="cpu", confidence=False)
    print("| policy | outputs with every code once | codes kept |")
    print("|---|---:|---:|")
    for name, policy in (("without codes", Verbatim(codes=False)), ("with codes", Verbatim())):
        whole, found, total = arm(translator, policy)
        print(f"| {name} | {whole} / {len(STRINGS)} | {found} / {total} |")


if __name__ == "__main__":
    main()

"""Sentences with an address: the address required as written, or shown to the model as a
placeholder (``inference/placeholders.py``, the default)::

    .venv/bin/python bench/addresses.py --model data/trained_models/enhi_d256_L3_V8000_<time>.pt

20 English sentences (10 Hindi ones for a Hindi→English model), each with an address of four
kinds in its place (a URL, a bare domain with a path, an e-mail address, a file name),
translated with beam search and the model's settings by the torch engine, under the default
copying policy. Per arm: how many outputs hold the address
exactly once, how many hold Latin letters or digits the source lacks outside it ("junk"), how
many a word beginning with "ज़" or "Z" that the plain sentence's translation lacks (what the
placeholder "Z1" may draw), and
the chrF++ of each output without its address against the model's own translation of the same
sentence with a plain noun in the address's place ("the website"): how much of the rest of the
sentence survives the address.
"""

from __future__ import annotations

import argparse
import re
from unittest import mock

import torch

from anuvad.evaluation.metrics import sentence_chrf
from anuvad.inference.placeholders import Hidden
from anuvad.inference.translator import Translator
from anuvad.inference.verbatim import Verbatim

TEMPLATES = [  # (sentence, the plain noun in the address's place)
    ("Download the form from {} today.", "the website"),
    ("Send your application to {} before Friday.", "the office"),
    ("Open {} and sign it.", "the file"),
    ("The full report is available at {}.", "the website"),
    ("For help, write to {} or call 139.", "the office"),
    ("Visit {} for bookings.", "the website"),
    ("Tickets can be booked on {} or at any station.", "the website"),
    ("The minister posted the list on {} late on Monday night.", "the website"),
    ("Students must upload their marks to {} by 15 June.", "the portal"),
    ("Complaints can be sent to {} at any time.", "the office"),
    ("The company said customers should check {} for updates.", "the website"),
    ("More details are given in {}.", "the file"),
    ("The results will be published on {} next week.", "the website"),
    ("Please save the document as {} before you send it.", "a file"),
    ("Farmers can register on {} to get the subsidy.", "the portal"),
    ("The police asked people to report fraud to {}.", "the office"),
    ("I have attached {} with the photos of the event.", "the file"),
    ("You can find the timetable at {}.", "the website"),
    ("Write to {} if your refund has not arrived.", "the office"),
    ("The new rules are explained in detail on {}.", "the website"),
]
HINDI_TEMPLATES = [  # for a Hindi->English model: the first ten, in Hindi
    ("आज {} से फ़ॉर्म डाउनलोड करें।", "वेबसाइट"),
    ("शुक्रवार से पहले अपना आवेदन {} पर भेजें।", "कार्यालय"),
    ("{} खोलें और उस पर हस्ताक्षर करें।", "फ़ाइल"),
    ("पूरी रिपोर्ट {} पर उपलब्ध है।", "वेबसाइट"),
    ("मदद के लिए {} पर लिखें या 139 पर कॉल करें।", "कार्यालय"),
    ("बुकिंग के लिए {} पर जाएँ।", "वेबसाइट"),
    ("टिकट {} पर या किसी भी स्टेशन पर बुक किए जा सकते हैं।", "वेबसाइट"),
    ("मंत्री ने सोमवार देर रात सूची {} पर डाली।", "वेबसाइट"),
    ("किसान सब्सिडी पाने के लिए {} पर पंजीकरण कर सकते हैं।", "पोर्टल"),
    ("नए नियम {} पर विस्तार से बताए गए हैं।", "वेबसाइट"),
]
ADDRESSES = {
    "URL": "https://www.irctc.co.in",
    "domain and path": "indianrail.gov.in/tickets",
    "e-mail": "care@irctc.co.in",
    "file name": "report_2024.pdf",
}
# Names marked to keep (``--names``): each in ten sentences, a plain noun in its place.
NAMES = ["Rohit Sharma", "Nirmala Sitharaman", "Mamata Banerjee", "Sundar Pichai"]
NAME_TEMPLATES = [
    ("{} scored 85 runs on Sunday.", "the player"),
    ("{} said the plan would help farmers.", "the minister"),
    ("I met {} in Delhi yesterday.", "the minister"),
    ("The award was given to {} on Monday.", "the player"),
    ("According to {}, the economy will grow this year.", "the minister"),
    ("Reporters asked {} about the new rules.", "the minister"),
    ("The captain, {}, thanked the fans.", "the player"),
    ("{} will visit Kolkata next week.", "the minister"),
    ("A letter from {} was read out in the house.", "the minister"),
    ("Fans waited for hours to see {}.", "the player"),
]
_LATIN = re.compile(r"[A-Za-z]")
# A word the placeholder "Z1" may have drawn: beginning with "ज़" or "Z" (not in the plain
# sentence's translation).
_ZED = re.compile(r"(?<!\S)(?:ज़|Z)\S*")


def judged(output: str, address: str, source: str) -> tuple[bool, bool, str]:
    """(the address is there exactly once, junk outside it, the output without it)."""
    rest = output.replace(address, " ")
    digits = set(re.findall(r"\d+", rest)) - set(re.findall(r"\d+", source))
    return output.count(address) == 1, bool(_LATIN.search(rest)) or bool(digits), rest


def arm(
    translator: Translator,
    templates: list[tuple[str, str]],
    plain: list[str],
    names: list[str] | None = None,
) -> dict[str, float]:
    """Each address (or each of ``names``, marked to keep) in every template."""
    once = junk = zed = 0
    similarity: list[float] = []
    for address in names or list(ADDRESSES.values()):
        sources = [template.format(address) for template, _ in templates]
        policy = Verbatim(keep=(address,)) if names else Verbatim()
        outputs = translator.translate(sources, translator.settings(), verbatim=policy)
        for (template, _), result, reference in zip(templates, outputs, plain, strict=True):
            whole, dirty, rest = judged(result.text, address, template)
            once, junk = once + whole, junk + dirty
            zed += any(w not in reference.split() for w in _ZED.findall(rest))
            similarity += sentence_chrf([rest], [reference])
    return {"once": once, "junk": junk, "zed": zed, "chrf": sum(similarity) / len(similarity)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="an English<->Hindi model file")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--names", action="store_true",
        help="English->Hindi: names marked to keep (NAMES) in place of addresses, as written, "
        "behind 'Z1' and behind 'X1' (the default for names)",
    )  # fmt: skip
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    translator = Translator.from_file(args.model, device="cpu", confidence=False)
    hindi = translator.model_file.config.data.src_lang == "hi"
    templates = NAME_TEMPLATES if args.names else HINDI_TEMPLATES if hindi else TEMPLATES
    names = NAMES if args.names else None
    plain = [r.text for r in translator.translate([t.format(n) for t, n in templates])]
    arms = []
    with mock.patch("anuvad.inference.required.hide", lambda text, spans, spellable: Hidden(text)):
        arms.append(("required as written", arm(translator, templates, plain, names)))
    if args.names:
        with mock.patch.dict("anuvad.inference.placeholders._LETTERS", {"name": "Z"}):
            arms.append(("behind 'Z1'", arm(translator, templates, plain, names)))
    arms.append(("behind a placeholder", arm(translator, templates, plain, names)))
    kinds = f"{len(NAMES)} names" if args.names else f"{len(ADDRESSES)} kinds of address"
    print(f"{len(templates) * len(names or ADDRESSES)} sentences ({len(templates)} x {kinds})\n")
    print(
        "| address | exactly once | junk outside it | a ज़/Z word "
        "| chrF++ of the rest vs a plain noun |"
    )
    print("|---|---:|---:|---:|---:|")
    for name, row in arms:
        junk = "–" if hindi else f"{row['junk']:.0f}"  # English output: Latin letters anyway
        print(f"| {name} | {row['once']:.0f} | {junk} | {row['zed']:.0f} | {row['chrf']:.1f} |")


if __name__ == "__main__":
    main()

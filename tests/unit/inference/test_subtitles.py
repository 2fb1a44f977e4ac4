"""Subtitles: every cue's timing and number kept, a sentence run over cues translated whole and
shared back among them, every word of every translation on screen, and a file that is not
subtitles refused with its line."""

from __future__ import annotations

import pytest

from anuvad.inference.subtitles import SubtitleError, read_subtitles

SRT = (
    "1\r\n00:00:01,000 --> 00:00:03,000\r\nI was going to\r\n\r\n"
    "2\r\n00:00:03,500 --> 00:00:05,000\r\nthe market with my friend.\r\n\r\n"
    "3\r\n00:00:06,000 --> 00:00:08,000\r\n<i>It was raining.</i>\r\n\r\n"
    "4\r\n00:00:08,500 --> 00:00:10,000\r\nThe train was late by two hours\r\n"
    "and everyone <b>waited</b> on the platform.\r\n"
)


def test_cues_are_grouped_into_sentences_and_shared_back_in_proportion() -> None:
    subs = read_subtitles("\ufeff" + SRT, "film.srt")
    assert subs.texts() == [
        "I was going to the market with my friend.",  # one sentence over two cues
        "It was raining.",
        "The train was late by two hours and everyone waited on the platform.",
    ]
    assert subs.places() == ["line 3", "line 11", "line 15"]
    translations = [
        "मैं अपने दोस्त के साथ बाजार जा रहा था।",
        "बारिश हो रही थी।",
        "ट्रेन दो घंटे लेट थी और सभी प्लेटफॉर्म पर इंतजार कर रहे थे।",
    ]
    out = subs.translated(translations)
    blocks = out.split("\r\n\r\n")
    assert len(blocks) == 4 and out.endswith("\r\n")  # the file's own line endings
    assert [b.split("\r\n")[:2] for b in blocks] == [
        ["1", "00:00:01,000 --> 00:00:03,000"],
        ["2", "00:00:03,500 --> 00:00:05,000"],
        ["3", "00:00:06,000 --> 00:00:08,000"],
        ["4", "00:00:08,500 --> 00:00:10,000"],
    ]
    first, second = blocks[0].split("\r\n")[2], blocks[1].split("\r\n")[2]
    assert f"{first} {second}" == translations[0] and first and second  # every word, in order
    assert blocks[2].split("\r\n")[2] == "<i>बारिश हो रही थी।</i>"  # the whole-cue tag kept
    last = blocks[3].removesuffix("\r\n").split("\r\n")[2:]
    assert len(last) == 2 and " ".join(last) == translations[2]  # two lines, as the source


def test_every_word_reaches_a_cue_whatever_the_lengths() -> None:
    cues = "".join(
        f"{i}\n00:00:0{i},000 --> 00:00:0{i},900\n{text}\n\n"
        for i, text in enumerate(["A very long first part of", "a", "sentence"], start=1)
    )
    subs = read_subtitles(cues, "x.srt")
    assert subs.texts() == ["A very long first part of a sentence"]
    for translation in ("एक", "एक दो", "एक दो तीन चार पाँच छह सात"):
        out = subs.translated([translation])
        words = [line for line in out.split("\n") if line and not line[0].isdigit()]
        assert " ".join(" ".join(words).split()) == translation


def test_webvtt_keeps_its_header_notes_and_cue_settings() -> None:
    vtt = (
        "WEBVTT - a film\n\nNOTE written by hand\n\nintro\n00:01.000 --> 00:03.000 align:start\n"
        "<v Anna>Hello there.\n\n00:04.000 --> 00:05.000\nGood night.\n"
    )
    subs = read_subtitles(vtt, "film.vtt")
    assert subs.texts() == ["Hello there.", "Good night."]
    assert subs.translated(["नमस्ते।", "शुभ रात्रि।"]) == (
        "WEBVTT - a film\n\nNOTE written by hand\n\nintro\n00:01.000 --> 00:03.000 align:start\n"
        "<v Anna>नमस्ते।\n\n00:04.000 --> 00:05.000\nशुभ रात्रि।\n"
    )


@pytest.mark.parametrize(
    ("text", "name", "says"),
    [
        ("Hello\nworld\n", "notes.srt", "notes.srt: line 1: a SubRip cue is its number"),
        ("WEBVTT\n\nNOTE only a note\n", "empty.vtt", "empty.vtt: no subtitle cue found"),
        # a cue's number, then a timing with a broken arrow: that line is named, not the number
        (
            "1\n00:00:01,000 -> 00:00:02,000\nHello.\n",
            "bad.srt",
            r"bad.srt: line 2: expected the timing line of the cue '1'.*found '00:00:01,000 -> ",
        ),
    ],
)
def test_a_file_that_is_not_subtitles_is_refused_naming_the_line(
    text: str, name: str, says: str
) -> None:
    with pytest.raises(SubtitleError, match=says):
        read_subtitles(text, name)


def test_a_dialogue_cue_has_each_speakers_line_translated_in_its_place() -> None:
    srt = (
        "1\n00:00:01,000 --> 00:00:03,000\n- Where are you going?\n- To the market\n\n"
        "2\n00:00:04,000 --> 00:00:05,000\nI will come\n\n"
        "3\n00:00:05,000 --> 00:00:06,000\nwith you.\n"
    )
    subs = read_subtitles(srt, "d.srt")
    assert subs.texts() == ["- Where are you going?", "- To the market", "I will come with you."]
    out = subs.translated(["- तुम कहाँ जा रहे हो?", "- बाजार", "मैं तुम्हारे साथ आऊँगा।"])
    assert out.startswith(
        "1\n00:00:01,000 --> 00:00:03,000\n- तुम कहाँ जा रहे हो?\n- बाजार\n\n2\n"
    )  # the second speaker's line did not pull the next cue into it


def test_the_reviewed_files_are_read_as_players_read_them() -> None:
    # an SRT cue missing the blank line before the next: two cues, both translated
    glued = "1\n00:00:01,000 --> 00:00:02,000\nHello\n2\n00:00:05,000 --> 00:00:06,000\nWorld.\n"
    subs = read_subtitles(glued, "g.srt")
    assert subs.texts() == ["Hello", "World."]  # three seconds apart: not joined
    assert subs.translated(["नमस्ते", "दुनिया।"]) == (
        "1\n00:00:01,000 --> 00:00:02,000\nनमस्ते\n\n2\n00:00:05,000 --> 00:00:06,000\nदुनिया।\n"
    )
    # WebVTT: hours of three digits, an arrow without spaces, escapes, CRLF in the header
    vtt = (
        "WEBVTT\r\nKind: captions\r\n\r\n100:00:01.000-->100:00:02.000\r\nTom &amp; Jerry run.\r\n"
    )
    subs = read_subtitles(vtt, "v.vtt")
    assert subs.texts() == ["Tom & Jerry run."]
    assert subs.translated(["टॉम & जेरी <दौड़ते> हैं।"]) == (
        "WEBVTT\r\nKind: captions\r\n\r\n100:00:01.000-->100:00:02.000\r\n"
        "टॉम &amp; जेरी &lt;दौड़ते&gt; हैं।\r\n"
    )
    with pytest.raises(SubtitleError, match=r"v2.vtt: line 6: a WebVTT cue"):
        read_subtitles("WEBVTT\n\n00:01.000 --> 00:02.000\nHi.\n\nA stray paragraph.\n", "v2.vtt")


def test_italics_per_line_voices_and_far_apart_cues() -> None:
    srt = (
        "1\n00:00:01,000 --> 00:00:03,000\n<i>Where are you going</i>\n<i>so late at night?</i>\n\n"
        "2\n00:00:04,000 --> 00:00:05,000\n<i>- Hi.</i>\n<i>- Hello.</i>\n\n"
        "3\n00:00:06,000 --> 00:00:07,000\n♪ Happy birthday to you ♪\n\n"
        "4\n00:05:00,000 --> 00:05:01,000\nwhere is he\n\n"
        "5\n00:09:00,000 --> 00:09:01,000\n-5 degrees tonight and\n-10 tomorrow.\n"
    )
    subs = read_subtitles(srt, "i.srt")
    assert subs.texts() == [
        "Where are you going so late at night?",
        "- Hi.",
        "- Hello.",
        "♪ Happy birthday to you ♪",
        "where is he",  # five minutes later: not joined to the song
        "-5 degrees tonight and -10 tomorrow.",  # numbers, not two speakers
    ]
    out = subs.translated(
        ["रात को इतनी देर से कहाँ जा रहे हो?", "- नमस्ते।", "", "♪ जन्मदिन ♪", "वह कहाँ है", "आज -5 कल -10"]
    )
    assert "<i>रात को इतनी देर से</i>\n<i>कहाँ जा रहे हो?</i>" in out  # each line in italics
    assert "<i>- नमस्ते।</i>\n<i>- Hello.</i>" in out  # an empty translation: the line kept
    vtt = "WEBVTT\n\n00:01.000 --> 00:02.000\n<v Anna>Hello.\n<v Bob>Hi there.\n"
    voices = read_subtitles(vtt, "v.vtt")
    assert voices.texts() == ["Hello.", "Hi there."]
    assert voices.translated(["नमस्ते।", "हाय।"]).endswith("<v Anna>नमस्ते।\n<v Bob>हाय।\n")


def test_a_tag_that_closes_inside_a_line_wraps_no_translation() -> None:
    """Second newcomer audit: "<c.yellow>सावधान</c> रहें।" came back "<c.yellow>Be careful.",
    its "</c>" lost (players kept the rest of the file yellow); a voice stays."""
    vtt = (
        "WEBVTT\n\n00:01.000 --> 00:02.000\n<c.yellow>सावधान</c> रहें।\n\n"
        "00:03.000 --> 00:04.000\n<v Anna><u>ध्यान दें:</u> ट्रेन लेट है।\n\n"
        "00:05.000 --> 00:06.000\n<i>ट्रेन लेट है।</i>\n\n"
        "00:07.000 --> 00:08.000\n<i>सावधान <b>रहें</b> अभी।</i>\n\n"  # italics stay whole
        "00:09.000 --> 00:10.000\n<c.yellow>सावधान</c> <b>रहें।</b>\n"  # no end tag left alone
    )
    subs = read_subtitles(vtt, "c.vtt")
    assert subs.texts() == [
        "सावधान रहें।", "ध्यान दें: ट्रेन लेट है।", "ट्रेन लेट है।", "सावधान रहें अभी।", "सावधान रहें।",
    ]  # fmt: skip
    out = subs.translated(
        ["Be careful.", "Note: the train is late.", "The train is late.", "Careful now.", "Stop."]
    )
    assert "\nBe careful.\n" in out and "<c.yellow>" not in out
    assert "<v Anna>Note: the train is late.\n" in out and "<i>The train is late.</i>" in out
    assert "\n<i>Careful now.</i>\n" in out and out.endswith("\nStop.\n")


def test_a_sound_in_brackets_is_a_cue_of_its_own() -> None:
    """ "[LAUGHS]" / "RAVI: Where is the train?" was one sentence, translated with a name the
    source lacks; a cue that is only a bracketed sound neither joins nor is joined."""
    srt = (
        "1\n00:00:01,000 --> 00:00:02,000\nWe waited\n\n"
        "2\n00:00:02,100 --> 00:00:03,000\n[LAUGHS]\n\n"
        "3\n00:00:03,100 --> 00:00:04,000\nRAVI: Where is the train?\n\n"
        "4\n00:00:04,100 --> 00:00:05,000\n(music)\n"
    )
    subs = read_subtitles(srt, "film.srt")
    assert subs.texts() == ["We waited", "[LAUGHS]", "RAVI: Where is the train?", "(music)"]

"""Hindi written in Latin letters ("mera naam Ravi hai", as chats and phones often write it).

The models read Hindi in Devanagari only. In Latin letters, Hindi went to the English→Hindi
model as English and came back as nonsense with confidence, and the Hindi→English model refused
it as "not in the script of 'hi'" with advice that led back to the English model. So such a
text is told apart from English (:func:`romanized_hindi`: most of its words are common Hindi
words no English text uses, "hai", "mera", "kya", "nahi"), and refused with what to do
(:data:`ROMANIZED_FIX`).
"""

from __future__ import annotations

import re

# Common Hindi words as chats spell them in Latin letters, leaving out any that is also an
# English word ("to", "main", "par", "do", "mere", "hum", "hue", "tum", "hun") or a common name
# ("Kal", "Ji", "Han", "Lena", "Jana", "Abhi").
_SPELLED = """
    hai hain hoon mera meri tera teri tere aap aapka aapki aapke tumhara tumhari tumhe tumhein
    humara hamara hamari mujhe mujhko tujhe usko unko isko kya kyu kyun kyon kaise kaisa kaisi
    kahan kidhar idhar udhar kab kitna kitni kitne nahi nahin haan ki ke ko se mein bhi toh yeh
    woh kuch bahut bohot accha acha achha theek thik aaj ghar naam karo karna karta karti karte
    kiya raha rahi rahe tha thi gayi hoga hogi chahiye sakta sakti sakte wala wali wale yaar
    matlab lekin aur bhai kaun kisne kisko liye saath baat pata samajh dekho chalo jao aao khana
    paani pani subah shaam raat namaste namaskar dhanyavad dhanyawad shukriya haal hua hui diya
    liya ek
"""
WORDS = frozenset(_SPELLED.split())
# Of them, words only Hindi has at all (not names elsewhere: "Ko Samui", "Li Hui", "Mein"):
# a text must hold one.
_CORE = """
    hai hain hoon kya kyun kyon kaise kaisa kaisi kahan nahi nahin mera meri mujhe mujhko tumhe
    tumhara tumhari aap aapka aapki aapke chahiye raha rahi rahe hoga hogi theek thik accha acha
    achha bahut bohot yaar kuch haan namaste dhanyavad dhanyawad shukriya haal kitna kitne kitni
"""
CORE = frozenset(_CORE.split())
_WORD = re.compile(r"[A-Za-z]+")
SHARE = 0.4  # of a text's Latin words
ROMANIZED_FIX = (
    "looks like Hindi written in Latin letters (e.g. 'mera naam Ravi hai'); the models "
    "read Hindi in Devanagari only: write it in Devanagari (a phonetic keyboard, such as the "
    "Hindi keyboards of Windows, Android and Google Input Tools, turns 'mera' into 'मेरा') and "
    "translate it from Hindi"
)


def romanized_hindi(text: str) -> bool:
    """Whether ``text`` is Hindi in Latin letters: no Devanagari, at least three Latin words,
    two of them and :data:`SHARE` of them common Hindi words (:data:`WORDS`), one only Hindi
    has (:data:`CORE`: "hai", "kya", "nahi")."""
    if any("\u0900" <= c <= "\u097f" for c in text):
        return False
    words = [w.lower() for w in _WORD.findall(text)]
    hits = sum(w in WORDS for w in words)
    return len(words) >= 3 and hits >= max(2, SHARE * len(words)) and any(w in CORE for w in words)


__all__ = ["CORE", "ROMANIZED_FIX", "SHARE", "WORDS", "romanized_hindi"]

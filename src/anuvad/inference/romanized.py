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
# English word or name ("to", "main", "par", "do", "Kal", "Ji", "Han").
_SPELLED = """
    hai hain hoon hun mera meri mere tera teri tere aap aapka aapki aapke tum tumhara tumhari
    tumhe tumhein hum humara hamara hamari mujhe mujhko tujhe usko unko isko kya kyu kyun kyon
    kaise kaisa kaisi kahan kidhar idhar udhar kab kitna kitni kitne nahi nahin haan ki ke ko se
    mein bhi toh yeh woh kuch bahut bohot accha acha achha theek thik abhi aaj ghar naam karo
    karna karta karti karte kiya raha rahi rahe tha thi gaya gayi hoga hogi chahiye sakta sakti
    sakte wala wali wale yaar matlab lekin aur bhai kaun kisne kisko liye saath baat pata samajh
    dekho chalo jao aao khana paani pani subah shaam raat namaste namaskar dhanyavad dhanyawad
    shukriya haal hua hui hue diya liya dena lena jana aana ek
"""
WORDS = frozenset(_SPELLED.split())
_WORD = re.compile(r"[A-Za-z]+")
SHARE = 0.4  # of a text's words, at least two of them
ROMANIZED_FIX = (
    "looks like Hindi written in Latin letters (e.g. 'mera naam Ravi hai'); the models "
    "read Hindi in Devanagari only: write it in Devanagari (a phonetic keyboard, such as the "
    "Hindi keyboards of Windows, Android and Google Input Tools, turns 'mera' into 'मेरा') and "
    "translate it from Hindi"
)


def romanized_hindi(text: str) -> bool:
    """Whether ``text`` is Hindi in Latin letters: no Devanagari, and at least two words and
    :data:`SHARE` of its Latin words common Hindi words (:data:`WORDS`)."""
    if any("\u0900" <= c <= "\u097f" for c in text):
        return False
    words = [w.lower() for w in _WORD.findall(text)]
    hits = sum(w in WORDS for w in words)
    return hits >= 2 and hits >= SHARE * len(words)


__all__ = ["ROMANIZED_FIX", "SHARE", "WORDS", "romanized_hindi"]

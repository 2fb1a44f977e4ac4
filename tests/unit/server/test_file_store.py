"""The store of translated files waiting for their download: kept a while, within bounds."""

from __future__ import annotations

from anuvad.server.file_store import TranslatedFiles


def test_the_oldest_go_first_beyond_the_byte_bound_and_the_newest_stays() -> None:
    store = TranslatedFiles(keep_seconds=60, max_files=10, max_bytes=10, clock=lambda: 0.0)
    first = store.put("a.hi.txt", b"1234", "text/plain")
    second = store.put("b.hi.txt", b"5678", "text/plain")
    stored = store.get(first)
    assert stored is not None and stored.data == b"1234" and stored.name == "a.hi.txt"
    third = store.put("c.hi.txt", b"90ab", "text/plain")  # 12 bytes: over 10, the oldest goes
    assert store.get(first) is None and store.get(second) and store.get(third)
    big = store.put("d.hi.txt", b"x" * 50, "text/plain")  # alone over the bound: kept, alone
    assert len(store) == 1 and store.get(big)


def test_the_oldest_go_first_beyond_the_file_bound() -> None:
    store = TranslatedFiles(keep_seconds=60, max_files=3, max_bytes=10**6, clock=lambda: 0.0)
    tokens = [store.put(f"{i}.hi.txt", b"x", "text/plain") for i in range(5)]
    assert [store.get(t) is not None for t in tokens] == [False, False, True, True, True]


def test_a_file_kept_too_long_is_gone_and_a_token_has_no_dot() -> None:
    now = [0.0]
    store = TranslatedFiles(keep_seconds=60, max_files=3, max_bytes=10, clock=lambda: now[0])
    token = store.put("a.hi.txt", b"1", "text/plain")
    now[0] = 60.0
    assert store.get(token) is not None  # kept 60 seconds, not less
    now[0] = 60.5
    assert store.get(token) is None and len(store) == 0
    assert all("." not in store.put("e.txt", b"", "text/plain") for _ in range(50))

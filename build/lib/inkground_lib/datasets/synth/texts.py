"""Greeting-card and note texts: the words of a page."""

from __future__ import annotations

import numpy as np

NAMES = ("Anna Ben Clara David Emma Frank Grace Henry Isla Jack Kate Leo Lucy Mark Nina Oliver Paul Rosa Sam "
         "Tom Uma Vera Will Zoe Alice Beth Carl Dora Ella Finn Greg Hannah Ivy Jane Karen Lily Mia Noah Owen "
         "Peter Ruth Sarah Tina Victor Wendy Mum Dad Grandma Grandpa").split()


_OCCASION = ("birthday", "anniversary", "wedding day", "retirement", "new home", "holiday", "graduation",
             "new job", "big day", "special day")


_GIFT = ("flowers", "card", "gift", "book", "scarf", "chocolates", "plant", "letter", "photos", "dinner",
         "tea set", "candle", "painting", "basket")


_WHEN = ("soon", "next week", "this summer", "at Christmas", "in the spring", "again", "very soon",
         "next month", "on Sunday", "after the holidays")


_REL = ("friend", "sister", "brother", "mother", "father", "neighbour", "teacher", "aunt", "uncle", "cousin")


_FEEL = ("happy", "grateful", "proud", "lucky", "touched", "delighted", "thankful")


_THING = ("hugs", "kisses", "good wishes", "warm thoughts", "sunshine", "happy thoughts")


_ADJ = ("lovely", "beautiful", "wonderful", "thoughtful", "kind", "generous", "sweet", "perfect")


_MEAL = ("lunch", "dinner", "coffee", "tea", "a walk", "a picnic")


_SENTENCES = (
    "thank you so much for the {adj} {gift}",
    "I hope you have a {adj} {occasion}",
    "wishing you all the best on your {occasion}",
    "it was so good to see you last week",
    "we are all so proud of you",
    "thinking of you and your family at this time",
    "I can not wait to see you {when}",
    "congratulations on your {occasion}",
    "happy birthday to the best {rel} in the world",
    "sending you lots of love and {thing}",
    "you always make my day brighter",
    "I am sorry I missed your call",
    "please come and visit us {when}",
    "the children loved the {gift} and they say thank you",
    "let us meet for {meal} {when}",
    "may your {occasion} be filled with joy and laughter",
    "I am so {feel} to have you in my life",
    "your {gift} made me smile all day",
    "it was so {adj} of you to think of me",
    "we had such a {adj} time with you",
    "I will always remember the day we met",
    "the garden looks {adj} this year",
    "we miss you and hope you are well",
    "take good care of yourself and rest",
    "I hope the new house is everything you wanted",
    "we are thinking of you and sending our love",
    "thank you for being such a {adj} {rel}",
    "enjoy every moment of your {occasion}",
    "here is a little something for your {occasion}",
    "I still laugh when I think of our trip",
    "give my love to everyone at home",
    "with all our love on your {occasion}",
    "you are the most {adj} {rel} anyone could wish for",
    "I hope this card finds you well and happy",
    "we should do this again {when}",
    "call me when you are back from your trip",
    "the weather here has been {adj} all week",
    "thank you for the {adj} evening and the good food",
)


_FILLERS = ("Thanks", "Enjoy", "Cheers", "Miss you", "Have fun", "Talk soon", "Stay well", "See you soon",
            "Love you lots", "Hope you are well", "Much love to all", "Hope to see you soon",
            "Give everyone a hug")


_GREETINGS = ("Dear {name}", "Hi {name}", "Hello {name}", "My dear {name}", "Dearest {name}", "To {name}")


_CLOSINGS = ("Love", "With love", "Best wishes", "All my love", "Warm regards", "Yours truly", "Hugs",
             "Take care", "Much love", "Lots of love", "Fondly")


def message_words(rng: np.random.Generator, n_words: int, punctuation: bool = True) -> list[tuple[str, bool]]:
    """A greeting-card message or note of exactly ``n_words`` words, as (word, line_break_after) pairs.

    Structure: greeting ("Dear Anna,") on its own line, sentences, closing ("With love,") and signature on
    lines of their own; a short page keeps the greeting and the first words of the body. Words are ASCII
    letters; with ``punctuation`` a comma follows the greeting and the closing and sentences end with "." or
    "!" (attached to the word)."""
    if n_words < 1:
        raise ValueError(f"message_words: n_words must be >= 1, got {n_words}")

    def fill(t: str) -> str:
        return t.format(adj=_pick(rng, _ADJ), gift=_pick(rng, _GIFT), occasion=_pick(rng, _OCCASION),
                        when=_pick(rng, _WHEN), rel=_pick(rng, _REL), feel=_pick(rng, _FEEL),
                        thing=_pick(rng, _THING), meal=_pick(rng, _MEAL), name=_pick(rng, NAMES))

    greet = fill(_pick(rng, _GREETINGS)).split()
    closing = _pick(rng, _CLOSINGS).split() + [_pick(rng, NAMES)]
    if punctuation:
        greet[-1] += ","
        closing[-2] += ","
    room = n_words - len(greet) - (len(closing) if n_words >= len(greet) + len(closing) + 3 else 0)
    body: list[str] = []
    used: set = set()
    while len(body) < room:
        left = room - len(body)
        s = None
        for _ in range(8):  # whole sentences while one fits, then a short one of exactly the words left
            tpl = _pick(rng, _SENTENCES)
            cand = fill(tpl).split()
            if len(cand) <= left and (tpl not in used or len(used) >= len(_SENTENCES) // 2):
                s = cand
                used.add(tpl)
                break
        if s is None:
            s = _pick(rng, [f for f in _FILLERS if len(f.split()) == min(left, 5)]).split()
        s[0] = s[0][0].upper() + s[0][1:]
        if punctuation:
            s[-1] += "!" if rng.random() < 0.2 else "."
        body.extend(s)
    body = body[:max(room, 0)]
    words = [(w, i == len(greet) - 1) for i, w in enumerate(greet)] + [(w, False) for w in body]
    if room == n_words - len(greet) - len(closing):
        if words:
            words[-1] = (words[-1][0], True)
        words += [(w, i >= len(closing) - 2) for i, w in enumerate(closing)]
    words = words[:n_words]
    return words


def _pick(rng: np.random.Generator, seq):
    return seq[int(rng.integers(len(seq)))]


def sample_word_count(rng: np.random.Generator, lo: int, hi: int, mean: float) -> int:
    """Words on a page: lo + Gamma(shape 2, mean - lo), redrawn while above hi (right-skewed, as the paper's
    2-140 range with mean 34.89)."""
    if lo == hi:
        return lo
    m = max(mean - lo, 0.5)
    for _ in range(1000):
        n = lo + int(round(rng.gamma(2.0, m / 2.0)))
        if n <= hi:
            return n
    return hi


def split_words(rng: np.random.Generator, n: int) -> list[str]:
    """75/25 split: n == 1 -> ["train"]; n >= 2 -> max(1, round(n / 4)) "test" words chosen by ``rng``."""
    if n <= 1:
        return ["train"] * n
    n_test = max(1, int(round(0.25 * n)))
    test = set(rng.choice(n, n_test, replace=False).tolist())
    return ["test" if j in test else "train" for j in range(n)]

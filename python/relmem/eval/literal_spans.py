"""How a question writes a value: the span of the question that expresses a stored value, so the gold simulator
writes SQL literals the way a user would ('Los Angeles' where the database stores 'LA')."""
import re

_WORD = re.compile(r"\w+(?:[-'.&]\w+)*")
MIN_SIMILARITY = 0.7
MAX_EXTRA_WORDS = 2


def _trigrams(text):
    padded = f"  {text} "
    return {padded[i:i + 3] for i in range(len(padded) - 2)}


def _dice(a, b):
    x, y = _trigrams(a), _trigrams(b)
    return 2 * len(x & y) / (len(x) + len(y))


def _token_f1(a, b):
    x, y = a.split(), b.split()
    common = len(set(x) & set(y))
    return 0.0 if not common else 2 * common / (len(set(x)) + len(set(y)))


def _initials(words):
    return "".join(word[0] for word in words)


def question_span(value, question):
    """The question's own spelling of `value`: the value itself when the question contains it, the question's
    letter case when only case differs, else the span (up to a few words longer than the value) most similar to it
    by character trigrams, words or initials ('LA' for 'Los Angeles'), when similar enough. None when the question
    does not express the value."""
    if not value.strip():
        return None
    for flags in (0, re.I):  # as written, then in the question's letter case; whole words only
        found = re.search(rf"(?<!\w){re.escape(value)}(?!\w)", question, flags)
        if found:
            return found.group()
    lowered = value.lower()
    words = list(_WORD.finditer(question))
    longest = len(lowered.split()) + MAX_EXTRA_WORDS
    best, best_score = None, MIN_SIMILARITY
    for i in range(len(words)):
        for j in range(i + 1, min(len(words), i + longest) + 1):
            span = question[words[i].start():words[j - 1].end()]
            candidate = span.lower()
            score = max(_dice(candidate, lowered) if len(lowered) >= 3 else 0.0, _token_f1(candidate, lowered))
            if j - i >= 2 and lowered.isalpha() and _initials(candidate.split()) == lowered:
                score = max(score, 0.95)
            if score > best_score:
                best, best_score = span, score
    return best

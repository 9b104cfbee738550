"""The greedy decoder's loop breaker: which continuations count as a repetition loop."""
from relmem.llm.greedy import LOOP_COPIES, LOOP_TOKENS, repeats_loop


def test_a_long_span_repeated_three_times_is_a_loop():
    cast = [101, 7]  # "CAST", "("
    assert not repeats_loop(cast * 5, 101)  # 11 tokens in all: not yet
    assert repeats_loop(cast * 5 + [101], 7)  # the sixth "CAST(" makes 12


def test_a_span_of_several_tokens_is_a_loop_at_its_third_copy():
    span = [5, 6, 7, 8, 9]
    assert not repeats_loop(span * 2 + span[:-1], 1)
    assert repeats_loop(span * 2 + span[:-1], 9)


def test_short_repeats_and_varied_text_are_not_loops():
    assert not repeats_loop([40, 40], 40)  # "(((": three copies, too few tokens
    assert not repeats_loop([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], 12)
    assert not repeats_loop([3, 1, 3, 2, 3, 4, 3], 5)  # "1, 2, 4, 5": the separator repeats, the values do not
    assert not repeats_loop([], 1)


def test_the_rule_is_the_documented_one():
    for period in range(1, 9):
        copies = max(LOOP_COPIES, -(-LOOP_TOKENS // period))
        tokens = list(range(period)) * copies
        assert repeats_loop(tokens[:-1], tokens[-1])
        assert not repeats_loop(tokens[:-2], tokens[-2])


def test_a_repeated_clause_of_forty_tokens_is_a_loop():
    clause = list(range(100, 140))
    assert not repeats_loop([1, 2] + clause * 2, 100)
    assert repeats_loop([1, 2] + clause * 2 + clause[:-1], 139)

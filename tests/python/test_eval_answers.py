"""Answer matching of `relmem eval`: normalised text, numbers with a tolerance, printed tables, comparisons."""
from relmem.agent.tables import format_table
from relmem.eval.answers import (as_number, choice_answer_correct, chosen_question, normalize_text, parse_table,
                                 rows_answer_correct, rows_match, text_answer_correct, text_contains)


def test_text_is_normalised_for_case_punctuation_articles_and_accents():
    assert normalize_text("The  RNA-interference Pathway!") == "rna interference pathway"
    assert normalize_text("Café, an ode.") == "cafe ode"
    assert normalize_text("It costs 3.5 dollars.") == "it costs 3.5 dollars"


def test_numbers_are_read_from_text_and_compared_with_a_tolerance():
    assert as_number("1,234") == 1234.0 and as_number("3.50") == 3.5 and as_number("abc") is None
    assert as_number(True) is None
    assert text_contains("There are 1,234 singers.", 1234)
    assert text_contains("The average is 3.3333", 3.33333333)
    assert not text_contains("There are 12 singers.", 1)
    assert not text_contains("Q2: not found.", 2) and not text_contains("the 2nd one", 2)


def test_text_containment_respects_word_boundaries():
    assert text_contains("Singers from France and Japan", "france")
    assert not text_contains("Singers from Frankfurt", "Frank")


def test_rows_match_as_multisets_or_in_order():
    assert rows_match([["a", 1], ["b", 2.0]], [["b", 2], ["a", 1]])
    assert not rows_match([["a", 1], ["b", 2]], [["b", 2], ["a", 1]], ordered=True)
    assert not rows_match([["a", 1]], [["a", 1], ["a", 1]])


def test_rows_match_under_any_order_of_the_columns_as_spider_compares_results():
    assert rows_match([[2013, 12], [2016, 158]], [[158, 2016], [12, 2013]])
    assert rows_match([[2013, 12], [2016, 158]], [[12, 2013], [158, 2016]], ordered=True)
    assert not rows_match([[2016, 158], [2013, 12]], [[12, 2013], [158, 2016]], ordered=True)
    # Columns holding the same cells may swap, but each row must still hold its own cells.
    assert rows_match([[1, 2, "x"], [2, 1, "y"]], [["x", 2, 1], ["y", 1, 2]])
    assert not rows_match([[1, 2, "x"], [2, 1, "y"]], [["x", 1, 2], ["x", 2, 1]])
    assert not rows_match([["a", 1]], [["a", 1, 1]])
    assert not rows_match([["a"], ["b"]], [["a", "b"]])
    assert rows_match([], [])


def test_printed_tables_are_parsed_and_checked_against_gold_rows():
    gold = [["Joe Sharp", 52], ["Timbaland", 32]]
    printed = format_table(["name", "age"], [gold[1], gold[0]])
    assert parse_table(printed)[0] == [["Timbaland", "32"], ["Joe Sharp", "52"]]
    assert rows_answer_correct(printed, gold)
    assert not rows_answer_correct(printed, gold, ordered=True)
    assert not rows_answer_correct(format_table(["name", "age"], gold[:1]), gold)
    long = [[i] for i in range(80)]
    assert rows_answer_correct(format_table(["n"], long, max_rows=50), long)
    assert not rows_answer_correct(format_table(["n"], long[:79], max_rows=50), long)


def test_single_values_and_sentences():
    assert rows_answer_correct("6", [[6]])
    assert rows_answer_correct("There are 6 singers.", [[6]])
    assert not rows_answer_correct("There are 7 singers.", [[6]])
    assert rows_answer_correct("France and Japan.", [["France"], ["Japan"]])
    assert not rows_answer_correct("France.", [["France"], ["Japan"]])


def test_comparisons_must_name_exactly_one_question():
    assert chosen_question("Answer: Q2") == 2
    assert chosen_question("q1 has the larger number") == 1
    assert chosen_question("Q1 is 5 and Q2 is 7") is None
    assert chosen_question("the second one") is None


def test_free_text_and_multiple_choice_answers():
    assert text_answer_correct("The RNA interference pathway.", ["RNA interference pathway"])
    assert not text_answer_correct("Ribonucleases", ["RNA interference pathway"])
    choices = {"A": "bank", "B": "library", "C": "department store"}
    assert choice_answer_correct("A bank.", choices, "A")
    assert choice_answer_correct("(A)", choices, "A")
    assert not choice_answer_correct("a bank or a library", choices, "A")
    assert not choice_answer_correct("library", choices, "A")


def test_a_refusal_is_never_a_correct_answer():
    from relmem.eval.items import Item
    from relmem.eval.metrics import answer_correct
    item = Item("zero-1", "zero", "Where do children learn? A) school_bus, B) home.",
                {"type": "choice", "choices": {"A": "school", "B": "home"}, "key": "A"})
    assert answer_correct(item, "school")
    assert not answer_correct(item, "could not answer: none of the databases holds data (looked at school_bus)")

"""Plain-text result tables, as prompts and the CLI show them."""
from relmem.agent.stages.output import rows_answer
from relmem.agent.tables import format_cell, format_table


def test_cells_show_floats_to_the_digits_a_double_holds():
    assert format_cell(2.6999999999999997) == "2.7"
    assert format_cell(0.1 + 0.2) == "0.3"
    assert format_cell(3.0) == "3.0"
    assert format_cell(123456789012345.6) == "123456789012346.0"
    assert format_cell(1e20) == "1e+20"
    assert [format_cell(v) for v in (None, 7, "LA", b"\x00\x01")] == ["NULL", "7", "LA", "<2 bytes>"]


def test_tables_and_single_values_use_the_same_cells():
    assert format_table(["avg"], [(2.6999999999999997,), (None,)]) == "avg\n----\n2.7\nNULL"
    assert rows_answer(["AVG(rating)"], [(2.6999999999999997,)], 50) == "2.7"
    assert format_table(["n"], [], 50).endswith("(no rows)")
    assert format_table(["n"], [(i,) for i in range(3)], 2).endswith("... 1 more rows")

import relmem
from conftest import SPIDER, requires_shared

pytestmark = requires_shared(SPIDER / "database")


def test_loads_all_157_spider_databases():
    catalog = relmem.Catalog(str(SPIDER / "database"))
    assert catalog.skipped == []
    assert len(catalog) == 157
    schema = catalog.schema("concert_singer")
    assert {t.name.lower() for t in schema.tables} >= {"stadium", "singer", "concert", "singer_in_concert"}
    assert "database concert singer" in catalog.card("concert_singer")
    result = catalog.execute("concert_singer", "SELECT count(*) FROM singer")
    assert result.ok and result.rows[0][0] > 0

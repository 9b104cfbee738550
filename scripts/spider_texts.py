"""Real texts for `relmem bench index --texts`: Spider's dev questions first (the queries), then its training
questions, then the distinct text cells (3 characters or more) of its databases, one text a line, up to LIMIT lines.

    python3 scripts/spider_texts.py ../shared/data/spider /tmp/spider_texts.txt
"""
import argparse
import json
import pathlib
import sqlite3

from relmem import outputs


def spider_texts(spider, limit):
    lines, seen = [], set()

    def add(text):
        text = " ".join(str(text).split())
        if len(text) >= 3 and text not in seen:
            seen.add(text)
            lines.append(text)

    for name in ("dev.json", "train_spider.json", "train_others.json"):
        if (spider / name).exists():
            for item in json.loads((spider / name).read_text(encoding="utf-8")):
                add(item["question"])
    for db in sorted((spider / "database").glob("*/*.sqlite")):
        if len(lines) >= limit:
            break
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            tables = [name for (name,) in con.execute("select name from sqlite_master where type = 'table'")]
            for table in tables:
                for row in con.execute(f'select * from "{table}" limit 20000'):
                    for cell in row:
                        if isinstance(cell, str):
                            add(cell)
        except sqlite3.Error:
            pass  # an unreadable database gives no texts
        finally:
            con.close()
    return lines[:limit]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spider", type=pathlib.Path, help="Spider folder (dev.json, database/)")
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--limit", type=int, default=101_034, help="lines: 100,000 rows after dev's 1,034 questions")
    args = parser.parse_args()
    lines = spider_texts(args.spider, args.limit)
    outputs.write_file(str(args.out), "".join(line + "\n" for line in lines))
    print(f"{len(lines)} texts in {args.out}")


if __name__ == "__main__":
    main()

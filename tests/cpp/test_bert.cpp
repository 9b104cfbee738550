// Safetensors reader/writer, WordPiece tokenizer and BERT encoder. The numerical check of the forward pass against an
// independent NumPy implementation is tests/python/test_bert_encoder.py; here: formats, errors and invariants.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "../../cpp/src/linalg/packed_gemm.hpp"
#include "relmem/encoders/bert_encoder.hpp"
#include "relmem/encoders/safetensors.hpp"
#include "relmem/encoders/tokenizers/wordpiece.hpp"
#include "test_util.hpp"
#include "tiny_bert.hpp"

using namespace relmem;
using relmem_test::TempDir;
using relmem_test::random_values;
using relmem_test::small_vocab;
using relmem_test::write_tiny_bert;

namespace {

const std::string kLayoutDir = std::string(RELMEM_SOURCE_DIR) + "/../shared/models/minilm-layout";

// A safetensors file from a raw header text and raw data bytes.
std::string raw_safetensors(const std::string& header, const std::string& data) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(static_cast<uint64_t>(header.size()) >> (8 * i));
  return bytes + header + data;
}

// Runs the reader on the bytes and returns the relmem::Error message ("" when it loads).
std::string load_error(const TempDir& dir, const std::string& bytes) {
  const std::string path = dir.file("bad.safetensors");
  relmem_test::write_bytes(path, bytes);
  try {
    SafetensorsFile file(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// --- safetensors -------------------------------------------------------------------------------------------------

TEST(Safetensors, RoundTripF32WithMetadata) {
  TempDir dir;
  const std::string path = dir.file("m.safetensors");
  const std::vector<float> a = {1.5f, -2.0f, 3.25f, 0.0f, 1e-20f, -7e30f};
  write_safetensors(path, {{"a", "F32", {2, 3}, a}, {"b", "F32", {4}, {1, 2, 3, 4}}, {"empty", "F32", {0, 5}, {}}},
                    {{"format", "pt"}});
  SafetensorsFile file(path);
  EXPECT_EQ(file.names(), (std::vector<std::string>{"a", "b", "empty"}));
  EXPECT_EQ(file.metadata().at("format"), "pt");
  EXPECT_EQ(file.info("a").shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(file.info("a").dtype, "F32");
  EXPECT_EQ(file.read_floats("a"), a);
  const RowMatrix m = file.read_matrix("a", 2, 3);
  EXPECT_EQ(m(1, 2), -7e30f);
  EXPECT_EQ(m(0, 1), -2.0f);
  EXPECT_EQ(file.read_vector("b", 4)(3), 4.0f);
  EXPECT_TRUE(file.read_floats("empty").empty());
  EXPECT_TRUE(file.contains("b"));
  EXPECT_FALSE(file.contains("c"));
  EXPECT_THROW(file.info("c"), Error);
  EXPECT_THROW(file.read_matrix("a", 3, 2), Error);
  EXPECT_THROW(file.read_vector("a", 6), Error);
}

TEST(Safetensors, HalfAndBfloat16RoundTrip) {
  TempDir dir;
  const std::string path = dir.file("h.safetensors");
  const std::vector<float> exact = {0.0f, 1.0f, -2.0f, 0.5f, 65504.0f, std::ldexp(1.0f, -24), 1.0f / 1024};
  const std::vector<float> noisy = random_values(1000, 3, 0.1f);
  write_safetensors(path, {{"exact16", "F16", {7}, exact}, {"noisy16", "F16", {10, 100}, noisy},
                           {"exactbf", "BF16", {3}, {1.0f, -0.5f, 256.0f}}, {"noisybf", "BF16", {1000}, noisy}});
  SafetensorsFile file(path);
  EXPECT_EQ(file.info("noisy16").end - file.info("noisy16").begin, 2000u);
  EXPECT_EQ(file.read_floats("exact16"), exact);
  EXPECT_EQ(file.read_floats("exactbf"), (std::vector<float>{1.0f, -0.5f, 256.0f}));
  const std::vector<float> half = file.read_floats("noisy16");
  const std::vector<float> bf = file.read_floats("noisybf");
  for (std::size_t i = 0; i < noisy.size(); ++i) {
    const float x = std::abs(noisy[i]);
    if (x > 1e-4f) EXPECT_LE(std::abs(half[i] - noisy[i]), x * std::ldexp(1.0f, -11)) << noisy[i];
    EXPECT_LE(std::abs(bf[i] - noisy[i]), x * std::ldexp(1.0f, -8)) << noisy[i];
  }
}

TEST(Safetensors, HalfConversionBits) {
  EXPECT_EQ(float_to_half(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half(-2.0f), 0xC000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_half(65519.0f), 0x7BFF);
  EXPECT_EQ(float_to_half(65520.0f), 0x7C00);  // halfway to the next power rounds to infinity
  EXPECT_EQ(float_to_half(INFINITY), 0x7C00);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -26)), 0x0000);
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3C00);      // tie goes to even
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);  // tie goes to even
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(NAN))));
  EXPECT_EQ(half_to_float(0x3555), 0.333251953125f);
  EXPECT_EQ(half_to_float(0x8001), -std::ldexp(1.0f, -24));
  EXPECT_EQ(half_to_float(0xFC00), -INFINITY);
  for (uint32_t bits = 0; bits < 0x7C00; ++bits) {  // every finite positive half survives the round trip
    ASSERT_EQ(float_to_half(half_to_float(static_cast<uint16_t>(bits))), bits);
  }
  EXPECT_EQ(float_to_bfloat16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bfloat16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  EXPECT_EQ(float_to_bfloat16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
  EXPECT_EQ(bfloat16_to_float(0xC040), -3.0f);
  EXPECT_TRUE(std::isnan(bfloat16_to_float(float_to_bfloat16(NAN))));
}

TEST(Safetensors, RejectsMalformedFiles) {
  TempDir dir;
  const std::string four_floats(16, '\0');
  auto tensor = [](const std::string& dtype, const std::string& shape, int begin, int end) {
    return "{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":[" + std::to_string(begin) + "," +
           std::to_string(end) + "]}";
  };
  EXPECT_EQ(load_error(dir, raw_safetensors("{\"t\":" + tensor("F32", "[2,2]", 0, 16) + "}", four_floats)), "");

  EXPECT_NE(load_error(dir, "\x05\x00\x00").find("too small"), std::string::npos);
  std::string huge_length = raw_safetensors("{}", "");
  huge_length[0] = '\x40';
  EXPECT_NE(load_error(dir, huge_length).find("runs past the end"), std::string::npos);
  EXPECT_NE(load_error(dir, raw_safetensors("{\"t\": [1,", "")).find("not valid JSON"), std::string::npos);
  EXPECT_NE(load_error(dir, raw_safetensors("[1, 2]", "")).find("JSON object"), std::string::npos);
  EXPECT_NE(load_error(dir, raw_safetensors("{\"t\":" + tensor("Q7", "[4]", 0, 16) + "}", four_floats))
                .find("unknown dtype"),
            std::string::npos);
  EXPECT_NE(load_error(dir, raw_safetensors("{\"t\":" + tensor("F32", "[3]", 0, 16) + "}", four_floats))
                .find("needs 12 bytes"),
            std::string::npos);
  EXPECT_NE(load_error(dir, raw_safetensors("{\"t\":" + tensor("F32", "[-4]", 0, 16) + "}", four_floats))
                .find("non-negative"),
            std::string::npos);
  EXPECT_NE(load_error(dir, raw_safetensors("{\"t\":{\"dtype\":\"F32\",\"shape\":[4]}}", four_floats))
                .find("data_offsets"),
            std::string::npos);
  const std::string gap = "{\"a\":" + tensor("F32", "[1]", 0, 4) + ",\"b\":" + tensor("F32", "[2]", 8, 16) + "}";
  EXPECT_NE(load_error(dir, raw_safetensors(gap, four_floats)).find("gap"), std::string::npos);
  const std::string overlap = "{\"a\":" + tensor("F32", "[3]", 0, 12) + ",\"b\":" + tensor("F32", "[2]", 8, 16) + "}";
  EXPECT_NE(load_error(dir, raw_safetensors(overlap, four_floats)).find("overlap"), std::string::npos);
  const std::string one = "{\"t\":" + tensor("F32", "[2,2]", 0, 16) + "}";
  EXPECT_NE(load_error(dir, raw_safetensors(one, four_floats.substr(0, 10))).find("truncated"), std::string::npos);
  EXPECT_NE(load_error(dir, raw_safetensors(one, four_floats + "xx")).find("trailing"), std::string::npos);
  EXPECT_NE(load_error(dir, raw_safetensors("{\"__metadata__\":{\"n\":3}}", "")).find("not a string"),
            std::string::npos);
  EXPECT_THROW(SafetensorsFile(dir.file("missing.safetensors")), Error);
}

TEST(Safetensors, OnlyFloatingDtypesConvert) {
  TempDir dir;
  const std::string path = dir.file("i.safetensors");
  const std::string header = "{\"ids\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[0,16]}}";
  relmem_test::write_bytes(path, raw_safetensors(header, std::string(16, '\1')));
  SafetensorsFile file(path);
  EXPECT_EQ(file.info("ids").element_count(), 2u);
  EXPECT_THROW(file.read_floats("ids"), Error);
  EXPECT_THROW(write_safetensors(dir.file("x.safetensors"), {{"t", "I64", {1}, {1.0f}}}), Error);
  EXPECT_THROW(write_safetensors(dir.file("x.safetensors"), {{"t", "F32", {2}, {1.0f}}}), Error);
}

// --- WordPiece ---------------------------------------------------------------------------------------------------

TEST(WordPiece, GreedyLongestMatchFirst) {
  WordPieceTokenizer tokenizer(small_vocab(), {});
  using Pieces = std::vector<std::string>;
  EXPECT_EQ(tokenizer.tokenize("The cats sat, on THE mat!"),
            (Pieces{"the", "cat", "##s", "sat", ",", "on", "the", "mat", "!"}));
  EXPECT_EQ(tokenizer.tokenize("unaffable unaffablea"),
            (Pieces{"un", "##aff", "##able", "un", "##aff", "##able", "##a"}));
  EXPECT_EQ(tokenizer.tokenize("unaffableb dog"), (Pieces{"[UNK]", "[UNK]"}));  // a remainder fails the whole word
  EXPECT_EQ(tokenizer.tokenize("Café CAFÉ cafe\xCC\x81"), (Pieces{"cafe", "cafe", "cafe"}));  // accents stripped
  EXPECT_EQ(tokenizer.tokenize("北京cat"), (Pieces{"北", "京", "cat"}));
  EXPECT_EQ(tokenizer.tokenize(" \t\n"), Pieces{});
  EXPECT_EQ(tokenizer.tokenize("cat[SEP]mat [MASK]"), (Pieces{"cat", "[SEP]", "mat", "[MASK]"}));
  EXPECT_EQ(tokenizer.tokenize("c\x07" "a\xE2\x80\x8Bt \xFF"), (Pieces{"cat"}));  // control, zero width, bad UTF-8
  EXPECT_EQ(tokenizer.encode("the cat"), (std::vector<int32_t>{2, 5, 6, 3}));
  EXPECT_EQ(tokenizer.token_id("mat"), 9);
  EXPECT_EQ(tokenizer.token(9), "mat");
  EXPECT_THROW(tokenizer.token_id("dog"), Error);
  EXPECT_THROW(tokenizer.token(99), Error);
}

TEST(WordPiece, OptionsAndTruncation) {
  WordPieceOptions cased;
  cased.lower_case = false;
  WordPieceTokenizer keep_case(small_vocab(), cased);
  EXPECT_EQ(keep_case.tokenize("Cat cat é"), (std::vector<std::string>{"Cat", "cat", "é"}));
  cased.strip_accents = WordPieceOptions::StripAccents::kYes;
  EXPECT_EQ(WordPieceTokenizer(small_vocab(), cased).tokenize("é"), (std::vector<std::string>{"[UNK]"}));

  WordPieceOptions short_words;
  short_words.max_chars_per_word = 3;
  short_words.max_length = 4;
  WordPieceTokenizer limited(small_vocab(), short_words);
  EXPECT_EQ(limited.tokenize("cat cats"), (std::vector<std::string>{"cat", "[UNK]"}));
  EXPECT_EQ(limited.encode("the cat sat on the mat"), (std::vector<int32_t>{2, 5, 6, 3}));

  EXPECT_THROW(WordPieceTokenizer({}, {}), Error);
  EXPECT_THROW(WordPieceTokenizer({"a", "b"}, {}), Error);  // no [UNK]/[CLS]/[SEP]
}

TEST(WordPiece, RealBertVocabulary) {
  if (!std::filesystem::exists(kLayoutDir + "/vocab.txt")) GTEST_SKIP() << "no " << kLayoutDir;
  const WordPieceTokenizer tokenizer = WordPieceTokenizer::from_directory(kLayoutDir);
  using Pieces = std::vector<std::string>;
  EXPECT_EQ(tokenizer.vocab_size(), 30522u);
  EXPECT_EQ(tokenizer.options().max_length, 256);
  EXPECT_EQ(tokenizer.encode("Hello world"), (std::vector<int32_t>{101, 7592, 2088, 102}));
  EXPECT_EQ(tokenizer.tokenize("John Johanson's house"), (Pieces{"john", "johan", "##son", "'", "s", "house"}));
  EXPECT_EQ(tokenizer.tokenize("unaffable"), (Pieces{"una", "##ffa", "##ble"}));
  EXPECT_EQ(tokenizer.tokenize("Héllo Wörld naïve café"), (Pieces{"hello", "world", "naive", "cafe"}));
  EXPECT_EQ(tokenizer.tokenize("don't U.S.A. $5"), (Pieces{"don", "'", "t", "u", ".", "s", ".", "a", ".", "$", "5"}));
  EXPECT_EQ(tokenizer.tokenize("我爱北京 ok"), (Pieces{"我", "[UNK]", "北", "京", "ok"}));
  EXPECT_EQ(tokenizer.tokenize("한국어"),  // Hangul syllables decompose into jamo
            (Pieces{"ᄒ", "##ᅡ", "##ᆫ", "##ᄀ", "##ᅮ", "##ᆨ", "##ᄋ", "##ᅥ"}));
  EXPECT_EQ(tokenizer.tokenize("İstanbul emoji 😀"), (Pieces{"istanbul", "em", "##oj", "##i", "[UNK]"}));
  EXPECT_EQ(tokenizer.tokenize(std::string(101, 'a')), (Pieces{"[UNK]"}));
  EXPECT_EQ(tokenizer.encode("hello[SEP]world"), (std::vector<int32_t>{101, 7592, 102, 2088, 102}));
  std::string long_text;
  for (int i = 0; i < 300; ++i) long_text += "token ";
  EXPECT_EQ(tokenizer.encode(long_text).size(), 256u);
}

// --- BERT encoder on a tiny random model -------------------------------------------------------------------------

namespace {

constexpr int kHidden = relmem_test::kTinyHidden, kLayers = relmem_test::kTinyLayers,
              kPositions = relmem_test::kTinyPositions;

}  // namespace

TEST(BertEncoder, BatchingDoesNotChangeEmbeddings) {
  TempDir dir;
  write_tiny_bert(dir.path());
  BertEncoderOptions options;
  options.batch_size = 2;
  const BertEncoder encoder(dir.path(), options);
  EXPECT_EQ(encoder.dim(), kHidden);
  EXPECT_EQ(encoder.max_length(), kPositions);
  const std::vector<std::string> texts = {"the cat sat", "cats on the mat.", "", "un", "the cat sat"};
  const RowMatrix together = encoder.encode(texts);
  ASSERT_EQ(together.rows(), 5);
  for (int i = 0; i < 5; ++i) {
    const RowMatrix alone = encoder.encode({texts[i]});
    EXPECT_LT((alone.row(0) - together.row(i)).cwiseAbs().maxCoeff(), 1e-5f) << texts[i];
    EXPECT_NEAR(together.row(i).norm(), 1.0f, 1e-5f);
  }
  EXPECT_GT((together.row(0) - together.row(1)).norm(), 1e-3f);  // different texts, different embeddings
  EXPECT_EQ(encoder.encode({}).rows(), 0);
}

TEST(BertEncoder, PoolingTruncationAndRegistry) {
  TempDir dir;
  write_tiny_bert(dir.path());
  const std::string text = "the cat sat on the mat";
  BertEncoderOptions raw;
  raw.normalize = false;
  const RowMatrix mean = BertEncoder(dir.path(), raw).encode({text});
  EXPECT_GT(std::abs(mean.row(0).norm() - 1.0f), 1e-3f);

  std::filesystem::create_directories(dir.path() + "/1_Pooling");
  std::ofstream(dir.path() + "/1_Pooling/config.json")
      << R"({"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": true})";
  const BertEncoder cls_and_mean(dir.path(), raw);
  EXPECT_EQ(cls_and_mean.dim(), 2 * kHidden);
  const RowMatrix both = cls_and_mean.encode({text});
  EXPECT_LT((both.rightCols(kHidden) - mean).cwiseAbs().maxCoeff(), 1e-6f);  // mean comes after cls
  EXPECT_GT((both.leftCols(kHidden) - mean).cwiseAbs().maxCoeff(), 1e-3f);

  raw.max_length = 4;  // [CLS] the cat [SEP]
  const BertEncoder truncated(dir.path(), raw);
  EXPECT_LT((truncated.encode({text}) - truncated.encode({"the cat"})).cwiseAbs().maxCoeff(), 1e-6f);
  raw.max_length = 100;  // capped by the 16 position embeddings
  EXPECT_EQ(BertEncoder(dir.path(), raw).max_length(), kPositions);

  auto loaded = load_encoder("bert:" + dir.path());
  EXPECT_EQ(loaded->dim(), 2 * kHidden);
  EXPECT_EQ(loaded->name(), "bert:" + dir.path());
  EXPECT_THROW(load_encoder("bert:"), Error);
}

TEST(BertEncoder, HalfPrecisionWeightsAgreeWithF32) {
  TempDir full, half, bf;
  write_tiny_bert(full.path(), "F32");
  write_tiny_bert(half.path(), "F16");
  write_tiny_bert(bf.path(), "BF16");
  const std::vector<std::string> texts = {"the cat sat", "mat"};
  const RowMatrix reference = BertEncoder(full.path()).encode(texts);
  EXPECT_LT((BertEncoder(half.path()).encode(texts) - reference).cwiseAbs().maxCoeff(), 5e-3f);
  EXPECT_LT((BertEncoder(bf.path()).encode(texts) - reference).cwiseAbs().maxCoeff(), 5e-2f);
}

TEST(BertEncoder, BadModelDirectoriesRaise) {
  TempDir dir;
  auto message = [](const std::string& path) -> std::string {
    try {
      BertEncoder encoder(path);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message(dir.file("nowhere")).find("does not exist"), std::string::npos);

  write_tiny_bert(dir.file("missing"), "F32", "encoder.layer.1.output.dense.bias");
  EXPECT_NE(message(dir.file("missing")).find("encoder.layer.1.output.dense.bias"), std::string::npos);

  write_tiny_bert(dir.file("roberta"));
  std::ofstream(dir.file("roberta") + "/config.json") << R"({"model_type": "roberta", "hidden_size": 8})";
  EXPECT_NE(message(dir.file("roberta")).find("roberta"), std::string::npos);

  write_tiny_bert(dir.file("badjson"));
  std::ofstream(dir.file("badjson") + "/config.json") << "{\"hidden_size\": ";
  EXPECT_NE(message(dir.file("badjson")).find("invalid JSON"), std::string::npos);

  write_tiny_bert(dir.file("novocab"));
  std::filesystem::remove(dir.file("novocab") + "/vocab.txt");
  EXPECT_NE(message(dir.file("novocab")).find("vocab.txt"), std::string::npos);

  write_tiny_bert(dir.file("pooling"));
  std::filesystem::create_directories(dir.file("pooling") + "/1_Pooling");
  std::ofstream(dir.file("pooling") + "/1_Pooling/config.json") << R"({"pooling_mode_lasttoken": true})";
  EXPECT_NE(message(dir.file("pooling")).find("not supported"), std::string::npos);
}

TEST(BertEncoder, HalfWeightsStayCloseToFloatWeights) {
  TempDir dir;
  write_tiny_bert(dir.path());
  BertEncoderOptions exact;
  exact.half_weights = false;
  const std::vector<std::string> texts = {"the cat sat", "cats on the mat.", "", "un"};
  const RowMatrix reference = BertEncoder(dir.path(), exact).encode(texts);
  const RowMatrix half = BertEncoder(dir.path()).encode(texts);
  EXPECT_LT((half - reference).cwiseAbs().maxCoeff(), 2e-3f);
  if (gemm::best_kernel() != gemm::Kernel::kPortable) {
    EXPECT_GT((half - reference).cwiseAbs().maxCoeff(), 0.0f) << "the fp16 weights were not used";
  }
}

TEST(BertEncoder, FineTuningTopReproducesEncodeAndIsSaved) {
  TempDir dir, saved_parent;
  write_tiny_bert(dir.path());
  std::ofstream(dir.path() + "/INSTALLED") << "manifest of the source";
  BertEncoderOptions exact;  // the trainable copy computes in fp32, as the trainer's encoder does
  exact.half_weights = false;
  const BertEncoder encoder(dir.path(), exact);
  const std::vector<std::string> texts = {"the cat sat", "cats on the mat.", "", "un"};
  const RowMatrix reference = encoder.encode(texts);
  for (int layers = 1; layers <= kLayers; ++layers) {
    const BertTop top = encoder.top(layers);
    EXPECT_EQ(top.shape().layers, layers);
    const RowMatrix vectors = top.encode(encoder.token_states(texts, layers));
    EXPECT_LT((vectors - reference).cwiseAbs().maxCoeff(), 1e-5f) << layers << " top layers";
  }
  EXPECT_THROW(encoder.top(0), Error);
  EXPECT_THROW(encoder.top(kLayers + 1), Error);

  BertTop changed = encoder.top(1);
  for (size_t i = 0; i < changed.parameters().size(); i += 3) changed.parameters()[i] *= 1.5f;
  const std::string out = saved_parent.path() + "/tuned";
  encoder.save_with_top(changed, out);
  EXPECT_THROW(encoder.save_with_top(changed, out), Error);  // never over an existing directory
  EXPECT_FALSE(std::filesystem::exists(out + "/INSTALLED"));
  EXPECT_TRUE(std::filesystem::exists(out + "/vocab.txt"));
  const BertEncoder tuned(out, exact);
  const RowMatrix expected = changed.encode(encoder.token_states(texts, 1));
  EXPECT_LT((tuned.encode(texts) - expected).cwiseAbs().maxCoeff(), 1e-5f);
  EXPECT_GT((tuned.encode(texts) - reference).cwiseAbs().maxCoeff(), 1e-3f);
  EXPECT_LT((tuned.top(2).encode(tuned.token_states(texts, 2)) - expected).cwiseAbs().maxCoeff(), 1e-5f);
}

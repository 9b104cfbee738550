#include <gtest/gtest.h>

#include "relmem/encoders/encoder.hpp"
#include "relmem/encoders/hashing_encoder.hpp"

using namespace relmem;

TEST(HashingEncoder, NormalizedAndDeterministic) {
  HashingEncoder encoder(256);
  RowMatrix a = encoder.encode({"How many singers are there?", "stadium capacity"});
  RowMatrix b = encoder.encode({"How many singers are there?", "stadium capacity"});
  EXPECT_EQ(a, b);
  EXPECT_NEAR(a.row(0).norm(), 1.0f, 1e-5);
  EXPECT_EQ(a.cols(), 256);
}

TEST(HashingEncoder, SharedWordsAndCharactersScoreHigher) {
  HashingEncoder encoder;
  RowMatrix v = encoder.encode({"singer name and age", "singers names", "flight departure airport", "SingerName"});
  EXPECT_GT(v.row(0).dot(v.row(1)), v.row(0).dot(v.row(2)));
  EXPECT_GT(v.row(0).dot(v.row(3)), 0.3f);  // camelCase splits into words
}

TEST(HashingEncoder, OddInputIsHarmless) {
  HashingEncoder encoder(64);
  RowMatrix v = encoder.encode({"", "!!!", "\xff\xfe broken utf8 \xc3", "Zürich 東京 naïve", std::string(200000, 'a')});
  EXPECT_EQ(v.row(0).norm(), 0.0f);  // nothing to hash
  EXPECT_EQ(v.row(1).norm(), 0.0f);
  for (int i = 2; i < 5; ++i) EXPECT_NEAR(v.row(i).norm(), 1.0f, 1e-5);
}

TEST(EncoderRegistry, LoadsBySpec) {
  auto encoder = load_encoder("hashing:128");
  EXPECT_EQ(encoder->dim(), 128);
  EXPECT_EQ(encoder->name(), "hashing:128");
  EXPECT_THROW(load_encoder("no-such-encoder"), Error);
  EXPECT_THROW(load_encoder("hashing:abc"), Error);
  EXPECT_THROW(load_encoder("hashing:-3"), Error);
}

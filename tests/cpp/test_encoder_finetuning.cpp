// Fine-tuning USE-lite's top layer with the relevance model (needs the USE-lite weights; skips without them): the
// trainable top with the encoder's weights reproduces the encoder, training updates it, a saved and loaded model
// reproduces the training-time question vectors and the selection memory's scores, and a top that does not match
// the encoder is a clear error.
#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "relmem/catalog/catalog.hpp"
#include "relmem/encoders/use_lite.hpp"
#include "relmem/memories/training/relevance_training.hpp"
#include "relmem/memories/selection/selection_memory.hpp"
#include "test_util.hpp"

using namespace relmem;

namespace {

const std::vector<std::vector<std::string>> kTopics = {
    {"hospital", "doctor", "patient", "ward"},   {"flights", "airline", "pilot", "airport"},
    {"library", "book", "author", "publisher"},  {"school", "student", "course", "teacher"},
    {"garage", "car", "engine", "mechanic"},     {"kitchen", "recipe", "chef", "ingredient"},
};

class EncoderFinetuning : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    try {
      encoder_ = std::make_shared<UseLiteEncoder>();
    } catch (const Error&) {
      encoder_ = nullptr;
    }
  }
  void SetUp() override {
    if (!encoder_) GTEST_SKIP() << "USE-lite weights are not installed";
    for (const auto& w : kTopics) {
      relmem_test::make_database(dir.file("dbs/" + w[0] + ".sqlite"),
                                 "CREATE TABLE " + w[1] + " (id INTEGER PRIMARY KEY, name TEXT, " + w[2] + "_id INT);"
                                 "CREATE TABLE " + w[2] + " (id INTEGER PRIMARY KEY, name TEXT, " + w[3] + " TEXT);"
                                 "INSERT INTO " + w[1] + " VALUES (1, 'first " + w[1] + "', 1);");
    }
    catalog = Catalog::open(dir.file("dbs"));
  }

  std::vector<LabeledQuestion> questions() const {
    const std::vector<std::string> starts = {"how many", "list every", "which", "show the names of"};
    std::vector<LabeledQuestion> out;
    for (const auto& w : kTopics)
      for (size_t i = 0; i < 8; ++i)
        out.push_back({starts[i % starts.size()] + " " + w[1 + i % 3] + " with a " + w[1 + (i + 1) % 3] + "?", {w[0]}});
    return out;
  }

  TrainingResult train(int finetune_layers) const {
    std::vector<DatabaseTexts> databases;
    for (const auto& db : catalog.databases()) databases.push_back(database_texts(catalog, db, CardOptions{}));
    TrainingOptions o;
    o.epochs = 2;
    o.batch = 8;
    o.projection_dim = 32;
    o.hidden_dim = 8;
    o.heldout_fraction = 0.2f;
    o.threads = 2;
    o.finetune_layers = finetune_layers;
    o.finetune_lr_scale = 1.0f;
    const auto lexical = load_encoder("hashing:4096");
    return train_relevance(*encoder_, lexical.get(), databases, questions(), o);
  }

  static inline std::shared_ptr<const UseLiteEncoder> encoder_;
  relmem_test::TempDir dir;
  Catalog catalog;
};

double max_difference(const RowMatrix& a, const RowMatrix& b) { return (a - b).cwiseAbs().maxCoeff(); }

}  // namespace

TEST_F(EncoderFinetuning, TopWithTheEncodersWeightsReproducesIt) {
  const std::vector<std::string> texts = {"How many singers do we have?", "",
                                          "List the name, country and age of every singer, oldest first.", "a"};
  const RowMatrix expected = encoder_->encode(texts);
  for (int layers : {1, 2}) {
    const UseLiteTop top = encoder_->top(layers);
    EXPECT_EQ(top.shape().layer_count(), layers);
    EXPECT_LT(max_difference(encoder_->encode_with_top(texts, top), expected), 2e-5) << layers << " layers";
  }
  EXPECT_THROW(encoder_->top(3), Error);
  EXPECT_THROW(encoder_->token_states(texts, 0), Error);
}

TEST_F(EncoderFinetuning, TrainedTopIsSavedAndReproducesTrainingVectors) {
  const TrainingResult result = train(1);
  const RelevanceModel& model = result.model;
  ASSERT_TRUE(model.fine_tunes_encoder());
  EXPECT_NE(model.encoder_top().parameters(), encoder_->top(1).parameters()) << "training did not move the top";

  const std::string path = dir.file("tuned.model");
  model.save(path);
  const RelevanceModel loaded = RelevanceModel::load(path);
  ASSERT_TRUE(loaded.fine_tunes_encoder());
  EXPECT_EQ(loaded.encoder_top().parameters(), model.encoder_top().parameters());
  EXPECT_TRUE(loaded.encoder_top().shape() == model.encoder_top().shape());

  // Training puts a batch's questions through forward() on rows selected from every text's token states;
  // inference encodes the texts themselves.
  std::vector<std::string> texts;
  for (const auto& q : questions()) texts.push_back(q.text);
  const TokenStates states = encoder_->token_states(texts, 1);
  TopCache<float> cache;
  const RowMatrix training_vectors = model.encoder_top().forward(states.select({3, 17, 40}), cache);
  const RowMatrix inference_vectors = encoder_->encode_with_top({texts[3], texts[17], texts[40]}, loaded.encoder_top());
  EXPECT_LT(max_difference(training_vectors, inference_vectors), 1e-6);
  EXPECT_GT(max_difference(inference_vectors, encoder_->encode({texts[3], texts[17], texts[40]})), 1e-4);

  // The selection memory uses the fine-tuned top for questions, in memory and after a save and load.
  auto shared = std::make_shared<const RelevanceModel>(loaded);
  const SelectionMemory memory = SelectionMemory::build(catalog, encoder_, shared);
  memory.save(dir.file("memory"));
  const SelectionMemory reloaded = SelectionMemory::load(dir.file("memory"), encoder_);
  RelevanceModel frozen_copy = loaded;
  frozen_copy.set_encoder_top(UseLiteTop());
  const SelectionMemory frozen =
      SelectionMemory::build(catalog, encoder_, std::make_shared<const RelevanceModel>(frozen_copy));
  bool differs = false;
  for (const std::string& question : {texts[0], texts[20], texts[45]}) {
    const auto a = memory.select(question, 3), b = reloaded.select(question, 3), c = frozen.select(question, 3);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].database, b[i].database);
      EXPECT_FLOAT_EQ(a[i].score, b[i].score);
    }
    differs = differs || std::fabs(a[0].score - c[0].score) > 1e-4f;
  }
  EXPECT_TRUE(differs) << "the memory's scores do not depend on the fine-tuned top";
  const RowMatrix vector = encoder_->encode({texts[0]});
  const RowMatrix lexical = load_encoder("hashing:4096")->encode({texts[0]});
  EXPECT_THROW(memory.select_vector(vector.data(), 3, lexical.data()), Error);
}

TEST_F(EncoderFinetuning, TopThatDoesNotMatchTheEncoderIsRefused) {
  UseLiteTopShape shape = encoder_->top(1).shape();
  shape.layers[0].hidden = 8;  // not USE-lite's FFN width
  RelevanceConfig config;
  config.input_dim = encoder_->dim();
  config.projection_dim = 8;
  config.hidden_dim = 4;
  config.encoder = "use-lite";
  config.lexical_encoder = "hashing:4096";
  RelevanceModel model(config, 1);
  model.set_encoder_top(UseLiteTop(shape, std::vector<float>(static_cast<size_t>(shape.parameter_count()), 0.01f)));
  const std::string path = dir.file("mismatch.model");
  model.save(path);
  const auto loaded = std::make_shared<const RelevanceModel>(RelevanceModel::load(path));
  try {
    SelectionMemory::build(catalog, encoder_, loaded);
    FAIL() << "expected relmem::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("do not match"), std::string::npos) << e.what();
  }
  EXPECT_THROW(encoder_->encode_with_top({"a question"}, loaded->encoder_top()), Error);

  UseLiteTopShape narrow = encoder_->top(1).shape();
  narrow.output_width = 16;  // the relevance model takes 512-d vectors
  EXPECT_THROW(model.set_encoder_top(UseLiteTop(narrow, std::vector<float>(
                                                            static_cast<size_t>(narrow.parameter_count()), 0.0f))),
               Error);
}

TEST_F(EncoderFinetuning, FinetuningNeedsUseLite) {
  std::vector<DatabaseTexts> databases;
  for (const auto& db : catalog.databases()) databases.push_back(database_texts(catalog, db, CardOptions{}));
  TrainingOptions o;
  o.epochs = 1;
  o.finetune_layers = 1;
  const auto hashing = load_encoder("hashing:256");
  EXPECT_THROW(train_relevance(*hashing, nullptr, databases, questions(), o), Error);
  o.finetune_layers = 3;
  EXPECT_THROW(train_relevance(*encoder_, nullptr, databases, questions(), o), Error);
}

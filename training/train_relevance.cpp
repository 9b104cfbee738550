// relmem-train-relevance: trains the database relevance classifier of the selection memory.
//   relmem-train-relevance --data train_spider.json --dbs spider/database --encoder use-lite --out relevance.model
// The collection is every database of --dbs that a training question names; a share of those databases
// (--heldout) and their questions never reach training: they pick the best epoch and calibrate the threshold.
// --classifier card-cosine trains sigmoid(a cos(E(question), E(card)) + b) with a BERT encoder E's top layers
// (--finetune-layers) and writes the fine-tuned encoder as a model directory (card_relevance_training.hpp).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "relmem/catalog/catalog.hpp"
#include "relmem/encoders/bert_encoder.hpp"
#include "relmem/encoders/encoder.hpp"
#include "relmem/memories/training/card_relevance_training.hpp"
#include "relmem/memories/training/relevance_training.hpp"
#include "relmem/memories/selection/selection_memory.hpp"
#include "number_flags.hpp"

namespace {

constexpr const char* kUsage =
    "usage: relmem-train-relevance --data QUESTIONS.json --dbs DIR --out MODEL [options]\n"
    "(a flag marked features: or card-cosine: applies to that --classifier only; the other refuses it)\n"
    "  --data FILE           JSON list of {question, db_id | db_ids} (e.g. Spider train_spider.json)\n"
    "  --dbs DIR             folder of SQLite databases\n"
    "  --out PATH            the model to write (card-cosine: a folder); a new path, apart from the inputs\n"
    "  --encoder SPEC        encoder (default use-lite)\n"
    "  --lexical-encoder SPEC  features: lexical encoder for features 5-6 (default hashing:4096; none to disable)\n"
    "  --epochs N            (default 6)\n"
    "  --lr X                Adam learning rate (default 0.002)\n"
    "  --batch N             questions per step (default 32)\n"
    "  --max-composite K     composite questions join 2..K questions (default 3; 1 disables them)\n"
    "  --composite-ratio X   composite questions per training question (default 0.5)\n"
    "  --negatives N         negative databases per positive (default 4)\n"
    "  --hard-fraction X     share of hard negatives (default 0.5)\n"
    "  --heldout X           share of databases held out (default 0.1)\n"
    "  --weight-decay X      decay toward the initial weights (default 0)\n"
    "  --listwise X          features: weight of the listwise term (softmax over a question's pairs) beside BCE (default 0)\n"
    "  --bce X               features: weight of BCE (default 1; 0 with --listwise: ranking alone)\n"
    "  --hard-pool N         the untrained memory's top N wrong databases are the hard negatives (default 10)\n"
    "  --projection-lr-scale X  features: projections' learning rate relative to --lr (default 0.05)\n"
    "  --direct-lr-scale X   features: the direct path's learning rate relative to --lr (default 20)\n"
    "  --projection-dim N    features: (default 256)\n"
    "  --hidden N            features: (default 32)\n"
    "  --samples-per-column N  card sample values per column (default 3)\n"
    "  --values-per-column N  stored text values per column for the value evidence (default 1000; 0: none)\n"
    "  --seed N              (default 0)\n"
    "  --threads N           (default: all)\n"
    "  --device cpu|cuda     features: matrix products on the CPU or a CUDA GPU (default cpu)\n"
    "  --cache DIR           features: reuse embeddings across runs\n"
    "  --finetune-layers N   features: fine-tune USE-lite's top N transformer layers and its tanh head end to end on\n"
    "                        the question side (default 0 = frozen encoder; 1 = the top layer; 2 = both);\n"
    "                        card-cosine: the BERT layers trained\n"
    "  --finetune-lr-scale X  features: their learning rate relative to --lr (default 0.01)\n"
    "  --classifier NAME     features (default: the selection memory's feature model, --out a file) or card-cosine\n"
    "                        (a BERT encoder's top --finetune-layers layers with sigmoid(a cos + b) on the card;\n"
    "                        --out a new model directory; --lr is the layers' rate, default 2e-5)\n"
    "  --head-lr X           card-cosine: learning rate of a and b (default 0.01)\n"
    "  --max-questions N     card-cosine: training questions drawn for the run, composites included (default all)\n";

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "relmem-train-relevance: %s\n%s", message.c_str(), kUsage);
  std::exit(2);
}

template <typename T>
T parse_number(const std::string& flag, const std::string& text) {
  const std::optional<T> value = relmem_training::parse_number<T>(text);
  if (!value) usage_error("bad value '" + text + "' for " + flag);
  return *value;
}

bool within(const std::filesystem::path& inner, const std::filesystem::path& outer) {
  auto i = inner.begin();
  for (auto o = outer.begin(); o != outer.end(); ++o, ++i) {
    if (o->empty()) continue;  // a trailing separator
    if (i == inner.end() || *i != *o) return false;
  }
  return true;
}

// The output is a new path, apart from everything the run reads (docs/hardening.md): relmem never overwrites a file
// it did not create and never writes where it reads.
void check_output(const std::string& out, const std::map<std::string, std::string>& reads) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (fs::symlink_status(out, error).type() != fs::file_type::not_found) {
    throw relmem::Error("--out " + out + " exists; relmem-train-relevance writes a new model only, and leaves it as "
                        "it is: choose a new path or move it away");
  }
  const fs::path output = fs::weakly_canonical(fs::absolute(out));
  for (const auto& [flag, path] : reads) {
    if (path.empty()) continue;
    const fs::path read = fs::weakly_canonical(fs::absolute(path));
    if (within(output, read) || within(read, output)) {
      throw relmem::Error("--out " + out + " overlaps " + flag + " " + path +
                          ", which relmem-train-relevance reads; choose an output apart from every input");
    }
  }
}

}  // namespace

void print_epoch(const relmem::EpochReport& r, int epochs) {
  std::printf("epoch %d/%d  loss %.4f  held-out recall@1 %.3f  recall@5 %.3f  all-in-top5 %.3f  (%.1f s)\n", r.epoch,
              epochs, r.loss, r.heldout_recall_at_1, r.heldout_recall_at_5, r.heldout_all_in_top5, r.seconds);
  std::fflush(stdout);
}

int train_card_cosine(const relmem::Encoder& encoder, const std::vector<relmem::DatabaseTexts>& databases,
                      const std::vector<relmem::LabeledQuestion>& questions, const relmem::TrainingOptions& options,
                      bool lr_given, float head_lr, int64_t max_questions, const std::string& out) {
  const auto* loaded = dynamic_cast<const relmem::BertEncoder*>(&encoder);
  if (!loaded) throw relmem::Error("--classifier card-cosine needs a BERT encoder (minilm, bert:DIR)");
  relmem::BertEncoderOptions exact = loaded->options();
  exact.half_weights = false;  // trained in fp32; serving reads the saved model with fp16 weights
  const relmem::BertEncoder float_encoder(loaded->model_dir(), exact);
  const auto* bert = &float_encoder;
  relmem::CardRelevanceOptions o;
  o.finetune_layers = options.finetune_layers;
  o.epochs = options.epochs;
  if (lr_given) o.learning_rate = options.learning_rate;
  o.head_learning_rate = head_lr;
  o.weight_decay = options.weight_decay;
  o.batch = options.batch;
  o.max_composite = options.max_composite;
  o.composite_ratio = options.composite_ratio;
  o.negatives = options.negatives;
  o.hard_fraction = options.hard_fraction;
  o.hard_pool = options.hard_pool;
  o.heldout_fraction = options.heldout_fraction;
  o.max_questions = max_questions;
  o.seed = options.seed;
  o.threads = options.threads;
  const auto result = relmem::train_card_relevance(*bert, databases, questions, o,
                                                   [&](const relmem::EpochReport& r) { print_epoch(r, o.epochs); });
  relmem::save_card_relevance(*bert, result, out);
  const auto& c = result.calibration;
  std::printf("untrained held-out recall@1 %.3f  recall@5 %.3f  all-in-top5 %.3f\n", result.untrained_recall_at_1,
              result.untrained_recall_at_5, result.untrained_all_in_top5);
  std::printf("best epoch %d; %lld training questions (%.1f word pieces each, cards %.1f); head a %.3f b %.3f\n",
              result.best_epoch, static_cast<long long>(result.training_questions), result.question_tokens,
              result.card_tokens, result.head.scale, result.head.bias);
  std::printf("held-out single questions %lld: p(right) mean %.3f, share >= 0.8 %.3f; max p(wrong) mean %.3f, "
              "share < 0.5 %.3f\n",
              static_cast<long long>(c.questions), c.gold_probability_mean, c.gold_at_least_0_8, c.wrong_max_mean,
              c.wrong_max_below_0_5);
  std::printf("wrote %s (encode %.1f s, train %.1f s)\n", out.c_str(), result.encode_seconds, result.train_seconds);
  return 0;
}

int main(int argc, char** argv) {
  relmem::TrainingOptions options;
  std::string classifier = "features";
  bool lr_given = false;
  float head_lr = relmem::CardRelevanceOptions{}.head_learning_rate;
  int64_t max_questions = 0;
  std::string data, dbs, out, encoder_spec = "use-lite", lexical_spec = "hashing:4096";
  int samples_per_column = 3;
  int64_t values_per_column = relmem::SelectionOptions{}.values_per_column;
  std::set<std::string> given;
  const std::map<std::string, std::function<void(const std::string&)>> flags = {
      {"--data", [&](const std::string& v) { data = v; }},
      {"--dbs", [&](const std::string& v) { dbs = v; }},
      {"--out", [&](const std::string& v) { out = v; }},
      {"--encoder", [&](const std::string& v) { encoder_spec = v; }},
      {"--lexical-encoder", [&](const std::string& v) { lexical_spec = v; }},
      {"--epochs", [&](const std::string& v) { options.epochs = parse_number<int>("--epochs", v); }},
      {"--lr",
       [&](const std::string& v) {
         options.learning_rate = parse_number<float>("--lr", v);
         lr_given = true;
       }},
      {"--classifier", [&](const std::string& v) { classifier = v; }},
      {"--head-lr", [&](const std::string& v) { head_lr = parse_number<float>("--head-lr", v); }},
      {"--max-questions", [&](const std::string& v) { max_questions = parse_number<int64_t>("--max-questions", v); }},
      {"--batch", [&](const std::string& v) { options.batch = parse_number<int>("--batch", v); }},
      {"--max-composite", [&](const std::string& v) { options.max_composite = parse_number<int>("--max-composite", v); }},
      {"--composite-ratio",
       [&](const std::string& v) { options.composite_ratio = parse_number<float>("--composite-ratio", v); }},
      {"--negatives", [&](const std::string& v) { options.negatives = parse_number<int>("--negatives", v); }},
      {"--hard-fraction", [&](const std::string& v) { options.hard_fraction = parse_number<float>("--hard-fraction", v); }},
      {"--heldout", [&](const std::string& v) { options.heldout_fraction = parse_number<float>("--heldout", v); }},
      {"--weight-decay", [&](const std::string& v) { options.weight_decay = parse_number<float>("--weight-decay", v); }},
      {"--listwise", [&](const std::string& v) { options.listwise_weight = parse_number<float>("--listwise", v); }},
      {"--bce", [&](const std::string& v) { options.bce_weight = parse_number<float>("--bce", v); }},
      {"--hard-pool", [&](const std::string& v) { options.hard_pool = parse_number<int>("--hard-pool", v); }},
      {"--projection-lr-scale",
       [&](const std::string& v) { options.projection_lr_scale = parse_number<float>("--projection-lr-scale", v); }},
      {"--direct-lr-scale",
       [&](const std::string& v) { options.direct_lr_scale = parse_number<float>("--direct-lr-scale", v); }},
      {"--projection-dim",
       [&](const std::string& v) { options.projection_dim = parse_number<int>("--projection-dim", v); }},
      {"--hidden", [&](const std::string& v) { options.hidden_dim = parse_number<int>("--hidden", v); }},
      {"--samples-per-column",
       [&](const std::string& v) { samples_per_column = parse_number<int>("--samples-per-column", v); }},
      {"--values-per-column",
       [&](const std::string& v) { values_per_column = parse_number<int64_t>("--values-per-column", v); }},
      {"--seed", [&](const std::string& v) { options.seed = parse_number<uint64_t>("--seed", v); }},
      {"--threads", [&](const std::string& v) { options.threads = parse_number<int>("--threads", v); }},
      {"--device", [&](const std::string& v) { options.device = v; }},
      {"--cache", [&](const std::string& v) { options.cache_dir = v; }},
      {"--finetune-layers",
       [&](const std::string& v) { options.finetune_layers = parse_number<int>("--finetune-layers", v); }},
      {"--finetune-lr-scale",
       [&](const std::string& v) { options.finetune_lr_scale = parse_number<float>("--finetune-lr-scale", v); }},
  };
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    auto it = flags.find(flag);
    if (it == flags.end()) usage_error("unknown flag " + flag);
    if (i + 1 >= argc) usage_error(flag + " needs a value");
    it->second(argv[++i]);
    given.insert(flag);
  }
  if (data.empty() || dbs.empty() || out.empty()) usage_error("--data, --dbs and --out are required");
  if (classifier != "features" && classifier != "card-cosine") usage_error("unknown --classifier " + classifier);
  // A flag the chosen classifier does not read is an error, not a silent no-op.
  const std::set<std::string> features_only = {"--lexical-encoder",    "--listwise",        "--bce",
                                               "--projection-lr-scale", "--direct-lr-scale", "--projection-dim",
                                               "--hidden",              "--cache",           "--finetune-lr-scale"};
  const std::set<std::string> card_cosine_only = {"--head-lr", "--max-questions"};
  for (const auto& flag : given) {
    if (classifier == "card-cosine" && features_only.count(flag)) {
      usage_error(flag + " applies to --classifier features only");
    }
    if (classifier == "features" && card_cosine_only.count(flag)) {
      usage_error(flag + " applies to --classifier card-cosine only");
    }
  }
  if (classifier == "card-cosine" && options.device != "cpu") usage_error("--classifier card-cosine trains on the CPU");

  try {
    const auto start = std::chrono::steady_clock::now();
    check_output(out, {{"--data", data}, {"--dbs", dbs}, {"--cache", options.cache_dir}});
    // Fail on a bad device before the expensive steps.
    relmem::gpu::make_matrix_multiplier(options.device);
    const auto questions = relmem::load_labeled_questions(data);
    const relmem::Catalog catalog = relmem::Catalog::open(dbs);
    std::set<std::string> named;
    for (const auto& q : questions)
      for (const auto& db : q.databases)
        if (catalog.contains(db)) named.insert(db);
    if (named.size() < 4) throw relmem::Error("fewer than 4 databases of " + dbs + " are named by " + data);
    auto encoder = relmem::load_encoder(encoder_spec);
    std::unique_ptr<relmem::Encoder> lexical;
    if (lexical_spec != "none" && !lexical_spec.empty()) lexical = relmem::load_encoder(lexical_spec);
    relmem::CardOptions card;
    card.samples_per_column = samples_per_column;
    std::vector<relmem::DatabaseTexts> databases;
    for (const auto& db : named) databases.push_back(relmem::database_texts(catalog, db, card, {}, values_per_column, relmem::WordNet::shared()));
    std::printf("%zu questions, %zu databases, encoder %s (%d-d), lexical encoder %s, device %s, fine-tuned layers %d\n",
                questions.size(), databases.size(), encoder->name().c_str(), encoder->dim(),
                lexical ? lexical->name().c_str() : "none", options.device.c_str(), options.finetune_layers);
    std::fflush(stdout);

    if (classifier == "card-cosine") {
      return train_card_cosine(*encoder, databases, questions, options, lr_given, head_lr, max_questions, out);
    }
    const auto result = relmem::train_relevance(*encoder, lexical.get(), databases, questions, options,
                                                [&](const relmem::EpochReport& r) { print_epoch(r, options.epochs); });
    result.model.save(out);
    const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("untrained held-out recall@1 %.3f  recall@5 %.3f  all-in-top5 %.3f\n", result.untrained_recall_at_1,
                result.untrained_recall_at_5, result.untrained_all_in_top5);
    std::printf("best epoch %d; threshold %.3f; held-out set precision %.3f recall %.3f F1 %.3f\n", result.best_epoch,
                result.model.threshold(), result.heldout_set.precision, result.heldout_set.recall,
                result.heldout_set.f1);
    std::printf("wrote %s (encode %.1f s, train %.1f s, total %.1f s)\n", out.c_str(), result.encode_seconds,
                result.train_seconds, total);
    return 0;
  } catch (const relmem::Error& e) {
    std::fprintf(stderr, "relmem-train-relevance: %s\n", e.what());
    return 1;
  }
}

#include <map>
#include <mutex>

#include "relmem/encoders/bert_encoder.hpp"
#include "relmem/encoders/encoder.hpp"
#include "relmem/encoders/hashing_encoder.hpp"
#include "relmem/encoders/model_home.hpp"
#include "relmem/encoders/use_lite.hpp"

namespace relmem {
namespace {

// A sentence-transformers model installed by scripts/install_models.sh, or the directory given after the colon.
std::unique_ptr<Encoder> installed_bert(const std::string& name, const std::string& model_dir) {
  std::string dir = model_dir;
  if (dir.empty()) dir = find_installed_model_dir(name);
  if (dir.empty()) {
    throw Error("encoder '" + name + "' is not installed in " + relmem_home() +
                "/models/" + name + " (run scripts/install_models.sh)");
  }
  BertEncoderOptions options;
  options.spec = model_dir.empty() ? name : name + ":" + model_dir;
  return std::make_unique<BertEncoder>(dir, options);
}

// Built-in encoders are registered here, explicitly, so a static library cannot drop them at link time.
std::map<std::string, EncoderFactory> builtin_encoders() {
  std::map<std::string, EncoderFactory> factories;
  factories["hashing"] = [](const std::string& arg) {
    return std::make_unique<HashingEncoder>(arg.empty() ? HashingEncoder::kDefaultDim : std::stoi(arg));
  };
  factories["bert"] = [](const std::string& model_dir) -> std::unique_ptr<Encoder> {
    if (model_dir.empty()) throw Error("encoder 'bert' needs a model directory: bert:/path/to/model_dir");
    return std::make_unique<BertEncoder>(model_dir);
  };
  // all-MiniLM-L6-v2: mean pooling and L2 normalization, as its modules.json and model card say.
  factories["minilm"] = [](const std::string& model_dir) { return installed_bert("minilm", model_dir); };
  factories["use-lite"] = [](const std::string& model_dir) { return std::make_unique<UseLiteEncoder>(model_dir); };
  factories["use-lite-int8"] = [](const std::string& model_dir) {
    return std::make_unique<UseLiteEncoder>(model_dir, UseLitePrecision::kInt8);
  };
  return factories;
}

struct Registry {
  std::mutex mutex;
  std::map<std::string, EncoderFactory> factories = builtin_encoders();
};

Registry& registry() {
  static Registry instance;
  return instance;
}

}  // namespace

void register_encoder(const std::string& name, EncoderFactory factory) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.factories[name] = std::move(factory);
}

std::unique_ptr<Encoder> load_encoder(const std::string& spec) {
  const auto colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  const std::string argument = colon == std::string::npos ? "" : spec.substr(colon + 1);
  EncoderFactory factory;
  {
    auto& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.factories.find(name);
    if (it == r.factories.end()) {
      std::string known;
      for (const auto& [key, _] : r.factories) known += (known.empty() ? "" : ", ") + key;
      throw Error("unknown encoder '" + name + "' (known: " + known + ")");
    }
    factory = it->second;
  }
  try {
    return factory(argument);
  } catch (const std::invalid_argument&) {
    throw Error("bad argument '" + argument + "' for encoder '" + name + "'");
  }
}

std::vector<std::string> registered_encoders() {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& [key, _] : r.factories) names.push_back(key);
  return names;
}

}  // namespace relmem

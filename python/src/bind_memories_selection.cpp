// Python bindings of the database selection memory, the relevance model and its trainer.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <functional>
#include <map>
#include <optional>

#include "bindings.hpp"
#include "relmem/memories/relevance/labeled_questions.hpp"
#include "relmem/memories/training/relevance_training.hpp"
#include "relmem/memories/relevance/selection_metrics.hpp"
#include "relmem/memories/selection/selection_memory.hpp"
#include "relmem/memories/text/question_parts.hpp"
#include "relmem/memories/text/schema_words.hpp"
#include "relmem/memories/text/string_similarity.hpp"

namespace py = pybind11;
using namespace relmem;

namespace relmem_python {
namespace {

using FloatArray = py::array_t<float, py::array::c_style | py::array::forcecast>;

// None (the package default), a spec string or an Encoder, as relmem.encoders.as_encoder reads them.
std::shared_ptr<const Encoder> to_encoder(const py::object& encoder) {
  return py::module_::import("relmem.encoders").attr("as_encoder")(encoder).cast<std::shared_ptr<Encoder>>();
}

// None, a model file path, or a RelevanceModel.
std::shared_ptr<const RelevanceModel> to_model(const py::object& model) {
  if (model.is_none()) return nullptr;
  if (py::isinstance<py::str>(model) || py::hasattr(model, "__fspath__")) {
    const std::string path = py::str(py::module_::import("os").attr("fspath")(model));
    return std::make_shared<RelevanceModel>(RelevanceModel::load(path));
  }
  return model.cast<std::shared_ptr<RelevanceModel>>();
}

// Parallel lists: question texts and, per question, a database name or a list of names.
std::vector<LabeledQuestion> to_labeled(const std::vector<std::string>& questions, const py::list& databases) {
  if (questions.size() != databases.size()) throw Error("questions and databases must have the same length");
  std::vector<LabeledQuestion> out;
  for (size_t i = 0; i < questions.size(); ++i) {
    LabeledQuestion q;
    q.text = questions[i];
    const py::handle dbs = databases[i];
    if (py::isinstance<py::str>(dbs)) {
      q.databases.push_back(dbs.cast<std::string>());
    } else {
      q.databases = dbs.cast<std::vector<std::string>>();
    }
    out.push_back(std::move(q));
  }
  return out;
}

py::dict epoch_dict(const EpochReport& r) {
  py::dict d;
  d["epoch"] = r.epoch;
  d["loss"] = r.loss;
  d["heldout_recall@1"] = r.heldout_recall_at_1;
  d["heldout_recall@5"] = r.heldout_recall_at_5;
  d["heldout_all_in_top5"] = r.heldout_all_in_top5;
  d["seconds"] = r.seconds;
  return d;
}

// Keyword options named as relmem-train-relevance's flags; an unknown name is an error, not a silent default.
TrainingOptions training_options(const py::kwargs& kwargs) {
  TrainingOptions o;
  const std::map<std::string, std::function<void(const py::handle&)>> setters = {
      {"epochs", [&](const py::handle& v) { o.epochs = v.cast<int>(); }},
      {"lr", [&](const py::handle& v) { o.learning_rate = v.cast<float>(); }},
      {"batch", [&](const py::handle& v) { o.batch = v.cast<int>(); }},
      {"max_composite", [&](const py::handle& v) { o.max_composite = v.cast<int>(); }},
      {"composite_ratio", [&](const py::handle& v) { o.composite_ratio = v.cast<float>(); }},
      {"negatives", [&](const py::handle& v) { o.negatives = v.cast<int>(); }},
      {"hard_fraction", [&](const py::handle& v) { o.hard_fraction = v.cast<float>(); }},
      {"heldout", [&](const py::handle& v) { o.heldout_fraction = v.cast<float>(); }},
      {"weight_decay", [&](const py::handle& v) { o.weight_decay = v.cast<float>(); }},
      {"listwise", [&](const py::handle& v) { o.listwise_weight = v.cast<float>(); }},
      {"bce", [&](const py::handle& v) { o.bce_weight = v.cast<float>(); }},
      {"hard_pool", [&](const py::handle& v) { o.hard_pool = v.cast<int>(); }},
      {"projection_lr_scale", [&](const py::handle& v) { o.projection_lr_scale = v.cast<float>(); }},
      {"direct_lr_scale", [&](const py::handle& v) { o.direct_lr_scale = v.cast<float>(); }},
      {"projection_dim", [&](const py::handle& v) { o.projection_dim = v.cast<int>(); }},
      {"hidden", [&](const py::handle& v) { o.hidden_dim = v.cast<int>(); }},
      {"seed", [&](const py::handle& v) { o.seed = v.cast<uint64_t>(); }},
      {"threads", [&](const py::handle& v) { o.threads = v.cast<int>(); }},
      {"device", [&](const py::handle& v) { o.device = v.cast<std::string>(); }},
      {"cache", [&](const py::handle& v) { o.cache_dir = v.cast<std::string>(); }},
      {"finetune_layers", [&](const py::handle& v) { o.finetune_layers = v.cast<int>(); }},
      {"finetune_lr_scale", [&](const py::handle& v) { o.finetune_lr_scale = v.cast<float>(); }},
  };
  for (const auto& [key, value] : kwargs) {
    const std::string name = py::str(key);
    auto it = setters.find(name);
    if (it == setters.end()) throw Error("train_relevance: unknown option '" + name + "'");
    try {
      it->second(value);
    } catch (const py::cast_error&) {
      throw Error("train_relevance: bad value for option '" + name + "'");
    }
  }
  return o;
}

CalibrationObjective parse_objective(const std::string& name) {
  if (name == "f1") return CalibrationObjective::SetF1;
  if (name == "likelihood") return CalibrationObjective::Likelihood;
  throw Error("calibration objective must be 'f1' or 'likelihood', not '" + name + "'");
}

py::object option_to_python(SimilarityFusion fusion) { return py::str(fusion_name(fusion)); }
template <typename T>
py::object option_to_python(const T& value) {
  return py::cast(value);
}

void set_option(SimilarityFusion& fusion, const py::handle& value) {
  fusion = parse_fusion(value.cast<std::string>());
}
template <typename T>
void set_option(T& member, const py::handle& value) {
  member = value.cast<T>();
}

// The options by name with their defaults, in keyword order.
py::dict option_defaults() {
  py::dict out;
  const SelectionOptions defaults;
  for_each_selection_option(defaults, [&](const SelectionOptionName& option, const auto& value) {
    out[option.name] = option_to_python(value);
  });
  return out;
}

// SelectionOptions from keywords named as the options. An unknown name or a value of the wrong type is a TypeError,
// as for any other keyword argument.
SelectionOptions selection_options(const py::kwargs& kwargs, const std::string& function) {
  const py::dict known = option_defaults();
  for (const auto& item : kwargs) {
    if (known.contains(item.first)) continue;
    std::string names;
    for (const auto& option : known) names += (names.empty() ? "" : ", ") + py::str(option.first).cast<std::string>();
    throw py::type_error(function + "() got an unexpected keyword argument '" +
                         py::str(item.first).cast<std::string>() + "'; its options are " + names);
  }
  SelectionOptions options;
  for_each_selection_option(options, [&](const SelectionOptionName& option, auto& value) {
    if (!kwargs.contains(option.name)) return;
    const py::object given = kwargs[option.name];
    try {
      set_option(value, given);
    } catch (const py::cast_error&) {
      throw py::type_error(function + "(): option '" + option.name + "' takes " +
                           py::str(py::type::of(option_to_python(value)).attr("__name__")).cast<std::string>() +
                           ", not " + py::str(py::type::of(given).attr("__name__")).cast<std::string>());
    }
  });
  return options;
}

// One line per option: "name (default): what it does".
std::string options_doc() {
  std::string out = "Options (keywords):";
  const SelectionOptions defaults;
  for_each_selection_option(defaults, [&](const SelectionOptionName& option, const auto& value) {
    out += std::string("\n  ") + option.name + " (" + std::string(py::repr(option_to_python(value))) +
           "): " + option.doc;
  });
  return out;
}

const float* check_vector(const FloatArray& a, int dim, const char* what) {
  if (a.ndim() == 1 && a.shape(0) == dim) return a.data();
  if (a.ndim() == 2 && a.shape(0) == 1 && a.shape(1) == dim) return a.data();
  throw Error(std::string(what) + " must have shape (" + std::to_string(dim) + ",)");
}

void bind_selection_results(py::module_& m) {
  py::class_<SetMetrics>(m, "SetMetrics", "Set selection on labelled questions, micro-averaged.")
      .def_readonly("precision", &SetMetrics::precision)
      .def_readonly("recall", &SetMetrics::recall)
      .def_readonly("f1", &SetMetrics::f1)
      .def_readonly("questions", &SetMetrics::questions)
      .def("__repr__", [](const SetMetrics& s) {
        return "SetMetrics(precision=" + std::to_string(s.precision) + ", recall=" + std::to_string(s.recall) +
               ", f1=" + std::to_string(s.f1) + ", questions=" + std::to_string(s.questions) + ")";
      });

  py::class_<SelectionCalibration>(m, "SelectionCalibration",
                                   "probability = answered * sigmoid(scale * score + lead * (score - the best other "
                                   "candidate's score) + bias), where answered = sigmoid(gate_scale * the ranking's "
                                   "best score + gate_bias) when gated (gate_scale and gate_bias given), else 1; "
                                   "select_set keeps probabilities >= threshold. fitted: set by calibrate().")
      .def(py::init([](float scale, float bias, float threshold, bool fitted, float lead,
                       std::optional<float> gate_scale, std::optional<float> gate_bias) {
             if (gate_scale.has_value() != gate_bias.has_value())
               throw Error("give both gate_scale and gate_bias, or neither");
             return SelectionCalibration{scale, bias, threshold, fitted, lead, gate_scale.has_value(),
                                         gate_scale.value_or(0.0f), gate_bias.value_or(0.0f)};
           }),
           py::arg("scale"), py::arg("bias"), py::arg("threshold"), py::arg("fitted") = true, py::arg("lead") = 0.0f,
           py::arg("gate_scale") = py::none(), py::arg("gate_bias") = py::none())
      .def_readonly("scale", &SelectionCalibration::scale)
      .def_readonly("bias", &SelectionCalibration::bias)
      .def_readonly("threshold", &SelectionCalibration::threshold)
      .def_readonly("fitted", &SelectionCalibration::fitted)
      .def_readonly("lead", &SelectionCalibration::lead)
      .def_readonly("gated", &SelectionCalibration::gated)
      .def_readonly("gate_scale", &SelectionCalibration::gate_scale)
      .def_readonly("gate_bias", &SelectionCalibration::gate_bias)
      .def("__repr__", [](const SelectionCalibration& c) {
        return "SelectionCalibration(scale=" + std::to_string(c.scale) + ", bias=" + std::to_string(c.bias) +
               ", threshold=" + std::to_string(c.threshold) + ", fitted=" + (c.fitted ? "True" : "False") +
               ", lead=" + std::to_string(c.lead) +
               (c.gated ? ", gate_scale=" + std::to_string(c.gate_scale) + ", gate_bias=" +
                              std::to_string(c.gate_bias) : std::string()) + ")";
      });
}

void bind_selection_memory(py::module_& m) {
  py::class_<DatabaseMatch>(m, "DatabaseMatch", "One selected database: name, score and calibrated probability.")
      .def_readonly("database", &DatabaseMatch::database)
      .def_readonly("score", &DatabaseMatch::score)
      .def_readonly("probability", &DatabaseMatch::probability)
      .def("__iter__", [](const DatabaseMatch& d) {
             return py::iter(py::make_tuple(d.database, d.score, d.probability));
           })
      .def("__repr__", [](const DatabaseMatch& d) {
        return "DatabaseMatch(" + d.database + ", score=" + std::to_string(d.score) +
               ", probability=" + std::to_string(d.probability) + ")";
      });

  static const std::string constructor_doc =
      "An empty memory; fill it with add() or add_vectors(). encoder: None (default encoder), a spec string or an "
      "Encoder; model: None, a model file path or a RelevanceModel.\n" + options_doc();
  static const std::string build_doc =
      "Embeds every database of the catalog. encoder: None (default encoder), a spec string or an Encoder; model: "
      "None, a model file path or a RelevanceModel; descriptions/examples: per-database text; progress: False, True "
      "(a bar on stderr) or a callable (db, done, total).\n" + options_doc();
  py::class_<SelectionMemory> selection(m, "SelectionMemory",
                              "Database selection memory: card and table embeddings of every database, scored by "
                              "fused cosines (untrained) or a trained RelevanceModel.");
  selection.attr("raw_fields") = [] {
    py::list names;
    for (const RawSimilarityField& field : kRawSimilarityFields) names.append(field.name);
    return py::tuple(names);
  }();
  selection.attr("untrained_weights") = [] {
    const RawSimilarities weights = untrained_weights();
    py::dict out;
    for (const RawSimilarityField& field : kRawSimilarityFields) out[field.name] = weights.*field.member;
    return out;
  }();
  selection.attr("option_defaults") = option_defaults();
  selection
      .def(py::init([](const py::object& encoder, const py::object& model, const py::kwargs& options) {
             SelectionMemory memory(to_encoder(encoder), selection_options(options, "SelectionMemory"));
             memory.set_model(to_model(model));
             return memory;
           }),
           py::arg("encoder") = py::none(), py::arg("model") = py::none(), constructor_doc.c_str())
      .def_static(
          "build",
          [](const Catalog& catalog, const py::object& encoder, const py::object& model,
             std::optional<std::map<std::string, std::string>> descriptions,
             std::optional<std::map<std::string, std::vector<std::string>>> examples, const py::object& progress,
             const py::kwargs& options) {
            auto enc = to_encoder(encoder);
            auto mod = to_model(model);
            const SelectionOptions chosen = selection_options(options, "SelectionMemory.build");
            const auto callback = progress_from(progress, "selection memory");
            py::gil_scoped_release release;
            return SelectionMemory::build(catalog, enc, mod, descriptions.value_or(std::map<std::string, std::string>{}),
                                          examples.value_or(std::map<std::string, std::vector<std::string>>{}),
                                          chosen, callback);
          },
          py::arg("catalog"), py::arg("encoder") = py::none(), py::arg("model") = py::none(),
          py::arg("descriptions") = py::none(), py::arg("examples") = py::none(), py::arg("progress") = false,
          build_doc.c_str())
      .def_static(
          "load",
          [](const std::string& folder, const py::object& encoder, const std::string& device) {
            std::shared_ptr<const Encoder> enc = encoder.is_none() ? nullptr : to_encoder(encoder);
            py::gil_scoped_release release;
            SelectionMemory memory = SelectionMemory::load(folder, enc);
            memory.set_device(device);
            return memory;
          },
          py::arg("folder"), py::arg("encoder") = py::none(), py::arg("device") = SelectionOptions{}.device,
          "Loads a saved memory; the encoder is reloaded by the name in its manifest unless given. The device is not "
          "saved: the memory opens on `device` (see set_device).")
      .def("set_device", [](SelectionMemory& s, const std::string& device) {
             py::gil_scoped_release release;
             s.set_device(device);
           }, py::arg("device"),
           "Moves the pool's approximate pass: 'cuda' or 'cuda:N' keeps an fp16 copy of the card vectors on that GPU "
           "(a batch's pools in one search), 'cpu' drops it. relmem.Error without a usable device.")
      .def_property_readonly("options", [](const SelectionMemory& s) {
             py::dict out;
             for_each_selection_option(s.options(), [&](const SelectionOptionName& option, const auto& value) {
               out[option.name] = option_to_python(value);
             });
             return out;
           }, "This memory's options by name (see option_defaults).")
      .def_property_readonly("device", [](const SelectionMemory& s) { return s.options().device; },
                             "'cpu' or 'cuda:N': where the pool's approximate pass runs.")
      .def("refresh", [](SelectionMemory& s, const Catalog& catalog, const py::object& progress) {
             const auto callback = progress_from(progress, "selection memory refresh");
             py::gil_scoped_release release;
             return s.refresh(catalog, callback);
           }, py::arg("catalog"), py::arg("progress") = false,
           "Re-embeds databases whose file changed, adds new ones, drops missing ones; returns a RefreshReport.")
      .def_property_readonly("memory_bytes", &SelectionMemory::memory_bytes)
      .def("save", [](const SelectionMemory& s, const std::string& folder) {
             py::gil_scoped_release release;
             s.save(folder);
           }, py::arg("folder"))
      .def("select", [](const SelectionMemory& s, const std::string& question, int k) {
             py::gil_scoped_release release;
             return s.select(question, k);
           }, py::arg("question"), py::arg("k") = 5, "Top-k databases, best first, as DatabaseMatch objects.")
      .def("select_batch", [](const SelectionMemory& s, const std::vector<std::string>& questions, int k) {
             py::gil_scoped_release release;
             return s.select_batch(questions, k);
           }, py::arg("questions"), py::arg("k") = 5)
      .def("select_parts", [](const SelectionMemory& s, const std::vector<std::string>& parts, int k) {
             py::gil_scoped_release release;
             return s.select_parts(parts, k);
           }, py::arg("parts"), py::arg("k") = 5,
           "select() for a question already cut into parts (by an LLM or the asker): each part is ranked and the "
           "rankings merged as for a question whose parts are marked (\"Q1: ...; Q2: ...\").")
      .def("select_parts_batch", [](const SelectionMemory& s, const std::vector<std::vector<std::string>>& questions,
                                    int k) {
             py::gil_scoped_release release;
             return s.select_parts_batch(questions, k);
           }, py::arg("questions"), py::arg("k") = 5)
      .def("select_vector", [](const SelectionMemory& s, FloatArray vector, int k, std::optional<FloatArray> lexical) {
             const float* data = check_vector(vector, s.encoder().dim(), "vector");
             const float* lexical_data = nullptr;
             if (lexical) {
               if (!s.lexical_encoder()) throw Error("this selection memory has no lexical encoder");
               lexical_data = check_vector(*lexical, s.lexical_encoder()->dim(), "lexical");
             }
             py::gil_scoped_release release;
             return s.select_vector(data, k, lexical_data);
           }, py::arg("vector"), py::arg("k") = 5, py::arg("lexical") = py::none(),
           "select() from an already encoded question (and its lexical encoding when the memory has a lexical "
           "encoder).")
      .def("similarities", [](const SelectionMemory& s, const std::vector<std::string>& questions) {
             std::vector<QuestionSimilarities> found;
             {
               py::gil_scoped_release release;
               found = s.similarities(questions);
             }
             py::list out;
             for (const auto& q : found) {
               py::dict row;
               for (const RawSimilarityField& field : kRawSimilarityFields) {
                 std::vector<float> values;
                 for (const auto& raw : q.raw) values.push_back(raw.*field.member);
                 row[field.name] = floats_to_numpy(values);
               }
               out.append(py::make_tuple(q.databases, row));
             }
             return out;
           }, py::arg("questions"),
           "Per question (whole, not split into parts): its candidate databases and their raw similarities, a dict "
           "of arrays by field (SelectionMemory.raw_fields), the inputs of untrained and trained scoring alike.")
      .def("select_set", [](const SelectionMemory& s, const std::string& question, bool at_least_one) {
             py::gil_scoped_release release;
             return s.select_set(question, at_least_one);
           }, py::arg("question"), py::arg("at_least_one") = true,
           "The databases whose probability clears the calibrated threshold; with at_least_one, at least the best one "
           "(of each part), else possibly none.")
      .def("select_set_parts", [](const SelectionMemory& s, const std::vector<std::string>& parts, bool at_least_one) {
             py::gil_scoped_release release;
             return s.select_set_parts(parts, at_least_one);
           }, py::arg("parts"), py::arg("at_least_one") = true,
           "select_set() for a question already cut into parts (see select_parts).")
      .def("select_set_batch", [](const SelectionMemory& s, const std::vector<std::string>& questions,
                                  bool at_least_one) {
             py::gil_scoped_release release;
             return s.select_set_batch(questions, at_least_one);
           }, py::arg("questions"), py::arg("at_least_one") = true)
      .def("add", [](SelectionMemory& s, const Catalog& catalog, const std::string& db, const std::string& description,
                     std::optional<std::vector<std::string>> examples) {
             py::gil_scoped_release release;
             s.add(catalog, db, description, examples.value_or(std::vector<std::string>{}));
           }, py::arg("catalog"), py::arg("db"), py::arg("description") = "", py::arg("examples") = py::none(),
           "Adds or re-embeds one database of the catalog; the rest of the memory is untouched.")
      .def("add_vectors", [](SelectionMemory& s, const std::string& db, FloatArray card,
                             const std::vector<std::string>& table_names, std::optional<FloatArray> table_vectors,
                             std::optional<FloatArray> lexical_card, std::optional<FloatArray> lexical_table_vectors,
                             std::optional<FloatArray> column_vectors, const std::vector<std::string>& values,
                             const std::vector<int64_t>& table_columns, std::optional<FloatArray> form_vectors) {
             auto rows = [](const std::optional<FloatArray>& a, int64_t count, int dim, const char* what) {
               RowMatrix out(count, dim);
               if (count == 0) return out;
               if (!a || a->ndim() != 2 || a->shape(0) != count || a->shape(1) != dim) {
                 throw Error(std::string(what) + " must have shape (" + std::to_string(count) + ", " +
                             std::to_string(dim) + ")");
               }
               std::copy(a->data(), a->data() + out.size(), out.data());
               return out;
             };
             const float* card_data = check_vector(card, s.encoder().dim(), "card");
             const auto count = static_cast<int64_t>(table_names.size());
             const int dim = s.encoder().dim();
             const RowMatrix tables = rows(table_vectors, count, dim, "table_vectors");
             if (column_vectors && column_vectors->ndim() != 2) throw Error("column_vectors must have shape (n, dim)");
             const RowMatrix columns = rows(column_vectors, column_vectors ? column_vectors->shape(0) : 0, dim,
                                            "column_vectors");
             if (form_vectors && form_vectors->ndim() != 2) throw Error("form_vectors must have shape (n, dim)");
             const RowMatrix forms = rows(form_vectors, form_vectors ? form_vectors->shape(0) : 0, dim, "form_vectors");
             std::vector<std::string> normalized;
             for (const auto& value : values) normalized.push_back(normalize_value(value));
             const float* lexical_card_data = nullptr;
             RowMatrix lexical_tables;
             if (s.lexical_encoder()) {
               const int lexical_dim = s.lexical_encoder()->dim();
               if (!lexical_card) throw Error("this memory has a lexical encoder: give lexical_card too");
               lexical_card_data = check_vector(*lexical_card, lexical_dim, "lexical_card");
               lexical_tables = rows(lexical_table_vectors, count, lexical_dim, "lexical_table_vectors");
             }
             s.add_vectors(db, card_data, table_names, tables, lexical_card_data,
                           s.lexical_encoder() ? &lexical_tables : nullptr, &columns, std::move(normalized),
                           table_columns, &forms);
           }, py::arg("db"), py::arg("card"), py::arg("table_names") = std::vector<std::string>{},
           py::arg("table_vectors") = py::none(), py::arg("lexical_card") = py::none(),
           py::arg("lexical_table_vectors") = py::none(), py::arg("column_vectors") = py::none(),
           py::arg("values") = std::vector<std::string>{}, py::arg("table_columns") = std::vector<int64_t>{},
           py::arg("form_vectors") = py::none(),
           "Adds a database from precomputed encoder vectors (and lexical encoder vectors when the memory has one), "
           "optionally with one vector per column (shape (columns, dim), in table order), the text values it stores, "
           "each table's number of columns (without them, the columns count as one table) and the vectors of its "
           "question forms (shape (forms, dim); without them, its best column stands in).")
      .def("remove", &SelectionMemory::remove, py::arg("db"))
      .def("calibrate", [](SelectionMemory& s, const std::vector<std::string>& questions, const py::list& databases,
                           int candidates, const std::string& objective, bool lead, bool gate) {
             auto labeled = to_labeled(questions, databases);
             const CalibrationObjective parsed = parse_objective(objective);
             py::gil_scoped_release release;
             return s.calibrate(labeled, candidates, parsed, lead, gate);
           }, py::arg("questions"), py::arg("databases"), py::arg("candidates") = 10, py::arg("objective") = "f1",
           py::arg("lead") = false, py::arg("gate") = false,
           "Fits probabilities (logistic regression on the top candidates' scores, and on their lead over the best "
           "other candidate with lead=True) and the set threshold on held-out questions; databases[i] is a name or a "
           "list, an empty list for a question no database answers (such questions weigh as much, as a group, as the "
           "others; with gate=True they fit a gate on each part's best score, and the questions with databases the "
           "ranking's scaling: probability = gate * ranking). objective: 'f1' (the threshold of the best set F1 on them) or 'likelihood' (threshold 0.5).")
      .def_property("calibration", &SelectionMemory::calibration, &SelectionMemory::set_calibration)
      .def_static("untrained_calibration", &SelectionMemory::untrained_calibration, py::arg("encoder") = "use-lite",
                  "An untrained memory's calibration on this encoder (its name) until calibrate() or a set "
                  "calibration (a fine-tuned 'minilm:DIR' has MiniLM's); an encoder without a fit of its own has "
                  "USE-lite's.")
      .def_property(
          "model",
          [](const SelectionMemory& s) -> py::object {
            if (!s.model()) return py::none();
            return py::cast(std::const_pointer_cast<RelevanceModel>(s.model()));
          },
          [](SelectionMemory& s, const py::object& model) { s.set_model(to_model(model)); })
      .def_property_readonly("databases", &SelectionMemory::databases)
      .def_property_readonly("encoder", [](const SelectionMemory& s) {
        return std::const_pointer_cast<Encoder>(s.encoder_ptr());
      })
      .def_property_readonly("lexical_encoder", [](const SelectionMemory& s) -> py::object {
        if (!s.lexical_encoder()) return py::none();
        return py::str(s.lexical_encoder()->name());
      })
      .def("tables", &SelectionMemory::tables, py::arg("db"))
      .def("vectors", [](const SelectionMemory& s, const std::string& db) {
             const DatabaseVectors v = s.vectors(db);
             auto matrix = [](const RowMatrix& m) {
               py::array_t<float> out({static_cast<py::ssize_t>(m.rows()), static_cast<py::ssize_t>(m.cols())});
               std::copy(m.data(), m.data() + m.size(), out.mutable_data());
               return out;
             };
             py::dict out;
             out["card"] = floats_to_numpy(v.card);
             out["table_names"] = v.table_names;
             out["table_vectors"] = matrix(v.tables);
             out["column_vectors"] = matrix(v.columns);
             out["values"] = v.values;
             out["table_columns"] = v.table_columns;
             out["form_vectors"] = matrix(v.forms);
             if (s.lexical_encoder()) {
               out["lexical_card"] = floats_to_numpy(v.lexical_card);
               out["lexical_table_vectors"] = matrix(v.lexical_tables);
             }
             return out;
           }, py::arg("db"),
           "What the memory stores of one database, as add_vectors() takes it: card, table_names, table_vectors, "
           "column_vectors, values, table_columns, form_vectors and (with a lexical encoder) lexical_card and "
           "lexical_table_vectors; the rows as stored (normalized; rounded where the store is int8 or fp16).")
      .def("__len__", &SelectionMemory::size)
      .def("__contains__", &SelectionMemory::contains)
      .def("__repr__", [](const SelectionMemory& s) {
        return "SelectionMemory(" + std::to_string(s.size()) + " databases, encoder=" + s.encoder().name() +
               (s.model() ? ", trained" : ", untrained") + ")";
      });
}

void bind_relevance(py::module_& m) {
  py::class_<RelevanceConfig>(m, "RelevanceConfig", "The shape of a relevance model and the encoders it was trained "
                                                    "with.")
      .def_readonly("input_dim", &RelevanceConfig::input_dim)
      .def_readonly("projection_dim", &RelevanceConfig::projection_dim)
      .def_readonly("hidden_dim", &RelevanceConfig::hidden_dim)
      .def_readonly("scalar_features", &RelevanceConfig::scalar_features)
      .def_readonly("encoder", &RelevanceConfig::encoder)
      .def_readonly("lexical_encoder", &RelevanceConfig::lexical_encoder);

  py::class_<RelevanceModel, std::shared_ptr<RelevanceModel>>(m, "RelevanceModel",
                                                              "Relevance classifier p(question, database).")
      .def(py::init([](int input_dim, int projection_dim, int hidden_dim, const std::string& encoder,
                       const std::string& lexical_encoder, uint64_t seed) {
             return std::make_shared<RelevanceModel>(
                 RelevanceConfig{input_dim, projection_dim, hidden_dim, encoder, lexical_encoder}, seed);
           }),
           py::arg("input_dim"), py::arg("projection_dim") = 256, py::arg("hidden_dim") = 32,
           py::arg("encoder") = "", py::arg("lexical_encoder") = "hashing:4096", py::arg("seed") = 0,
           "An untrained model (initialized to rank like the untrained memory).")
      .def_static("load", [](const std::string& path) { return std::make_shared<RelevanceModel>(RelevanceModel::load(path)); },
                  py::arg("path"))
      .def("save", &RelevanceModel::save, py::arg("path"))
      .def_property("threshold", &RelevanceModel::threshold, &RelevanceModel::set_threshold)
      .def_property_readonly("config", &RelevanceModel::config)
      .def_property_readonly("training_info", [](const RelevanceModel& r) {
        return py::module_::import("json").attr("loads")(r.training_info_json());
      })
      .def("__repr__", [](const RelevanceModel& r) {
        return "RelevanceModel(" + std::to_string(r.config().input_dim) + " -> " +
               std::to_string(r.config().projection_dim) + ", hidden " + std::to_string(r.config().hidden_dim) +
               ", encoder=" + r.config().encoder + ")";
      });

  m.def(
      "train_relevance",
      [](const Catalog& catalog, const std::vector<std::string>& questions, const py::list& databases,
         const py::object& encoder, const std::string& lexical_encoder, int samples_per_column,
         int64_t values_per_column, const std::function<void(py::dict)>& progress, const py::kwargs& options) {
        auto enc = to_encoder(encoder);
        std::unique_ptr<Encoder> lexical;
        if (!lexical_encoder.empty()) lexical = load_encoder(lexical_encoder);
        const auto labeled = to_labeled(questions, databases);
        const TrainingOptions o = training_options(options);
        TrainingResult result;
        {
          py::gil_scoped_release release;
          CardOptions card;
          card.samples_per_column = samples_per_column;
          std::vector<DatabaseTexts> texts;
          for (const auto& db : catalog.databases())
            texts.push_back(database_texts(catalog, db, card, {}, values_per_column, relmem::WordNet::shared()));
          result = train_relevance(*enc, lexical.get(), texts, labeled, o, [&](const EpochReport& r) {
            if (!progress) return;
            py::gil_scoped_acquire acquire;
            progress(epoch_dict(r));
          });
        }
        py::list epochs_out;
        for (const auto& r : result.epochs) epochs_out.append(epoch_dict(r));
        py::dict report;
        report["epochs"] = epochs_out;
        report["best_epoch"] = result.best_epoch;
        report["heldout_set"] = result.heldout_set;
        report["heldout_databases"] = result.heldout_databases;
        report["untrained_heldout_recall@1"] = result.untrained_recall_at_1;
        report["untrained_heldout_recall@5"] = result.untrained_recall_at_5;
        report["untrained_heldout_all_in_top5"] = result.untrained_all_in_top5;
        report["encode_seconds"] = result.encode_seconds;
        report["train_seconds"] = result.train_seconds;
        return py::make_tuple(std::make_shared<RelevanceModel>(std::move(result.model)), report);
      },
      py::arg("catalog"), py::arg("questions"), py::arg("databases"), py::arg("encoder") = py::none(),
      py::arg("lexical_encoder") = "hashing:4096", py::arg("samples_per_column") = 3,
      py::arg("values_per_column") = SelectionOptions{}.values_per_column, py::arg("progress") = nullptr,
      "Trains a RelevanceModel on the catalog's databases (as relmem-train-relevance does); returns (model, report). "
      "Training options are keywords named as relmem-train-relevance's flags: epochs, lr, batch, max_composite, "
      "composite_ratio, negatives, hard_fraction, heldout, weight_decay, listwise, bce, hard_pool, projection_lr_scale, direct_lr_scale, "
      "projection_dim, hidden, seed, threads, device, cache, finetune_layers, finetune_lr_scale.");

  py::class_<LabeledQuestion>(m, "LabeledQuestion", "A question and the database(s) that answer it; unpacks as "
                                                    "(text, databases).")
      .def(py::init([](std::string text, std::vector<std::string> databases) {
             return LabeledQuestion{std::move(text), std::move(databases)};
           }), py::arg("text"), py::arg("databases"))
      .def_readonly("text", &LabeledQuestion::text)
      .def_readonly("databases", &LabeledQuestion::databases)
      .def_readonly("parts", &LabeledQuestion::parts, "a composite's questions, in order (empty otherwise)")
      .def("__iter__", [](const LabeledQuestion& q) { return py::iter(py::make_tuple(q.text, q.databases)); });
  m.def("load_labeled_questions", &load_labeled_questions, py::arg("path"),
        "A JSON list of {question, db_id | db_ids} (Spider's train_spider.json, dev.json) as LabeledQuestion "
        "objects; relmem.Error names the file and entry of malformed input.");

  m.def("compose_question", [](const std::vector<std::string>& parts, const std::string& style) {
          return compose_question(parts, parse_composite_style(style));
        }, py::arg("parts"), py::arg("style") = "larger-number",
        "Joins questions into one composite question ('larger-number' is the paper's template).");
  py::class_<WordNet>(m, "WordNet", "WordNet 3.0 from its database files (Debian's wordnet-base).")
      .def(py::init<const std::string&>(), py::arg("folder") = WordNet::default_folder())
      .def_static("available", &WordNet::available, py::arg("folder") = WordNet::default_folder())
      .def_static("default_folder", &WordNet::default_folder)
      .def("contains", &WordNet::contains, py::arg("word"))
      .def("base_form", &WordNet::base_form, py::arg("word"))
      .def("synonyms", &WordNet::synonyms, py::arg("word"), py::arg("senses") = 1, py::arg("nouns") = false)
      .def("attributes", &WordNet::attributes, py::arg("word"), py::arg("senses") = 1)
      .def_static("shared", &WordNet::shared, py::return_value_policy::reference,
                  "The default folder's WordNet, loaded once and shared with the C++ core; None when not installed.");
  m.def("identifier_words", &identifier_words, py::arg("identifier"),
        "The words of a schema identifier, split and with abbreviations expanded.");
  m.def("question_parts", &question_parts, py::arg("question"),
        "The parts the selection memory ranks a question by: template markers (Q1: ...), numbered or listed parts, "
        "or sentences and 'and also' clauses; [question] when it has one part.");
  m.def("marked_question_parts", [](const std::string& question) {
          QuestionParts parts = split_question(question);
          return parts.marked ? parts.texts : std::vector<std::string>{};
        }, py::arg("question"),
        "The parts a question's asker set apart with template markers (Q1: ...) or numbered or listed parts; [] "
        "when it has none (sentences are not marked parts).");
  m.def("make_composites", [](const std::vector<LabeledQuestion>& singles, int64_t count, int min_parts, int max_parts,
                              const std::vector<std::string>& styles, uint64_t seed) {
          CompositeOptions options;
          options.min_parts = min_parts;
          options.max_parts = max_parts;
          options.styles.clear();
          for (const auto& style : styles) options.styles.push_back(parse_composite_style(style));
          std::mt19937_64 rng(seed);
          return make_composites(singles, count, options, rng);
        }, py::arg("singles"), py::arg("count"), py::arg("min_parts") = 2, py::arg("max_parts") = 2,
        py::arg("styles") = std::vector<std::string>{"larger-number"}, py::arg("seed") = 0,
        "`count` composite questions (LabeledQuestion) of min_parts..max_parts single-database questions from "
        "different databases, joined in one of `styles` ('larger-number', 'concatenate', 'and-also').");

  py::class_<RankingMetrics>(m, "RankingMetrics", "recall@k per k and all_in_top5 over labelled questions.")
      .def_readonly("questions", &RankingMetrics::questions)
      .def_readonly("ks", &RankingMetrics::ks)
      .def_readonly("recall", &RankingMetrics::recall)
      .def_readonly("all_in_top5", &RankingMetrics::all_in_top5)
      .def("recall_at", &RankingMetrics::recall_at, py::arg("k"));
  m.def("ranking_metrics", &ranking_metrics, py::arg("ranked"), py::arg("gold"), py::arg("ks"),
        "Per question, database ids best first and its gold ids: recall@k (the share of gold ids in the top k, "
        "averaged) and all_in_top5.");
  m.def("set_metrics", py::overload_cast<const std::vector<std::vector<int>>&, const std::vector<std::vector<int>>&>(
                           &set_metrics),
        py::arg("selected"), py::arg("gold"), "Micro-averaged precision, recall and F1 of selected id sets.");
}

}  // namespace

void bind_memories_selection(py::module_& m) {
  bind_selection_results(m);
  bind_relevance(m);
  bind_selection_memory(m);
}

}  // namespace relmem_python

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <tuple>
#include <vector>

#include "bindings.hpp"
#include "relmem/encoders/bert_encoder.hpp"
#include "relmem/encoders/tokenizers/wordpiece.hpp"
#include "relmem/memories/training/card_relevance_training.hpp"

namespace py = pybind11;
using namespace relmem;

namespace relmem_python {

void bind_bert(py::module_& m) {
  py::class_<WordPieceTokenizer>(m, "WordPieceTokenizer", "BERT basic tokenization + WordPiece over a vocab.txt")
      .def_static("from_directory", &WordPieceTokenizer::from_directory, py::arg("model_dir"))
      .def("tokenize", &WordPieceTokenizer::tokenize, py::arg("text"), "Word pieces, without [CLS]/[SEP].")
      .def("encode", &WordPieceTokenizer::encode, py::arg("text"), "[CLS] pieces [SEP] ids, truncated to max_length.")
      .def("token_id", &WordPieceTokenizer::token_id, py::arg("token"))
      .def_property_readonly("vocab_size", &WordPieceTokenizer::vocab_size)
      .def_property_readonly("max_length", [](const WordPieceTokenizer& t) { return t.options().max_length; });

  py::class_<BertEncoder, Encoder, std::shared_ptr<BertEncoder>>(
      m, "BertEncoder", "BERT sentence encoder over a Hugging Face / sentence-transformers directory")
      .def(py::init([](const std::string& model_dir, bool normalize, int max_length, int batch_size,
                       bool half_weights) {
             BertEncoderOptions options;
             options.normalize = normalize;
             options.max_length = max_length;
             options.batch_size = batch_size;
             options.half_weights = half_weights;
             return std::make_shared<BertEncoder>(model_dir, options);
           }),
           py::arg("model_dir"), py::kw_only(), py::arg("normalize") = true, py::arg("max_length") = 0,
           py::arg("batch_size") = 32, py::arg("half_weights") = true,
           "half_weights: the encoder layers' dense weights as fp16 (False: fp32, as fine-tuning computes)")
      .def_property_readonly("max_length", &BertEncoder::max_length)
      .def_property_readonly("half_weights", &BertEncoder::uses_half_weights,
                             "Whether the dense weights are fp16 on this CPU (False on a CPU without AVX2 and F16C)")
      .def_property_readonly("tokenizer", &BertEncoder::tokenizer, py::return_value_policy::reference_internal);

  m.def(
      "bert_layer_tensors",
      [](int width, int hidden) {
        BertTopShape shape;
        shape.width = width;
        shape.hidden = hidden;
        py::list out;
        for (const auto& t : bert_layer_tensors(shape)) out.append(py::make_tuple(t.name, t.kind, t.offset, t.shape));
        return out;
      },
      py::arg("width"), py::arg("hidden"),
      "(name, kind, offset, shape) of one fine-tunable BERT layer's tensors in its flat parameters.");
  m.def(
      "card_relevance_gradients",
      [](int width, int heads, int hidden, int layers, float norm_epsilon,
         const py::array_t<float, py::array::c_style | py::array::forcecast>& parameters,
         const py::array_t<float, py::array::c_style | py::array::forcecast>& tokens, const std::vector<int>& offsets,
         const std::vector<std::tuple<int, int, float>>& pairs, float scale, float bias) {
        BertTopShape shape;
        shape.layers = layers;
        shape.width = width;
        shape.heads = heads;
        shape.hidden = hidden;
        shape.norm_epsilon = norm_epsilon;
        BertTop top(shape, std::vector<float>(parameters.data(), parameters.data() + parameters.size()));
        if (tokens.ndim() != 2 || tokens.shape(1) != width) throw Error("tokens must be (rows, width)");
        TokenStates states;
        states.rows = Eigen::Map<const RowMatrix>(tokens.data(), tokens.shape(0), width);
        states.offsets = offsets;
        std::vector<VectorPair> vector_pairs;
        for (const auto& [first, second, label] : pairs) vector_pairs.push_back({first, second, label});
        BertTopCache<float> cache;
        const RowMatrix vectors = top.forward(states, cache);
        RowMatrix d_vectors = RowMatrix::Zero(vectors.rows(), vectors.cols());
        double d_head[2] = {0.0, 0.0};
        const double loss = pair_loss_and_gradient(vectors, vector_pairs, {scale, bias}, d_vectors, d_head);
        std::vector<float> gradient(top.parameters().size(), 0.0f);
        top.backward(cache, d_vectors, gradient);
        py::dict out;
        out["loss"] = loss;
        // Shape and strides spelled out: the count-only constructor gives 1-D arrays a zero stride with numpy 2.
        py::array_t<float> d_parameters(std::vector<py::ssize_t>{static_cast<py::ssize_t>(gradient.size())},
                                        std::vector<py::ssize_t>{static_cast<py::ssize_t>(sizeof(float))});
        std::copy(gradient.begin(), gradient.end(), d_parameters.mutable_data());
        out["parameters"] = d_parameters;
        out["scale"] = d_head[0];
        out["bias"] = d_head[1];
        return out;
      },
      py::arg("width"), py::arg("heads"), py::arg("hidden"), py::arg("layers"), py::arg("norm_epsilon"),
      py::arg("parameters"), py::arg("tokens"), py::arg("offsets"), py::arg("pairs"), py::arg("scale"),
      py::arg("bias"),
      "Loss and gradients of the card-cosine classifier (card_relevance_training.hpp) over fine-tunable BERT layers: "
      "token states through the layers, mean pooling and L2 normalization, then the mean BCE of sigmoid(scale cos + "
      "bias) over (first, second, label) pairs of sentences. Returns loss and the gradients of the flat parameters, "
      "scale and bias.");
}

}  // namespace relmem_python
